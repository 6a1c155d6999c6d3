#!/bin/sh
# experiments/bench_rd.sh -- recursive doubling against the ring across
# message sizes, and the crossover against the alpha-beta model (issue 6).
#
# Figures, never pass/fail. On the EMULATED link (--link-bw 500Mbit
# --link-latency 200us per process by default), K = 8 ranks on 127.0.0.1,
# float32, each size from 4 KiB to 16 MiB: `ring_worker --bench` with the
# ring and with --algo rd, interleaved (ring, rd, ring, rd, ...) so that
# both see the same machine. Per size it prints and keeps in
# $PSR_RESULTS/bench/rd_vs_ring.dat:
#
#   size_bytes  ring_s  ring_model_s  rd_s  rd_model_s  ratio  model_ratio
#               ring_x  rd_x  ring_cpu  rd_cpu  verdict
#
#   *_s         psr_merge's time_s: per iteration the slowest rank, the
#               median over the iterations; then the median over BENCH_REPS
#               repetitions
#   *_model_s   ring: 2(K-1) a + 2(K-1)/K n b; rd: log2 K (a + n b) for K a
#               power of two, (floor(log2 K) + 2)(a + n b) otherwise (the
#               fold); a the latency, b = 1 / the link's rate, n the bytes
#   ratio       ring_s / rd_s: above 1, recursive doubling is faster
#   *_x         measured / model
#   *_cpu       the share of the machine's CPUs the K ranks used during the
#               timed loop (median over the repetitions)
#   verdict     "host" when either run kept the CPUs over 80% busy: the
#               pace may be the host's, not the link's; else "steps" when
#               either run took over 1.25 x its model: the CPUs had room,
#               but every step pays the host's wake-up and scheduling on top
#               of the emulated latency (K processes share the CPUs), so the
#               latency term is partly the host's; else "link"
#
# and last, as comments, the crossover: where the measured ratio passes 1
# (the last time it does, log-interpolated between the two sizes around
# it: a noisy point may dip below 1 earlier) and where the model's
# does, n* = (2(K-1) - log2 K) a / ((log2 K - 2(K-1)/K) b); and the same
# with the latency the runs actually paid per step: a_eff, fitted at the
# smallest size (time minus the bandwidth term, over the steps, averaged
# over the two algorithms), the emulated latency plus the host's cost of a
# step (waking the process, the scheduler: 8 ranks share the CPUs).
#
# Environment: PSR_BIN (default bin/), PSR_RESULTS (default results),
# BENCH_QUICK=1 (fewer sizes and repetitions), BENCH_REPS (5), BENCH_K (8),
# BENCH_SIZES ("4K 16K 32K 64K 128K 256K 512K 1M 4M 16M"), BENCH_BW
# (500Mbit), BENCH_LAT (200us), BENCH_ITERS (5 timed, 1 warm-up).
# Needs bash >= 5.1 for experiments/launch.sh.
. "$(dirname "$0")/bench_lib.sh"
k=${BENCH_K:-8}
reps=${BENCH_REPS:-5}
sizes=${BENCH_SIZES:-"4K 16K 32K 64K 128K 256K 512K 1M 4M 16M"}
bw=${BENCH_BW:-500Mbit}
lat=${BENCH_LAT:-200us}
iters=${BENCH_ITERS:-5}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    reps=${BENCH_REPS:-1}
    sizes=${BENCH_SIZES:-"4K 64K 256K 1M 16M"}
    iters=${BENCH_ITERS:-3}
fi
bench_need ring_worker

for size in $sizes; do
    size_bytes "$size" >/dev/null || die_usage "BENCH_SIZES: '$size' is not a size like 4K"
done

# model ARGS...: bin/model's number for this run's K and link (the
# alpha-beta model, common/measure/model.h); later flags win.
model() {
    "$PSR_BIN/model" --K "$k" --bw "$bw" --latency "$lat" "$@"
}

# run ALGO SIZE: one launch.sh job; appends "time_s cpu_busy" to $tmp/ALGO,
# or "nan nan" with the reason on stderr.
run() {
    algo=$1 size=$2
    rm -rf "$tmp/row.csv" "$tmp/recs"
    bash "$launch" ring "$k" --worker-args "--algo $algo" --bench -b "$size" -e "$size" \
        -n "$iters" -w 1 --link-bw "$bw" --link-latency "$lat" --timeout 60 \
        --csv-out "$tmp/row.csv" --out "$tmp/recs" >/dev/null 2>"$tmp/err"
    if [ -s "$tmp/row.csv" ]; then
        echo "$(csv_col "$tmp/row.csv" time_s) $(cpu_busy "$tmp"/recs/rec.rank.*)" >>"$tmp/$algo"
    else
        echo "bench_rd.sh: $algo at $size failed: $(tail -c 300 "$tmp/err" | tr '\n' ' ')" >&2
        echo "nan nan" >>"$tmp/$algo"
    fi
}

