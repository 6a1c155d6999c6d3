#!/usr/bin/env bash
# lab.sh -- psring's main job (`make lab`): measure the parameter server
# against the ring on one machine, and draw it.
#
#   1. the calibration: the unpaced loopback rate (bench_link --loopback),
#      the cores, and a short probe (the K sweep's largest ring behind the
#      link, as the sweep runs it) that measures the CPU the job's own
#      processes spend per step (the per-message software cost: the
#      emulated link's pieces, syscalls, copies) and the ring's time
#      against its model. --link-bw auto, the default, becomes the fastest
#      rate of a ladder (500, 250, 125, 100, 64, 32, 16, 8 Mbit/s) at which
#      that probe keeps the processes under half of the cores (the
#      host_bound flag fires at 80%), is bound by the link and within 5% of
#      its model, so that the whole K sweep stays link-bound and within 5%
#      (experiments/lab_calibrate.sh); an explicit --link-bw skips the probe;
#   2. the K sweep: the parameter server and the ring for K = 1..16 (up to
#      8 ranks per CPU unless --ks is given) on
#      127.0.0.1, every process behind an EMULATED link (--link-bw,
#      --link-latency), the synthetic workload (n bytes of f32), a few steps
#      after warm-up each;
#   3. the size sweep: the parameter server, the ring and recursive
#      doubling (ring_worker --algo rd, docs/rd.md) at a fixed K from 4 KiB
#      to 16 MiB, the three interleaved at each size; the plot marks where
#      rd stops being faster than the ring, measured and in the model;
#      every point of both sweeps is REPEATED (whole runs, in passes over
#      all points, so that the repeats of one point see the machine at
#      different moments) until its runs agree, spread <= 5% (the lab's
#      spread: (max - min) / median over the runs, the farthest run left
#      out from 4 runs on; experiments/lab_points.awk), or 5 runs; the CSV
#      row is the median run, with runs, run_min_s, run_max_s and spread
#      appended; every run is kept beside it in *_runs.csv;
#   4. the seed's exercise table (bin/model), and short linreg trainings
#      of both systems and of each mistake mode for the loss curves
#      (experiments/lab_loss.sh);
#   5. the plots (plots/*.gp: PNG and SVG, and a terminal view of plot 1),
#      flagged points (host_bound, bound_by cpu|busy|sw) marked and named;
#   6. the report on stdout (experiments/lab_report.sh: each row against
#      the model, the crossover, what was flagged, unsettled or cut) and
#      index.html (experiments/lab_html.sh): the plots, the tables, the fit
#      (fit.txt: bin/fit, experiments/fit.c), the busy banner and the
#      manifest on one self-contained page. Both read only the results
#      folder, and can be rerun on one.
#
# --only algorithms hands over to lab_algorithms.sh (issue 29: the map of
# which algorithm or PS placement wins each K and n, measured and modelled,
# and the selector scored; its own --prune). Step 4 draws the model's map
# (algo_map_model.png) in about a second.
# --only servers runs, instead of all that, the server placements
# (lab_servers.sh, issue 15; `make lab-all` runs it after the main lab),
# with the same flags. --only zero and --only stragglers hand over to
# lab_zero.sh and lab_stragglers.sh (issue 16: stragglers and the PS's
# modes; `make lab-all` runs it too), --only compression to
# lab_compression.sh (issue 30), which take their own options. The
# flags, the repeat rule and the CSVs the runs fold into are lab_lib.sh's,
# shared with lab_servers.sh.
#
# Results go to results/<run>/: k_sweep.csv and size_sweep.csv in the
# shared schema (docs/design.md) plus the lab's four columns, their runs
# in k_sweep_runs.csv and size_sweep_runs.csv, model.txt, fit.txt,
# manifest.txt (command lines, settings, the calibration, what the time
# budget cut, the busy banner, git revision, CPU, kernel, loopback rate),
# logs/ (every job's stderr), the plots and index.html; beside every
# NAME.csv a NAME.json, the same rows as JSON Lines after a manifest line
# (lib.sh json_beside; docs/design.md, JSON LINES).
#
# THE TIME BUDGET. `make lab` must finish in 3 minutes on 2 cores
# (--budget 180), or in 5 where the lab's scale needs it (lab_lib.sh, THE
# LAB'S SCALE: K = 16, n >= 1 MiB, sizes to 16 MiB at 100 Mbit/s or more):
# without --budget, when the model says the first run of every point
# would not fit in 3 minutes, the budget rises to 5 (budget_max; the
# manifest's "budget:" line says so). A slower auto rate makes every
# transfer longer, so the K sweep's n shrinks with the rate (4 MiB at
# 500 Mbit/s, in proportion below, at least 1 MiB at 100 Mbit/s and up,
# 64 KiB below; an explicit --bytes wins); the largest sizes of the size
# sweep are dropped while the model says the first runs alone would not
# fit; repeats stop when the next run would pass the deadline. Everything
# cut is listed in the manifest ("cut:") and on stderr, and the "scale:"
# line says whether the run kept the lab's scale, and what fell short.
#
# WHY THESE DEFAULTS. n = 4 MiB at 500 Mbit/s: the server's link carries
# K n per step each way, so K = 16 moves 64 MiB in and 64 MiB out per step
# at 62.5 MB/s, about 2 s (the calibration lowers the rate, and n with it,
# until the largest ring is link-bound). A latency of 1 ms: each ring step
# also pays the host's own wake-ups and scheduling, 80-220 us a step on
# 2 cores at K = 4 (launch.sh ring 4 --bench, 4-64 KiB, 32 Mbit/s), which
# against 200 us put the 4-64 KiB ring rows 12-36% over their model and
# the ring/rd crossover 1.7-2.3x from the model's; against 1 ms they are
# within 10% and 1.3x. K up to 8 ranks per CPU (ks_for_cpus). Every
# default can be overridden by a flag.
set -uo pipefail

