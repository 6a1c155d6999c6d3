#!/usr/bin/env bash
# experiments/bench_overlap.sh -- gradient buckets and overlap with the
# backward pass, for the ring and the parameter server (issue 6): a
# bucket-size sweep and an overlap sweep, figures only (never pass/fail).
#
#   experiments/bench_overlap.sh [--quick] [--systems "ring ps"] [OUTDIR]
#                                                  (default results/overlap)
#
# Every job: experiments/launch.sh ring|ps K --workload synthetic --dtype
# f32, every process behind an EMULATED link (--link-bw, per process; the
# parameter server's one link carries K n each way), with an EMULATED
# backward time (--backward-time: a sleep spread over the layers, last
# layer first; the CPU stays free, as it would while a GPU computes).
# Overlap on and off run one after the other, so both see the same
# machine. Times are rank 0's (worker 0's) medians over the timed steps,
# from its "medians over N timed steps" line.
#
# How much can be hidden. The ring: all of the all-reduces (a bucket's
# all-reduce runs while later layers are computed), so the best step is
# max(backward, comm). The parameter server pulls per bucket
# (ps_worker/README.md): the weights of a bucket come back as soon as
# every worker has pushed it, while the next buckets are pushed, so all of
# its communication but the last bucket's pull can hide behind the
# backward pass: its best step is max(backward, comm - pull) + pull, with
# comm the worker's push-to-pull time (the CSV row's time_s) and pull one
# bucket's share of the server's egress (egress_s / buckets: a worker's
# push returns when its bytes are in the kernel's buffers, before the
# server's link has taken them, so the server's times are the ones to
# trust). Both are in the tables (best_s).
#
# (1) buckets_SYSTEM.dat, K = 2, BENCH_BK_PARAMS f32 parameters (default
#     32M: 128 MiB) as BENCH_BK_LAYERS equal layers (128: 1 MiB each), at
#     a fixed backward time, for bucket sizes 1M 5M 25M 100M and 1G (one
#     bucket for everything):
#       bucket_bytes nbuckets backward_s comm_s pull_s step_overlap_s
#       step_no_overlap_s best_s hidden
#     comm_s      the communication of a step without overlap (ring: the
#                 all-reduces; ps: first push to last pull, time_s), pull_s
#                 of it what cannot overlap (ps: one bucket's egress; 0 for
#                 the ring)
#     hidden      (step_no_overlap - step_overlap) / min(backward, comm -
#                 pull): the share of what could be hidden that was
# (2) overlap_SYSTEM_kK.dat, K = 2 and 4, BENCH_PARAMS (2M: 8 MiB) as
#     BENCH_LAYERS (16) layers, bucket size BENCH_BUCKET (512K: 16
#     buckets), for backward times of 1/2, 1 and 2 times that
#     job's communication time (measured first by a calibration run
#     without overlap and with a 1 ms backward time, so that every panel
#     spans the regime where the two are comparable, whatever the system
#     and K move):
#       backward_set_s backward_s comm_s pull_s step_overlap_s
#       step_no_overlap_s max_model_s sum_model_s best_s
#     max_model_s = max(backward, comm) (the issue's yardstick);
#     sum_model_s = backward + comm (no overlap); best_s as above; all from
#     the measured backward and comm of the run without overlap.
#
# The same columns go to stdout under '#' headers, with each overlapped
# step's ratio to max(backward, comm). At the end, if gnuplot is there,
# plots/overlap.gp draws OUTDIR/buckets.{png,svg} and
# OUTDIR/overlap.{png,svg}. Each job's output is kept in OUTDIR/logs/.
#
# --quick: fewer points (bucket sweep at 16 MiB with 1M 4M 1G buckets;
# overlap sweep K = 2 only, backward 1/2 and 2 times the communication). --systems: which
# systems (default "ring ps").
# WHY THESE DEFAULTS. The link must set the pace, not the 2 CPUs: every job
# says HOST-BOUND when its processes kept the CPUs over 80% busy. At 100
# Mbit/s one ring step of a 512 KiB bucket at K = 4 (128 KiB) takes 10 ms,
# well above a wake-up on a loaded scheduler; at 200 Mbit/s, K = 4 ranks and
# their 4 communication threads on 2 CPUs added ~85 ms to an overlapped
# step (1.20 x max(backward, comm) where the floor is 1.06; 1.055 at
# 100 Mbit/s, on the floor). The bucket sweep's backward is 2 s because the
# synthetic gradient of 32M elements costs ~0.8 s of CPU per rank, which
# must fit inside the EMULATED sleep.
# Environment: PSR_BIN (default bin/); BENCH_BW (100Mbit), BENCH_PARAMS (2M), BENCH_LAYERS (16), BENCH_BUCKET (512K),
# BENCH_KS ("2 4"), BENCH_FACTORS ("0.5 1 2"), BENCH_STEPS (3, one of
# them a warm-up); for the bucket
# sweep BENCH_BK_PARAMS (32M), BENCH_BK_LAYERS (128), BENCH_BK_BW
# (2Gbit), BENCH_BK_BWD (2s), BENCH_BK_STEPS (3). Needs bash >= 5.1
# (experiments/launch.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
launch="$here/launch.sh"
prog=bench_overlap.sh