# The link's numbers for the header: a in seconds, rate in bytes/s.
a=$(echo "$lat" | awk '/us$/ { print $0 * 1e-6; next } /ms$/ { print $0 * 1e-3; next } { print $0 + 0 }')
rate=$(echo "$bw" | awk '/Gbit$/ { print $0 * 1e9 / 8; next } /Mbit$/ { print $0 * 1e6 / 8; next }
                         /MB$/ { print $0 * 1e6; next } /GB$/ { print $0 * 1e9; next } { print $0 + 0 }')

{
    echo "# ring_worker --bench, ring vs --algo rd (recursive doubling), K = $k, float32, EMULATED link:"
    echo "# $bw ($rate bytes/s) per direction, $lat ($a s) one-way; $iters iterations after 1 warm-up;"
    echo "# time: per iteration the slowest rank, median over iterations (psr_merge), median of $reps"
    echo "# interleaved runs. model: ring 2(K-1)a + 2(K-1)/K n b, rd log2 K (a + n b) (fold: +2 steps)."
    echo "# ratio = ring / rd (> 1: rd faster); x = measured / model. cpu: share of the $(nproc) CPUs the"
    echo "# ranks used. verdict: host (a run kept the CPUs over 80% busy), steps (CPUs had room, but a"
    echo "# run took over 1.25 x its model: per-step host cost), link. $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "# size_bytes  ring_s     ring_model_s  rd_s       rd_model_s  ratio  model_ratio  ring_x  rd_x   ring_cpu  rd_cpu  verdict"
} | tee "$out/rd_vs_ring.dat"

for size in $sizes; do
    : >"$tmp/ring"; : >"$tmp/rd"
    i=0
    while [ $i -lt "$reps" ]; do
        run ring "$size"
        run rd "$size"
        i=$((i + 1))
    done
    n=$(size_bytes "$size")
    rt=$(awk '{ print $1 }' "$tmp/ring" | median)
    dt=$(awk '{ print $1 }' "$tmp/rd" | median)
    rc=$(awk '{ print $2 }' "$tmp/ring" | median)
    dc=$(awk '{ print $2 }' "$tmp/rd" | median)
    rm=$(model --algo ring --bytes "$n")
    dm=$(model --algo rd --bytes "$n")
    awk -v n="$n" -v rt="$rt" -v dt="$dt" -v rc="$rc" -v dc="$dc" -v rm="$rm" -v dm="$dm" 'BEGIN {
        ratio = (dt + 0 > 0) ? sprintf("%.2f", rt / dt) : "nan"
        verdict = (rc + 0 > 0.80 || dc + 0 > 0.80) ? "host" : \
                  (rt / rm > 1.25 || dt / dm > 1.25) ? "steps" : "link"
        printf "%11d  %-9.6f  %-12.6f  %-9.6f  %-10.6f  %-5s  %-11.2f  %-6.2f  %-5.2f  %-8s  %-6s  %s\n",
               n, rt, rm, dt, dm, ratio, rm / dm, rt / rm, dt / dm, rc, dc, verdict }' | tee -a "$out/rd_vs_ring.dat"
done

# The crossover, measured (from the table) and predicted (bin/model). The
# latency the runs paid per step, a_eff: at the smallest size, each
# algorithm's time less the model's bandwidth term (the model at latency
# 0), over its latency terms (steps).
n1=$(awk '!/^#/ && $6 != "nan" { print $1; exit }' "$out/rd_vs_ring.dat")
[ -n "$n1" ] || n1=1
awk -v a="$a" -v pred="$("$PSR_BIN/model" --crossover --K "$k" --bw "$bw" --latency "$lat")" \
    -v steps="$(model --algo rd --bytes 1 --quantity steps)" -v ring_steps="$(model --algo ring --bytes 1 --quantity steps)" \
    -v ring_bw="$(model --algo ring --bytes "$n1" --latency 0)" -v rd_bw="$(model --algo rd --bytes "$n1" --latency 0)" '
    !/^#/ && $6 != "nan" { n[++m] = $1; q[m] = $6; if (m == 1) { first_r = $2; first_d = $4 } }
    END {
        found = 0
        for (i = 2; i <= m; i++)            # the last crossing: noise may dip earlier
            if (q[i - 1] >= 1 && q[i] < 1)
                found = i
        if (found) {
            i = found
            f = log(q[i - 1]) / (log(q[i - 1]) - log(q[i]))
            x = exp(log(n[i - 1]) + f * (log(n[i]) - log(n[i - 1])))
            printf "# crossover measured: %.0f bytes (%.1f KiB), between %d and %d\n", x, x / 1024, n[i - 1], n[i]
        } else {
            print "# crossover measured: not within the sizes run"
        }
        printf "# crossover predicted: %.0f bytes (%.1f KiB) = (2(K-1) - %d) a / ((%d - 2(K-1)/K) b)\n",
               pred, pred / 1024, steps, steps
        if (m > 0 && first_r > 0 && first_d > 0) {
            ar = (first_r - ring_bw) / ring_steps
            ad = (first_d - rd_bw) / steps
            ae = (ar + ad) / 2
            printf "# a_eff (fitted at %d bytes): %.0f us per step; crossover with a_eff: %.0f bytes (%.1f KiB)\n",
                   n[1], ae * 1e6, pred * ae / a, pred * ae / a / 1024
        }
    }' "$out/rd_vs_ring.dat" | tee -a "$out/rd_vs_ring.dat"
exit 0
