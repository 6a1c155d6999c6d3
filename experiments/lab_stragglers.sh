#!/usr/bin/env bash
# lab_stragglers.sh -- the stragglers section of the lab (`experiments/lab.sh
# --only stragglers`; in `make lab-all`, not in the default `make lab`): a
# synchronous step waits for its slowest worker; what the parameter
# server's other modes buy back (issue 16).
#
#   1. the sweep: the mlp workload on K workers (default 8), one of them
#      (rank 1) slowed 1x, 2x, 3x, 4x (--straggler 1:F) and every worker
#      jittered (--jitter SIGMA, log-normal, mean-preserving), all on top of
#      an EMULATED backward time T (--backward-time: a sleep added to mlp's
#      real compute, common/train/compute.h); five systems on the same flags:
#        ring      the ring all-reduce: every step waits for the slowest
#        sync      the parameter server, one barrier per step
#        backup:1  a step takes the first K-1 pushes; the late one dropped
#        ssp:2     asynchronous, but no worker more than 2 steps ahead
#        async     every push applied alone when it arrives
#      THE EMULATED LINK (--link-bw, default 100 Mbit/s; --link-latency,
#      default 1 ms): every process behind it, the server's
#      modes too (their whole weights frames paced through the server's
#      NIC, common/ps/server_mode.c, PACED); --link-bw 0: none, the
#      unpaced loopback. T is chosen so that a step is mostly the emulated
#      compute (the CPU check below says how much);
#   2. per run: the CSV row (bin/psr_merge's, with ttt_s, the time to
#      --target-loss, and wait_s, the largest per-worker mean barrier wait),
#      the loss against wall-clock time (--loss-time-out: the server's, or
#      ring rank 0's), and the workers' records (launch.sh --out);
#   3. per mode and factor, the step the mode runs at, from the workers'
#      records (each record's STEP_S, the whole step; timed steps only):
#        ring, sync   per step the slowest worker's (the K-th smallest), the
#                     median over steps (the CSV's step_s)
#        backup:B     per step the (K-B)-th smallest: the step's last USED
#                     push; median over steps
#        ssp, async   K / U, U the updates per second while every worker
#                     is in its timed steps (from the pushes' ENTER_T): the
#                     time the server takes for K updates, which is as
#                     many examples as one synchronous step
#      and the cost model's (bin/model --stragglers, common/measure/model.h
#      STRAGGLERS; never a formula here) on the same EMULATED compute
#      times (the same seed, so the same jitter draws) and a communication
#      t: on the link the PS modes' own (model.h, THE STALE MODES: the
#      server's NIC shared round-robin each way; sync and backup:B per step,
#      each push from the end of its worker's compute, the step when the
#      K-th (K-B-th) is in, its pulls and the late pushes' replies out;
#      async and ssp on the mean compute, a closed queue (MVA), ssp with a
#      straggler at its pace, its pull sharing the egress with the K-1
#      frames its push releases), the
#      ring's CALIBRATED from its 1x run (the measured step less the
#      model's with t = 0); without the link every system's calibrated
#      so (sync PS's for the four PS modes). bytes_per_update: the bytes
#      on the wire per update over the timed steps, headers included (the
#      workers' push and pull; the ring: every rank's out), an update one
#      worker's step in async and ssp, the K workers' step otherwise;
#   4. stragglers.png (plots/stragglers.gp): time to target and step time
#      against the factor, one line per mode, the model dashed; loss_time.png:
#      loss against wall-clock time at factor 3 (or the largest factor below
#      it) for each mode; SVG twins for index.html.
#
# Results: <out>/stragglers.csv (psr_merge's columns, then mode,
# straggler_factor, jitter, mode_step_s, model_step_s, comm_s,
# bytes_per_update, by name; comm_s empty for async and ssp on the link:
# their own, queued),
# <out>/stragglers.txt (the table below), <out>/loss/MODE_fF.loss,
# logs/ (every job's stderr, records, commands). Progress on stderr, the
# table on stdout. Timings on a loaded 2-core machine are noisy: the table
# says so, and nothing here asserts one.
set -uo pipefail

prog=lab.sh
intr_cmd="experiments/lab.sh --only stragglers${*:+ $*}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
stop_on_interrupt