cmdline="$0${*:+ $*}"
args=("$@")
prog=lab.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/lab_lib.sh"

# --only SECTION: one section alone (not part of the default run); zero
# and stragglers with their own options, first.
if [ "${1:-}" = --only ]; then
    case ${2:-} in
    zero) shift 2; exec bash "$here/lab_zero.sh" "$@" ;;
    stragglers) shift 2; exec bash "$here/lab_stragglers.sh" "$@" ;;
    compression) shift 2; exec bash "$here/lab_compression.sh" "$@" ;;
    algorithms) shift 2; LAB_CMDLINE=$cmdline exec bash "$here/lab_algorithms.sh" "$@" ;;
    servers) ;;
    *) [ $# -ge 2 ] || die_usage "--only: missing value"
       usage_error --only "$2" "not a section (servers, algorithms, stragglers, zero, compression)" ;;
    esac
fi
lab_options "$@"
[ "$only" = servers ] && LAB_CMDLINE=$cmdline exec bash "$here/lab_servers.sh" "$@"
lab_ready
stop_on_interrupt "" "$cmdline"    # ^C: the manifest says interrupted

# ------------------------------------------------------------ 1. calibration
progress "[1/5] loopback rate ..."
loop=$("$PSR_BIN/bench_link" --loopback 2>/dev/null | awk '$1 == "loopback_MBps" { print $2 }')
[ -n "$loop" ] || loop=0
ncpu=$(nproc)
done_line "[1/5] loopback TCP, unpaced: $loop MB/s; $ncpu CPUs ($(elapsed))"

# --link-bw auto: the rate lab_calibrate.sh's probes pick, and their account.
calib="explicit --link-bw"
auto=0
if [ "$link_bw" = auto ]; then
    auto=1
    { read -r link_bw; read -r calib; } < <(LAB_T0=$t_start bash "$here/lab_calibrate.sh" "${args[@]}" --out "$out")
    [ -n "$link_bw" ] || { say "the calibration (lab_calibrate.sh) picked no rate"; exit 1; }
fi
bw_Bps=$(rate_Bps "$link_bw")

# ------------------------------------------------------------ the time plan
# The K sweep's n follows the rate down (4 MiB at 62.5 MB/s), unless
# --bytes was given; the size sweep loses its largest sizes while the
# model's first runs alone would not fit in the budget, less a reserve for
# the loss curves and the plots (40 s), and about 1.5 s per job for
# starting the processes.
cuts=""
if [ "$bytes_given" = 0 ]; then
    nk=$(k_bytes "$link_bw")
    if [ "$nk" != "$nb" ]; then
        cuts="$cuts K sweep n $bytes -> $((nk / 1024))K (the rate is below 500 Mbit/s);"
        nb=$nk; bytes=$((nk / 1024))K
    fi
fi
reserve=40
# size_steps_for ALG BYTES: one size point's steps: --steps when given;
# else size_steps, or more, so that the timed part (the steps after the
# warm-up, at the model's time) lasts size_min_timed seconds. A shorter
# one is too few /proc/stat ticks (100/s per core) to tell who used the
# cores (common/measure/hostload.h, HOSTLOAD_MIN_TICKS: rd at 4 KiB timed 11 ms
# read busy on an idle machine from one tick of two), and its median is
# taken over too few steps.
size_steps_for() {
    if [ "$steps_given" = 1 ]; then echo "$size_steps"; return; fi
    awk -v m="$(model_time "$1" "$size_k" "$2" "$link_bw")" -v s="$size_steps" -v w="$warmup" \
        -v t="$size_min_timed" 'BEGIN { n = m > 0 ? w + int(t / m + 0.999) : s
                                        if (n < s) n = s; if (n > 400) n = 400; print n }'
}
# The points: the K sweep (PS and ring at every K), then the size sweep
# (PS, ring and rd at each size, interleaved so that the ring and rd, whose
# crossover the plot marks, see the same machine; rd is the ring worker
# with --algo rd: its rows say system ring, algo rd, and psr_merge gives
# them rd's model).
add_points() {
    local sys k s n
    points_clear
    for sys in ps ring; do
        for k in $ks; do
            [ "$sys" = ring ] && [ "$k" -lt 2 ] && continue     # a ring of one moves nothing
            add_point "k_${sys}_$k" k "$sys" "$k" "$nb" "$steps"
        done
    done
    for s in $sizes; do
        n=$(size_bytes "$s")
        add_point "size_ps_$s" size ps "$size_k" "$n" "$(size_steps_for ps "$n")"
        [ "$size_k" -lt 2 ] && continue
        add_point "size_ring_$s" size ring "$size_k" "$n" "$(size_steps_for ring "$n")"
        add_point "size_rd_$s" size ring "$size_k" "$n" "$(size_steps_for rd "$n")" "--worker-args '--algo rd'"
    done
}
# plan_s: the model's seconds for one run of every point, startup included.
plan_s() {
    local i t=0 alg
    for i in "${!P_name[@]}"; do
        alg=${P_name[$i]#*_}; alg=${alg%%_*}       # k_ps_4, size_rd_4K: ps, rd
        t=$(awk -v t="$t" -v m="$(model_time "$alg" "${P_k[$i]}" "${P_n[$i]}" "$link_bw")" -v s="${P_steps[$i]}" \
            'BEGIN { print t + 1.5 + s * m }')
    done
    echo "$t"
}
# lab_scale: the manifest's "scale:" line: the lab's scale (lab_lib.sh,
# THE LAB'S SCALE) kept, or what fell short of it and why.
lab_scale() {
    local short="" kmax last why q=""
    [ "$quick" = 1 ] && q=--quick
    kmax=$(echo $ks | tr ' ' '\n' | sort -n | tail -n 1)
    last=$(echo $sizes | tr ' ' '\n' | while read -r s; do echo "$(size_bytes "$s") $s"; done | sort -n | tail -n 1)
    if awk -v b="$bw_Bps" -v s="$scale_Bps" 'BEGIN { exit !(b < s * (1 - 1e-9)) }'; then
        why=${q:---link-bw}
        [ "$auto" = 1 ] && why="the calibration found no rate of 100 Mbit/s or more at which the K = $kmax ring kept to its model under half the CPUs"
        short="$short the rate $link_bw ($why);"
    fi
    if [ "$kmax" -lt 16 ]; then
        why=${q:---ks}
        [ "$ks_given" = 1 ] || [ "$quick" = 1 ] || why="$(nproc) CPU(s), 8 ranks per CPU at most"
        short="$short K up to $kmax ($why);"
    fi
    if [ "$nb" -lt "$scale_bytes" ]; then
        why=${q:---bytes}
        [ "$bytes_given" = 1 ] || why="n follows the rate below 100 Mbit/s"
        short="$short n = $bytes ($why);"
    fi
    if [ "${last%% *}" -lt $((16 << 20)) ]; then
        why=${q:---sizes}
        case $cuts in *"size "*" dropped"*) why="the time budget" ;; esac
        short="$short sizes up to ${last#* } ($why);"
    fi
    if [ -z "$short" ]; then
        echo "the lab's: K up to $kmax, n = $bytes, sizes up to ${last#* }, at $link_bw"
    else
        echo "BELOW the lab's (K = 16, n >= 1 MiB, sizes to 16 MiB, at 100 Mbit/s or more):$short"
    fi
}
left=$(( budget - reserve - ($(date +%s) - t_start) ))
add_points
budget_note="$budget s"
p=$(plan_s)
if [ "$budget_given" = 0 ] && [ "$budget_max" -gt "$budget" ] && awk -v p="$p" -v l="$left" 'BEGIN { exit !(p > l) }'; then
    budget_note="$budget_max s (raised from $budget s: the first run of every point needs ${p%.*} s of the $left s left)"
    left=$(( left + budget_max - budget ))
    budget=$budget_max
    done_line "[1/5] the time budget: $budget_note"
