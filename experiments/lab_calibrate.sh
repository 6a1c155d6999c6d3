#!/usr/bin/env bash
# lab_calibrate.sh -- the lab's calibration (experiments/lab.sh, step 1):
# which emulated link rate this machine can keep the K sweep link-bound
# at. lab.sh runs it for --link-bw auto, the default, with its own flags
# (the K sweep's --ks, --link-latency, --bytes, --out: lab_lib.sh):
#
#     experiments/lab_calibrate.sh [lab.sh's flags] --out DIR
#
# A probe, the K sweep's largest ring as the sweep runs it (its n at that
# rate, 8 steps), behind each rate of a ladder (500, 250, 125, 100 (the
# lab's scale: lab_lib.sh), 64, 32, 16, 8 Mbit/s), measures its
# processes' CPU seconds per step (the records' cpu_s, the compute
# included: it is the machine's load) over the model's time times the
# cores, its time_s against its model_s, and its bound_by. The fastest
# rate with a share under 0.5 (the host_bound flag fires at 0.8), bound by
# the link and within 5% of its model wins, so that the whole K sweep
# stays link-bound and within 5%; none: the slowest (lab.sh's manifest
# then says the run is below the lab's scale, "scale:"). On stdout, two lines: the rate
# (8Mbit), and the calibration's account, every probe's figures (the
# manifest's "calibration:" line). Progress and each probe's line on
# stderr; each probe's command line into DIR/commands.txt, its records
# into DIR/logs/probe_RATE/. Exit 0; 64 for a bad flag; 130 on ^C.
set -uo pipefail

prog=lab.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/lab_lib.sh"
lab_options "$@"
t_start=${LAB_T0:-$(date +%s)}      # lab.sh's, for the elapsed times
make_out logs
ncpu=$(nproc)
kmax=$(echo $ks | tr ' ' '\n' | sort -n | tail -n 1)

# probe RATE: the K sweep's largest ring (kmax ranks, at least 2) behind
# RATE, as the sweep runs it: the synthetic workload, its n at that rate
# (k_bytes), $probe_steps steps. Prints "SHARE CPU_PER_ALLREDUCE N RATIO
# BOUND_BY": the CPU its own processes spent per step (the records'
# cpu_s summed over the ranks, set-up included), and that over the
# model's time times the cores: the share of the machine the ring takes
# at this rate (the model's time, not the measured one, so that a busy
# machine, which stretches the wall clock, does not make the share look
# smaller); the run's time_s over its model_s and its bound_by. With more
# ranks than cores the ranks' wake-ups, not their CPU seconds, hold a ring
# back: a K = 8 ring on 2 cores used a quarter of them at 32 Mbit/s and
# still took 1.16-1.25x its model.
probe() {
    local r=$1 k=$kmax n t d ratio bound
    [ "$k" -ge 2 ] || k=2
    n=$(k_bytes "$r")
    d=$out/logs/probe_$r
    rm -rf "$d"; mkdir -p "$d"
    set -- "$here/launch.sh" ring "$k" --workload synthetic --dtype f32 --params $(( n / 4 )) \
        --steps "$probe_steps" --warmup 2 --link-bw "$r" --link-latency "$link_lat" --timeout 30 \
        --time-limit 60 --out "$d"
    note_command "probe_$r" "$@"
    job "the calibration probe at $r" "$d.out" "$d.log" "$@" || return 1
    t=$(model_time ring "$k" "$n" "$r")
    read -r ratio bound < <(csv_awk 'FNR == 2 && $c["model_s"] > 0 { printf "%.3f %s\n", $c["time_s"] / $c["model_s"], $c["bound_by"] }' "$d.out" 2>/dev/null)
    awk -v t="$t" -v c="$ncpu" -v n="$n" -v q="${ratio:-nan}" -v b="${bound:-unknown}" -v i="$probe_steps" '/^cpu_s / { s += $2 }
        END { if (s <= 0 || t <= 0) exit 1; printf "%.3f %.4g %d %s %s\n", s / i / (t * c), s / i, n, q, b }' "$d"/rec.*
}

# The ladder, fastest first; the first rate whose probe stays under
# half the cores, bound by the link and within 5% of its model wins
# (10% let 16 Mbit/s win at 1.09x, and the sweep's K = 8 ring then read
# 1.11x: the probe's margin is the sweep's).
# After a probe over the CPU target the next rate tried is the
# ladder's fastest at or below rate x target / share (at least one
# step down): the CPU per second falls with the rate, though not
# always in proportion (the link's piece size has a floor); after one
# off its model or flagged, the ladder's fastest at or below half the
# rate. Neither skips the lab's scale (lab_lib.sh, THE LAB'S SCALE): from
# above 100 Mbit/s the next rate is 100 Mbit/s at the lowest.
ladder="500Mbit 250Mbit 125Mbit 100Mbit 64Mbit 32Mbit 16Mbit 8Mbit"
calib=""
pick=""
target=0.5
next=500Mbit
for r in $ladder; do
    [ "$r" = "$next" ] || continue
    progress "[1/5] calibration: a ring of $kmax behind $r ..."
    res=$(probe "$r") || { calib="$calib $r: probe failed;"; next=; continue; }
    set -- $res
    calib="$calib $r: n $3 B, $2 CPU-s a step, share $1, $4x its model, bound by $5;"
    done_line "[1/5] calibration: ring K=$kmax at $r, n = $3 bytes: $2 CPU-seconds a step, $1 of $ncpu CPUs, $4x its model, bound by $5 ($(elapsed))"
    if awk -v s="$1" -v t="$target" -v q="$4" 'BEGIN { exit !(s <= t && q <= 1.05) }' && [ "$5" = link ]; then
        pick=$r; break
    fi
    want=$(awk -v s="$1" -v t="$target" -v b="$(rate_Bps "$r")" -v sc="$scale_Bps" 'BEGIN {
        w = s > t ? b * t / s : b / 2; if (b > sc * (1 + 1e-9) && w < sc) w = sc; printf "%.17g", w }')
    next=""
    past=0
    for q in $ladder; do
        [ "$q" = "$r" ] && { past=1; continue; }
        [ "$past" = 1 ] || continue
        [ -z "$next" ] && next=$q          # at least one step down
        if awk -v q="$(rate_Bps "$q")" -v w="$want" 'BEGIN { exit !(q <= w) }'; then next=$q; break; fi
    done
done
if [ -z "$pick" ]; then
    pick=${ladder##* }
    calib="$calib no rate under a share of $target, link-bound and within 5% of its model: the slowest, $pick"
fi
link_bw=$pick
calib="auto -> $link_bw (target: the K=$kmax ring's processes under $target of $ncpu CPUs, bound by the link, within 5% of its model;$calib)"
done_line "[1/5] --link-bw auto: $link_bw ($(elapsed))"
echo "$link_bw"
echo "$calib"
