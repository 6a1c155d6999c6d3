# t_swing.sh -- ring_worker --algo swing-lat|swing-bw (Swing;
# common/coll/swing.c) as real processes on 127.0.0.1 and in
# bin/psring_sim: training through experiments/launch.sh, swing-bw K = 8
# (linreg f64, within 1e-12 of the single-process big batch, every rank
# bit-identical) and swing-lat K = 7 (the fold; synthetic f32, whose sums
# are exact in any order: exactly the big batch on every rank); the
# benchmark with every element checked (#wrong 0) and the row's model_s ==
# bin/model's; psring_sim's time == bin/model's on the star, and on
# --platform torus:8:1 (a ring of 8 links) the hops each step crosses: rd
# pays 1 + 2 + 4 latencies, swing-lat 1 + 1 + 3, the ring 14 x 1; the
# torus refused where it cannot be; a rank SIGSTOPped mid-all-reduce (no
# FIN, no RST: the idle timeout) ends every other rank, naming it; bin/model
# by hand; --algo swing-* refused where it cannot run, and ranks that
# disagree on the variant stopped at the rendezvous.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
sim="$PSR_BIN/psring_sim"

if [ ! -x "$PSR_BIN/ring_worker" ]; then
    t_skip swing-proc "Swing" "no ring_worker in $PSR_BIN"
    t_exit
fi

T=1                             # --timeout of the fault case, seconds
WD=$((3 * T + 10))              # its watchdog

t_case swing-proc-1.1 "swing-bw: linreg f64, 8 ranks via launch.sh, 10 steps: bit-identical, == big batch within 1e-12; swing-lat: synthetic f32, 7 ranks (the fold): exactly the big batch on every rank"
t_reference lin --steps 10
job 120 "$launch" ring 8 --worker-args "--algo swing-bw" --steps 10 --timeout 10 \
    --weights-out "$T_TMP/lin.w" --csv-out "$T_TMP/row.csv"
expect_rc 0
t_ranks_same 8 "$T_TMP/lin.w"
why=$(t_close "$T_TMP/lin.w.0" "$T_TMP/lin.ref.0" 1e-12) || t_fail "weights vs reference: $why"
awk -F, 'NR == 2 { exit !($1 == "ring" && $2 == "swing-bw" && $3 == "tcp" && $4 == 8) }' \
    "$T_TMP/row.csv" || t_fail "row: $(sed -n 2p "$T_TMP/row.csv")"
t_reference syn --workload synthetic --params 10007 --dtype f32 --steps 4 --batch 999
job 120 "$launch" ring 7 --worker-args "--algo swing-lat" --workload synthetic --params 10007 \
    --dtype f32 --steps 4 --batch 999 --timeout 10 --weights-out "$T_TMP/syn.w"
expect_rc 0
t_ranks_same 7 "$T_TMP/syn.w"
cmp -s "$T_TMP/syn.w.0" "$T_TMP/syn.ref.0" || t_fail "K=7: not exactly the reference"
t_end

t_case swing-proc-1.2 "--bench, swing-lat K = 3 (f64), swing-bw K = 4 (f32), emulated link: every element checked, #wrong 0, the algo column, model_s == bin/model's"
for run in "swing-lat 3 f64" "swing-bw 4 f32"; do
    set -- $run
    rm -f "$T_TMP/bench.csv"
    job 120 "$launch" ring $2 --worker-args "--algo $1" --bench -b 64K -e 64K -n 3 -w 1 \
        --dtype $3 --link-bw 1Gbit --timeout 10 --csv-out "$T_TMP/bench.csv"
    expect_rc 0
    expect_grep err 'rank0| # out of bounds values : 0 OK'
    expect_grep err "rank0| # ring_worker --bench: all-reduce (sum) by Swing, .* among K=$2 ranks (--algo $1)"
    want=$("$PSR_BIN/model" --algo $1 --K $2 --bytes 65536 --bw 1Gbit)
    awk -F, -v k=$2 -v a=$1 -v w="$want" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
        NR == 2 { m = $c["model_s"]; d = m - w; if (d < 0) d = -d
                  exit !($2 == a && $4 == k && $5 == 65536 && d <= 1e-5 * w) }' \
        "$T_TMP/bench.csv" || t_fail "$1 K=$2 bench row (model $want): $(sed -n 2p "$T_TMP/bench.csv")"
done
t_end

# sim_time ALGO K FLAGS...: psring_sim's simulated time of one all-reduce
# (--payload sizes), into $got.
sim_time() {
    _a=$1 _k=$2; shift 2
    job 60 "$sim" ring $_k --algo $_a --steps 1 --payload sizes "$@"
    expect_rc 0
    got=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/out")
}