k=8
factors="1 2 3 4"
modes="ring sync backup:1 ssp:2 async"
jitter=0.2
bt=100ms
steps=30
warmup=2
lr=0.05
target=
srank=1
out=
quick=0
timeout=60
link_bw_default=100Mbit
link_lat_default=1ms
link_bw=$link_bw_default
link_lat=$link_lat_default
# The default --target-loss: the mlp's loss (seed 7, --lr 0.05, B = 256;
# bin/reference --workload mlp --steps 40 --loss-out FILE) falls from 0.577
# at step 0 to about 0.06; the big batch first reaches 0.2 at step 9, and
# every mode reached it at every factor (docs/lab-key.md, exercise 12, has
# the runs it was picked from). The quick sweep's 20 steps leave room.
target_default=0.2

usage() {
    cat <<EOF
usage: experiments/lab.sh --only stragglers [--out DIR] [--quick] [options]
The stragglers section: the mlp on K workers, rank $srank slowed 1x..4x and every
worker jittered, on the ring and the parameter server's modes, with
EMULATED compute (--backward-time, a sleep), behind the EMULATED link.
  --K K              workers (default $k)
  --factors "F ..."  the straggler's factors (default "$factors"; 1 is always run:
                     it calibrates the model's communication)
  --modes "M ..."    systems (default "$modes"; ring, or ps_server's
                     --mode: sync, async, ssp:N, backup:N)
  --jitter SIGMA     every worker's log-normal jitter (default $jitter; 0: none)
  --backward-time T  the EMULATED backward time (default $bt)
  --steps S          steps per run (default $steps), --warmup W (default $warmup)
  --lr X             learning rate (default $lr)
  --target-loss X    the loss whose first crossing is the time to target
                     (default $target_default)
  --link-bw RATE     every process's EMULATED link (default $link_bw_default; 0: none)
  --link-latency T   its latency (default $link_lat_default)
  --out DIR          results folder (default results/<date-time>)
  --quick            K 4, factors "1 3", 20 steps, T 50ms (tests, the handout)
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    --K | --factors | --modes | --jitter | --backward-time | --steps | --warmup | --lr | --target-loss | --out | \
        --link-bw | --link-latency | --link-bw=* | --link-latency=* | \
        --K=* | --factors=* | --modes=* | --jitter=* | --backward-time=* | --steps=* | --warmup=* | --lr=* | \
        --target-loss=* | --out=*)
        opt_value "$@"
        shift $((1 + extra))
        case $name in
        --K) k=$val ;;
        --factors) factors=$val ;;
        --modes) modes=$val ;;
        --jitter) jitter=$val ;;
        --backward-time) bt=$val ;;
        --steps) steps=$val ;;
        --warmup) warmup=$val ;;
        --lr) lr=$val ;;
        --target-loss) target=$val ;;
        --out) out=$val ;;
        --link-bw) link_bw=$val ;;
        --link-latency) link_lat=$val ;;
        esac ;;
    --quick) quick=1; k=4; factors="1 3"; steps=20; bt=50ms; shift ;;
    --help | -h) usage; exit 0 ;;
    *) die_usage "--only stragglers: $(shown_value "$1"): unknown option" ;;
    esac
done
[ -n "$target" ] || target=$target_default

# ------------------------------------------------------------ checks
[[ $k =~ ^[1-9][0-9]?$ ]] && [ "$k" -ge 2 ] || usage_error --K "$k" "not a worker count 2..99"
[ "$srank" -lt "$k" ] || die_usage "--K: the straggler is rank $srank, so K must be at least $((srank + 1))"
for f in $factors; do
    [[ $f =~ ^[1-9][0-9]*(\.[0-9]+)?$ ]] && awk -v f="$f" 'BEGIN { exit !(f >= 1 && f <= 1000) }' ||
        usage_error --factors "$f" "not a factor 1..1000"
