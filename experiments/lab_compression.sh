#!/usr/bin/env bash
# lab_compression.sh -- the compression section of the lab (`experiments/
# lab.sh --only compression`; not in the default `make lab`): time to
# accuracy with a compressed gradient, and the break-even bandwidth where
# compression stops paying (issue 30, item 4).
#
#   1. the runs: the mlp workload, K workers (default 4), seed 7, a fixed
#      number of steps, on an EMULATED link (--link-bw RATE, --link-latency
#      LAT) at each rate, every compressor on the system it fits:
#        ring   none, fp16, powersgd:2, topk:0.01 (top-k as an all-gather)
#        ps     none, sign, topk:0.01 (sparse pushes, dense weights back)
#      each with --loss-time-out (the loss per step and its wall-clock
#      time, ring rank 0's or the server's);
#   2. per run: the steps to the target loss (the first step whose loss is
#      at or under --target-loss) and the time to it (that step's wall_s),
#      from the loss file; step_s from the CSV row (psr_merge's);
#   3. per system and compressor, the BREAK-EVEN BANDWIDTH, where the
#      compressed run is as fast as the uncompressed one on its system:
#        measured   time to target T(r) = A + B / r fitted (least squares
#                   in 1/r) over the rates run, for the compressor and for
#                   none; r* = (B_none - B_c) / (A_c - A_none). In the
#                   rates run ("in") it is an interpolation; outside them
#                   ("out") an extrapolation of the fit. A_c <= A_none
#                   (compression pays at every rate) is "inf"; too few
#                   rates or runs that never reached the target, "nan";
#        predicted  the same on bin/model's step time (its alpha-beta
#                   time plus the compressor's own cost, measured by
#                   bin/model: compress_cost, psgd_cost), a + b / bw
#                   exactly, so two queries give a and b. PowerSGD:
#                   bin/model reshapes a vector near-square, the mlp sends
#                   its layers' factors (644 elements a step at R = 2,
#                   docs/design.md), so it is priced here as two ring
#                   all-reduces of 322 elements each plus psgd_cost per
#                   element of the gradient.
#      The measured break-even is on time to target (which also counts a
#      compressor's extra steps); breakeven_step_bps is the same fit on
#      the measured step_s, like for like with the predicted one;
#   4. compression.png: the loss against wall-clock time, one panel per
#      rate, one line per system and compressor, the target dashed;
#      compression_steps.png: the loss against the step (one panel per
#      system; the rates' curves of one compressor lie on top of each
#      other, the step does not depend on the link); SVG twins.
#
# Results: <out>/compression.csv (psr_merge's columns, then compressor,
# rate, rate_bps, steps_to_target, time_to_target_s, breakeven_bps,
# breakeven_where, breakeven_step_bps, breakeven_step_where,
# predicted_bps, by name), <out>/compression.txt (the
# table), <out>/loss/, logs/. Timings on a shared 2-core machine are
# noisy: nothing here asserts one.
set -uo pipefail

prog=lab.sh
intr_cmd="experiments/lab.sh --only compression${*:+ $*}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
stop_on_interrupt

k=4
rates="8Mbit 32Mbit 128Mbit"
ring_c="none fp16 powersgd:2 topk:0.01"
ps_c="none sign topk:0.01"
steps=60
lr=0.05
lat=1ms
target=0.1
out=
timeout=60
mlp_elems=6337          # MLP_PARAMS (common/train/mlp.h)
psgd_elems=644          # the mlp's factors at R = 2 (docs/design.md, Compression)