fi
while :; do
    p=$(plan_s)
    awk -v p="$p" -v l="$left" 'BEGIN { exit !(p > l) }' || break
    set -- $sizes
    [ $# -gt 2 ] || break
    last=${!#}
    sizes=$(echo $sizes | sed "s/ *$last\$//")
    cuts="$cuts size $last dropped (the first runs alone would take ${p%.*} s of the $left s left);"
    add_points
done
[ -n "$cuts" ] && done_line "[1/5] to fit the $budget s budget:$cuts"
deadline=$(( t_start + budget - reserve ))
scale=$(lab_scale)
done_line "[1/5] scale: $scale"

# ------------------------------------------------------------ 2-3. the sweeps, repeated
# Every point repeated by the lab's rule (lab_lib.sh, THE REPEAT RULE)
# until the deadline.
stage() { [ "${P_sweep[$1]}" = k ] && echo "2/5] K sweep" || echo "3/5] size sweep"; }
repeat_points stage "$deadline"
unsettled=$(points_unsettled)
points_csv k "$out/k_sweep"
points_csv size "$out/size_sweep"

# ------------------------------------------------------------ 2b. namespaces
# The same K sweep across network namespaces, each host's link shaped by
# the kernel (tc tbf), no in-process pacing. The rows carry no link_bw or
# model; they are filled in from the tc rate (latency 0: netem is missing
# on many kernels, and netns_cluster.sh says which) so the plots can draw
# the model. tbf counts Ethernet/IP/TCP headers, so expect ~4.6% over it.
if [ "$netns" = 1 ]; then
    mkdir -p "$out/netns"
    for sys in ps ring; do
        for k in $ks; do
            [ "$sys" = ring ] && [ "$k" -lt 2 ] && continue
            progress "[2/5] namespaces: $sys K=$k (tc tbf $tc_rate) ..."
            elems=$(( nb / 4 ))
            set -- "$here/netns_cluster.sh" "$sys" "$k" --rate "$tc_rate" --workload synthetic --dtype f32 \
                --params "$elems" --steps "$steps" --warmup "$warmup" --timeout 30 \
                --time-limit "$time_limit" --csv-out "$out/netns/raw.csv"
            note_command "netns_${sys}_$k" "$@"
            if job "netns $sys K=$k" "$out/logs/netns_${sys}_$k.out" "$out/logs/netns_${sys}_$k.log" "$@"; then
                done_line "[2/5] namespaces: $sys K=$k done ($(elapsed))"
            else
                failed=$((failed + 1))
            fi
        done
    done
    # Fill link_bw (bytes/s), link_latency (0) and model_s (bin/model) from
    # each row's "# netns ... tc_rate_bps=R" line, which follows the row.
    csv_awk -v model="$PSR_BIN/model" '
        FNR == 1 { print; next }
        /^# netns/ { n = split($0, f, " ");
                     for (i = 1; i <= n; i++) if (f[i] ~ /^tc_rate_bps=/) { split(f[i], v, "="); bw = v[2] / 8 }
                     if (row != "") { nf = split(row, r, ",")
                        algo = r[c["system"]] == "ps" ? "ps" : r[c["algo"]] == "rd" ? "rd" : "ring"
                        cmd = sprintf("\"%s\" --algo %s --K %s --bytes %s --bw %.17g --latency 0", model, algo,
                                      r[c["K"]], r[c["bytes"]], bw)
                        m = "nan"; cmd | getline m; close(cmd)
                        r[c["link_bw"]] = bw; r[c["link_latency"]] = 0; r[c["model_s"]] = m + 0; r[c["host_bound"]] = ""
                        line = r[1]; for (i = 2; i <= nf; i++) line = line "," r[i]; print line }
                     print; row = ""; next }
        /^#/ { print; next }
        { row = $0 }' "$out/netns/raw.csv" > "$out/netns/k_sweep.csv" 2>/dev/null
    nsub="namespaces: REAL tc tbf at $tc_rate per host link (not emulated), kernel latency only; synthetic f32"
    for p in k_time k_bytes; do draw $p "$out/netns/k_sweep.csv" "$out/netns/$p" "n = $bytes, $nsub"; done
fi

# ------------------------------------------------------------ 4. model table, loss curves
"$PSR_BIN/model" > "$out/model.txt"
"$PSR_BIN/model" --elements $((nb / 4)) --elem-bytes 4 --bw "$link_bw" --latency "$link_lat" \
    --workers "$(echo $ks | tr ' ' ,)" >> "$out/model.txt"
# The model's map of who wins where at this link (lab_algorithms.sh; the
# measured map is --only algorithms): algo_map_model.png, .md.
LAB_ALG_MODEL=1 bash "$here/lab_algorithms.sh" --out "$out" --link-bw "$link_bw" \
    --link-latency "$link_lat" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
progress "[4/5] loss curves: PS, ring, reference and the mistake modes (linreg, K = 4) ..."
if job "the loss curves" "$out/logs/loss.out" "$out/logs/loss.log" bash "$here/lab_loss.sh" "$out"; then
    done_line "[4/5] the seed's K table: $out/model.txt; loss curves: $out/loss.png ($(elapsed))"
else
    failed=$((failed + 1))
fi

# ------------------------------------------------------------ host-bound check
# Rows flagged host_bound are CPU effects, not network ones.
hb=$(csv_awk 'FNR > 1 && $c["host_bound"] == 1 { printf "%s K=%s n=%s; ", ($c["algo"] == "rd" ? "rd" : $c["system"]), $c["K"], $c["bytes"] }' \
     "$out/k_sweep.csv" "$out/size_sweep.csv" 2>/dev/null)
# Rows flagged sw: no machine signal, but the link's own record says it
# stood idle over 5% of the combine (link_util): the software set the pace.
swr=$(csv_awk 'FNR > 1 && c["bound_by"] && $c["bound_by"] == "sw" { printf "%s K=%s n=%s (link_util %s); ", ($c["algo"] == "rd" ? "rd" : $c["system"]), $c["K"], $c["bytes"], $c["link_util"] }' \
     "$out/k_sweep.csv" "$out/size_sweep.csv" 2>/dev/null)
# The link's rate in bytes/s: one byte through one link takes 1/rate.
lb=$(awk -v l="$loop" -v t="$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$link_bw" --quantity ingress)" -v ks="$ks" 'BEGIN {
        r = 1 / t; n = split(ks, k, " "); m = 0; for (i = 1; i <= n; i++) if (k[i] > m) m = k[i];
        if (l > 0 && m * r / 1e6 > 0.5 * l) print "K x link rate = " m * r / 1e6 " MB/s is not well below the loopback rate " l " MB/s" }')

