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
#      from the loss file; step_s and time_s from the CSV row (psr_merge's).
#      With --repeats N every point runs N times, interleaved (all points,
#      then all again), and each point's figures are the medians;
#   3. per system and compressor, the BREAK-EVEN BANDWIDTH, where the
#      compressed run is as fast as the uncompressed one on its system:
#        measured   time to target (the repeats' medians), the compressor's
#                   against none's at each rate: the first two
#                   neighbouring rates between which compression stops
#                   paying bracket it, and T(r) = A + B / r through the
#                   two points, for C and for none, meet at r* =
#                   (B_none - B_c) / (A_c - A_none) ("in": between them).
#                   When it pays at every rate run, the same through the
#                   two highest ("out": above them; "inf" when the lines
#                   do not meet there); at none, the two lowest ("out"
#                   below, or 0); runs that never reached the target,
#                   "nan". A least-squares fit over all the rates (this
#                   script until 2026-11-27) let the low rates' large
#                   times place the crossing, "in" the range where no
#                   rate showed one. breakeven_step_bps: the same on
#                   step_s;
#        predicted  the same definition on the model: time to target =
#                   S x (t(r) + u), S the steps to target MEASURED (the
#                   compressor's and none's medians over the rates: the
#                   step count does not depend on the link; steps_ratio
#                   is S_c / S_none), t(r) bin/model's step (the f64
#                   gradient and trailer in the compressor's bytes, plus
#                   its codec cost measured by bin/model: compress_cost,
#                   psgd_cost), u the step's measured time outside its
#                   communication (step_s - time_s, one median over the
#                   system's runs of C and none: every codec runs inside
#                   the combine). t is a + b / bw exactly, so two queries
#                   give a and b. PowerSGD: bin/model reshapes a vector
#                   near-square, the mlp sends its layers' factors, so it
#                   is priced as the two ring all-reduces it runs (model_t
#                   says which elements). predicted_step_bps: S = 1, like
#                   for like with breakeven_step_bps;
#   4. compression.png: the loss against wall-clock time, one panel per
#      rate, one line per system and compressor, the target dashed;
#      compression_steps.png: the loss against the step (one panel per
#      system; the rates' curves of one compressor lie on top of each
#      other, the step does not depend on the link); SVG twins.
#
# Results: <out>/compression.csv (psr_merge's columns, repeat 1's run,
# then compressor, rate, rate_bps, steps_to_target, time_to_target_s (the
# repeats' medians), breakeven_bps, breakeven_where, breakeven_step_bps,
# breakeven_step_where, predicted_bps, predicted_step_bps, steps_ratio,
# compute_s (u above), repeats, by name), <out>/compression.txt (the
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
repeats=1
timeout=60
mlp_elems=6337          # MLP_PARAMS (common/train/mlp.h)
trailer=3               # STEP_TRAILER_LEN (common/train/step.h): counts and loss, exact
es=8                    # the mlp's gradient is f64 (mlp.h: MLP_PARAMS doubles)

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
  --repeats N        runs of every point, interleaved (all points once, then
                     again); the fits take each point's medians (default $repeats)
  --quick            rates "8Mbit 64Mbit", 25 steps, target 0.15 (tests, the
                     worksheet; two rates: a measured break-even needs two)
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    --K | --rates | --ring | --ps | --steps | --lr | --link-latency | --target-loss | --out | --repeats | \
        --K=* | --rates=* | --ring=* | --ps=* | --steps=* | --lr=* | --link-latency=* | --target-loss=* | --out=* | --repeats=*)
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
        --repeats) repeats=$val ;;
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
[[ $repeats =~ ^[1-9]$ ]] || usage_error --repeats "$repeats" "not a repeat count 1..9"
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
# tag SYS C RATE [REP]: a run's file name (ring_topk0_01_8Mbit; repeat 2
# and on: ring_topk0_01_8Mbit_r2).
tag() { local c=${2//[:.]/_} x=; [ "${4:-1}" -gt 1 ] && x=_r$4; echo "$1_${c}_$3$x"; }

# ------------------------------------------------------------ 1. the runs
run() {
    local sys=$1 c=$2 r=$3 n
    n=$(tag "$sys" "$c" "$r" "$4")
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
for r in $rates; do for x in $runs; do total=$((total + repeats)); done; done
say "compression: mlp, K = $k, seed 7, $steps steps, lr $lr, target loss $target; EMULATED link at" \
    "$rates, latency $lat; ring: $ring_c; ps: $ps_c"
failed=0 i=0
for j in $(seq 1 "$repeats"); do          # interleaved: every point once, then again
    for r in $rates; do
        for x in $runs; do
            i=$((i + 1))
            progress "[$i/$total] ${x%%:*} ${x#*:} at $r ..."
            if run "${x%%:*}" "${x#*:}" "$r" "$j"; then
                done_line "$prog: [$i/$total] ${x%%:*} ${x#*:} at $r: done ($(elapsed))"
            else
                failed=$((failed + 1))
            fi
        done
    done
done

# ------------------------------------------------------------ 2. to the target
# reach FILE: "STEPS SECONDS" at the first loss <= target ("nan nan": never).
reach() {
    [ -s "$1" ] || { echo "nan nan"; return; }
    awk -v t="$target" '!/^#/ && NF >= 3 && $2 + 0 <= t { print $1 + 1, $3; f = 1; exit } END { if (!f) print "nan nan" }' "$1"
}
# col_of NAME COL: the run's COL (psr_merge's row), nan when none.
col_of() { [ -s "$out/logs/$1.csv" ] && csv_awk -v k="$2" 'FNR == 2 { v = $c[k]; print (v == "" ? "nan" : v) }' "$out/logs/$1.csv" || echo nan; }
# median V...: the median of the numbers given ("nan" ones left out; nan
# when none is left).
median() { printf '%s\n' "$@" | awk '$1 != "nan" && $1 != "" { v[++n] = $1 + 0 }
    END { if (!n) { print "nan"; exit }
          for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
          printf "%.6g\n", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'; }
# point SYS C RATE: "STEPS SECONDS STEP_S COMPUTE_S", each the median over
# the repeats: steps and time to target, step_s, and the step's time
# outside its communication, step_s - time_s (the backward, the apply,
# the driver; time_s is the combine: the all-reduce, or the pushes and
# pulls, with the codec inside).
point() {
    local j n st=() tt=() ss=() cs=() v
    for j in $(seq 1 "$repeats"); do
        n=$(tag "$1" "$2" "$3" "$j")
        set -- "$1" "$2" "$3" $(reach "$out/loss/$n.loss")
        st+=("$4") tt+=("$5")
        v=$(col_of "$n" step_s); ss+=("$v")
        cs+=("$(awk -v a="$v" -v b="$(col_of "$n" time_s)" 'BEGIN { print (a == "nan" || b == "nan") ? "nan" : a - b }')")
    done
    echo "$(median "${st[@]}") $(median "${tt[@]}") $(median "${ss[@]}") $(median "${cs[@]}")"
}
# calls SYS C: the collective calls in a step: PowerSGD's two all-reduces
# (the P round, then the Q round after its own compute), else one (the
# ring's all-reduce or all-gather; the PS's pushes and pulls).
calls() { case $1:${2%%:*} in ring:powersgd) echo 2 ;; *) echo 1 ;; esac; }
# host_call SYS: THE HOST'S COST PER CALL, measured: the median over
# none's runs (every rate and repeat) of time_s - bin/model's time. It
# does not grow with the rounds or the bytes (mlp, K = 4, 1 Gbit/s,
# 2026-11-27: none, 6 rounds of 12.7 KB, 2.5 ms over its model; top-k's
# all-gather, 3 rounds of 0.8 KB, 2.6 ms): it is the wait for the slowest
# rank as a call begins (the runs' wait_s, 2 to 2.6 ms: K ranks computing
# on 2 shared cores reach it one after the other), paid again by each
# call that follows a compute phase: PowerSGD's Q round follows its
# orthogonalization and M^T P (measured 4.7 ms over, about two).
host_call() {
    local r j n v=() t
    for r in $rates; do
        t=$(model_t "$1" none "$(bps "$r")")
        for j in $(seq 1 "$repeats"); do
            n=$(tag "$1" none "$r" "$j")
            v+=("$(awk -v a="$(col_of "$n" time_s)" -v m="$t" 'BEGIN { print (a == "nan" || m == "") ? "nan" : a - m }')")
        done
    done
    median "${v[@]}"
}
# fit_be "R T ..." "R T ...": the compressor's and none's (rate, time)
# pairs at the same rates -> "RSTAR WHERE" (the header's item 3). D(r) =
# T_c - T_none at each rate where both are known, rates ascending; the
# first pair of neighbours where D turns from < 0 to >= 0 brackets the
# break-even: T = A + B / r through the two points, for C and for none,
# meet at r* (D linear in 1/r between them): "in". No turn: from the two
# highest rates when C pays at every rate (r* above them: "out", or "inf"
# when D does not rise), the two lowest when it pays at none ("out", or
# 0); fewer than two rates: "nan -".
fit_be() {
    awk -v c="$1" -v z="$2" '
        function solve(i, j,    bc, b0, ac, a0, d) {   # the two-point lines through rates i, j
            d = 1 / r[i] - 1 / r[j]
            bc = (tc[i] - tc[j]) / d; ac = tc[i] - bc / r[i]
            b0 = (t0[i] - t0[j]) / d; a0 = t0[i] - b0 / r[i]
            if (ac <= a0) return -1
            return (b0 - bc) / (ac - a0)
        }
        BEGIN {
            m = split(c, p, " "); split(z, q, " "); n = 0
            for (i = 1; i + 1 <= m; i += 2) {
                if (p[i + 1] == "nan" || q[i + 1] == "nan") continue
                n++; r[n] = p[i] + 0; tc[n] = p[i + 1] + 0; t0[n] = q[i + 1] + 0
            }
            for (i = 2; i <= n; i++)        # ascending rates
                for (j = i; j > 1 && r[j - 1] > r[j]; j--) {
                    x = r[j]; r[j] = r[j - 1]; r[j - 1] = x
                    x = tc[j]; tc[j] = tc[j - 1]; tc[j - 1] = x
                    x = t0[j]; t0[j] = t0[j - 1]; t0[j - 1] = x
                }
            if (n < 2) { print "nan -"; exit }
            for (i = 1; i < n; i++)
                if (tc[i] - t0[i] < 0 && tc[i + 1] - t0[i + 1] >= 0) {
                    printf "%.6g in\n", solve(i, i + 1); exit
                }
            if (tc[n] - t0[n] < 0) {        # pays at the highest rate run
                x = solve(n - 1, n)
                if (x > r[n]) printf "%.6g out\n", x; else print "inf -"
            } else {                        # pays at none of them
                x = solve(1, 2)
                if (x > 0 && x < r[1]) printf "%.6g out\n", x; else print "0 -"
            }
        }'
}
# model_t SYS C BW: bin/model's communication time for a step of the mlp:
# the f64 gradient and its trailer ((6337 + 3) x 8 bytes; fp16/bf16 and
# top-k move the trailer raw in their frames, 24 bytes bin/model prices
# at the wire's size: under 20 bytes off), with the compressor's own
# cost (compress_cost, psgd_cost: measured by bin/model, CPU seconds per
# element). PowerSGD: bin/model reshapes a vector near-square; the mlp
# sends its layers' factors, priced here as the two ring all-reduces it
# runs: the P round, W1's and W2's P (64 R + 64 R) with the 196 raw
# elements (the biases, W3, the trailer), and the Q round (32 R + 64 R)
# (docs/design.md: 644 elements at R = 2), plus psgd_cost per element of
# the gradient.
model_t() {
    local sys=$1 c=$2 bw=$3 cost rk
    if [ "${c%%:*}" = powersgd ]; then
        rk=${c#powersgd:}; rk=${rk%%:*}
        cost=$("$PSR_BIN/model" --algo ring --K "$k" --bytes $((mlp_elems * es)) --dtype f64 --bw 1e9 \
               --compress "$c" 2>&1 >/dev/null | sed -n 's/.* cost \([0-9.e+-]*\) s per element.*/\1/p')
        awk -v p="$("$PSR_BIN/model" --algo ring --K "$k" --bytes $(((128 * rk + 196) * es)) --bw "$bw" --latency "$lat")" \
            -v q="$("$PSR_BIN/model" --algo ring --K "$k" --bytes $((96 * rk * es)) --bw "$bw" --latency "$lat")" \
            -v c="${cost:-0}" -v n="$mlp_elems" 'BEGIN { printf "%.12g\n", p + q + c * n }'
    else
        "$PSR_BIN/model" --algo "$sys" --K "$k" --bytes $(((mlp_elems + trailer) * es)) --dtype f64 \
            --bw "$bw" --latency "$lat" --compress "$c" 2>>"$out/logs/model.err"
    fi
}
# predicted SYS C SC S0 CC C0 H: the bandwidth (bytes/s) where the model's
# time to target with C, SC steps of (bin/model's step + CC, the measured
# time outside the communication, + H x C's calls, the host's), equals
# none's, S0 steps of (its step + C0 + H x none's calls): the measured
# break-even's definition on the model's step. SC = S0 = 1: on the step.
# "inf" when C pays at every bandwidth.
predicted() {
    local t1c t2c t10 t20
    t1c=$(model_t "$1" "$2" 1e5) t2c=$(model_t "$1" "$2" 1e9)
    t10=$(model_t "$1" none 1e5) t20=$(model_t "$1" none 1e9)
    awk -v t1c="$t1c" -v t2c="$t2c" -v t10="$t10" -v t20="$t20" -v sc="$3" -v s0="$4" -v cc="$5" -v c0="$6" \
        -v hc="$(awk -v h="$7" -v q="$(calls "$1" "$2")" 'BEGIN { print h * q }')" \
        -v h0="$(awk -v h="$7" -v q="$(calls "$1" none)" 'BEGIN { print h * q }')" 'BEGIN {
        if (t1c == "" || t10 == "" || sc == "nan" || s0 == "nan" || cc == "nan" || c0 == "nan" || hc == "nan") { print "nan"; exit }
        d = 1 / 1e5 - 1 / 1e9; bc = (t1c - t2c) / d; ac = t1c - bc / 1e5; b0 = (t10 - t20) / d; a0 = t10 - b0 / 1e5
        bc *= sc; ac = sc * (ac + cc + hc); b0 *= s0; a0 = s0 * (a0 + c0 + h0)
        if (ac <= a0) { print "inf"; exit }
        r = (b0 - bc) / (ac - a0); if (r <= 0) print 0; else printf "%.6g\n", r }'
}

csv=$out/compression.csv
: > "$csv"
hr_ring=nan hr_ps=nan
[ -n "$ring_c" ] && hr_ring=$(host_call ring)
[ -n "$ps_c" ] && hr_ps=$(host_call ps)
for x in $runs; do
    sys=${x%%:*} c=${x#*:} pc="" p0="" sc="" s0="" nc=() n0=() cc=() c0=()
    for r in $rates; do
        set -- $(point "$sys" "$c" "$r")
        pc="$pc $(bps "$r") $2" sc="$sc $(bps "$r") $3" nc+=("$1") cc+=("$4")
        set -- $(point "$sys" none "$r")
        p0="$p0 $(bps "$r") $2" s0="$s0 $(bps "$r") $3" n0+=("$1") c0+=("$4")
    done
    # the steps to target do not depend on the link: each compressor's
    # median over the rates (and repeats). The time outside the combine
    # does not depend on the compressor (every codec runs inside the
    # combine, in time_s): one median over C's and none's runs, so that
    # its noise does not pass for a difference between them
    sn=$(median "${nc[@]}") s0n=$(median "${n0[@]}") cm=$(median "${cc[@]}" "${c0[@]}") c0m=$cm
    ratio=$(awk -v a="$sn" -v b="$s0n" 'BEGIN { print (a == "nan" || b == "nan") ? "nan" : sprintf("%.4g", a / b) }')
    be="- -" bs="- -" pr=- ps=-
    if [ "$c" != none ]; then
        be=$(fit_be "$pc" "$p0") bs=$(fit_be "$sc" "$s0")
        hr=$hr_ring; [ "$sys" = ps ] && hr=$hr_ps
        pr=$(predicted "$sys" "$c" "$sn" "$s0n" "$cm" "$c0m" "$hr") ps=$(predicted "$sys" "$c" 1 1 "$cm" "$c0m" "$hr")
    fi
    for r in $rates; do
        n=$(tag "$sys" "$c" "$r")
        [ -s "$out/logs/$n.csv" ] || continue
        [ -s "$csv" ] || echo "$(head -n 1 "$out/logs/$n.csv"),compressor,rate,rate_bps,steps_to_target,time_to_target_s,breakeven_bps,breakeven_where,breakeven_step_bps,breakeven_step_where,predicted_bps,predicted_step_bps,steps_ratio,compute_s,host_call_s,repeats" > "$csv"
        set -- $(point "$sys" "$c" "$r") $be $bs
        tail -n +2 "$out/logs/$n.csv" | head -n 1 | sed "s|\$|,$c,$r,$(bps "$r"),$1,$2,$5,$6,$7,$8,$pr,$ps,$ratio,$cm,$([ "$sys" = ps ] && echo "$hr_ps" || echo "$hr_ring"),$repeats|" >> "$csv"
    done
done
[ -s "$csv" ] || { say "no run succeeded; logs in $out/logs"; exit 1; }

# ------------------------------------------------------------ 3. the table
{
    echo "# compression: mlp, K = $k, seed 7, $steps steps, lr $lr, target loss $target; EMULATED link, latency $lat; $repeats repeat(s), interleaved."
    echo "# steps/time to target: the first step at or under the target (loss file); step_s: psr_merge's (repeat 1's row)."
    echo "# break-even (Mbit/s): where C's time equals none's on its system. measured: time to target (medians over the"
    echo "# repeats), A + B/rate through the two rates that bracket it (in; out: extrapolated from the two highest or"
    echo "# lowest; inf: pays at every rate); be_step: the same on step_s. predicted: bin/model's step (the compressor's"
    echo "# bytes and measured codec cost) plus the measured time outside the communication and the host's wait per"
    echo "# call (none's time_s over its model), times the measured steps to target (s_ratio: C's / none's); pr_step:"
    echo "# the same per step. ratio: measured / predicted, on time to target and on the step."
    echo "# Measured on $(nproc) CPUs, shared, $(date -u +%Y-%m-%dT%H:%M:%SZ); timings are noisy, never asserted."
    printf '%-4s %-12s %9s %8s %8s %10s %11s %4s %11s %4s %11s %11s %7s %7s %7s\n' sys compressor rate step_s steps_tt time_tt_s be_meas_Mb where be_step_Mb wh be_pred_Mb pr_step_Mb s_ratio ratio r_step
    csv_awk 'function mb(v) { return (v == "inf" || v == "nan" || v == "-" || v == "") ? v : sprintf("%.4g", v * 8 / 1e6) }
        function rt(m, p) { return (m + 0 > 0 && p + 0 > 0 && m != "inf" && p != "inf") ? sprintf("%.3f", m / p) : "-" }
        FNR > 1 {
        m = $c["breakeven_bps"]; p = $c["predicted_bps"]; ms = $c["breakeven_step_bps"]; ps = $c["predicted_step_bps"]
        printf "%-4s %-12s %9s %8.4f %8s %10s %11s %4s %11s %4s %11s %11s %7s %7s %7s\n", $c["system"], $c["compressor"], $c["rate"], $c["step_s"],
               $c["steps_to_target"], $c["time_to_target_s"], mb(m), $c["breakeven_where"], mb(ms),
               $c["breakeven_step_where"], mb(p), mb(ps), $c["steps_ratio"], rt(m, p), rt(ms, ps) }' "$csv"
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
manifest "$out" ": the compression section" "experiments/lab.sh --only compression (K $k, rates $rates, ring $ring_c, ps $ps_c, steps $steps, lr $lr, latency $lat, target $target, repeats $repeats)" <<EOF
link_bw: EMULATED $rates, latency $lat
breakeven: $(csv_awk 'FNR > 1 && $c["compressor"] != "none" && !s[$c["system"] $c["compressor"]]++ { printf "%s %s measured %s (%s) step %s (%s) predicted %s step %s bytes/s, steps ratio %s; ", $c["system"], $c["compressor"], $c["breakeven_bps"], $c["breakeven_where"], $c["breakeven_step_bps"], $c["breakeven_step_where"], $c["predicted_bps"], $c["predicted_step_bps"], $c["steps_ratio"] }' "$csv")
repeats: $repeats (interleaved; the fits on each point's medians)
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
