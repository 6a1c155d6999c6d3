# t_rabenseifner.sh -- ring_worker --algo rabenseifner (recursive halving,
# then doubling; common/coll/rabenseifner.c) as real processes on
# 127.0.0.1 and in bin/psring_sim: training through experiments/launch.sh
# with K = 8 (a power of two) against the single-process big batch (within
# 1e-12 relative, linreg f64) and K = 7 (the fold; exactly, synthetic f32),
# bit-identical on every rank; the benchmark with every element checked
# (#wrong 0) and the row's model_s == bin/model's; psring_sim's time ==
# bin/model's (sizes, K = 5 and 8) and its weights == the real run's, bit
# for bit (K = 6); a rank SIGSTOPped mid-all-reduce (no FIN, no RST: the
# idle timeout) ends every other rank, naming it; bin/model at three points
# worked by hand; --algo refused where it cannot run, and ranks that
# disagree on it stopped at the rendezvous.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
sim="$PSR_BIN/psring_sim"

if [ ! -x "$PSR_BIN/ring_worker" ]; then
    t_skip rabenseifner-proc "Rabenseifner" "no ring_worker in $PSR_BIN"
    t_exit
fi

T=1                             # --timeout of the fault case, seconds
WD=$((3 * T + 10))              # its watchdog
ALGO="--algo rabenseifner"

t_case rabenseifner-proc-1.1 "linreg f64, 8 ranks via launch.sh, 10 steps: bit-identical, == big batch within 1e-12; synthetic f32, 7 ranks (the fold): exactly the big batch"
t_reference lin --steps 10
job 120 "$launch" ring 8 --worker-args "$ALGO" --steps 10 --timeout 10 \
    --weights-out "$T_TMP/lin.w" --csv-out "$T_TMP/row.csv"
expect_rc 0
t_ranks_same 8 "$T_TMP/lin.w"
why=$(t_close "$T_TMP/lin.w.0" "$T_TMP/lin.ref.0" 1e-12) || t_fail "weights vs reference: $why"
awk -F, 'NR == 2 { exit !($1 == "ring" && $2 == "rabenseifner" && $3 == "tcp" && $4 == 8) }' \
    "$T_TMP/row.csv" || t_fail "row: $(sed -n 2p "$T_TMP/row.csv")"
t_reference syn --workload synthetic --params 10007 --dtype f32 --steps 4 --batch 999
job 120 "$launch" ring 7 --worker-args "$ALGO" --workload synthetic --params 10007 \
    --dtype f32 --steps 4 --batch 999 --timeout 10 --weights-out "$T_TMP/syn.w"
expect_rc 0
t_ranks_same 7 "$T_TMP/syn.w"
cmp -s "$T_TMP/syn.w.0" "$T_TMP/syn.ref.0" || t_fail "K=7: not exactly the reference"
t_end

t_case rabenseifner-proc-1.2 "--bench, K = 3 (f64) and 4 (f32), emulated link: every element checked, #wrong 0, algo rabenseifner, model_s == bin/model's"
for k in 3 4; do
    dt=f32
    [ $k = 3 ] && dt=f64
    rm -f "$T_TMP/bench.csv"
    job 120 "$launch" ring $k --worker-args "$ALGO" --bench -b 64K -e 64K -n 3 -w 1 \
        --dtype $dt --link-bw 1Gbit --timeout 10 --csv-out "$T_TMP/bench.csv"
    expect_rc 0
    expect_grep err 'rank0| # out of bounds values : 0 OK'
    expect_grep err "rank0| # ring_worker --bench: all-reduce (sum) by Rabenseifner .* among K=$k"
    want=$("$PSR_BIN/model" --algo rabenseifner --K $k --bytes 65536 --bw 1Gbit)
    awk -F, -v k=$k -v w="$want" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
        NR == 2 { m = $c["model_s"]; d = m - w; if (d < 0) d = -d
                  exit !($2 == "rabenseifner" && $4 == k && $5 == 65536 && d <= 1e-5 * w) }' \
        "$T_TMP/bench.csv" || t_fail "K=$k bench row (model $want): $(sed -n 2p "$T_TMP/bench.csv")"
done
t_end