# The busy banner: a run whose processes were slowed by OTHER programs
# (bound_by = busy, common/measure/metrics.h; a CSV without the column has none)
# measured the machine, not the network.
busy=$(busy_runs "$out/k_sweep_runs.csv" "$out/size_sweep_runs.csv")
banner=""
if [ "${busy:-0}" -gt 0 ]; then
    banner="THE MACHINE WAS BUSY: $busy run(s) of the sweeps were slowed by other programs (bound_by=busy); \
their points are marked on the plots and measure the machine, not the network. Close other programs and \
run 'make lab' again, or lower the link rate (--link-bw, e.g. half of $link_bw), or use fewer workers (--ks \"1 2 4 8\")."
fi

# ------------------------------------------------------------ 5. plots
sub="EMULATED links: $link_bw$([ "$auto" = 1 ] && echo ' (auto)'), $link_lat one-way; synthetic f32; 127.0.0.1, $(nproc) CPUs"
for p in k_time k_bytes k_scaling; do draw $p "$out/k_sweep.csv" "$out/$p" "n = $bytes, $sub"; done
"$PSR_BIN/fit" "$out/size_sweep.csv" >"$out/fit.txt" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
draw size "$out/size_sweep.csv" "$out/size" "$sub"
done_line "[5/5] plots: $out/{k_time,k_bytes,k_scaling,size}.{png,svg} ($(elapsed))"
if [ -t 2 ] && [ -s "$out/k_sweep.csv" ]; then
    gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; file='$out/k_sweep.csv'; fmt='dumb'; out=''; sub=''" "$root/plots/k_time.gp" 2>/dev/null