done
case " $factors " in *" 1 "*) ;; *) factors="1 $factors" ;; esac
factors=$(echo $factors | tr ' ' '\n' | sort -g -u | tr '\n' ' ')
[ -n "$modes" ] || die_usage "--modes: no mode given"
for m in $modes; do
    case $m in
    ring | sync | async) ;;
    ssp:[0-9]*) [[ $m =~ ^ssp:[0-9]{1,9}$ ]] || usage_error --modes "$m" "not ssp:N" ;;
    backup:[0-9]*) [[ $m =~ ^backup:[0-9]{1,9}$ ]] && [ "${m#backup:}" -ge 1 ] && [ "${m#backup:}" -lt "$k" ] ||
        usage_error --modes "$m" "not backup:N with 1 <= N < K = $k" ;;
    *) usage_error --modes "$m" "not ring, sync, async, ssp:N or backup:N" ;;
    esac
done
[[ $steps =~ ^[1-9][0-9]{0,5}$ ]] || usage_error --steps "$steps" "not a step count 1..999999"
[[ $warmup =~ ^[0-9]{1,6}$ ]] && [ "$warmup" -lt "$steps" ] || usage_error --warmup "$warmup" "not 0..steps-1"
[[ $jitter =~ ^[0-9]*\.?[0-9]+$ ]] && awk -v s="$jitter" 'BEGIN { exit !(s <= 2) }' ||
    usage_error --jitter "$jitter" "not a SIGMA 0..2"
