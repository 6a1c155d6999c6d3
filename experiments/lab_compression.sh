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
#      at or under --target-loss) and the time to it (that step's wall_s
#      less step 0's: step 0 holds the start-up), and the mean step
#      (period_s: the loss file's wall_s slope over the run), from the
#      loss file; time_s from the CSV row (psr_merge's).
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
#                   the mean step;
#        predicted  the same definition on the model: time to target =
#                   (S - 1) x (t(r) + u), S the steps to target MEASURED
#                   (the compressor's and none's medians over the rates:
#                   the step count does not depend on the link;
#                   steps_ratio is S_c / S_none), t(r) bin/model's step
#                   (the f64 gradient and trailer in the compressor's
#                   bytes, plus its codec cost measured by bin/model:
#                   compress_cost x model_codec, psgd_cost; the PS's
#                   from the last worker's entry with the entries spread_s apart,
#                   model_ps_spread), u the step's measured time outside
#                   t (the mean step less t(r), the median over C's own
#                   rates and repeats, none's over none's: the backward,
#                   the apply, the wait for the last to enter, the host's
#                   cost per call). The crossing is found on a grid of
#                   bandwidths (the PS's t is a + b / bw only piecewise).
#                   PowerSGD: bin/model reshapes a vector
#                   near-square, the mlp sends its layers' factors, so it
#                   is priced as the two ring all-reduces it runs (model_t
#                   says which elements). predicted_step_bps: S = 1, like
#                   for like with breakeven_step_bps;
#        interval   THE MEASURED BREAK-EVEN AS AN INTERVAL, and whether it
#                   agrees: the crossing above is one line through two
#                   noisy points, ill-conditioned where C's and none's
#                   times run nearly parallel (ring top-k at K = 4, the
#                   two times to target within 5% of each other from 256
#                   Mbit/s up: 0.47 of the model, which meant nothing).
#                   Here each time to target is its steps after step 0
#                   times the mean step (many steps' slope, not one
#                   step's wall_s), and at each rate the difference D
#                   has a spread S from the repeats (step_d); lo is
#                   where C stops being faster by more than S, hi where
#                   it starts being slower by more (be_interval);
#                   against predicted_bps the verdict says within (all
#                   of [lo, hi] within 20%), outside, flat (too wide to
#                   say: not a pass), edge, beyond or unemulable: the
#                   prediction above emulable_bps, the lowest rate where
#                   none's link stopped setting the pace (emulable),
#                   "beyond what this machine can emulate faithfully",
#                   and no measured number. --around DIR runs each
#                   compressor at half, once and twice DIR's prediction
#                   (its combine_predicted_bps, below, where DIR has
#                   one), where the interval is narrowest;
#        on the combine  THE BREAK-EVEN ON THE COMBINE, the section's first
#                   figure (the ones above, on the time to target and the
#                   step, are the second: time to accuracy): the step's
#                   backward and apply are the same with and without
#                   compression, and on this shared machine about 8 ms
#                   of noise around a sub-ms difference, and u, the
#                   time outside the model, moved the prediction between
#                   sets (PS sign 229 / 203 / 163 Mbit/s). Here, per run,
#                   time_s (the CSV's: per step the slowest process's
#                   combine from the last entry, the median over steps),
#                   which holds the codec: the ring's encode and decode
#                   run inside its all-reduce (coll_cmp.h, coll_sparse.h,
#                   coll_psgd.h), the PS worker's encode inside its
#                   push (frames.c), the server's decode and sum before
#                   its pull; combine_d: C's less none's at each rate
#                   (the repeats' medians) and its spread (step_d's
#                   rule, the runs' own standard errors from the per-
#                   step combines in their records, rec_se); the
#                   interval (be_interval) and the verdict as above,
#                   against combine_predicted_bps: bin/model's combine
#                   alone, C's (its bytes plus its codec's cost per
#                   element, measured by bin/model) against none's, no
#                   measured u (the PS's with the measured spread_s, as
#                   time_s is timed);
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
# compute_s (u above), host_call_s (none's time_s less its model, per
# collective call: what the model leaves out of the combine itself),
# repeats, spread_s (the PS's entry spread; 0 on the ring), period_s (the
# mean step, the repeats' median), breakeven_lo_bps, breakeven_hi_bps,
# emulable_bps, verdict (the interval, by name), then THE COMBINE's:
# combine_s (C's time_s, the repeats' median), combine_none_s (none's at
# the rate), combine_spread_s (the difference's spread), combine_model_s
# (bin/model's combine for C at the rate), codec_s (the codec's measured
# cost a step, in combine_model_s), combine_lo_bps, combine_hi_bps,
# combine_predicted_bps, combine_verdict), <out>/compression.txt (the
# table, the interval and verdict per compressor, then the combine's),
# <out>/loss/, logs/. Timings on a shared 2-core machine are
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
around=
timeout=60
mlp_elems=6337          # MLP_PARAMS (common/train/mlp.h)
trailer=3               # STEP_TRAILER_LEN (common/train/step.h): counts and loss, exact
es=8                    # the mlp's gradient is f64 (mlp.h: MLP_PARAMS doubles)
psgd_elems=6144         # the mlp's weight matrices, PowerSGD's: W1 64 x 32 and W2 64 x 64 (mlp.h)

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
  --around DIR       each compressor at ITS OWN rates: half, once and twice
                     the combine_predicted_bps (else predicted_bps) of an
                     earlier run's DIR/compression.csv (same K), none at
                     all of its system's; where DIR has no finite
                     prediction, --rates
  --quick            rates "8Mbit 64Mbit", 25 steps, target 0.15 (tests, the
                     worksheet; two rates: a measured break-even needs two)
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    --K | --rates | --ring | --ps | --steps | --lr | --link-latency | --target-loss | --out | --repeats | --around | \
        --K=* | --rates=* | --ring=* | --ps=* | --steps=* | --lr=* | --link-latency=* | --target-loss=* | --out=* | --repeats=* | --around=*)
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
        --around) around=$val ;;
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
[ -z "$around" ] || [ -s "$around/compression.csv" ] || usage_error --around "$around" "no compression.csv there"
[ -z "$around" ] || csv_awk -v k="$k" 'FNR > 1 && $c["K"] != k { bad = 1 } END { exit bad }' "$around/compression.csv" ||
    usage_error --around "$around" "its runs are not K = $k"
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
# rate_of BPS: bytes per second as a rate --link-bw takes, whole Mbit/s
# (kbit under 1 Mbit/s): 1.5e8 -> 1200Mbit.
rate_of() { awk -v b="$1" 'BEGIN { m = b * 8 / 1e6; if (m >= 1) printf "%dMbit\n", m + 0.5; else printf "%dkbit\n", m * 1000 + 0.5 }'; }
# sort_rates R...: the rates once each (by bytes per second), ascending.
sort_rates() { local r; for r; do echo "$(bps "$r") $r"; done | sort -g -u -k1,1 | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 } END { print "" }'; }
# rates_of[SYS:C]: the rates C runs at. --rates; with --around DIR, a
# compressor's own: half, once and twice DIR's combine_predicted_bps for
# it (predicted_bps where DIR has no such column: a set from before
# 2026-11-28; where it says inf or 0, --rates)
# (the measured break-even is best conditioned near where it is expected:
# a bracket from rates far off it is a crossing of two nearly parallel
# lines through noisy points). none runs at every rate of its system's
# compressors, so each has its reference at each of its rates.
declare -A rates_of
for x in $runs; do
    rs=$rates
    if [ -n "$around" ] && [ "${x#*:}" != none ]; then
        pb=$(csv_awk -v s="${x%%:*}" -v cc="${x#*:}" 'FNR > 1 && $c["system"] == s && $c["compressor"] == cc {
                 v = ("combine_predicted_bps" in c) ? $c["combine_predicted_bps"] : ""
                 print (v != "" && v != "-") ? v : $c["predicted_bps"]; exit }' "$around/compression.csv")
        if [[ $pb =~ ^[0-9.]+([eE][-+]?[0-9]+)?$ ]] && awk -v p="$pb" 'BEGIN { exit !(p + 0 > 0) }'; then
            rs="$(rate_of "$(awk -v p="$pb" 'BEGIN { print p / 2 }')") $(rate_of "$pb") $(rate_of "$(awk -v p="$pb" 'BEGIN { print p * 2 }')")"
        fi
    fi
    rates_of[$x]=$(sort_rates $rs)