fi

# ------------------------------------------------------------ manifest
{
    echo "kernel: $(uname -sr)"
    echo "loopback_MBps: $loop"
    echo "link_bw: $link_bw ($([ "$auto" = 1 ] && echo 'auto, ')EMULATED, per process, each direction; $(printf '%.6g' "$bw_Bps") bytes/s)"
    echo "calibration: $calib; $ncpu CPUs, loopback $loop MB/s"
    echo "repeat: each point until spread <= $spread_target or $repeat runs (spread: (max - min) / median of the runs' time_s, the run farthest from the median left out from 4 runs on); rows: the median, runs in *_runs.csv"
    echo "unsettled: ${unsettled:-none}"
    echo "cut: ${cuts:-nothing} (budget $budget s)"
    echo "budget: $budget_note"
    echo "scale: $scale"
    [ -n "$banner" ] && echo "BANNER: $banner"
    echo "link_latency: $link_lat (EMULATED, one-way)"
    echo "k_sweep: ks=\"$ks\" bytes=$bytes steps=$steps warmup=$warmup workload=synthetic dtype=f32"
    echo "size_sweep: K=$size_k sizes=\"$sizes\" steps=$size_steps$([ "$steps_given" = 1 ] || echo " or more (timed part ${size_min_timed} s in the model; each job's --steps in the command lines below)") algorithms: ps, ring, rd (ring_worker --algo rd)"
    [ "$netns" = 1 ] && echo "netns: K sweep across network namespaces, tc tbf $tc_rate (REAL kernel shaping), results in netns/"
    echo "host_bound_rows: ${hb:-none}"
    echo "sw_rows: ${swr:-none}"
    [ -n "$lb" ] && echo "warning: $lb"
    echo "jobs_failed: $failed"
    echo "# every job's command line (the loss curves: experiments/lab_loss.sh \"$out\", logs/loss.log)"
} | manifest "$out" "" "$cmdline"

# ------------------------------------------------------------ 6. the report, index.html
bash "$here/lab_report.sh" "$out"
bash "$here/lab_html.sh" "$out" || failed=$((failed + 1))
host_msg "results: $out (index.html, manifest.txt, k_sweep.csv, size_sweep.csv, *_runs.csv, a .json beside each CSV, model.txt, fit.txt, plots) in $(elapsed)"
if [ -n "$banner" ]; then
    echo "********************************************************************************" >&2
    echo "$banner" | fold -s -w 80 >&2
    echo "********************************************************************************" >&2
fi
if [ "$failed" -gt 0 ]; then
    host_msg "lab.sh: $failed job(s) failed; logs in $out/logs" >&2
    exit 1
fi
exit 0
