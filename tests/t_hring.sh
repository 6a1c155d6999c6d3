# t_hring.sh -- ring_worker --algo hring (the hierarchical ring: inside
# each host, across the hosts, inside again; common/coll/hring.c) as real
# processes on 127.0.0.1 and in bin/psring_sim: training through
# experiments/launch.sh, K = 6 with G = 3 ranks per host (linreg f64,
# within 1e-12 relative of the single-process big batch) and K = 4 with
# G = 2 from LOCAL_WORLD_SIZE (synthetic f32: exactly the big batch),
# bit-identical on every rank; the benchmark with every element checked
# (#wrong 0), the row's algo hring:G and its model_s == bin/model's;
# psring_sim's time == bin/model's (sizes, K = 8, G = 2 and 4), its weights
# == the real run's bit for bit (K = 6, G = 2), and on racks:R:U the racks
# as the groups; launch.sh's LOCAL_WORLD_SIZE (K on 127.0.0.1) the default
# G; a rank SIGSTOPped mid-all-reduce (no FIN, no RST: the idle
# timeout) ends every other rank, naming it; bin/model at points worked by
# hand; --algo hring refused where it cannot run, a G that does not divide
# K refused, ranks that disagree on G stopped at the rendezvous.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
sim="$PSR_BIN/psring_sim"

if [ ! -x "$PSR_BIN/ring_worker" ]; then
    t_skip hring-proc "the hierarchical ring" "no ring_worker in $PSR_BIN"
    t_exit
fi

T=1                             # --timeout of the fault case, seconds
WD=$((3 * T + 10))              # its watchdog

t_case hring-proc-1.1 "linreg f64, 6 ranks of 3 per host via launch.sh, 8 steps: bit-identical, == big batch within 1e-12, row algo hring:3; synthetic f32, 4 ranks, G = 2 from LOCAL_WORLD_SIZE: exactly the big batch"
t_reference lin --steps 8
job 120 "$launch" ring 6 --worker-args "--algo hring --ranks-per-host 3" --steps 8 --timeout 10 \
    --weights-out "$T_TMP/lin.w" --csv-out "$T_TMP/row.csv"
expect_rc 0
t_ranks_same 6 "$T_TMP/lin.w"
why=$(t_close "$T_TMP/lin.w.0" "$T_TMP/lin.ref.0" 1e-12) || t_fail "weights vs reference: $why"
awk -F, 'NR == 2 { exit !($1 == "ring" && $2 == "hring:3" && $3 == "tcp" && $4 == 6) }' \
    "$T_TMP/row.csv" || t_fail "row: $(sed -n 2p "$T_TMP/row.csv")"
t_reference syn --workload synthetic --params 10007 --dtype f32 --steps 4 --batch 999
job 120 env LOCAL_WORLD_SIZE=2 "$launch" ring 4 --worker-args "--algo hring" --workload synthetic \
    --params 10007 --dtype f32 --steps 4 --batch 999 --timeout 10 --weights-out "$T_TMP/syn.w"
expect_rc 0
t_ranks_same 4 "$T_TMP/syn.w"
cmp -s "$T_TMP/syn.w.0" "$T_TMP/syn.ref.0" || t_fail "K=4: not exactly the reference"
t_end

t_case hring-proc-1.2 "--bench, K = 4 (G 2, f32) and 6 (G 2, f64), emulated link: every element checked, #wrong 0, algo hring:2, model_s == bin/model's; without --ranks-per-host launch.sh's LOCAL_WORLD_SIZE gives G = K"
for k in 4 6; do
    dt=f32
    [ $k = 6 ] && dt=f64
    rm -f "$T_TMP/bench.csv"
    job 120 "$launch" ring $k --worker-args "--algo hring --ranks-per-host 2" --bench -b 64K \
        -e 64K -n 3 -w 1 --dtype $dt --link-bw 1Gbit --timeout 10 --csv-out "$T_TMP/bench.csv"
    expect_rc 0
    expect_grep err 'rank0| # out of bounds values : 0 OK'
    expect_grep err "rank0| # ring_worker --bench: all-reduce (sum) by a hierarchical ring among K=$k ranks, 2 per host"
    want=$("$PSR_BIN/model" --algo hring --ranks-per-host 2 --K $k --bytes 65536 --bw 1Gbit)
    awk -F, -v k=$k -v w="$want" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
        NR == 2 { m = $c["model_s"]; d = m - w; if (d < 0) d = -d
                  exit !($2 == "hring:2" && $4 == k && $5 == 65536 && d <= 1e-5 * w) }' \
        "$T_TMP/bench.csv" || t_fail "K=$k bench row (model $want): $(sed -n 2p "$T_TMP/bench.csv")"