quick=0
out=results/overlap
systems="ring ps"
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1; shift ;;
        --systems) systems=${2:-}; shift 2 ;;
        --help|-h) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die_usage "$(shown_value "$1"): unknown option" ;;
        *) out=$1; shift ;;
    esac
done
for s in $systems; do
    case $s in ring|ps) ;; *) usage_error --systems "$s" "not ring and/or ps" ;; esac
done

bw=${BENCH_BW:-100Mbit}
params=${BENCH_PARAMS:-2M}
layers=${BENCH_LAYERS:-16}
bucket=${BENCH_BUCKET:-512K}
ks=${BENCH_KS:-2 4}
steps=${BENCH_STEPS:-3}
factors=${BENCH_FACTORS:-0.5 1 2}
bk_params=${BENCH_BK_PARAMS:-32M}
bk_layers=${BENCH_BK_LAYERS:-128}
bk_bw=${BENCH_BK_BW:-2Gbit}
bk_bwd=${BENCH_BK_BWD:-2s}
bk_steps=${BENCH_BK_STEPS:-3}
sizes="1M 5M 25M 100M 1G"
if [ "$quick" = 1 ]; then
    bk_params=${BENCH_BK_PARAMS:-4M}
    bk_layers=${BENCH_BK_LAYERS:-16}
    sizes="1M 4M 1G"
    factors=${BENCH_FACTORS:-0.5 2}
    ks=${BENCH_KS:-2}
fi

for b in ring_worker ps_server ps_worker; do
    [ -x "$PSR_BIN/$b" ] || { echo "$prog: no $b in $PSR_BIN (run make)" >&2; exit 1; }
done
mkdir -p "$out/logs" || exit 1
t0=$SECONDS

# secs TIME: 200ms -> 0.2.
secs() {
    case $1 in
        *ms) awk -v x="${1%ms}" 'BEGIN { print x / 1000 }' ;;
        *s) echo "${1%s}" ;;
        *) echo "$1" ;;
    esac
}

# overlap_job TAG SYSTEM K PARAMS LAYERS LINK BACKWARD BUCKET STEPS
# [--no-overlap]: one job; prints "nbuckets backward_s comm_s pull_s step_s" (rank 0's, or
# worker 0's, medians), or fails naming the job and its log.
overlap_job() {
    local tag=$1 sys=$2 k=$3 p=$4 l=$5 link=$6 b=$7 size=$8 st=$9; shift 9
    local log="$out/logs/$tag.log" who line nb
    local common=(--workload synthetic --params "$p" --layers "$l" --dtype f32 --steps "$st"
                  --warmup 1 --backward-time "$b" --link-bw "$link" --time-limit 300)
    local what="job $tag ($sys K=$k, backward $b, bucket $size $*)"
    if [ "$sys" = ring ]; then
        job "$what" "$log.csv" "$log" "$launch" ring "$k" "${common[@]}" --bucket-size "$size" "$@" || return 1
        who=rank0
    else
        job "$what" "$log.csv" "$log" "$launch" ps "$k" "${common[@]}" --worker-args "--bucket-size $size $*" || return 1
        who=worker0
    fi
    # The pace should be the EMULATED link's; say so when the CPUs set it
    # (psr_merge's host_bound: the machine's load, common/measure/hostload.h).
    [ "$(csv_col "$log.csv" host_bound)" != 1 ] ||
        echo "$prog: $tag: HOST-BOUND (the CPUs, not the emulated link, set the pace)" >&2
    line=$(grep "$who|.*medians over" "$log" | tail -n 1)
    [ -n "$line" ] || { echo "$prog: job $tag: no medians line in $log" >&2; return 1; }
    # The parameter server: its communication is the worker's first push
    # to its last pull (the CSV row's time_s, the slowest worker's
    # median); what cannot hide is the last bucket's pull, one bucket's
    # share of the server's egress (egress_s: the server's link, not the
    # kernel buffers a push returns into).
    local io=""
    [ "$sys" = ps ] && io="$(csv_col "$log.csv" time_s) $(csv_col "$log.csv" egress_s)"
    echo "$line $io" | awk -v sys="$sys" '{
        nb = 1
        for (i = 1; i <= NF; i++) {
            if ($i == "step") st = $(i + 1)
            if ($i == "backward" && bw == "") bw = $(i + 1)
            if ($i == "all-reduces") cm = $(i + 1)
            if ($i ~ /^\(/ && $(i + 1) ~ /^bucket/) nb = substr($i, 2) + 0
        }
        if (sys == "ps") print nb, bw, $(NF - 1), $NF / nb, st    # time_s, a bucket of egress
        else print nb, bw, cm, 0, st }'
}