for fv in "--lr $lr" "--target-loss $target"; do
    v=${fv#* }
    [[ $v =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] && awk -v x="$v" 'BEGIN { exit !(x > 0) }' ||
        usage_error "${fv%% *}" "$v" "not a number > 0"
done
need_programs ring_worker ps_server ps_worker psr_merge psr_json model
# The link through bin/model's own parser (a bad RATE or TIME stops here, 64).
link=1
[ "$link_bw" = 0 ] && link=0
if [ "$link" = 1 ]; then
    "$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$link_bw" --latency "$link_lat" >/dev/null 2>"${TMPDIR:-/tmp}/lab_strag.$$" ||
        { m=$(head -n 1 "${TMPDIR:-/tmp}/lab_strag.$$"); rm -f "${TMPDIR:-/tmp}/lab_strag.$$"; m=${m#model: }
          die_usage "--link-bw $(shown_value "$link_bw") / --link-latency $(shown_value "$link_lat"): ${m%; see model --help}"; }
    awk -v t="$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$link_bw" --latency 0)" 'BEGIN { exit !(t > 0) }' ||
        usage_error --link-bw "$link_bw" "not a rate above 0 (0: no link)"
fi
# T in seconds, through bin/model's own parser (its --stragglers sync of
# one worker with no communication is T itself); a bad T stops here, 64.
T=$("$PSR_BIN/model" --stragglers sync --K 1 --backward-time "$bt" --comm 0 2>"${TMPDIR:-/tmp}/lab_strag.$$") ||
    { m=$(head -n 1 "${TMPDIR:-/tmp}/lab_strag.$$"); rm -f "${TMPDIR:-/tmp}/lab_strag.$$"; m=${m#model: }; die_usage "${m%; see model --help}"; }
rm -f "${TMPDIR:-/tmp}/lab_strag.$$"
awk -v t="$T" 'BEGIN { exit !(t > 0) }' || usage_error --backward-time "$bt" "must be above 0 (the straggler scales it)"
need_programs gnuplot
make_out logs loss
stop_on_interrupt ": the stragglers section" "$intr_cmd"
launch=$here/launch.sh
t_start=$(date +%s)

# tag MODE: the mode as a file name (backup:1 -> backup1).
tag() { echo "${1//:/}"; }
# the factor whose loss curves are drawn: 3, or the largest below it
lossf=$(for f in $factors; do awk -v f="$f" 'BEGIN { exit !(f <= 3) }' && echo "$f"; done | tail -n 1)

# ------------------------------------------------------------ 1. the runs
# run MODE F: one job; its row in logs/NAME.csv, stderr in logs/NAME.err,
# records in logs/NAME.d/, loss curve in loss/NAME.loss.
run() {
    local m=$1 f=$2 n sys=ps extra=()
    n=$(tag "$m")_f$f
    [ "$m" = ring ] && sys=ring
    [ "$sys" = ps ] && extra=(--server-args "--mode $m")
    rm -rf "$out/logs/$n.d" "$out/logs/$n.csv"
    mkdir -p "$out/logs/$n.d"
    set -- "$launch" "$sys" "$k" --workload mlp --steps "$steps" --warmup "$warmup" --lr "$lr" \
        --backward-time "$bt" --straggler "$srank:$f" --jitter "$jitter" --target-loss "$target" \
        --loss-time-out "$out/loss/$n.loss" --timeout "$timeout" --time-limit 600 \
        --out "$out/logs/$n.d" --csv-out "$out/logs/$n.csv" "${extra[@]}"
    [ "$link" = 1 ] && set -- "$@" --link-bw "$link_bw" --link-latency "$link_lat"
    note_command "$n" "$@"
    job "$m at ${f}x" /dev/null "$out/logs/$n.err" bash "$@"
}

link_words="EMULATED link $link_bw, latency $link_lat, every process (the server's modes paced too)."
[ "$link" = 1 ] || link_words="NO emulated link (--link-bw 0): unpaced loopback for every system."
failed=0
total=0
for f in $factors; do for m in $modes; do total=$((total + 1)); done; done
say "stragglers: mlp, K = $k, rank $srank slowed x($factors), jitter $jitter, EMULATED backward time $bt" \
    "(a sleep on top of mlp's real compute); modes: $modes; $steps steps ($warmup warm-up), lr $lr," \
    "target loss $target. $link_words"
i=0
for f in $factors; do
    for m in $modes; do
        i=$((i + 1))
        progress "[$i/$total] $m, straggler x$f ..."
        if run "$m" "$f"; then
            done_line "$prog: [$i/$total] $m, straggler x$f: done ($(elapsed))"
        else
            failed=$((failed + 1))
        fi
    done
done

# ------------------------------------------------------------ 2. steps and the model
# steps_of DIR: "RECORD STEP STEP_S" for every timed step of every worker
# or ring rank record in DIR (metrics.h, RECORD FILE: STEP_S is field 8).
steps_of() {
    local d=$1 f
    set --
    for f in "$d"/rec.worker.* "$d"/rec.rank.*; do [ -f "$f" ] && set -- "$@" "$f"; done
    [ $# -gt 0 ] && awk '$1 == "step" && NF >= 8 && $8 != "-" { print FILENAME, $2, $8 }' "$@"
}
# kth_step DIR J: per step, the J-th smallest STEP_S over the workers; the
# median over the steps.
kth_step() {
    steps_of "$1" | sort -k2,2n -k3,3g |
        awk -v j="$2" '$2 != s { s = $2; i = 0 } { i++; if (i == j) print $3 }' | median
}
# k_over_rate DIR: K / U, U the updates per second while every worker is
# in its timed steps: the pushes (each record's ENTER_T, field 9: when the
# push began, one clock on one machine) from the latest first timed push
# of any worker to the earliest last one, over that time. Not each
# worker's median step: under ssp:N the fast workers run N steps ahead,
# so their timed steps span N fewer of the straggler's and each reads
# short of the pace they all keep (K = 4, 3x, 28 timed steps: 7%).
k_over_rate() {
    local d=$1 f
    set --
    for f in "$d"/rec.worker.*; do [ -f "$f" ] && set -- "$@" "$f"; done
    [ $# -gt 0 ] || { echo nan; return; }
    awk -v k="$k" '$1 == "step" && NF >= 9 && $9 != "-" { t[FILENAME, ++n[FILENAME]] = $9 }
        END { for (f in n) { a = t[f, 1] + 0; b = t[f, n[f]] + 0
                  if (!w++ || a > lo) lo = a; if (w == 1 || b < hi) hi = b }
              for (f in n) for (i = 1; i <= n[f]; i++) if (t[f, i] >= lo && t[f, i] < hi) c++
              if (c > 0 && hi > lo) printf "%.6g\n", k * (hi - lo) / c; else print "nan" }' "$@"
}
# mode_step MODE DIR: the step the mode runs at (the header's item 3).
mode_step() {
    case $1 in
    ring | sync) kth_step "$2" "$k" ;;
    backup:*) kth_step "$2" $((k - ${1#backup:})) ;;
    *) k_over_rate "$2" ;;
    esac
}
# model F MODE COMM: the model's step for MODE at factor F (bin/model
# --stragglers; for async and ssp K / its updates per second). COMM
# "link": the mode's own t on the link (n = $nbytes bytes).
model() {
    local q=$2 v t=(--comm "$3")
    case $2 in ssp:*) q=ssp ;; esac
    [ "$3" = link ] && t=(--bytes "$nbytes" --bw "$link_bw" --latency "$link_lat")
    v=$("$PSR_BIN/model" --stragglers "$q" --K "$k" --backward-time "$bt" --straggler "$srank:$1" \
        --jitter "$jitter" --steps "$steps" --warmup "$warmup" "${t[@]}") || { echo nan; return; }
    case $q in async | ssp) awk -v k="$k" -v u="$v" 'BEGIN { if (u > 0) printf "%.6g\n", k / u; else print "nan" }' ;;
               *) echo "$v" ;; esac
}

# The communication t, calibrated: each system's 1x step less the model's
# step with t = 0 (at least 0). The ring's for the ring; sync PS's for the
# four PS modes (or the first PS mode's when sync was not run).
calib() {
    local m=$1 s z
    s=$(mode_step "$m" "$out/logs/$(tag "$m")_f1.d")
    z=$(model 1 "$m" 0)
    awk -v s="$s" -v z="$z" 'BEGIN { if (s == "nan" || z == "nan") print "nan"; else printf "%.6g\n", (s > z ? s - z : 0) }'
}
t_ring=nan t_ps=nan ps_ref=
for m in $modes; do
    case $m in
    ring) t_ring=$(calib ring) ;;
    *) [ -z "$ps_ref" ] || [ "$m" = sync ] && ps_ref=$m ;;
    esac
done
[ -n "$ps_ref" ] && t_ps=$(calib "$ps_ref")
# On the link the PS modes' t is their own: n from a run's row.
nbytes=
for f in "$out"/logs/*.csv; do [ -s "$f" ] && nbytes=$(csv_col "$f" bytes) && break; done
if [ "$link" = 1 ] && [ -n "$nbytes" ]; then
    t_ps=link
    t_sync=$("$PSR_BIN/model" --algo ps --K "$k" --bytes "$nbytes" --bw "$link_bw" --latency "$link_lat")
fi
# bytes_per_update MODE DIR: the bytes on the wire per update over the
# timed steps, from the workers' records (each step's bytes_in + bytes_out,
# headers included: its push and its pull), or the ring ranks' (each
# step's bytes_out); an update is one worker's step in async and ssp, the
# K workers' in the others.
bytes_per_update() {
    local per=$k
    case $1 in async | ssp:*) per=1 ;; esac
    local d=$2 f
    set --
    for f in "$d"/rec.worker.* "$d"/rec.rank.*; do [ -f "$f" ] && set -- "$@" "$f"; done
    [ $# -gt 0 ] || { echo nan; return; }
    awk -v per="$per" '$1 == "step" { b += $7 + (FILENAME ~ /rec\.rank\./ ? 0 : $6); n++ }
        END { if (n) printf "%.0f\n", per * b / n; else print "nan" }' "$@" 2>/dev/null || echo nan
}

# The CSV: psr_merge's header and rows, grouped by mode (so that a plot's
# line through one mode's points is not broken), then the lab's columns.
csv=$out/stragglers.csv
: > "$csv"
for m in $modes; do
    t=$t_ps; [ "$m" = ring ] && t=$t_ring
    for f in $factors; do
        n=$(tag "$m")_f$f
        [ -s "$out/logs/$n.csv" ] || continue
        [ -s "$csv" ] || echo "$(head -n 1 "$out/logs/$n.csv"),mode,straggler_factor,jitter,mode_step_s,model_step_s,comm_s,bytes_per_update" > "$csv"
        ms=$(mode_step "$m" "$out/logs/$n.d")
        mm=nan; [ "$t" != nan ] && mm=$(model "$f" "$m" "$t")
        ct=$t
        if [ "$t" = link ]; then
            case $m in
            sync) ct=$t_sync ;;
            backup:*) ct=$("$PSR_BIN/model" --algo ps --K $((k - ${m#backup:})) --bytes "$nbytes" --bw "$link_bw" --latency "$link_lat") ;;
            *) ct= ;;
            esac
        fi
        bu=$(bytes_per_update "$m" "$out/logs/$n.d")
        tail -n +2 "$out/logs/$n.csv" | head -n 1 | sed "s|\$|,$m,$f,$jitter,$ms,$mm,$ct,$bu|" >> "$csv"
    done
done
[ -s "$csv" ] || { say "no run succeeded; logs in $out/logs"; exit 1; }

# ------------------------------------------------------------ 3. the table
# fig NAME: the CPU check and the issue's figures, from the CSV by name.
{
    echo "# stragglers: mlp, K = $k, rank $srank slowed xF, jitter $jitter on every worker, EMULATED backward time $bt"
    echo "# (a sleep on top of mlp's real compute), $steps steps ($warmup warm-up), lr $lr, target loss $target."
    echo "# $link_words"
    echo "# step_s: ring/sync the slowest worker's step, backup:B the (K-B)-th, ssp/async K / updates per s (all workers timed)"
    if [ "$t_ps" = link ]; then
        echo "# (medians over the timed steps); model: bin/model --stragglers, the ring's t calibrated at 1x"
        echo "# (ring t = $t_ring s), the PS modes' their own on the link (n = $nbytes bytes; the server's NIC shared"
        echo "# round-robin each way: sync, backup:B the pushes from each compute's end; async, ssp a closed queue,"
        echo "# ssp's straggler pulling with the K-1 it releases: model.h, THE STALE MODES; comm_s: all pushes together)."
    else
        echo "# (medians over the timed steps); model: bin/model --stragglers with t calibrated at 1x"
        echo "# (ring t = $t_ring s, PS t = $t_ps s)."
    fi
    echo "# bytes/upd: on the wire per update (the workers' push + pull; the ring: every rank's out). ttt_s: time to target (empty: not reached)."
    echo "# Measured on $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ); timings are noisy, never asserted."
    printf '%-9s %6s %10s %10s %7s %10s %9s %9s %9s\n' mode factor step_s model_s ratio bytes/upd ttt_s wait_s job_busy
    csv_awk 'FNR > 1 {
        r = ($c["model_step_s"] + 0 > 0 && $c["mode_step_s"] != "nan") ? sprintf("%.3f", $c["mode_step_s"] / $c["model_step_s"]) : "-"
        printf "%-9s %5sx %10.4f %10.4f %7s %10s %9s %9s %9s\n", $c["mode"], $c["straggler_factor"], $c["mode_step_s"],
               $c["model_step_s"], r, $c["bytes_per_update"], (c["ttt_s"] && $c["ttt_s"] != "" ? sprintf("%.3f", $c["ttt_s"]) : "-"),
               (c["wait_s"] && $c["wait_s"] != "" ? sprintf("%.4f", $c["wait_s"]) : "-"),
               ($c["job_busy"] != "" ? sprintf("%.2f", $c["job_busy"]) : "-") }' "$csv"
} > "$out/stragglers.txt"

# The CPU check: at 1x, how much of a step is the EMULATED compute, and how
# much of the machine the job used. Straggler-bound (the sleep, not the
# CPU, sets the pace) when T is most of the step and the job left most of
# the cores idle.
cpu=$(csv_awk -v T="$T" 'FNR > 1 && $c["straggler_factor"] == 1 && $c["mode_step_s"] + 0 > 0 {
        s = T / $c["mode_step_s"]; if (n == 0 || s < smin) smin = s
        b = $c["job_busy"] + 0; if (b > bmax) bmax = b; n++ }
        END { if (n) printf "%.2f %.2f\n", smin, bmax }' "$csv")
cpu_line="CPU check: no 1x run to judge by"
if [ -n "$cpu" ]; then
    set -- $cpu
    if awk -v s="$1" -v b="$2" 'BEGIN { exit !(s >= 0.6 && b < 0.5) }'; then
        cpu_line="CPU check: straggler-bound, not CPU-bound: at 1x the EMULATED backward time T = $T s is at least $1 of every mode's step, and the job used at most $2 of the $(nproc) cores"
    else
        cpu_line="CPU check: NOT clearly straggler-bound: at 1x T = $T s is only $1 of a step (want >= 0.6) or the job used $2 of the cores (want < 0.5): raise --backward-time"
    fi
fi
echo "# $cpu_line" >> "$out/stragglers.txt"

# The issue's figures at factor 3 (when swept).
figs=$(csv_awk 'FNR > 1 { key = $c["mode"] "@" $c["straggler_factor"]; s[key] = $c["mode_step_s"]; m[key] = $c["model_step_s"]; if (c["ttt_s"]) t[key] = $c["ttt_s"] }
    END {
        if (("sync@1" in s) && ("backup:1@3" in s) && s["sync@1"] > 0)
            printf "# backup:1 at 3x / sync at 1x, median steps: %.4f / %.4f = %.3f (goal <= 1.25)\n", s["backup:1@3"], s["sync@1"], s["backup:1@3"] / s["sync@1"]
        split("ring sync", g, " ")
        for (i = 1; i <= 2; i++) if ((g[i] "@3" in s) && m[g[i] "@3"] > 0)
            printf "# %s at 3x: step %.4f s, model %.4f s, off by %+.1f%% (goal within 10%%)\n", g[i], s[g[i] "@3"], m[g[i] "@3"], 100 * (s[g[i] "@3"] / m[g[i] "@3"] - 1)
        for (key in t) if (key ~ /@3$/) printf "# time to target at 3x, %s: %s\n", substr(key, 1, length(key) - 2), (t[key] == "" ? "not reached" : t[key] " s")
    }' "$csv" | sort)
[ -n "$figs" ] && echo "$figs" >> "$out/stragglers.txt"
cat "$out/stragglers.txt"

# ------------------------------------------------------------ 4. the plots
lfiles=""
for m in $modes; do
    [ -s "$out/loss/$(tag "$m")_f$lossf.loss" ] && lfiles="$lfiles $m=$out/loss/$(tag "$m")_f$lossf.loss"
done
lw="link $link_bw"; [ "$link" = 1 ] || lw="no emulated link"
sub="mlp, K = $k, rank $srank x F, jitter $jitter, EMULATED backward $bt; $lw; $(nproc) CPUs"
for fmt in png svg; do
    gnuplot -e "dir='$root/plots/'; file='$csv'; fmt='$fmt'; out='$out/stragglers.$fmt'; panel='sweep'; sub='$sub'; target=$target" \
        "$root/plots/stragglers.gp" 2>>"$out/logs/plots.log" || { say "plots/stragglers.gp failed: $(tail -c 300 "$out/logs/plots.log")"; failed=$((failed + 1)); }
    if [ -n "$lfiles" ]; then
        gnuplot -e "dir='$root/plots/'; file='$csv'; fmt='$fmt'; out='$out/loss_time.$fmt'; panel='loss'; losses='${lfiles# }'; lossf='$lossf'; sub='$sub'; target=$target" \
            "$root/plots/stragglers.gp" 2>>"$out/logs/plots.log" || { say "plots/stragglers.gp (loss) failed: $(tail -c 300 "$out/logs/plots.log")"; failed=$((failed + 1)); }
    fi
done
ml="link_bw: $link_bw, link_latency $link_lat (EMULATED, every process; the server's modes paced too)"
[ "$link" = 1 ] || ml="link_bw: none (--link-bw 0: unpaced loopback for every system)"
manifest "$out" ": the stragglers section" "experiments/lab.sh --only stragglers (K $k, factors $factors, modes $modes, jitter $jitter, T $bt, steps $steps, warmup $warmup, lr $lr, target $target, link $link_bw $link_lat)" <<EOF
$ml
compute: EMULATED --backward-time $bt (a sleep on top of mlp's real compute), --straggler $srank:F, --jitter $jitter
$cpu_line
jobs_failed: $failed
# every job's command line
EOF
bash "$here/lab_html.sh" "$out" || failed=$((failed + 1))
say "$cpu_line"
say "wrote $csv, $out/stragglers.txt, $out/stragglers.png, $out/loss_time.png, $out/index.html ($(elapsed))"
if [ "$failed" -gt 0 ]; then
    say "$failed job(s) failed; logs in $out/logs"
    exit 1
fi
exit 0