done
# launch.sh exports LOCAL_WORLD_SIZE = K (every rank on 127.0.0.1): G = K
rm -f "$T_TMP/bench.csv"
job 120 env -u LOCAL_WORLD_SIZE "$launch" ring 4 --worker-args "--algo hring" --bench -b 4K -e 4K \
    -n 2 -w 1 --timeout 10 --csv-out "$T_TMP/bench.csv"
expect_rc 0
awk -F, 'NR == 2 { exit !($2 == "hring:4") }' "$T_TMP/bench.csv" \
    || t_fail "launch.sh's LOCAL_WORLD_SIZE: $(sed -n 2p "$T_TMP/bench.csv")"
t_end

if [ -x "$sim" ]; then
    NET="--link-bw 500Mbit --link-latency 200us"
    t_case hring-proc-1.3 "psring_sim --algo hring: sizes, K = 8, G = 2 and 4, time == bin/model's (6 digits); real payloads, linreg f64 K = 6, G = 2: weights == the real ranks', bit for bit; racks:2 groups K = 8 by 4, racks:3 refused"
    for g in 2 4; do
        job 60 "$sim" ring 8 --algo hring --ranks-per-host $g --bytes 1MiB --steps 2 --payload sizes $NET
        expect_rc 0
        got=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/out")
        want=$("$PSR_BIN/model" --algo hring --ranks-per-host $g --K 8 --bytes 1MiB --bw 500Mbit --latency 200us)
        awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-5 * w) }' \
            || t_fail "G=$g: simulated $got s, model $want s"
    done
    job 120 "$launch" ring 6 --worker-args "--algo hring --ranks-per-host 2" --steps 3 --timeout 20 \
        --weights-out "$T_TMP/real.w"
    expect_rc 0
    job 60 "$sim" ring 6 --algo hring --ranks-per-host 2 --steps 3 --payload real $NET \
        --weights-out "$T_TMP/sim.w"
    expect_rc 0
    t_ranks_same 6 "$T_TMP/sim.w"
    cmp -s "$T_TMP/real.w.0" "$T_TMP/sim.w.0" || t_fail "simulated weights differ from the real ranks'"
    job 60 "$sim" ring 8 --algo hring --platform racks:2:1Gbit --bytes 1MiB --steps 1 --payload sizes $NET
    expect_rc 0
    awk -F, 'NR == 2 { exit !($2 == "hring:4") }' "$T_TMP/out" || t_fail "racks:2: $(sed -n 2p "$T_TMP/out")"
    job 20 "$sim" ring 8 --algo hring --platform racks:3:1Gbit --steps 1 $NET
    expect_rc 64
    expect_grep err '^psring_sim: --ranks-per-host 3: must divide K = 8 .*(G from the platform.s racks); see psring_sim --help$'
    job 20 "$sim" ring 8 --algo hring --steps 1 $NET
    expect_rc 64
    expect_grep err '^psring_sim: --algo hring: needs --ranks-per-host G on a star'
    t_end
else
    t_skip hring-proc-1.3 "psring_sim" "no psring_sim in $PSR_BIN (SimGrid not found at build time)"
fi

trap 'ranks_kill; rm -rf "$T_TMP"' EXIT

# SIGSTOP (no FIN, no RST): caught by the idle timeout and blamed on the
# stopped rank: its neighbours in the ring it stopped in wait on it first
# (hring.c, PATIENCE) and flood the news to the others.
t_case hring-proc-1.4 "K = 6, G = 3, rank 4 SIGSTOPped mid-all-reduce: caught by --timeout, the others exit 1 naming rank 4"
K=6
ranks_fault 4 STOP --world 6 --workload synthetic --params 1M --dtype f32 --link-bw 20MB \
    --steps 10000 --timeout $T --algo hring --ranks-per-host 3
t_end

