#!/usr/bin/env bash
# lab_loss.sh -- the lab's loss curves (plot 5): short linreg trainings of
# both systems and the reference on the same data, correct and with each
# mistake mode, drawn by plots/loss.gp.
#
#   experiments/lab_loss.sh [--steps S] [--lr X] DIR
#
# Every run: K = 4 workers on 127.0.0.1 (experiments/launch.sh), linreg
# (the seeds' least squares, f64), --micro 4 and --shard-weights 5,1,1,3,
# so that every mistake shows (mean-of-means needs unequal shards, the
# three micro-batch mistakes need m > 1); the correct run is the big batch
# whatever the split, which the left panel shows. Into DIR:
#   loss_ref.dat                  bin/reference
#   loss_ps.dat, loss_ring.dat    the correct runs (the server's and ring
#                                 rank 0's --loss-out)
#   loss_ps_M.dat, loss_ring_M.dat    with --mistake M, for each mode M
#   loss.png, loss.svg            plots/loss.gp over them
#   logs/loss_*.log               every run's stderr
#
# WHY lr 0.25 (the lab's, not the binaries' 0.05): the correct run then
# reaches the noise floor (0.0097) in about 10 steps, while no-divide-micro's
# 4 x larger step (lr 1.0 in effect) is past the stable limit and diverges,
# the way "m times too large" goes wrong in practice; at 0.05 it would only
# converge faster. sum-not-mean (x 4096) diverges at any lr; in f64 its 30
# steps stay finite (about 1e198), so the run completes and is plotted.
#
# About 11 short jobs: a few seconds on 2 cores. Exit status 0; 1 when a
# run or the plot failed (named, with its log); 2 without gnuplot or a
# program; 64 for bad arguments. Binaries from $PSR_BIN (default bin/).
set -uo pipefail

prog=lab_loss.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
stop_on_interrupt

steps=30
lr=0.25
K=4
shards=5,1,1,3
micro=4
mistakes="sum-not-mean no-divide-micro mean-of-means zero-grad-inside sync-every-micro"

usage() {
    cat <<EOF
usage: experiments/lab_loss.sh [--steps S] [--lr X] DIR
The lab's loss curves: the parameter server, the ring and bin/reference on
linreg (K = $K, --micro $micro, --shard-weights $shards), correct and with each
--mistake, as "# step loss" files in DIR and DIR/loss.png, DIR/loss.svg.
  --steps S   steps per run (default $steps)
  --lr X      learning rate (default $lr)
  --help      this text
EOF
}

dir=
while (($# > 0)); do
    case $1 in
    --steps) (($# >= 2)) || die_usage "--steps: missing value"; steps=$2; shift 2 ;;
    --lr) (($# >= 2)) || die_usage "--lr: missing value"; lr=$2; shift 2 ;;
    --help | -h) usage; exit 0 ;;
    --version) echo "lab_loss.sh (psring)"; exit 0 ;;
    -*) die_usage "$(shown_value "$1"): unknown option" ;;
    *) [[ -z $dir ]] || die_usage "one DIR only ('$dir', '$1')"; dir=$1; shift ;;
    esac
done
[[ -n $dir ]] || die_usage "missing DIR"
[[ $steps =~ ^[1-9][0-9]{0,5}$ ]] || usage_error --steps "$steps" "not a step count"
need_programs gnuplot reference ps_server ps_worker ring_worker psr_merge
mkdir -p "$dir/logs" || die_usage "cannot create '$dir/logs'"
dir=$(cd "$dir" && pwd)

common=(--steps "$steps" --lr "$lr" --micro "$micro" --shard-weights "$shards")
failed=0

# reference: the single-process run (its stdout has the same lines).
if ! "$PSR_BIN/reference" --world "$K" "${common[@]}" --loss-out "$dir/loss_ref.dat" \
    >/dev/null 2>"$dir/logs/loss_ref.log"; then
    echo "$prog: bin/reference failed: $(tail -n 1 "$dir/logs/loss_ref.log")" >&2
    failed=1
fi

# loss_run SYS NAME [FLAGS...]: one K = 4 run of SYS (ps or ring) writing
# $dir/loss_NAME.dat.
loss_run() {
    local sys=$1 name=$2 role
    shift 2
    if [[ $sys == ps ]]; then role=--server-args; else role=--worker-args; fi
    rm -f "$dir/loss_$name.dat"
    if job "$name" /dev/null "$dir/logs/loss_$name.log" "$here/launch.sh" "$sys" "$K" "${common[@]}" \
        --timeout 10 --time-limit 60 "$@" "$role" "--loss-out $dir/loss_$name.dat"; then
        echo "$prog: $name: $(grep -vc '^#' "$dir/loss_$name.dat") steps, final loss $(tail -n 1 "$dir/loss_$name.dat" | cut -d' ' -f2)" >&2
    else
        failed=1
    fi
}

for sys in ps ring; do
    loss_run "$sys" "$sys"
    for m in $mistakes; do
        loss_run "$sys" "${sys}_$m" --mistake "$m"
    done
done

# The left panel's claim, in numbers: the largest relative difference of
# each system's loss from the reference's.
maxrel() {
    awk '/^#/ { next } NR == FNR { r[$1] = $2; next }
         ($1 in r) { d = $2 - r[$1]; if (d < 0) d = -d; b = r[$1] < 0 ? -r[$1] : r[$1]
                     if (b > 0 && d / b > m) m = d / b }
         END { printf "%.1e", m }' "$1" "$2"
}
note=
if [[ -s $dir/loss_ref.dat && -s $dir/loss_ps.dat && -s $dir/loss_ring.dat ]]; then
    note="largest relative difference from the reference: PS $(maxrel "$dir/loss_ref.dat" "$dir/loss_ps.dat"), ring $(maxrel "$dir/loss_ref.dat" "$dir/loss_ring.dat")"
fi
sub="linreg f64, K = $K, --micro $micro, --shard-weights $shards, lr $lr, $steps steps"
for fmt in png svg; do
    if ! gnuplot -e "dir='$root/plots/'; data='$dir'; fmt='$fmt'; out='$dir/loss.$fmt'; sub='$sub'; note='$note'" \
        "$root/plots/loss.gp" 2>"$dir/logs/loss_plot_$fmt.log"; then
        echo "$prog: plots/loss.gp failed ($fmt): $(head -c 300 "$dir/logs/loss_plot_$fmt.log")" >&2
        failed=1
    fi
done
((failed)) && exit 1
echo "$prog: loss curves in $dir (loss.png, loss.svg; $note)" >&2
exit 0