# ------------------------------------------------------------ (1) buckets
for sys in $systems; do
    {
        echo "# bucket-size sweep: $sys, K = 2, $bk_params f32 params ($(( $(size_bytes "$bk_params") * 4 )) bytes)" \
             "in $bk_layers layers, link $bk_bw (EMULATED),"
        echo "# EMULATED backward time $bk_bwd; medians over $(( bk_steps - 1 )) timed steps (rank 0)"
        echo "# bucket_bytes nbuckets backward_s comm_s pull_s step_overlap_s step_no_overlap_s best_s hidden"
    } | tee "$out/buckets_$sys.dat"
    for size in $sizes; do
        on=$(overlap_job "bucket_${sys}_${size}_on" "$sys" 2 "$bk_params" "$bk_layers" "$bk_bw" "$bk_bwd" \
                 "$size" "$bk_steps") || exit 1
        off=$(overlap_job "bucket_${sys}_${size}_off" "$sys" 2 "$bk_params" "$bk_layers" "$bk_bw" "$bk_bwd" \
                  "$size" "$bk_steps" --no-overlap) || exit 1
        # backward and comm from the run without overlap (nothing to share
        # the time with); the step with overlap from the other.
        echo "$(size_bytes "$size") $on $off" | awk '{
            nb = $7; b = $8; c = $9; p = $10; son = $6; soff = $11
            hid = c - p; m = (b < hid ? b : hid); best = (b > hid ? b : hid) + p
            printf "%d %d %.4f %.4f %.4f %.4f %.4f %.4f %.3f\n", $1, nb, b, c, p, son, soff, best,
                   (m > 0 ? (soff - son) / m : 0) }'
    done | tee -a "$out/buckets_$sys.dat"
    echo
done

# ------------------------------------------------------------ (2) overlap
for sys in $systems; do
    for k in $ks; do
        {
            echo "# overlap sweep: $sys, K = $k, $params f32 params in $layers layers, link $bw (EMULATED)," \
                 "bucket size $bucket;"
            echo "# EMULATED backward time varied; models from the measured backward and comm"
            echo "# backward_set_s backward_s comm_s pull_s step_overlap_s step_no_overlap_s max_model_s" \
                 "sum_model_s best_s"
        } | tee "$out/overlap_${sys}_k$k.dat"
        calib=$(overlap_job "overlap_${sys}_k${k}_calib" "$sys" "$k" "$params" "$layers" "$bw" 1ms \
                     "$bucket" "$steps" --no-overlap) || exit 1
        comm=$(echo "$calib" | awk '{ print $3 }')
        echo "# calibration (1 ms backward, no overlap): communication $comm s per step"
        for f in $factors; do
            b=$(awk -v f="$f" -v c="$comm" 'BEGIN { printf "%dms", f * c * 1000 + 0.5 }')
            on=$(overlap_job "overlap_${sys}_k${k}_${b}_on" "$sys" "$k" "$params" "$layers" "$bw" "$b" \
                     "$bucket" "$steps") || exit 1
            off=$(overlap_job "overlap_${sys}_k${k}_${b}_off" "$sys" "$k" "$params" "$layers" "$bw" "$b" \
                      "$bucket" "$steps" --no-overlap) || exit 1
            echo "$(secs "$b") $on $off" | awk '{
                b = $8; c = $9; p = $10; son = $6; soff = $11; hid = c - p
                printf "%.3f %.4f %.4f %.4f %.4f %.4f %.4f %.4f %.4f\n", $1, b, c, p, son, soff,
                       (b > c ? b : c), b + c, (b > hid ? b : hid) + p }'
        done | tee -a "$out/overlap_${sys}_k$k.dat"
        awk '!/^#/ && $7 > 0 { printf "#   backward %.0f ms: overlapped step / max(backward, comm) = %.2f, / best = %.2f\n",
                              1e3 * $2, $5 / $7, $5 / $9 }' "$out/overlap_${sys}_k$k.dat"
        echo
    done
done

echo "# $prog: $(( SECONDS - t0 )) s of jobs"

# ------------------------------------------------------------ plots
if command -v gnuplot >/dev/null 2>&1; then
    sub_bk="K = 2, $bk_params f32 params in $bk_layers layers, link $bk_bw (EMULATED), backward a sleep (EMULATED)"
    sub_ov="$params f32 params in $layers layers, link $bw (EMULATED), backward a sleep (EMULATED)"
    for fmt in png svg; do
        gnuplot -e "dir='$here/../plots/'; data='$out'; fmt='$fmt'; sub_bk='$sub_bk'; sub_ov='$sub_ov'; systems='$systems'; ks='$ks'; bwd='$bk_bwd'; bucket='$bucket'" \
            "$here/../plots/overlap.gp" || { echo "$prog: gnuplot failed" >&2; exit 1; }
    done
    echo "# plots: $out/buckets.png $out/overlap.png (and .svg)"
else
    echo "# no gnuplot: no plots (the .dat files are in $out)"
fi