t_case hring-proc-1.5 "bin/model --algo hring by hand; refusals in one line, exit 64: the GPU paths, --compress, no G, a G that does not divide K, --ranks-per-host alone; ranks that disagree on G fail at the rendezvous naming it"
job 20 "$PSR_BIN/ring_worker" --algo hring --ranks-per-host 1 --device cuda --steps 1
expect_rc 64
expect_grep err '^ring_worker: --algo hring: runs on the host over TCP'
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "want one stderr line: $(cat "$T_TMP/err")"
job 20 "$PSR_BIN/ring_worker" --algo hring --ranks-per-host 1 --compress fp16 --steps 1
expect_rc 64
expect_grep err '^ring_worker: --compress fp16: compresses the ring and rd only (--algo ring|rd), not hring; see ring_worker --help$'
job 20 env -u LOCAL_WORLD_SIZE -u OMPI_COMM_WORLD_LOCAL_SIZE -u SLURM_NTASKS_PER_NODE \
    "$PSR_BIN/ring_worker" --algo hring --steps 1
expect_rc 64
expect_grep err '^ring_worker: --algo hring: needs --ranks-per-host G (or LOCAL_WORLD_SIZE'
job 20 "$PSR_BIN/ring_worker" --algo hring --ranks-per-host 4 --world 6 --rank 1 --steps 1
expect_rc 64
expect_grep err '^ring_worker: --ranks-per-host 4: must divide K = 6 (the hierarchical ring has no rule for a partial host) (G from --ranks-per-host); see ring_worker --help$'
job 20 env OMPI_COMM_WORLD_LOCAL_SIZE=4 "$PSR_BIN/ring_worker" --algo hring --world 6 --rank 1 --steps 1
expect_rc 64
expect_grep err '(G from OMPI_COMM_WORLD_LOCAL_SIZE); see ring_worker --help$'
job 20 "$PSR_BIN/ring_worker" --ranks-per-host 2 --steps 1
expect_rc 64
expect_grep err '^ring_worker: --ranks-per-host: the hierarchical ring.s (--algo hring); see ring_worker --help$'
job 20 "$PSR_BIN/ring_worker" --algo hring --ranks-per-host 1 --bench --coll all_gather
expect_rc 64
# bin/model by hand: K = 8, G = 4, n = 1e6 B, 1e9 B/s, a = 1 ms:
# 6 (a + n/4 b) + 2 (a + n/8 b) = 7.5 + 2.25 ms; G = 2: 2 (a + n/2 b) +
# 6 (a + n/8 b) = 3 + 6.75 ms; G = 4 with --local-bw 10GB and
# --local-latency 0: 6 (n/4 / 1e10) + 2.25 ms = 2.4 ms.
for q in "4 0.00975" "2 0.00975" "4 0.0024 --local-bw 1e10 --local-latency 0"; do
    set -- $q
    g=$1 w=$2; shift 2
    got=$("$PSR_BIN/model" --algo hring --ranks-per-host $g --K 8 --bytes 1e6 --bw 1e9 --latency 1ms "$@")
    [ "$got" = "$w" ] || t_fail "bin/model --algo hring --ranks-per-host $g --K 8 $*: $got, by hand $w"
done
got=$("$PSR_BIN/model" --algo hring --ranks-per-host 4 --K 16 --bytes 1 --quantity steps)
[ "$got" = 12 ] || t_fail "bin/model steps K 16 G 4: $got, by hand 12"
job 20 "$PSR_BIN/model" --algo hring --ranks-per-host 3 --K 8 --bytes 1M --bw 1Gbit
expect_rc 64
expect_grep err '^model: --ranks-per-host 3: must divide --K 8'
job 20 "$PSR_BIN/model" --algo hring --K 8 --bytes 1M --bw 1Gbit
expect_rc 64
job 20 "$PSR_BIN/model" --algo ring --ranks-per-host 2 --K 8 --bytes 1M --bw 1Gbit
expect_rc 64
K=4
ranks_reset
rank_start 0 --world $K --coordinator 127.0.0.1:0 --port-file "$T_TMP/port" --algo hring \
    --ranks-per-host 2 --timeout $T --steps 3
rank0_port
for r in 1 2 3; do
    rank_start $r --world $K --coordinator "127.0.0.1:$port" --algo hring --ranks-per-host 4 \
        --timeout $T --steps 3
done
ranks_wait none "$(now)" || t_fail "the watchdog had to kill ranks"
for r in 1 2 3; do
    grep -q "rank 0 runs --algo hring --ranks-per-host 2, this rank --algo hring --ranks-per-host 4: every rank must run the same one" "$T_TMP/err.$r" \
        || t_fail "rank $r: $(tail -c 300 "$T_TMP/err.$r")"
done
t_end

t_exit