if [ -x "$sim" ]; then
    NET="--link-bw 500Mbit --link-latency 200us"
    t_case rabenseifner-proc-1.3 "psring_sim --algo rabenseifner: sizes, K = 5 and 8, time == bin/model's (6 digits); real payloads, linreg f64 K = 6: weights == the real ranks', bit for bit"
    for k in 5 8; do
        job 60 "$sim" ring $k $ALGO --bytes 1MiB --steps 2 --payload sizes $NET
        expect_rc 0
        got=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/out")
        want=$("$PSR_BIN/model" --algo rabenseifner --K $k --bytes 1MiB --bw 500Mbit --latency 200us)
        awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-5 * w) }' \
            || t_fail "K=$k: simulated $got s, model $want s"
    done
    job 120 "$launch" ring 6 --worker-args "$ALGO" --steps 3 --timeout 20 --weights-out "$T_TMP/real.w"
    expect_rc 0
    job 60 "$sim" ring 6 $ALGO --steps 3 --payload real $NET --weights-out "$T_TMP/sim.w"
    expect_rc 0
    t_ranks_same 6 "$T_TMP/sim.w"
    cmp -s "$T_TMP/real.w.0" "$T_TMP/sim.w.0" || t_fail "simulated weights differ from the real ranks'"
    job 20 "$sim" ps 4 $ALGO --steps 1
    expect_rc 64
    expect_grep err '^psring_sim: --algo rabenseifner: ring, rd, rabenseifner, tree or dbtree, in ring mode only; see psring_sim --help$'
    t_end
else
    t_skip rabenseifner-proc-1.3 "psring_sim" "no psring_sim in $PSR_BIN (SimGrid not found at build time)"
fi

trap 'ranks_kill; rm -rf "$T_TMP"' EXIT

# SIGSTOP (no FIN, no RST): caught by the idle timeout, and blamed on the
# right rank: K = 5 folds rank 1 into rank 0; rank 3 meets rank 0 first
# and waits on it, rank 4 then waits on rank 3 (rabenseifner.c, PATIENCE:
# rank 3's wait may not outlast rank 4's, or rank 4 names rank 3); rank 1
# sits the cube out and has only rank 0 to hear from (its timeout: one T
# per step sat out, plus one).
t_case rabenseifner-proc-1.4 "K = 5, rank 0 (the fold's) SIGSTOPped mid-all-reduce: caught by --timeout, the others exit 1 naming rank 0"
K=5
ranks_fault 0 STOP --world 5 --workload synthetic --params 1M --dtype f32 --link-bw 20MB \
    --steps 10000 --timeout $T $ALGO
t_end

t_case rabenseifner-proc-1.5 "bin/model --algo rabenseifner at three points worked by hand; --algo refused where it cannot run (one line, exit 64); ranks that disagree on it fail at the rendezvous naming the flag"
job 20 "$PSR_BIN/ring_worker" $ALGO --device cuda --steps 1
expect_rc 64
expect_grep err '^ring_worker: --algo rabenseifner: runs on the host over TCP'
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "want one stderr line: $(cat "$T_TMP/err")"
job 20 "$PSR_BIN/ring_worker" $ALGO --bench --coll all_gather
expect_rc 64
# bin/model by hand: K = 8, n = 1e6 B, 1e9 B/s, a = 1 ms: 6 a + 1.75 n b;
# K = 6 (the fold, P = 4): 6 a + (1.5 + 2) n b; K = 3: 4 a + 3 n b.
for q in "8 0.00775" "6 0.0095" "3 0.007"; do
    set -- $q
    got=$("$PSR_BIN/model" --algo rabenseifner --K $1 --bytes 1e6 --bw 1e9 --latency 1ms)
    [ "$got" = "$2" ] || t_fail "bin/model --algo rabenseifner --K $1: $got, by hand $2"
done
job 20 "$PSR_BIN/model" --algo rabenseifnr --K 4 --bytes 1M --bw 1Gbit
expect_rc 64
expect_grep err '^model: --algo rabenseifnr: not ps, ring, rd, rabenseifner, tree, dbtree or auto; see model --help$'
K=3
ranks_reset
rank_start 0 --world $K --coordinator 127.0.0.1:0 --port-file "$T_TMP/port" $ALGO --timeout $T --steps 3
rank0_port
for r in 1 2; do rank_start $r --world $K --coordinator "127.0.0.1:$port" --algo rd --timeout $T --steps 3; done
ranks_wait none "$(now)" || t_fail "the watchdog had to kill ranks"
for r in 1 2; do
    grep -q "rank 0 runs --algo rabenseifner, this rank --algo rd: every rank must run the same one" "$T_TMP/err.$r" \
        || t_fail "rank $r: $(tail -c 300 "$T_TMP/err.$r")"
done
t_end

t_exit
