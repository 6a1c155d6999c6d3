#!/usr/bin/env bash
# lab_zero.sh -- the ZeRO section of the lab (`experiments/lab.sh --only
# zero`; not part of the default `make lab`): what each ZeRO stage moves
# and keeps per rank, against K, measured.
#
#   1. bytes and accounted memory: the mlp workload (n = 6337, f64, Adam)
#      on a ring of K ranks for each stage (--zero 0, the all-reduce, DDP;
#      1; 2; 3): rank 0's bytes sent per step (the link's counters, the
#      CSV's bytes_out) and its memory line (parameters, gradients kept
#      after the reduce-scatter, optimizer state; train.h, MEMORY), and
#      whether the final weights are DDP's bit for bit;
#   2. the optimizer state in the RSS: the synthetic workload at --params
#      P (default 16M f32 elements: 64 MiB of parameters) with --zero 1,
#      once with sgd and once with adam: rank 0's peak RSS (VmHWM) for each;
#      RSS(adam) - RSS(sgd) against 2 n e / K (Adam's two moments of the
#      rank's shard; docs/design.md, Optimizers and ZeRO);
#   3. zero.png (plots/zero.gp): bytes per step and memory per rank against
#      K, by stage.
#
# Results: <out>/zero.csv (part 1), <out>/zero_rss.csv (part 2), the plot,
# logs/ (every job's stderr). The machine's load makes no difference to
# bytes and memory: they are counts, not times.
set -uo pipefail

prog=lab.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
stop_on_interrupt

ks="2 3 4 5 6 7 8"
params=16M
steps=3
out=
quick=0

usage() {
    cat <<EOF
usage: experiments/lab.sh --only zero [--out DIR] [--quick] [--ks "K ..."] [--params N]
The ZeRO section: bytes and memory per rank for --zero 0..3 against K.
  --ks "K ..."   ring sizes (default "$ks")
  --params N     synthetic parameters for the RSS measurement (default $params
                 elements of f32)
  --out DIR      results folder (default results/<date-time>)
  --quick        K 2 3, --params 256K (for tests and the handout)
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    --ks | --params | --out)
        [ $# -ge 2 ] || die_usage "--only zero: $1: missing value"
        [ -n "$2" ] || usage_error "$1" "" "empty value" ;;
    esac
    case $1 in
    --ks) ks=$2; shift 2 ;;
    --params) params=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick=1; ks="2 3"; params=256K; shift ;;
    --help|-h) usage; exit 0 ;;
    *) die_usage "--only zero: $(shown_value "$1"): unknown option" ;;
    esac
done
[ -n "${ks// /}" ] || usage_error --ks "$ks" "no ring size (give e.g. \"2 4\")"
for k in $ks; do
    [[ $k =~ ^[1-9][0-9]?$ ]] || usage_error --ks "$ks" "'$k' is not a ring size 1..99"
done
np=$(size_bytes "$params") && [ "$np" -gt 0 ] || usage_error --params "$params" "not a count like 16M (at least 1)"
need_programs ring_worker psr_merge psr_json gnuplot
make_out logs
launch=$here/launch.sh

# ring NAME K ZERO FLAGS...: one job; its row in $out/logs/NAME.csv, its
# stderr in $out/logs/NAME.err, its weights in $out/logs/NAME.w.0.
ring() {
    local n=$1 k=$2 z=$3
    shift 3
    job "ring $k --zero $z $*" /dev/null "$out/logs/$n.err" \
        bash "$launch" ring "$k" --timeout 60 --csv-out "$out/logs/$n.csv" \
        --weights-out "$out/logs/$n.w" --worker-args "--zero $z" "$@"
}

# rank0 NAME FIELD: a number from rank 0's memory line ("parameters",
# "state", "kept" is the gradient kept, "RSS" the peak).
rank0() {
    awk -v f="$2" '/^rank0\| .*memory \(--zero/ {
        for (i = 2; i <= NF; i++) {
            if (f == "kept" && $i == "kept") { v = $(i - 2); sub(/^\(/, "", v) }
            else if (f != "kept" && $(i - 1) == f) v = $i
        }
        print v; exit }' "$out/logs/$1.err"
}

say "ZeRO section: K $ks; part 1: mlp f64 adam, --zero 0..3; part 2: synthetic $params f32, --zero 1, sgd and adam"
echo "K,stage,bytes_out,ratio_to_ddp,params_B,grads_kept_B,optim_B,total_B,same_as_ddp" >"$out/zero.csv"
for k in $ks; do
    ddp=
    for z in 0 1 2 3; do
        ring "z$k.$z" "$k" "$z" --workload mlp --steps "$steps" --optimizer adam --lr 0.01 || exit 1
        b=$(csv_col "$out/logs/z$k.$z.csv" bytes_out | tail -n 1)
        [ -n "$ddp" ] || ddp=$b
        same=0
        cmp -s "$out/logs/z$k.0.w.0" "$out/logs/z$k.$z.w.0" && same=1
        p=$(rank0 "z$k.$z" parameters) g=$(rank0 "z$k.$z" kept) s=$(rank0 "z$k.$z" state)
        echo "$k,$z,$b,$(awk -v a="$b" -v d="$ddp" 'BEGIN { printf "%.4f", a / d }'),$p,$g,$s,$((p + g + s)),$same" \
            >>"$out/zero.csv"
    done
done

echo "K,params,rss_sgd_B,rss_adam_B,diff_B,predicted_B,ratio" >"$out/zero_rss.csv"
for k in $ks; do
    for opt in sgd adam; do
        ring "r$k.$opt" "$k" 1 --workload synthetic --params "$np" --dtype f32 --steps 2 \
            --warmup 1 --optimizer "$opt" || exit 1
    done
    a=$(rank0 "r$k.adam" RSS) s=$(rank0 "r$k.sgd" RSS)
    # Adam's state for rank 0's chunk of the n + 3 elements (the trailer
    # is no parameter): 2 x 4 x ceil((n + 3) / K) bytes.
    pred=$(( 2 * 4 * ((np + 3 + k - 1) / k) ))
    echo "$k,$np,$s,$a,$((a - s)),$pred,$(awk -v d=$((a - s)) -v p=$pred 'BEGIN { printf "%.3f", d / p }')" \
        >>"$out/zero_rss.csv"
done

gnuplot -e "zfile='$out/zero.csv'; rfile='$out/zero_rss.csv'; dir='$root/plots/'; fmt='png'; out='$out/zero.png'" \
    "$root/plots/zero.gp" 2>"$out/logs/zero.gp.err" || { say "plots/zero.gp failed: $(head -c 300 "$out/logs/zero.gp.err")"; exit 1; }
json_beside "$out" || exit 1
say "wrote $out/zero.csv, $out/zero_rss.csv (and .json beside each), $out/zero.png"
csv_table "$out/zero.csv" >&2
csv_table "$out/zero_rss.csv" >&2