usage() {
    cat <<EOF
usage: experiments/lab.sh --only compression [--out DIR] [--quick] [options]
The compression section: the mlp (seed 7) on K workers at several EMULATED
link rates, every compressor on the system it fits; loss against step and
time, and the break-even bandwidth, measured and predicted (bin/model).
  --K K              workers (default $k)
  --rates "R ..."    link rates, NMbit/NGbit/Nkbit (default "$rates")
  --ring "C ..."     the ring's compressors (default "$ring_c"; "" none)
  --ps "C ..."       the PS's compressors (default "$ps_c"; "" none)
  --steps S          steps per run (default $steps)
  --lr X             learning rate (default $lr)
  --link-latency T   the link's one-way latency (default $lat)
  --target-loss X    the loss whose first crossing is the target (default $target)
  --out DIR          results folder (default results/<date-time>)
  --quick            rates "8Mbit 64Mbit", 25 steps, target 0.15 (tests, the
                     worksheet; two rates: a measured break-even needs two)
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    --K | --rates | --ring | --ps | --steps | --lr | --link-latency | --target-loss | --out | \
        --K=* | --rates=* | --ring=* | --ps=* | --steps=* | --lr=* | --link-latency=* | --target-loss=* | --out=*)
        opt_value "$@"
        shift $((1 + extra))
        case $name in
        --K) k=$val ;;
        --rates) rates=$val ;;
        --ring) ring_c=$val ;;
        --ps) ps_c=$val ;;
        --steps) steps=$val ;;
        --lr) lr=$val ;;
        --link-latency) lat=$val ;;
        --target-loss) target=$val ;;
        --out) out=$val ;;
        esac ;;
    --quick) rates="8Mbit 64Mbit"; steps=25; target=0.15; shift ;;
    --help | -h) usage; exit 0 ;;
    *) die_usage "--only compression: $(shown_value "$1"): unknown option" ;;
    esac
done

# ------------------------------------------------------------ checks
[[ $k =~ ^[1-9][0-9]?$ ]] && [ "$k" -ge 2 ] || usage_error --K "$k" "not a worker count 2..99"
[ -n "$rates" ] || die_usage "--rates: no rate given"
for r in $rates; do
    [[ $r =~ ^[0-9]+(\.[0-9]+)?[kMG]bit$ ]] || usage_error --rates "$r" "not a rate NMbit, NGbit or Nkbit"
done
[ -n "$ring_c$ps_c" ] || die_usage "--ring and --ps: no compressor given"
for c in $ring_c; do
    case $c in none | fp16 | bf16 | powersgd:[0-9]* | topk:[0-9.]*) ;;
    *) usage_error --ring "$c" "not none, fp16, bf16, powersgd:R or topk:F (sign needs the PS)" ;; esac
done
for c in $ps_c; do
    case $c in none | fp16 | bf16 | sign | topk:[0-9.]*) ;;
    *) usage_error --ps "$c" "not none, fp16, bf16, sign or topk:F (powersgd needs the ring)" ;; esac