done
for s in ring ps; do
    [ -n "${rates_of[$s:none]:-}" ] || continue
    u=""
    for x in $runs; do [ "${x%%:*}" = "$s" ] && [ "${x#*:}" != none ] && u="$u ${rates_of[$x]}"; done
    [ -n "$u" ] || u=$rates
    rates_of[$s:none]=$(sort_rates $u)
done
all_rates=$(sort_rates ${rates_of[@]})
# runs_at R X: X runs at rate R.
runs_at() { case " ${rates_of[$2]} " in *" $1 "*) return 0 ;; esac; return 1; }
total=0
for r in $all_rates; do for x in $runs; do runs_at "$r" "$x" && total=$((total + repeats)); done; done
say "compression: mlp, K = $k, seed 7, $steps steps, lr $lr, target loss $target; EMULATED link at" \
    "$all_rates, latency $lat; ring: $ring_c; ps: $ps_c"
if [ -n "$around" ]; then
    for x in $runs; do say "  $x at ${rates_of[$x]}"; done
fi
failed=0 i=0
for j in $(seq 1 "$repeats"); do          # interleaved: every point once, then again
    for r in $all_rates; do
        for x in $runs; do
            runs_at "$r" "$x" || continue
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
# reach FILE: "STEPS SECONDS" at the first loss <= target ("nan nan":
# never): the steps to it, and the time from step 0's loss to its, the
# STEPS - 1 steps after the first. Step 0's own wall_s (30 to 160 ms on
# the PS at K 4, whatever the rate: the processes still starting when
# the first one begins) is start-up, no step of the model's; at 1 Gbit/s
# it was as long as the 20 steps after it and decided the break-even.
reach() {
    [ -s "$1" ] || { echo "nan nan"; return; }
    awk -v t="$target" '!/^#/ && NF >= 3 && !z++ { w0 = $3 }
        !/^#/ && NF >= 3 && $2 + 0 <= t { print $1 + 1, $3 - w0; f = 1; exit } END { if (!f) print "nan nan" }' "$1"
}
# col_of NAME COL: the run's COL (psr_merge's row), nan when none.
col_of() { [ -s "$out/logs/$1.csv" ] && csv_awk -v k="$2" 'FNR == 2 { v = $c[k]; print (v == "" ? "nan" : v) }' "$out/logs/$1.csv" || echo nan; }
# median V...: the median of the numbers given ("nan" ones left out; nan
# when none is left).
median() { printf '%s\n' "$@" | awk '$1 != "nan" && $1 != "" { v[++n] = $1 + 0 }
    END { if (!n) { print "nan"; exit }
          for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
          printf "%.6g\n", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'; }
# period FILE: the run's mean step from its loss file, (wall_s of the last
# step - step 0's) / their distance: the step the time to target is made
# of. (step_s, per step the slowest rank's, was not: the ring's ranks
# take long and short steps in turn, and the slowest of four each step
# sat 1.5 ms over the mean step of none's runs, mlp K 4 at 1 Gbit/s,
# and 0.5 ms over PowerSGD's.)
period() {
    [ -s "$1" ] || { echo nan; return; }
    awk '!/^#/ && NF >= 3 { if (!n++) { s0 = $1; w0 = $3 } s = $1; w = $3 }
        END { print (n < 2 || s == s0) ? "nan" : sprintf("%.9g", (w - w0) / (s - s0)) }' "$1"
}
# point SYS C RATE: "STEPS SECONDS STEP COMPUTE_S", each the median over
# the repeats: steps and time to target, the mean step (period), and the
# step's time outside bin/model's communication, the mean step less
# model_t (the backward, the apply, the driver, the wait for the last
# rank to enter, and whatever the host adds to each collective call:
# measured on C's own runs, not one figure for C and none; see
# predicted).
point() {
    local j n st=() tt=() ss=() cs=() v m
    m=$(model_t "$1" "$2" "$(bps "$3")")
    for j in $(seq 1 "$repeats"); do
        n=$(tag "$1" "$2" "$3" "$j")
        set -- "$1" "$2" "$3" $(reach "$out/loss/$n.loss")
        st+=("$4") tt+=("$5")
        v=$(period "$out/loss/$n.loss"); ss+=("$v")
        cs+=("$(awk -v a="$v" -v b="$m" 'BEGIN { print (a == "nan" || b == "") ? "nan" : a - b }')")
    done
    echo "$(median "${st[@]}") $(median "${tt[@]}") $(median "${ss[@]}") $(median "${cs[@]}")"
}
# less1 S: S - 1 (the steps after step 0, reach's), nan stays nan.
less1() { awk -v s="$1" 'BEGIN { print s == "nan" ? "nan" : s - 1 }'; }
# host_call SYS: THE HOST'S COST PER CALL, measured and reported (column
# host_call_s), no longer added by predicted: the median over none's
# runs (every rate and repeat) of time_s - bin/model's time. Until
# 2026-11-28 the prediction added it, from none, once per collective
# call, to a time outside the communication pooled over C's and none's
# runs; u is now measured on each compressor's own runs, and whatever the
# host adds to its calls is in its u. (At 2026-11-27's runs the ring's
# time_s sat 2.5 ms over its model; since the virtual timeline's fix, 67239b5,
# within 0.1 ms; the PS's, with the spread, 1 to 3 ms over for none and
# sign alike.)
host_call() {
    local r j n v=() t
    for r in ${rates_of[$1:none]:-}; do
        t=$(model_t "$1" none "$(bps "$r")")
        for j in $(seq 1 "$repeats"); do
            n=$(tag "$1" none "$r" "$j")
            v+=("$(awk -v a="$(col_of "$n" time_s)" -v m="$t" 'BEGIN { print (a == "nan" || m == "") ? "nan" : a - m }')")
        done
    done
    median "${v[@]}"
}
# entry_spread SYS: THE WORKERS' ENTRY SPREAD, measured (the PS's only):
# per step, the last worker's entry into the combine less the first's
# (the records' ENTER_T, one clock), the median over the steps of every
# run of the system (every compressor, rate and repeat: compute skew on
# the shared cores, not the link's). time_s is timed from the last entry
# (metrics.h, LAST ENTRY), and the pushes of the workers that entered
# before it are on the server's link by then: model_ps_spread (bin/model
# --spread) leaves K push / bw - spread of the ingress, at least one
# push. Without it none's dense pushes ran under their model and sign's
# and top-k's, which the skew cannot hide, over theirs (K 4, 1 Gbit/s:
# -0.4 and +0.7 ms), which put the PS's break-evens 1.4 to 16x off.
entry_spread() {
    local files=() f
    for f in "$out"/logs/"$1"_*.d/rec.worker.*; do [ -f "$f" ] && files+=("$f"); done
    [ ${#files[@]} -gt 0 ] || { echo 0; return; }
    awk '$1 == "step" && NF >= 9 && $9 != "-" { k = FILENAME; sub(/\/rec\.worker\.[0-9]+$/, "", k); k = k SUBSEP $2
            if (!(k in lo) || $9 < lo[k]) lo[k] = $9; if (!(k in hi) || $9 > hi[k]) hi[k] = $9 }
        END { for (k in lo) print hi[k] - lo[k] }' "${files[@]}" |
        awk '{ v[++n] = $1 } END { if (!n) { print 0; exit }
            for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            printf "%.6g\n", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
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
# cost (compress_cost x model_codec, psgd_cost: measured by bin/model,
# CPU seconds per element of the step). PowerSGD: bin/model reshapes a
# vector near-square; the mlp
# sends its layers' factors, priced here as the two ring all-reduces it
# runs: the P round, W1's and W2's P (64 R + 64 R) with the 196 raw
# elements (the biases, W3, the trailer), and the Q round (32 R + 64 R)
# (docs/design.md: 644 elements at R = 2), plus psgd_cost per element of
# its weight matrices (psgd_elems).
# codec_cost[SYS:C]: C's own CPU seconds per element of a step on SYS at
# K, measured once by bin/model (compress_cost's operations counted by
# model_codec as SYS runs them, psgd_cost: it says so on stderr), then
# given to every query (--compress-cost) instead of measured again by each.
# PowerSGD's on W2's 64 x 64 (4096 elements, near-square): on the
# mlp's 6337, a prime, bin/model's near-square matrix is 1 x 6337, which
# does not pay at any rank, and psgd_cost said 0 (this script until
# 2026-11-28 priced PowerSGD's codec at nothing); its cost per step is
# that per element times the matrices' psgd_elems.
declare -A codec_cost
for xc in $(for c in $ring_c; do echo "ring:$c"; done; for c in $ps_c; do echo "ps:$c"; done); do
    c=${xc#*:}
    [ "$c" = none ] || [ -n "${codec_cost[$xc]:-}" ] && continue
    ne=$mlp_elems
    [ "${c%%:*}" = powersgd ] && ne=4096
    cost=$("$PSR_BIN/model" --algo "${xc%%:*}" --K "$k" \
           --bytes $((ne * es)) --dtype f64 --bw 1e9 --compress "$c" 2>&1 >/dev/null |
           sed -n 's/.* cost \([0-9.e+-]*\) s per element.*/\1/p')
    codec_cost[$xc]=${cost:-0}
done
model_t() {
    local sys=$1 c=$2 bw=$3 cost=${codec_cost[$1:$2]:-0} rk
    if [ "${c%%:*}" = powersgd ]; then
        rk=${c#powersgd:}; rk=${rk%%:*}
        awk -v p="$("$PSR_BIN/model" --algo ring --K "$k" --bytes $(((128 * rk + 196) * es)) --bw "$bw" --latency "$lat")" \
            -v q="$("$PSR_BIN/model" --algo ring --K "$k" --bytes $((96 * rk * es)) --bw "$bw" --latency "$lat")" \
            -v c="${cost:-0}" -v n="$psgd_elems" 'BEGIN { printf "%.12g\n", p + q + c * n }'
    else
        set -- --algo "$sys" --K "$k" --bytes $(((mlp_elems + trailer) * es)) --dtype f64 --bw "$bw" --latency "$lat"
        [ "$sys" = ps ] && set -- "$@" --spread "$spread_ps"
        [ "$c" != none ] && set -- "$@" --compress-cost "$cost"
        "$PSR_BIN/model" "$@" --compress "$c" 2>>"$out/logs/model.err"
    fi
}
# grid SYS C: "BW T BW T ..." model_t on 61 bandwidths log-spaced from
# 1e4 to 1e11 bytes/s (x 1.31 apart), for predicted.
grid() {
    local i bw
    for i in $(seq 0 60); do
        bw=$(awk -v i="$i" 'BEGIN { printf "%.6g", 1e4 * 10 ^ (i * 7 / 60) }')
        printf '%s %s ' "$bw" "$(model_t "$1" "$2" "$bw")"
    done
}
# predicted GRID_C GRID_NONE SC S0 CC C0: the bandwidth (bytes/s) where
# the model's time to target with C, SC steps of (bin/model's step + CC,
# its measured time outside it), equals none's, S0 steps of (its step +
# C0): the measured break-even's definition on the model's step. SC = S0
# = 1: on the step. The first grid point where C stops paying, and the
# crossing between it and the one before, each time a + b / bw between
# them (the PS's step with a spread is a + b / bw only piecewise: the
# skew hides the pushes up to a rate, so a line through two far
# bandwidths misplaced the crossing). "inf" when C pays on the whole
# grid, 0 when it pays nowhere.
predicted() {
    awk -v gc="$1" -v g0="$2" -v sc="$3" -v s0="$4" -v cc="$5" -v c0="$6" 'BEGIN {
        if (sc == "nan" || s0 == "nan" || cc == "nan" || c0 == "nan") { print "nan"; exit }
        m = split(gc, a, " "); split(g0, z, " ")
        for (i = 1; i + 1 <= m; i += 2) {
            if (a[i + 1] == "" || z[i + 1] == "") { print "nan"; exit }
            n++; r[n] = a[i] + 0; d[n] = sc * (a[i + 1] + cc) - s0 * (z[i + 1] + c0)
        }
        if (d[1] >= 0) { print 0; exit }
        for (i = 2; i <= n; i++)
            if (d[i] >= 0) {            # D linear in 1 / bw between the two
                x = 1 / r[i - 1] + (1 / r[i] - 1 / r[i - 1]) * d[i - 1] / (d[i - 1] - d[i])
                printf "%.6g\n", 1 / x; exit
            }
        print "inf" }'
}

# step_se FILE: the run's own noise on its mean step: the standard
# deviation of its steps' durations (wall_s apart, step 0 left out) over
# the square root of their count, nan with fewer than 2.
step_se() {
    [ -s "$1" ] || { echo nan; return; }
    awk '!/^#/ && NF >= 3 { if (n++ && $1 > s) { d = ($3 - w) / ($1 - s); t += d; q += d * d; m++ } s = $1; w = $3 }
        END { if (m < 2) { print "nan"; exit } v = (q - t * t / m) / (m - 1)
              printf "%.6g\n", sqrt((v > 0 ? v : 0) / m) }' "$1"
}
# step_d SYS C RATE SC S0: "D S": D, C's time to target less none's,
# each THE MEAN STEP TIMES THE STEPS AFTER STEP 0 (SC and S0: the steps
# to target, measured, less 1; they do not depend on the link), the mean
# step the repeats' median: many steps' slope, where the time to target
# is one loss file's wall_s at one step, its noise undivided; and S, how
# far apart the two can be by noise alone: the spread of the repeats'
# differences (C's run j less none's run j, run next to it), 1.4826 x
# their median absolute deviation (a standard deviation's estimate that
# one load spike does not set, as the medians are not set by it: half the
# range did, K = 4, PS top-k at 51 Mbit/s, 2026-11-28: one repeat of
# none's 83 ms a step against four of 64 opened the interval below), at
# least twice the two runs' own standard errors (step_se, the repeats'
# medians, times SC and S0) added in quadrature (with one repeat the
# within-run noise alone, an underestimate of the spread between runs on
# a shared machine). "nan nan" without both.
step_d() {
    local j a b pa=() pb=() sa=() sb=() d=()
    for j in $(seq 1 "$repeats"); do
        a=$out/loss/$(tag "$1" "$2" "$3" "$j").loss b=$out/loss/$(tag "$1" none "$3" "$j").loss
        pa+=("$(period "$a")") pb+=("$(period "$b")") sa+=("$(step_se "$a")") sb+=("$(step_se "$b")")
        d+=("$(awk -v x="${pa[-1]}" -v y="${pb[-1]}" -v a="$4" -v b="$5" 'BEGIN { print (x == "nan" || y == "nan") ? "nan" : a * x - b * y }')")
    done
    awk -v mc="$(median "${pa[@]}")" -v m0="$(median "${pb[@]}")" -v ec="$(median "${sa[@]}")" \
        -v e0="$(median "${sb[@]}")" -v d="${d[*]}" -v a="$4" -v b="$5" '
        function med(v, n,    i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        function mad(v, n,    i, c, w) { c = med(v, n); for (i = 1; i <= n; i++) w[i] = v[i] > c ? v[i] - c : c - v[i]; return med(w, n) }
        BEGIN {
        if (mc == "nan" || m0 == "nan" || a == "nan" || b == "nan") { print "nan nan"; exit }
        mc *= a; m0 *= b; ec *= a; e0 *= b
        n = split(d, v, " "); m = 0
        for (i = 1; i <= n; i++) if (v[i] != "nan") x[++m] = v[i] + 0
        h = m ? 1.4826 * mad(x, m) : 0
        w = (ec == "nan" || e0 == "nan") ? 0 : 2 * sqrt(ec * ec + e0 * e0)
        printf "%.6g %.6g\n", mc - m0, (h > w ? h : w) }'
}
# rec_se NAME: the run's own noise on its time_s, from its records (the
# ring's ranks', the PS's workers'): per step the combine as the merge
# times it, from the last process's entry to the last one's end (ENTER_T
# plus COMBINE_S; the slowest one's COMBINE_S where a record has no
# ENTER_T), and the standard error of their median, 1.2533 x 1.4826 x
# their median absolute deviation / sqrt(steps); nan with fewer than 2.
rec_se() {
    local f fs=()
    for f in "$out/logs/$1.d"/rec.rank.* "$out/logs/$1.d"/rec.worker.*; do [ -f "$f" ] && fs+=("$f"); done
    [ ${#fs[@]} -gt 0 ] || { echo nan; return; }
    awk '$1 == "step" && NF >= 3 && $3 != "-" { s = $2; c = $3 + 0
            if (!(s in mc) || c > mc[s]) mc[s] = c
            if (NF >= 9 && $9 != "-") { e = $9 + 0; if (!(s in me) || e > me[s]) me[s] = e
                                        if (!(s in mx) || e + c > mx[s]) mx[s] = e + c } else no[s] = 1 }
        END { for (s in mc) print (s in no || !(s in me)) ? mc[s] : mx[s] - me[s] }' "${fs[@]}" |
        awk 'function med(v, n,    i, j, t) {
                 for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
                 return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
             { v[++n] = $1 + 0 }
             END { if (n < 2) { print "nan"; exit }
                   m = med(v, n); for (i = 1; i <= n; i++) w[i] = v[i] > m ? v[i] - m : m - v[i]
                   printf "%.6g\n", 1.2533 * 1.4826 * med(w, n) / sqrt(n) }'
}
# combine_d SYS C RATE: "D S" on THE COMBINE: D, C's time_s less none's
# at RATE (the CSV's: per step the slowest process's combine from the
# last entry, the median over steps; the codec's encode and decode are
# in it, docs/design.md's compression section says where), each the
# repeats' median; S, the spread step_d's rule gives: 1.4826 x the
# paired differences' median absolute deviation (C's run j less none's
# run j), at least twice the two runs' own standard errors (rec_se, the
# repeats' medians) in quadrature. "nan nan" without both.
combine_d() {
    local j a b ta=() tb=() ea=() eb=() d=()
    for j in $(seq 1 "$repeats"); do
        a=$(tag "$1" "$2" "$3" "$j") b=$(tag "$1" none "$3" "$j")
        ta+=("$(col_of "$a" time_s)") tb+=("$(col_of "$b" time_s)") ea+=("$(rec_se "$a")") eb+=("$(rec_se "$b")")
        d+=("$(awk -v x="${ta[-1]}" -v y="${tb[-1]}" 'BEGIN { print (x == "nan" || y == "nan") ? "nan" : x - y }')")
    done
    awk -v mc="$(median "${ta[@]}")" -v m0="$(median "${tb[@]}")" -v ec="$(median "${ea[@]}")" \
        -v e0="$(median "${eb[@]}")" -v d="${d[*]}" '
        function med(v, n,    i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        function mad(v, n,    i, c, w) { c = med(v, n); for (i = 1; i <= n; i++) w[i] = v[i] > c ? v[i] - c : c - v[i]; return med(w, n) }
        BEGIN {
        if (mc == "nan" || m0 == "nan") { print "nan nan nan nan"; exit }
        n = split(d, v, " "); m = 0
        for (i = 1; i <= n; i++) if (v[i] != "nan") x[++m] = v[i] + 0
        h = m ? 1.4826 * mad(x, m) : 0
        w = (ec == "nan" || e0 == "nan") ? 0 : 2 * sqrt(ec * ec + e0 * e0)
        printf "%.6g %.6g %.6g %.6g\n", mc - m0, (h > w ? h : w), mc, m0 }'
}
# be_interval FN SYS C SC S0: "LO HI", THE MEASURED BREAK-EVEN AS AN INTERVAL
# (bytes per second), FN giving the difference and its spread at each
# rate: step_d on the time to target from the mean step (SC and S0 the
# steps after step 0; 1 and 1: on the step), combine_d on the combine
# (SC and S0 unused), at C's rates:
# LO where C stops being
# faster than none by more than the noise (D + S turns >= 0, ascending
# rates), HI where it starts being slower by more than the noise (D - S
# turns >= 0), each linear in 1 / rate between the two rates around it
# (as breakeven_bps is). 0: already at the lowest rate run; inf: at
# none of them. Where the two steps run nearly parallel the interval is
# wide and says so, where a single crossing through two noisy points
# (the time to target's, 2026-11-28: ring top-k at K = 4 0.47 of its
# model, the two times within 5% of each other from 256 Mbit/s up) gave a
# number that looked as good as any other.
be_interval() {
    local r
    for r in ${rates_of[$2:$3]}; do echo "$(bps "$r") $("$1" "$2" "$3" "$r" "$4" "$5")"; done | sort -g | awk '
        function cross(f,    i, x) {
            for (i = 1; i <= n; i++) if (f[i] >= 0) break
            if (i > n) return "inf"
            if (i == 1) return 0
            x = 1 / r[i - 1] + (1 / r[i] - 1 / r[i - 1]) * f[i - 1] / (f[i - 1] - f[i])
            return sprintf("%.6g", 1 / x)
        }
        function num(v) { return v == "inf" ? 1e300 : v + 0 }
        $2 != "nan" { n++; r[n] = $1; up[n] = $2 + $3; dn[n] = $2 - $3 }
        END {
            if (!n) { print "nan nan"; exit }
            lo = cross(up); hi = cross(dn)
            if (num(lo) > num(hi)) { x = lo; lo = hi; hi = x }
            print lo, hi
        }'
}
# emulable SYS: the lowest of none's rates (bytes/s) at which THE LINK
# STOPPED SETTING THE PACE, "inf" at none, in the best of none's repeats
# there (what the machine CAN emulate: the other jobs on a shared machine
# take its CPU in some repeats, bound_by "busy", and the PS's link_util
# at K = 4 and 203 Mbit/s was 0.83 to 0.95 in three such repeats, 0.99
# in the two "link" ones, 2026-11-28): (a) none's link_util (the link's
# own record of its busy time), the largest over the repeats, under
# 0.95, or bound_by "sw" in every repeat (the same rule; "busy" and
# "cpu" take the place of "sw" in bound_by, so link_util is read too);
# or (b) the host's own excess, none's time_s less bin/model's (the
# smallest over the repeats), over the link's bandwidth term
# at that rate (bin/model's step less its step at 1e12 bytes/s): the
# ring's link counts its latency busy, so at K = 4 and 1 ms its
# link_util stays over 0.95 at 64 Gbit/s, while from 16 Gbit/s the
# bytes' 38 us are under the host's 40 us over the model (2026-11-28):
# what the rate changes is then smaller than what the host adds. Above
# it the emulated link no longer says what a link of that rate would: a
# break-even predicted there is beyond what this machine can emulate
# faithfully.
emulable() {
    local r j nm b ut=() ex=() m bw
    for r in ${rates_of[$1:none]:-}; do
        ut=() ex=() b=0 m=$(model_t "$1" none "$(bps "$r")")
        bw=$(awk -v a="$m" -v z="$(model_t "$1" none 1e12)" 'BEGIN { print (a == "" || z == "") ? "nan" : a - z }')
        for j in $(seq 1 "$repeats"); do
            nm=$(tag "$1" none "$r" "$j")
            ut+=("$(col_of "$nm" link_util)")
            ex+=("$(awk -v a="$(col_of "$nm" time_s)" -v m="$m" 'BEGIN { print (a == "nan" || m == "") ? "nan" : a - m }')")
            [ "$(col_of "$nm" bound_by)" = sw ] && b=$((b + 1))
        done
        if awk -v u="${ut[*]}" -v b="$b" -v n="$repeats" -v e="${ex[*]}" -v w="$bw" '
            function best(s, sign,    v, i, k, x) { k = split(s, v, " "); x = "nan"
                for (i = 1; i <= k; i++) if (v[i] != "nan" && v[i] != "" && (x == "nan" || sign * v[i] > sign * x)) x = v[i] + 0
                return x }
            BEGIN { u = best(u, 1); e = best(e, -1)
                    exit !((u != "nan" && u + 0 < 0.95) || b == n || (e != "nan" && w != "nan" && e + 0 > w + 0)) }'; then
            bps "$r"; return
        fi
    done
    echo inf
}
# verdict LO HI P CEIL TOP: the measured interval against the predicted
# break-even P (predicted_bps, the model's time to target), all bytes/s:
#   unemulable  P above CEIL (emulable): beyond what this machine can
#               emulate faithfully; no measured number is reported
#   beyond      C faster beyond the noise at every rate run (LO inf) and P
#               at or above the highest of them, TOP: the rates run cannot say
#   within      the whole interval within 20% of P: [LO, HI] in [0.8 P, 1.2 P]
#   outside     the whole interval more than 20% off P
#   flat        neither, and the interval wider than the 20% band around
#               its middle allows (HI > 1.5 LO, or open): the two steps
#               differ by less than their spread over too wide a range to
#               say; not a pass
#   edge        neither, narrow enough, across one of the 20% edges
#   never       P is 0 (C pays nowhere on the model's grid) and C slower
#               beyond the noise at every rate run
#   -           no figures
verdict() {
    awk -v lo="$1" -v hi="$2" -v p="$3" -v ce="$4" -v top="$5" 'function num(v) { return v == "inf" ? 1e300 : v + 0 }
        BEGIN {
            if (lo == "nan" || hi == "nan" || p == "nan" || p == "-" || p == "") { print "-"; exit }
            L = num(lo); H = num(hi); P = num(p)
            if (P > num(ce)) print "unemulable"
            else if (L >= num(top) && P >= num(top)) print "beyond"
            else if (P == 0) print (H == 0 ? "never" : L > 0 ? "outside" : "flat")
            else if (L >= 0.8 * P && H <= 1.2 * P) print "within"
            else if (H < 0.8 * P || L > 1.2 * P) print "outside"
            else if (L == 0 || H > 1.5 * L) print "flat"
            else print "edge"
        }'
}

csv=$out/compression.csv
: > "$csv"
hr_ring=nan hr_ps=nan spread_ps=0
[ -n "$ps_c" ] && spread_ps=$(entry_spread ps)
[ -n "$ring_c" ] && hr_ring=$(host_call ring)
[ -n "$ps_c" ] && hr_ps=$(host_call ps)
ceil_ring=$(emulable ring) ceil_ps=$(emulable ps)
for x in $runs; do
    sys=${x%%:*} c=${x#*:} pc="" p0="" sc="" s0="" nc=() n0=() cc=() c0=()
    for r in ${rates_of[$x]}; do
        set -- $(point "$sys" "$c" "$r")
        pc="$pc $(bps "$r") $2" sc="$sc $(bps "$r") $3" nc+=("$1") cc+=("$4")
        set -- $(point "$sys" none "$r")
        p0="$p0 $(bps "$r") $2" s0="$s0 $(bps "$r") $3" n0+=("$1") c0+=("$4")
    done
    # the steps to target and the time outside the modelled communication
    # do not depend on the link: each compressor's median over the rates
    # (and repeats), C's and none's apart
    sn=$(median "${nc[@]}") s0n=$(median "${n0[@]}") cm=$(median "${cc[@]}") c0m=$(median "${c0[@]}")
    ratio=$(awk -v a="$sn" -v b="$s0n" 'BEGIN { print (a == "nan" || b == "nan") ? "nan" : sprintf("%.4g", a / b) }')
    be="- -" bs="- -" pr=- ps=- iv="- -" vd=- ce=$([ "$sys" = ps ] && echo "$ceil_ps" || echo "$ceil_ring")
    if [ "$c" != none ]; then
        be=$(fit_be "$pc" "$p0") bs=$(fit_be "$sc" "$s0")
        gc=$(grid "$sys" "$c") g0=$(grid "$sys" none)
        pr=$(predicted "$gc" "$g0" "$(less1 "$sn")" "$(less1 "$s0n")" "$cm" "$c0m") ps=$(predicted "$gc" "$g0" 1 1 "$cm" "$c0m")
        iv=$(be_interval step_d "$sys" "$c" "$(less1 "$sn")" "$(less1 "$s0n")")
        vd=$(verdict $iv "$pr" "$ce" "$(for r in ${rates_of[$x]}; do bps "$r"; done | sort -g | tail -n 1)")
        [ "$vd" = unemulable ] && iv="- -"     # no number where the link cannot say
        # THE BREAK-EVEN ON THE COMBINE: time_s, the codec's cost in it,
        # against bin/model's combine alone (its bytes, its codec's
        # measured cost per element; no time measured outside the model)
        ci=$(be_interval combine_d "$sys" "$c" 1 1)
        cp=$(predicted "$gc" "$g0" 1 1 0 0)
        cv=$(verdict $ci "$cp" "$ce" "$(for r in ${rates_of[$x]}; do bps "$r"; done | sort -g | tail -n 1)")
        [ "$cv" = unemulable ] && ci="- -"
    else
        ci="- -" cp=- cv=-
    fi
    codec=$(awk -v a="${codec_cost[$sys:$c]:-0}" -v n="$([ "${c%%:*}" = powersgd ] && echo "$psgd_elems" || echo "$mlp_elems")" 'BEGIN { printf "%.6g\n", a * n }')
    for r in ${rates_of[$x]}; do
        n=$(tag "$sys" "$c" "$r")
        [ -s "$out/logs/$n.csv" ] || continue
        [ -s "$csv" ] || echo "$(head -n 1 "$out/logs/$n.csv"),compressor,rate,rate_bps,steps_to_target,time_to_target_s,breakeven_bps,breakeven_where,breakeven_step_bps,breakeven_step_where,predicted_bps,predicted_step_bps,steps_ratio,compute_s,host_call_s,repeats,spread_s,period_s,breakeven_lo_bps,breakeven_hi_bps,emulable_bps,verdict,combine_s,combine_none_s,combine_spread_s,combine_model_s,codec_s,combine_lo_bps,combine_hi_bps,combine_predicted_bps,combine_verdict" > "$csv"
        cd_=$(combine_d "$sys" "$c" "$r") cm_=$(model_t "$sys" "$c" "$(bps "$r")")
        set -- $cd_
        cd_="$3,$4,$2"
        set -- $(point "$sys" "$c" "$r") $be $bs $iv $ci
        tail -n +2 "$out/logs/$n.csv" | head -n 1 | sed "s|\$|,$c,$r,$(bps "$r"),$1,$2,$5,$6,$7,$8,$pr,$ps,$ratio,$cm,$([ "$sys" = ps ] && echo "$hr_ps" || echo "$hr_ring"),$repeats,$([ "$sys" = ps ] && echo "$spread_ps" || echo 0),$3,$9,${10},$ce,$vd,$cd_,${cm_:-nan},$codec,${11},${12},$cp,$cv|" >> "$csv"
    done
done
[ -s "$csv" ] || { say "no run succeeded; logs in $out/logs"; exit 1; }

# ------------------------------------------------------------ 3. the table

# interval_table LO HI PRED VERDICT WHAT: one line per system and
# compressor (its interval, prediction and verdict columns, in Mbit/s,
# and the rates it ran), then why each `unemulable` one has no number.
interval_table() {
    csv_awk -v lo="$1" -v hi="$2" -v pr="$3" -v vd="$4" -v what="$5" '
        function mb(v) { return (v == "inf" || v == "nan" || v == "-" || v == "") ? v : sprintf("%.4g", v * 8 / 1e6) }
        FNR > 1 && $c["compressor"] != "none" { k = $c["system"] " " $c["compressor"]
            if (!(k in seen)) { seen[k] = ++n; line[n] = sprintf("%-4s %-12s %11s %11s %11s %10s %-10s", $c["system"], $c["compressor"],
                mb($c[lo]), mb($c[hi]), mb($c[pr]), mb($c["emulable_bps"]), $c[vd])
                if ($c[vd] == "unemulable") why[n] = sprintf("# %s %s: the predicted %s, %s Mbit/s, lies above %s Mbit/s, where the link stopped setting the pace: beyond what this machine can emulate faithfully; no measured number.", $c["system"], $c["compressor"], what, mb($c[pr]), mb($c["emulable_bps"])) }
            rs[seen[k]] = rs[seen[k]] " " $c["rate"] }
        END { for (i = 1; i <= n; i++) print line[i] rs[i]; for (i = 1; i <= n; i++) if (i in why) print why[i] }' "$csv"
}
{
    echo "# compression: mlp, K = $k, seed 7, $steps steps, lr $lr, target loss $target; EMULATED link, latency $lat; $repeats repeat(s), interleaved."
    echo "# steps/time to target: the first step at or under the target and the time to it from step 0's loss (loss file);"
    echo "# step_s: the mean step (the loss file's; medians over the repeats)."
    echo "# break-even (Mbit/s): where C's time equals none's on its system. measured: time to target (medians over the"
    echo "# repeats), A + B/rate through the two rates that bracket it (in; out: extrapolated from the two highest or"
    echo "# lowest; inf: pays at every rate); be_step: the same on the mean step. predicted: bin/model's step (the"
    echo "# compressor's bytes and measured codec cost; the PS's from the last worker's entry, the entries spread_s"
    echo "# apart) plus the step's measured time outside it (C's own runs), times the measured steps to target"
    echo "# after step 0 (s_ratio: C's / none's); pr_step: the same per step. ratio: measured / predicted, on time to"
    echo "# target and on the step; beyond: both above the highest rate run ($(echo $all_rates | awk '{ print $NF }')), where the lab's link cannot say more;"
    echo "# unemulable rows show no measured number (the verdict table below)."
    echo "# Measured on $(nproc) CPUs, shared, $(date -u +%Y-%m-%dT%H:%M:%SZ); timings are noisy, never asserted."
    printf '%-4s %-12s %9s %8s %8s %10s %11s %4s %11s %4s %11s %11s %7s %7s %7s\n' sys compressor rate step_s steps_tt time_tt_s be_meas_Mb where be_step_Mb wh be_pred_Mb pr_step_Mb s_ratio ratio r_step
    csv_awk -v hi="$(for r in $all_rates; do bps "$r"; done | sort -g | tail -n 1)" 'function mb(v) { return (v == "inf" || v == "nan" || v == "-" || v == "") ? v : sprintf("%.4g", v * 8 / 1e6) }
        function rt(m, p, w) {
            if ((m == "inf" || (w == "out" && m + 0 > hi)) && (p == "inf" || p + 0 > hi)) return "beyond"
            return (m + 0 > 0 && p + 0 > 0 && m != "inf" && p != "inf") ? sprintf("%.3f", m / p) : "-" }
        FNR > 1 {
        m = $c["breakeven_bps"]; p = $c["predicted_bps"]; ms = $c["breakeven_step_bps"]; ps = $c["predicted_step_bps"]
        if ($c["verdict"] == "unemulable") m = ms = "-"
        printf "%-4s %-12s %9s %8.4f %8s %10s %11s %4s %11s %4s %11s %11s %7s %7s %7s\n", $c["system"], $c["compressor"], $c["rate"], $c["period_s"],
               $c["steps_to_target"], $c["time_to_target_s"], mb(m), $c["breakeven_where"], mb(ms),
               $c["breakeven_step_where"], mb(p), mb(ps), $c["steps_ratio"], rt(m, p, $c["breakeven_where"]), rt(ms, ps, $c["breakeven_step_where"]) }' "$csv"
    echo "#"
    echo "# THE MEASURED BREAK-EVEN AS AN INTERVAL (Mbit/s), on the time to target from the mean step (its steps after"
    echo "# step 0 times the mean step, the repeats' median): lo, where C stops being faster than none by more than"
    echo "# their spread (1.4826 x the repeats' differences' median absolute deviation, at least twice the runs' standard errors),"
    echo "# hi, where it starts being slower by more; 0 / inf: open below / above the rates C ran. Against be_pred"
    echo "# (the model's time to target): within (the whole interval within 20%), outside (all of it more than 20%"
    echo "# off), flat (wider than the 20% band: the two differ by less than their spread over too wide a range to"
    echo "# say; not a pass), edge (narrow, across a 20% edge), beyond (C faster at every rate run, and be_pred above"
    echo "# them), unemulable (be_pred above emul_Mb, the lowest rate where none's link stopped setting the pace:"
    echo "# link_util under 0.95, or none's time_s over its model by more than the link's bandwidth term there)."
    printf '%-4s %-12s %11s %11s %11s %10s %-10s %s\n' sys compressor be_lo_Mb be_hi_Mb be_pred_Mb emul_Mb verdict rates
    interval_table breakeven_lo_bps breakeven_hi_bps predicted_bps verdict "break-even"
    echo "#"
    echo "# THE BREAK-EVEN ON THE COMBINE (Mbit/s): where C's combine costs what none's does, the backward and the"
    echo "# apply (the same for both, and the step's noise) left out. cmb_ms: time_s, per step the slowest process's"
    echo "# combine from the last entry, the median over steps and then over the repeats, the codec in it (the ring's"
    echo "# encode and decode run inside its all-reduce, the PS worker's encode inside its push, the server's decode"
    echo "# and sum before its pull); none_ms: none's at the rate; spread_ms: the difference's spread (as above, the"
    echo "# runs' standard errors from their records' per-step combines); model_ms: bin/model's combine for C (its"
    echo "# bytes, plus codec_ms: its codec's cost per element, measured by bin/model, times the mlp's $mlp_elems)."
    echo "# cmb_lo / cmb_hi: where C stops being faster / starts being slower than none beyond the spread; cmb_pred:"
    echo "# bin/model's combine alone, C's against none's (no time measured outside the model: it does not move"
    echo "# between sets but with the codec's measured cost and the PS's spread_s); the verdict as above."
    printf '%-4s %-12s %9s %9s %9s %9s %9s %9s\n' sys compressor rate cmb_ms none_ms spread_ms model_ms codec_ms
    csv_awk 'function ms(v) { return (v == "nan" || v == "" || v == "-") ? "nan" : sprintf("%.4f", v * 1e3) }
        FNR > 1 && $c["compressor"] != "none" {
        printf "%-4s %-12s %9s %9s %9s %9s %9s %9s\n", $c["system"], $c["compressor"], $c["rate"], ms($c["combine_s"]),
               ms($c["combine_none_s"]), ms($c["combine_spread_s"]), ms($c["combine_model_s"]), ms($c["codec_s"]) }' "$csv"
    printf '%-4s %-12s %11s %11s %11s %10s %-10s %s\n' sys compressor cmb_lo_Mb cmb_hi_Mb cmb_pred_Mb emul_Mb verdict rates
    interval_table combine_lo_bps combine_hi_bps combine_predicted_bps combine_verdict "break-even on the combine"
} > "$out/compression.txt"
cat "$out/compression.txt"

# ------------------------------------------------------------ 4. the plots
labels=""
for x in $runs; do labels="$labels $x"; done
sub="mlp, K = $k, seed 7, lr $lr; EMULATED link, latency $lat; $(nproc) CPUs, shared"
for fmt in png svg; do
    for panel in time step; do
        o=$out/compression.$fmt; [ $panel = step ] && o=$out/compression_steps.$fmt
        gnuplot -e "dir='$root/plots/'; fmt='$fmt'; out='$o'; panel='$panel'; lossdir='$out/loss'; rates='$all_rates'; runs='${labels# }'; sub='$sub'; target=$target" \
            "$root/plots/compression.gp" 2>>"$out/logs/plots.log" ||
            { say "plots/compression.gp failed: $(tail -c 300 "$out/logs/plots.log")"; failed=$((failed + 1)); }
    done
done
manifest "$out" ": the compression section" "experiments/lab.sh --only compression (K $k, rates $rates, ring $ring_c, ps $ps_c, steps $steps, lr $lr, latency $lat, target $target, repeats $repeats${around:+, around $around})" <<EOF
link_bw: EMULATED $all_rates, latency $lat
breakeven: $(csv_awk 'FNR > 1 && $c["compressor"] != "none" && !s[$c["system"] $c["compressor"]]++ { printf "%s %s measured %s (%s) step %s (%s) predicted %s step %s bytes/s, steps ratio %s, interval %s to %s (%s), on the combine %s to %s predicted %s (%s); ", $c["system"], $c["compressor"], $c["breakeven_bps"], $c["breakeven_where"], $c["breakeven_step_bps"], $c["breakeven_step_where"], $c["predicted_bps"], $c["predicted_step_bps"], $c["steps_ratio"], $c["breakeven_lo_bps"], $c["breakeven_hi_bps"], $c["verdict"], $c["combine_lo_bps"], $c["combine_hi_bps"], $c["combine_predicted_bps"], $c["combine_verdict"] }' "$csv")
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
