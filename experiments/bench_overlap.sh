#!/usr/bin/env bash
# experiments/bench_overlap.sh -- the ring's gradient buckets and overlap
# (issue 6): a bucket-size sweep and an overlap sweep, figures only.
#
#   experiments/bench_overlap.sh [--quick] [OUTDIR]     (default results/overlap)
#
# Every job: experiments/launch.sh ring 2 --workload synthetic --params 2M
# --dtype f32 (8 MiB of gradient in the synthetic workload's 8 layers of
# 1 MiB) --link-bw 200Mbit (EMULATED link, per process) --steps 5 --warmup 1,
# with an EMULATED backward time (--backward-time: a sleep, spread over the
# layers, last layer first; the CPU stays free as it would while a GPU
# computes). Overlap on and off run one after the other, so both see the
# same machine. Times are rank 0's medians over the timed steps: its
# "medians over N timed steps" line, or, for one bucket (ring_worker logs
# no such line then), its --trace timeline: step = end of the all-reduce
# minus start of the backward pass plus the optimizer (the closed-form
# check between them is left out, as in the medians line).
#
# (1) buckets.dat, at a fixed backward time (BENCH_BWD, 200ms), for each
#     bucket size (256K 1M 2M 4M and 1G = one bucket). Buckets hold whole
#     layers, so a bucket smaller than a layer (256K) still holds one:
#     the count column says how many buckets the gradient really had.
#       bucket_bytes  nbuckets  backward_s  comm_s  step_overlap_s
#       step_no_overlap_s  hidden
#     comm_s      the all-reduces of a step without overlap
#     hidden      (step_no_overlap - step_overlap) / min(backward, comm):
#                 the share of what could be hidden that was hidden
# (2) overlap.dat, at a fixed bucket size (BENCH_BUCKET, 1M), for each
#     backward time (50 100 200 400 800 ms):
#       backward_set_s  backward_s  comm_s  step_overlap_s
#       step_no_overlap_s  max_model_s  sum_model_s
#     max_model_s = max(backward, comm), perfect overlap;
#     sum_model_s = backward + comm, none (measured backward and comm).
#
# The same columns go to stdout under '#' headers. At the end, if gnuplot
# is there, plots/overlap.gp draws OUTDIR/buckets.{png,svg} and
# OUTDIR/overlap.{png,svg}. Each job's output is kept in OUTDIR/logs/.
#
# --quick: fewer points (bucket sizes 1M 4M 1G; backward 100 400 ms).
# Environment: PSR_BIN (default bin/), BENCH_BWD (200ms), BENCH_BUCKET (1M),
# BENCH_BW (200Mbit), BENCH_PARAMS (2M), BENCH_STEPS (5, one of them a
# warm-up). Needs bash >= 5.1 (experiments/launch.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${PSR_BIN:=$here/../bin}"
export PSR_BIN
launch="$here/launch.sh"
prog=bench_overlap.sh

quick=0
out=results/overlap
for a in "$@"; do
    case $a in
        --quick) quick=1 ;;
        --help|-h) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "$prog: unknown option $a (usage: $prog [--quick] [OUTDIR])" >&2; exit 64 ;;
        *) out=$a ;;
    esac
done

bwd=${BENCH_BWD:-200ms}
bucket=${BENCH_BUCKET:-1M}
bw=${BENCH_BW:-200Mbit}
params=${BENCH_PARAMS:-2M}
steps=${BENCH_STEPS:-5}
sizes="256K 1M 2M 4M 1G"
bwds="50ms 100ms 200ms 400ms 800ms"
if [ "$quick" = 1 ]; then
    sizes="1M 4M 1G"
    bwds="100ms 400ms"
fi

[ -x "$PSR_BIN/ring_worker" ] || { echo "$prog: no ring_worker in $PSR_BIN (run make)" >&2; exit 1; }
mkdir -p "$out/logs" || exit 1
t0=$SECONDS

# bytes SIZE: 256K -> 262144 (K, M, G suffixes).
bytes() {
    case $1 in
        *K) echo $(( ${1%K} * 1024 )) ;;
        *M) echo $(( ${1%M} * 1048576 )) ;;
        *G) echo $(( ${1%G} * 1073741824 )) ;;
        *) echo "$1" ;;
    esac
}
# secs TIME: 200ms -> 0.2.
secs() {
    case $1 in
        *ms) awk -v x="${1%ms}" 'BEGIN { print x / 1000 }' ;;
        *s) echo "${1%s}" ;;
        *) echo "$1" ;;
    esac
}