done
[[ $steps =~ ^[1-9][0-9]{0,5}$ ]] && [ "$steps" -ge 3 ] || usage_error --steps "$steps" "not a step count 3..999999"
for fv in "--lr $lr" "--target-loss $target"; do
    v=${fv#* }
    [[ $v =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] && awk -v x="$v" 'BEGIN { exit !(x > 0) }' ||
        usage_error "${fv%% *}" "$v" "not a number > 0"
done
need_programs ring_worker ps_server ps_worker psr_merge psr_json model
why=$("$PSR_BIN/model" --algo ring --K 2 --bytes 1 --bw 1Mbit --latency "$lat" 2>&1 >/dev/null) ||
    { why=${why#model: }; die_usage "${why%; see model --help}"; }
need_programs gnuplot
make_out logs loss
stop_on_interrupt ": the compression section" "$intr_cmd"
launch=$here/launch.sh
t_start=$(date +%s)

# bps RATE: bytes per second (8Mbit -> 1000000).
bps() { awk -v r="$1" 'BEGIN { m = r ~ /Gbit$/ ? 1e9 : r ~ /Mbit$/ ? 1e6 : 1e3; sub(/[kMG]bit$/, "", r); printf "%.12g\n", r * m / 8 }'; }
# tag SYS C RATE: a run's file name (ring_topk0_01_8Mbit).
tag() { local c=${2//[:.]/_}; echo "$1_${c}_$3"; }

# ------------------------------------------------------------ 1. the runs
run() {
    local sys=$1 c=$2 r=$3 n
    n=$(tag "$sys" "$c" "$r")
    rm -rf "$out/logs/$n.d" "$out/logs/$n.csv"
    mkdir -p "$out/logs/$n.d"
    set -- "$launch" "$sys" "$k" --workload mlp --seed 7 --steps "$steps" --warmup 2 --lr "$lr" \
        --compress "$c" --link-bw "$r" --link-latency "$lat" --target-loss "$target" \
        --loss-time-out "$out/loss/$n.loss" --timeout "$timeout" --time-limit 600 \
        --out "$out/logs/$n.d" --csv-out "$out/logs/$n.csv"
    note_command "$n" "$@"
    job "$sys $c at $r" /dev/null "$out/logs/$n.err" bash "$@"
}
runs=""
for c in $ring_c; do runs="$runs ring:$c"; done
for c in $ps_c; do runs="$runs ps:$c"; done
total=0
for r in $rates; do for x in $runs; do total=$((total + 1)); done; done
say "compression: mlp, K = $k, seed 7, $steps steps, lr $lr, target loss $target; EMULATED link at" \
    "$rates, latency $lat; ring: $ring_c; ps: $ps_c"
failed=0 i=0
for r in $rates; do
    for x in $runs; do
        i=$((i + 1))
        progress "[$i/$total] ${x%%:*} ${x#*:} at $r ..."
        if run "${x%%:*}" "${x#*:}" "$r"; then
            done_line "$prog: [$i/$total] ${x%%:*} ${x#*:} at $r: done ($(elapsed))"
        else
            failed=$((failed + 1))
        fi
    done
done

# ------------------------------------------------------------ 2. to the target
# reach FILE: "STEPS SECONDS" at the first loss <= target ("nan nan": never).
reach() {
    [ -s "$1" ] || { echo "nan nan"; return; }
    awk -v t="$target" '!/^#/ && NF >= 3 && $2 + 0 <= t { print $1 + 1, $3; f = 1; exit } END { if (!f) print "nan nan" }' "$1"
}
# step_of NAME: the run's step_s (psr_merge's row), nan when none.
step_of() { [ -s "$out/logs/$1.csv" ] && csv_awk 'FNR == 2 { v = $c["step_s"]; print (v == "" ? "nan" : v) }' "$out/logs/$1.csv" || echo nan; }
# fit_be "R T ..." "R T ...": the compressor's and none's (rate, time)
# pairs -> "RSTAR WHERE" (the header's item 3; WHERE in, out, or -).
fit_be() {
    awk -v c="$1" -v z="$2" '
        function fit(s, A, B,    p, m, i, x, y, sx, sy, sxx, sxy, d) {
            m = split(s, p, " "); n = 0; sx = sy = sxx = sxy = 0
            for (i = 1; i + 1 <= m; i += 2) { if (p[i + 1] == "nan") continue
                x = 1 / p[i]; y = p[i + 1]; n++; sx += x; sy += y; sxx += x * x; sxy += x * y
                if (lo == "" || p[i] < lo) lo = p[i]; if (hi == "" || p[i] > hi) hi = p[i] }
            if (n < 2) return 0
            d = n * sxx - sx * sx; if (d == 0) return 0
            B[1] = (n * sxy - sx * sy) / d; A[1] = (sy - B[1] * sx) / n; return 1
        }
        BEGIN { lo = hi = ""
            if (!fit(c, ac, bc) || !fit(z, a0, b0)) { print "nan -"; exit }
            if (ac[1] <= a0[1]) { print "inf -"; exit }
            r = (b0[1] - bc[1]) / (ac[1] - a0[1])
            if (r <= 0) { print "0 -"; exit }
            printf "%.6g %s\n", r, (r >= lo && r <= hi) ? "in" : "out" }'
}
# model_t SYS C BW: bin/model's step time for the mlp's gradient (f32).
model_t() {
    local sys=$1 c=$2 bw=$3 cost
    if [ "${c%%:*}" = powersgd ]; then      # the mlp's factors: two rounds (the header's item 3)
        cost=$("$PSR_BIN/model" --algo ring --K "$k" --bytes 25600 --bw 1e9 --compress "$c" 2>&1 >/dev/null |
               sed -n 's/.* cost \([0-9.e+-]*\) s per element.*/\1/p')
        awk -v t="$("$PSR_BIN/model" --algo ring --K "$k" --bytes $((psgd_elems * 2)) --bw "$bw" --latency "$lat")" \
            -v c="${cost:-0}" -v n="$mlp_elems" 'BEGIN { printf "%.12g\n", 2 * t + c * n }'
    else
        "$PSR_BIN/model" --algo "$sys" --K "$k" --bytes $((mlp_elems * 4)) --bw "$bw" --latency "$lat" \
            --compress "$c" 2>>"$out/logs/model.err"
    fi
}
# predicted SYS C: the bandwidth (bytes/s) where bin/model's step with C
# equals none's; "inf" when C pays at every bandwidth.
predicted() {
    local t1c t2c t10 t20
    t1c=$(model_t "$1" "$2" 1e5) t2c=$(model_t "$1" "$2" 1e9)
    t10=$(model_t "$1" none 1e5) t20=$(model_t "$1" none 1e9)
    awk -v t1c="$t1c" -v t2c="$t2c" -v t10="$t10" -v t20="$t20" 'BEGIN {
        if (t1c == "" || t10 == "") { print "nan"; exit }
        d = 1 / 1e5 - 1 / 1e9; bc = (t1c - t2c) / d; ac = t1c - bc / 1e5; b0 = (t10 - t20) / d; a0 = t10 - b0 / 1e5
        if (ac <= a0) { print "inf"; exit }
        r = (b0 - bc) / (ac - a0); if (r <= 0) print 0; else printf "%.6g\n", r }'
}

csv=$out/compression.csv
: > "$csv"
for x in $runs; do
    sys=${x%%:*} c=${x#*:} pc="" p0="" sc="" s0=""
    for r in $rates; do
        set -- $(reach "$out/loss/$(tag "$sys" "$c" "$r").loss")
        pc="$pc $(bps "$r") $2"
        set -- $(reach "$out/loss/$(tag "$sys" none "$r").loss")
        p0="$p0 $(bps "$r") $2"
        sc="$sc $(bps "$r") $(step_of "$(tag "$sys" "$c" "$r")")"
        s0="$s0 $(bps "$r") $(step_of "$(tag "$sys" none "$r")")"
    done
    be="- -" bs="- -" pr=-
    [ "$c" = none ] || { be=$(fit_be "$pc" "$p0"); bs=$(fit_be "$sc" "$s0"); pr=$(predicted "$sys" "$c"); }
    for r in $rates; do
        n=$(tag "$sys" "$c" "$r")
        [ -s "$out/logs/$n.csv" ] || continue
        [ -s "$csv" ] || echo "$(head -n 1 "$out/logs/$n.csv"),compressor,rate,rate_bps,steps_to_target,time_to_target_s,breakeven_bps,breakeven_where,breakeven_step_bps,breakeven_step_where,predicted_bps" > "$csv"
        set -- $(reach "$out/loss/$n.loss") $be $bs
        tail -n +2 "$out/logs/$n.csv" | head -n 1 | sed "s|\$|,$c,$r,$(bps "$r"),$1,$2,$3,$4,$5,$6,$pr|" >> "$csv"
    done
done
[ -s "$csv" ] || { say "no run succeeded; logs in $out/logs"; exit 1; }

# ------------------------------------------------------------ 3. the table
{
    echo "# compression: mlp, K = $k, seed 7, $steps steps, lr $lr, target loss $target; EMULATED link, latency $lat."
    echo "# steps/time to target: the first step at or under the target (loss file); step_s: psr_merge's."
    echo "# break-even (Mbit/s): where C's time equals none's on its system. measured: time to target fitted"
    echo "# A + B/rate over the rates run (in: inside them, out: extrapolated; inf: pays at every rate);"
    echo "# be_step: the same fit on step_s (psr_merge's), what the prediction models (no extra steps);"
    echo "# predicted: bin/model's step time with the compressor's measured cost (inf: pays at every rate)."
    echo "# ratio: measured (time to target) / predicted."
    echo "# Measured on $(nproc) CPUs, shared, $(date -u +%Y-%m-%dT%H:%M:%SZ); timings are noisy, never asserted."
    printf '%-4s %-12s %9s %8s %8s %10s %11s %4s %11s %4s %11s %7s\n' sys compressor rate step_s steps_tt time_tt_s be_meas_Mb where be_step_Mb wh be_pred_Mb ratio
    csv_awk 'function mb(v) { return (v == "inf" || v == "nan" || v == "-" || v == "") ? v : sprintf("%.4g", v * 8 / 1e6) }
        FNR > 1 {
        m = $c["breakeven_bps"]; p = $c["predicted_bps"]
        q = (m + 0 > 0 && p + 0 > 0 && m != "inf" && p != "inf") ? sprintf("%.3f", m / p) : "-"
        printf "%-4s %-12s %9s %8.4f %8s %10s %11s %4s %11s %4s %11s %7s\n", $c["system"], $c["compressor"], $c["rate"], $c["step_s"],
               $c["steps_to_target"], $c["time_to_target_s"], mb(m), $c["breakeven_where"], mb($c["breakeven_step_bps"]),
               $c["breakeven_step_where"], mb(p), q }' "$csv"
} > "$out/compression.txt"
cat "$out/compression.txt"

# ------------------------------------------------------------ 4. the plots
labels=""
for x in $runs; do labels="$labels $x"; done
sub="mlp, K = $k, seed 7, lr $lr; EMULATED link, latency $lat; $(nproc) CPUs, shared"
for fmt in png svg; do
    for panel in time step; do
        o=$out/compression.$fmt; [ $panel = step ] && o=$out/compression_steps.$fmt
        gnuplot -e "dir='$root/plots/'; fmt='$fmt'; out='$o'; panel='$panel'; lossdir='$out/loss'; rates='$rates'; runs='${labels# }'; sub='$sub'; target=$target" \
            "$root/plots/compression.gp" 2>>"$out/logs/plots.log" ||
            { say "plots/compression.gp failed: $(tail -c 300 "$out/logs/plots.log")"; failed=$((failed + 1)); }
    done
done
manifest "$out" ": the compression section" "experiments/lab.sh --only compression (K $k, rates $rates, ring $ring_c, ps $ps_c, steps $steps, lr $lr, latency $lat, target $target)" <<EOF
link_bw: EMULATED $rates, latency $lat
breakeven: $(csv_awk 'FNR > 1 && $c["compressor"] != "none" && !s[$c["system"] $c["compressor"]]++ { printf "%s %s measured %s (%s) step %s (%s) predicted %s bytes/s; ", $c["system"], $c["compressor"], $c["breakeven_bps"], $c["breakeven_where"], $c["breakeven_step_bps"], $c["breakeven_step_where"], $c["predicted_bps"] }' "$csv")
jobs_failed: $failed
# every job's command line
EOF
bash "$here/lab_html.sh" "$out" || failed=$((failed + 1))
say "wrote $csv, $out/compression.txt, $out/compression.png, $out/compression_steps.png, $out/index.html ($(elapsed))"
if [ "$failed" -gt 0 ]; then
    say "$failed job(s) failed; logs in $out/logs"
    exit 1
fi
exit 0