if [ -x "$sim" ]; then
    NET="--link-bw 500Mbit --link-latency 200us"
    t_case swing-proc-1.3 "psring_sim --algo swing-lat|swing-bw on the star: sizes, K = 5 and 8, time == bin/model's (6 digits); ps refused"
    for a in swing-lat swing-bw; do
        for k in 5 8; do
            sim_time $a $k --bytes 1MiB $NET
            want=$("$PSR_BIN/model" --algo $a --K $k --bytes 1MiB --bw 500Mbit --latency 200us)
            awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-5 * w) }' \
                || t_fail "$a K=$k: simulated $got s, model $want s"
        done
    done
    job 20 "$sim" ps 4 --algo swing-bw --steps 1 $NET
    expect_rc 64
    expect_grep err '^psring_sim: --algo swing-bw: ring, rd, .*, in ring mode only; see psring_sim --help$'
    t_end

    t_case swing-proc-1.4 "--platform torus:8:1, 8 B at 1 ms a hop (latency alone): rd 7 ms (hops 1+2+4), swing-lat 5 ms (1+1+3), ring 14 ms, the star's rd 3 ms; torus:0:2, --hosts against X*Y, K > X*Y and --compress with swing refused, one line, exit 64"
    TNET="--bytes 8 --link-bw 100Gbit --link-latency 1ms"
    for q in "rd torus:8:1 0.007" "swing-lat torus:8:1 0.005" "ring torus:8:1 0.014" "rd star 0.003"; do
        set -- $q
        sim_time $1 8 --platform $2 $TNET
        awk -v g="$got" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-4 * w) }' \
            || t_fail "$1 on $2: simulated $got s, want $3 s"
    done
    for bad in "4 --platform torus:0:2" "4 --platform torus:2:2 --hosts 5" \
               "8 --platform torus:2:2" "4 --algo swing-lat --compress fp16 --payload real"; do
        job 20 "$sim" ring $bad --steps 1 $NET
        expect_rc 64
        [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$bad: want one stderr line: $(cat "$T_TMP/err")"
    done
    expect_grep err '^psring_sim: --compress: the ring and rd only'
    t_end
else
    t_skip swing-proc-1.3 "psring_sim" "no psring_sim in $PSR_BIN (SimGrid not found at build time)"
    t_skip swing-proc-1.4 "psring_sim" "no psring_sim in $PSR_BIN (SimGrid not found at build time)"
fi

trap 'ranks_kill; rm -rf "$T_TMP"' EXIT

# SIGSTOP (no FIN, no RST): caught by the idle timeout and blamed on the
# right rank. K = 5 folds rank 1 into rank 0 (swing.c, FOLD), as
# Rabenseifner's: the patience is its (rabenseifner.c, PATIENCE).
t_case swing-proc-1.5 "swing-bw K = 5, rank 0 (the fold's) SIGSTOPped mid-all-reduce: caught by --timeout, the others exit 1 naming rank 0"
K=5
ranks_fault 0 STOP --world 5 --workload synthetic --params 1M --dtype f32 --link-bw 20MB \
    --steps 10000 --timeout $T --algo swing-bw
t_end

t_case swing-proc-1.6 "bin/model --algo swing-lat|swing-bw by hand; refused where it cannot run (--device cuda, --compress: one line, exit 64); ranks that disagree on the variant fail at the rendezvous naming the flag"
job 20 "$PSR_BIN/ring_worker" --algo swing-lat --device cuda --steps 1
expect_rc 64
expect_grep err '^ring_worker: --algo swing-lat: runs on the host over TCP'
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "want one stderr line: $(cat "$T_TMP/err")"
job 20 "$PSR_BIN/ring_worker" --algo swing-bw --compress fp16 --steps 1
expect_rc 64
expect_grep err '^ring_worker: --compress fp16: compresses the ring and rd only (--algo ring|rd), not swing-bw; see ring_worker --help$'
job 20 "$PSR_BIN/ring_worker" --algo swing-bw --bench --coll all_gather
expect_rc 64
# K = 8, n = 1e6 B, 1e9 B/s, a = 1 ms: swing-lat 3 (a + n b), swing-bw
# 6 a + 1.75 n b; K = 6 (the fold, P = 4): 4 (a + n b), 6 a + 3.5 n b.
for q in "swing-lat 8 0.006" "swing-bw 8 0.00775" "swing-lat 6 0.008" "swing-bw 6 0.0095"; do
    set -- $q
    got=$("$PSR_BIN/model" --algo $1 --K $2 --bytes 1e6 --bw 1e9 --latency 1ms)
    [ "$got" = "$3" ] || t_fail "bin/model --algo $1 --K $2: $got, by hand $3"
done
job 20 "$PSR_BIN/model" --algo swing --K 4 --bytes 1M --bw 1Gbit
expect_rc 64
expect_grep err '^model: --algo swing: not ps, ring, rd, .*; see model --help$'
K=3
ranks_reset
rank_start 0 --world $K --coordinator 127.0.0.1:0 --port-file "$T_TMP/port" --algo swing-bw --workload synthetic --params 4096 --dtype f32 --timeout $T --steps 3
rank0_port
for r in 1 2; do rank_start $r --world $K --coordinator "127.0.0.1:$port" --algo swing-lat --workload synthetic --params 4096 --dtype f32 --timeout $T --steps 3; done
ranks_wait none "$(now)" || t_fail "the watchdog had to kill ranks"
for r in 1 2; do
    grep -q "rank 0 runs --algo swing-bw, this rank --algo swing-lat: every rank must run the same one" "$T_TMP/err.$r" \
        || t_fail "rank $r: $(tail -c 300 "$T_TMP/err.$r")"
done
t_end

t_exit