# job TAG BACKWARD BUCKET [--no-overlap]: run one job; prints
# "nbuckets backward_s comm_s step_s" (rank 0's medians), or fails naming
# the job and its log.
job() {
    local tag=$1 b=$2 size=$3; shift 3
    local log="$out/logs/$tag.log" tr="$out/logs/$tag.trace"
    rm -f "$tr".*
    if ! "$launch" ring 2 --workload synthetic --params "$params" --dtype f32 \
            --steps "$steps" --warmup 1 --backward-time "$b" --link-bw "$bw" \
            --bucket-size "$size" --trace "$tr" "$@" --time-limit 120 >"$log.csv" 2>"$log"; then
        echo "$prog: job $tag failed (backward $b, bucket $size $*); see $log:" >&2
        tail -n 3 "$log" >&2
        return 1
    fi
    local line nb
    line=$(grep 'rank0|.*medians over' "$log" | tail -n 1)
    nb=$(sed -n 's/.*rank0|.* \([0-9][0-9]*\) buckets of .*/\1/p' "$log" | head -n 1)
    if [ -n "$line" ]; then
        echo "$line" | awk -v nb="${nb:-1}" '{
            for (i = 1; i <= NF; i++) {
                if ($i == "step") st = $(i + 1)
                if ($i == "backward" && bw == "") bw = $(i + 1)
                if ($i == "all-reduces") cm = $(i + 1)
            }
            print nb, bw, cm, st }'
    else
        # One bucket: from rank 0's trace (Chrome JSON, one event a line).
        [ -s "$tr.0" ] || { echo "$prog: job $tag: no medians line and no trace $tr.0" >&2; return 1; }
        awk -v warm=1 '
            function num(k,   m) { m = $0; sub(".*\"" k "\":", "", m); sub("[,}].*", "", m); return m + 0 }
            /"ph":"X"/ {
                s = num("step"); if (s < warm) next
                if ($0 ~ /"name":"backward"/) { b0[s] = num("ts"); bd[s] = num("dur") }
                else if ($0 ~ /"name":"allreduce"/) { a1[s] = num("ts") + num("dur"); ad[s] += num("dur") }
                else if ($0 ~ /"name":"optimizer"/) od[s] = num("dur")
            }
            function med(x, n,   i, j, t) {
                for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
                return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
            }
            END {
                n = 0
                for (s in b0) if (s in a1) { n++; B[n] = bd[s] / 1e6; C[n] = ad[s] / 1e6; S[n] = (a1[s] - b0[s] + od[s]) / 1e6 }
                if (n == 0) exit 1
                printf "1 %.4f %.4f %.4f\n", med(B, n), med(C, n), med(S, n)
            }' "$tr.0" || { echo "$prog: job $tag: no timed steps in $tr.0" >&2; return 1; }
    fi
}

# ------------------------------------------------------------ (1) buckets
{
    echo "# bucket-size sweep: ring, K = 2, $params f32 params ($(( $(bytes "$params") * 4 )) bytes), link $bw (EMULATED),"
    echo "# EMULATED backward time $bwd; medians over $(( steps - 1 )) timed steps (rank 0)"
    echo "# bucket_bytes nbuckets backward_s comm_s step_overlap_s step_no_overlap_s hidden"
} | tee "$out/buckets.dat"
for size in $sizes; do
    on=$(job "bucket_${size}_on" "$bwd" "$size") || exit 1
    off=$(job "bucket_${size}_off" "$bwd" "$size" --no-overlap) || exit 1
    # backward and comm from the run without overlap (nothing to share the
    # time with); the step with overlap from the other.
    echo "$(bytes "$size") $on $off" | awk '{
        nb = $6; b = $7; c = $8; son = $5; soff = $9
        m = (b < c ? b : c)
        printf "%d %d %.4f %.4f %.4f %.4f %.3f\n", $1, nb, b, c, son, soff, (m > 0 ? (soff - son) / m : 0) }'
done | tee -a "$out/buckets.dat"

# ------------------------------------------------------------ (2) overlap
echo
{
    echo "# overlap sweep: ring, K = 2, $params f32 params, link $bw (EMULATED), bucket size $bucket,"
    echo "# EMULATED backward time varied; models from the measured backward and comm"
    echo "# backward_set_s backward_s comm_s step_overlap_s step_no_overlap_s max_model_s sum_model_s"
} | tee "$out/overlap.dat"
for b in $bwds; do
    on=$(job "overlap_${b}_on" "$b" "$bucket") || exit 1
    off=$(job "overlap_${b}_off" "$b" "$bucket" --no-overlap) || exit 1
    echo "$(secs "$b") $on $off" | awk '{
        b = $7; c = $8; son = $5; soff = $9
        printf "%.3f %.4f %.4f %.4f %.4f %.4f %.4f\n", $1, b, c, son, soff, (b > c ? b : c), b + c }'
done | tee -a "$out/overlap.dat"

echo "# $prog: $(( SECONDS - t0 )) s of jobs"

# ------------------------------------------------------------ plots
if command -v gnuplot >/dev/null 2>&1; then
    sub="ring, K = 2, $params f32 params, link $bw (EMULATED), EMULATED backward time (a sleep)"
    for fmt in png svg; do
        gnuplot -e "dir='$here/../plots/'; data='$out'; fmt='$fmt'; sub='$sub'; bwd='$bwd'; bucket='$bucket'" \
            "$here/../plots/overlap.gp" || { echo "$prog: gnuplot failed" >&2; exit 1; }
    done
    echo "# plots: $out/buckets.png $out/overlap.png (and .svg)"
else
    echo "# no gnuplot: no plots (the .dat files are in $out)"
fi
