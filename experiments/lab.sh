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
#      rate of a ladder (500, 250, 125, 64, 32, 16, 8 Mbit/s) at which that
#      probe keeps the processes under half of the cores (the host_bound
#      flag fires at 80%), is bound by the link and within 5% of its
#      model, so that the whole K sweep stays link-bound and within 10%; an explicit
#      --link-bw skips the probe;
#   2. the K sweep: the parameter server and the ring for K = 1..16 (up to
#      4 ranks per CPU unless --ks is given) on
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
#      flagged points (host_bound, bound_by cpu|busy) marked and named;
#   6. index.html (experiments/lab_html.sh): the plots, the tables, the fit
#      (fit.txt: bin/fit, experiments/fit.c),
#      the busy banner and the manifest on one self-contained page.
#
# --only servers runs, instead of all that, the server placements (issue
# 15; `make lab-all` runs it after the main lab): see SERVERS below.
# --only zero and --only stragglers hand over to lab_zero.sh and
# lab_stragglers.sh (issue 16: stragglers and the PS's modes; `make
# lab-all` runs it too), which take their own options.
#
# Results go to results/<run>/: k_sweep.csv and size_sweep.csv in the
# shared schema (docs/design.md) plus the lab's four columns, their runs
# in k_sweep_runs.csv and size_sweep_runs.csv, model.txt, fit.txt,
# manifest.txt (command lines, settings, the calibration, what the time
# budget cut, the busy banner, git revision, CPU, kernel, loopback rate),
# logs/ (every job's stderr), the plots and index.html.
#
# THE TIME BUDGET. `make lab` must finish in 3 minutes on 2 cores
# (--budget 180). A slower auto rate makes every transfer longer, so the K
# sweep's n shrinks with the rate (4 MiB at 500 Mbit/s, in proportion
# below, at least 256 KiB; an explicit --bytes wins); the largest sizes of
# the size sweep are dropped while the model says the first runs alone
# would not fit; repeats stop when the next run would pass the deadline.
# Everything cut is listed in the manifest ("cut:") and on stderr.
#
# WHY THESE DEFAULTS. n = 4 MiB at 500 Mbit/s: the server's link carries
# K n per step each way, so K = 16 moves 64 MiB in and 64 MiB out per step
# at 62.5 MB/s, about 2 s (the calibration lowers the rate, and n with it,
# until the largest ring is link-bound). A latency of 1 ms: each ring step
# also pays the host's own wake-ups and scheduling, 80-220 us a step on
# 2 cores at K = 4 (launch.sh ring 4 --bench, 4-64 KiB, 32 Mbit/s), which
# against 200 us put the 4-64 KiB ring rows 12-36% over their model and
# the ring/rd crossover 1.7-2.3x from the model's; against 1 ms they are
# within 10% and 1.3x. K up to 4 ranks per CPU (ks_for_cpus). Every
# default can be overridden by a flag.
set -uo pipefail

cmdline="$0${*:+ $*}"
prog=lab.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

link_bw=auto
link_lat=1ms
bytes=4M
bytes_given=0
repeat=5
spread_target=0.05
budget=180
ks="1 2 4 8 16"          # ... up to 4 ranks per CPU (ks_given 0: K <= 4 x nproc)
ks_given=0
probe_steps=8           # the calibration probe's steps (2 of them warm-up)
steps=6
warmup=2
sizes="4K 16K 64K 256K 1M 4M 16M"
size_k=4
size_steps=5
size_min_timed=0.3      # ... but a size point's timed part lasts this long (s; not with --steps)
steps_given=0
out=
quick=0
netns=0
tc_rate=500mbit
time_limit=120
only=
srv_k=8                 # --only servers: the workers
srv_ks="0 2 4 8"        # ... the extra servers k
srv_bytes=1M            # ... n (a K = 8 step moves 2(K-1)/K n per host each way)
srv_layers=16           # ... the PS pushes per bucket of n / 16 (one layer) and pulls
                        # per bucket: the placement t_opt is about (model_s: pipelined)
srv_rate=8Mbit          # ... the link rate when --link-bw is auto: up to 16 processes
                        # and 16 frames per step on the cores; on 2 idle cores 8 Mbit/s
                        # left the per-bucket K = 8 rows link-bound, 16 Mbit/s flagged
                        # every one cpu

# ks_for_cpus: the default worker counts on this machine: those of ks up
# to 4 x the CPUs. Past that the ranks' wake-ups, not the link, set a
# ring's pace however slow the link (K = 16 on 2 cores: 1.35-1.53x its
# model, flagged cpu, at every rate the calibration could pick).
ks_for_cpus() { local k out="" c; c=$(nproc); for k in $ks; do [ "$k" -le $((4 * c)) ] && out="$out${out:+ }$k"; done; echo "${out:-1}"; }

usage() {
    cat <<EOF
usage: experiments/lab.sh [options]
psring's main job: the parameter server against the ring on EMULATED links,
on 127.0.0.1, with the alpha-beta model, as CSV and plots under results/.
  --link-bw RATE|auto  emulated link rate per process (default $link_bw: the
                       calibration picks the fastest rate at which the K
                       sweep stays link-bound on this machine)
  --link-latency TIME  emulated one-way latency (default $link_lat)
  --bytes SIZE         message size n for the K sweep (default $bytes)
  --ks "K ..."         worker counts (default those of "$ks" up to 4 per CPU:
                       "$(ks_for_cpus)" here)
  --steps S            steps per job, warm-up included, in both sweeps
                       (default $steps in the K sweep; in the size sweep $size_steps,
                       or as many as make the timed part last ${size_min_timed} s in
                       the model, at most 400)
  --warmup W           warm-up steps left out of timing (default $warmup)
  --sizes "SIZE ..."   the size sweep: PS, ring and rd at each size (default
                       "$sizes")
  --size-k K           K for the size sweep (default $size_k)
  --repeat N           at most N runs per point (default $repeat); a point
                       stops once its runs' spread is <= --spread
  --spread X           the repeat target (default $spread_target: 5%)
  --budget SECONDS     the whole lab's time budget (default $budget): sizes
                       and repeats are cut to fit, and the cuts listed
  --out DIR            results folder (default results/<date-time>)
  --quick              a small lab for tests: K 2 4, sizes 4K 64K, 3 steps
  --netns              also run the K sweep across network namespaces with
                       REAL kernel shaping (experiments/netns_cluster.sh, tc
                       tbf at --rate; needs root or user namespaces), into
                       <out>/netns/ with its own plots
  --rate RATE          the tc rate for --netns (default $tc_rate)
  --only servers       only the server placements (not in the default run):
                       K = $srv_k workers, k in "$srv_ks" extra servers with a
                       shard on each worker's host (BytePS's mix), the ring,
                       the model's t_opt; ps_servers.png, servers.csv. Its n
                       is $srv_bytes, pushed and pulled in $srv_layers buckets;
                       --link-bw auto means $srv_rate here
  --only zero [...]    first, alone: only the ZeRO section (lab_zero.sh: bytes
                       and memory per rank for --zero 0..3 against K,
                       zero.png; its options: --only zero --help)
  --only stragglers [...]  first, alone: only the stragglers section
                       (lab_stragglers.sh: the mlp at K = 8, one worker
                       slowed 1x..4x, the ring and the PS's sync, backup,
                       ssp and async modes; stragglers.png, loss_time.png;
                       its options: --only stragglers --help)
  --help               this text
EOF
}

# --only SECTION: one section alone, with its own options (it is not part
# of the default run).
if [ "${1:-}" = --only ]; then
    case ${2:-} in
    zero) shift 2; exec bash "$here/lab_zero.sh" "$@" ;;
    stragglers) shift 2; exec bash "$here/lab_stragglers.sh" "$@" ;;
    servers) ;;     # the placements: the options below, read by the loop
    *) die_usage "--only: '${2:-}' is not a section (servers, stragglers, zero)" ;;
    esac
fi

while [ $# -gt 0 ]; do
    case $1 in
    --link-bw) link_bw=$2; shift 2 ;;
    --link-latency) link_lat=$2; shift 2 ;;
    --bytes) bytes=$2; bytes_given=1; shift 2 ;;
    --ks) ks=$2; ks_given=1; shift 2 ;;
    --steps) steps=$2; size_steps=$2; steps_given=1; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --size-k) size_k=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --spread) spread_target=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --netns) netns=1; shift ;;
    --rate) tc_rate=$2; shift 2 ;;
    --only) only=${2-}; shift 2 ;;
    --quick) quick=1; ks="2 4"; sizes="4K 64K"; steps=3; warmup=1; size_steps=3; steps_given=1; bytes=256K; bytes_given=1; repeat=2; shift ;;
    --help|-h) usage; exit 0 ;;
    *) die_usage "unknown option '$1' (try --help)" ;;
    esac
done

[ -z "$only" ] || [ "$only" = servers ] ||
    die_usage "--only: '$only' is not servers (--only zero and --only stragglers come first: experiments/lab.sh --only zero [its options])"
[ "$quick" = 0 ] || { srv_k=4; srv_ks="0 2 4"; srv_bytes=64K; }
[ "$quick" = 1 ] || [ "$ks_given" = 1 ] || ks=$(ks_for_cpus)
[[ $repeat =~ ^[1-9][0-9]?$ ]] || die_usage "--repeat: '$repeat' is not a run count 1..99"
[[ $spread_target =~ ^0?\.[0-9]+$|^[01]$ ]] || die_usage "--spread: '$spread_target' is not a fraction like 0.05"
[[ $budget =~ ^[1-9][0-9]{0,5}$ ]] || die_usage "--budget: '$budget' is not a number of seconds"
nb=$(size_bytes "$bytes") || die_usage "--bytes: '$bytes' is not a size like 4M (4096, 4K, 1M, 1G)"
for s in $sizes; do
    size_bytes "$s" >/dev/null || die_usage "--sizes: '$s' is not a size like 4K (4096, 4K, 1M, 1G)"
done

for b in ps_server ps_worker ring_worker psr_merge bench_link model fit; do
    [ -x "$PSR_BIN/$b" ] || { echo "lab.sh: $PSR_BIN/$b is missing: run 'make' first" >&2; exit 2; }
done
command -v gnuplot >/dev/null || { echo "lab.sh: gnuplot is missing: apt-get install gnuplot-nox (or run 'make deps' as root)" >&2; exit 2; }
# The link's rate and latency, checked by the programs' own parser (bin/model)
# before any job starts: a bad one is one line and exit 64, not every job
# failing.
why=$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$([ "$link_bw" = auto ] && echo 1Mbit || echo "$link_bw")" \
      --latency "$link_lat" 2>&1 >/dev/null) ||
    die_usage "--link-bw $link_bw / --link-latency $link_lat: ${why#model: }"

[ -n "$out" ] || out=$root/results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/logs" || { echo "lab.sh: cannot create $out" >&2; exit 2; }
t_start=$(date +%s)
tty=0; [ -t 2 ] && tty=1
failed=0

# progress WHAT: one line per finished configuration; on a terminal the
# line in progress is redrawn instead.
progress() { if [ $tty = 1 ]; then printf '\r\033[K%s' "$1" >&2; fi; }
done_line() { if [ $tty = 1 ]; then printf '\r\033[K' >&2; fi; echo "$1" >&2; }
elapsed() { echo $(( $(date +%s) - t_start ))s; }

# sweep_job SYSTEM K BYTES CSV NAME RUN [LAUNCHER-ARGS...]: run RUN of one
# point, one launcher run (extra arguments go to launch.sh, e.g.
# --worker-args "--algo rd"); its stderr to logs/NAME.log (NAME.RUN.log
# from the second run on).
sweep_job() {
    local sys=$1 k=$2 nbytes=$3 csv=$4 name=$5 run=$6 elems tag
    shift 6
    elems=$(( nbytes / 4 ))
    [ "$elems" -ge 1 ] || elems=1
    set -- "$here/launch.sh" "$sys" "$k" --workload synthetic --dtype f32 --params "$elems" \
        --steps "$steps" --warmup "$warmup" --link-bw "$link_bw" --link-latency "$link_lat" \
        --timeout 30 --time-limit "$time_limit" --csv-out "$csv" "$@"
    tag=$name; [ "$run" -gt 1 ] && tag=$name.$run
    { printf '%s:' "$tag"; printf ' %q' "$@"; echo; } >> "$out/commands.txt"   # the manifest lists every job
    job "$tag" "$out/logs/$tag.out" "$out/logs/$tag.log" "$@" && return 0
    failed=$((failed + 1))
    return 1
}

# ------------------------------------------------------------ SERVERS (--only servers)
# The parameter server at its best (issue 15; common/measure/model.h, PLACEMENTS).
# At K = srv_k workers: the parameter server with a shard on each worker's
# host plus k extra server hosts (launch.sh --colocated-servers --servers
# k: BytePS's mix; k = 0 is colocated S = K, which moves the ring's bytes;
# k >= K is the separate PS with S = k), and the ring at the same K. Each
# point is repeated like the sweeps (until spread <= --spread, --repeat
# runs, or the budget); servers.csv (one row per point, the lab's four
# columns appended), servers_runs.csv, ps_servers.png (plots/ps_servers.gp:
# time against k with bin/model's t_opt, each placement's own model, the
# ring's line). The PS pushes n in srv_layers buckets of one layer each and
# pulls per bucket (the pull of one bucket overlaps the push of the next,
# as t_opt assumes), so each row's model_s is the pipelined one: t_opt +
# one bucket / bw + 2a (bin/model --quantity pipelined --bucket n/16). The
# ring runs one all-reduce per step, its own model. Theorem 1's split is uneven for
# 0 < k < K and needs ps_server --range; without it those points run with
# equal shards (--even-split, placement colocated-even) and say so.
servers_lab() {
    local sk i k name extra pass more runs spread sp res placement_note="" t0 bps bucket
    [ "$link_bw" = auto ] && link_bw=$srv_rate
    nb=$(size_bytes "$srv_bytes") || die_usage "srv bytes '$srv_bytes'"
    bytes=$srv_bytes
    bucket=$(( nb / srv_layers ))
    [ "$bucket" -ge 4 ] || bucket=4
    bps=$(awk -v t="$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$link_bw" --latency 0)" 'BEGIN { printf "%.17g", 2 / t }')
    if ! "$PSR_BIN/ps_server" --help 2>/dev/null | grep -q -- '--range'; then
        placement_note="ps_server has no --range yet: 0 < k < K ran with equal shards (--even-split), not Theorem 1's split"
    fi
    local S_name=() S_args=()
    S_name+=("servers_ring_$srv_k"); S_args+=("ring")
    for k in $srv_ks; do
        extra="--colocated-servers --servers $k --layers $srv_layers --worker-args --bucket-size=$bucket"
        [ -n "$placement_note" ] && [ "$k" -gt 0 ] && [ "$k" -lt "$srv_k" ] && extra="$extra --even-split"
        S_name+=("servers_ps_k$k"); S_args+=("ps $extra")
    done
    mkdir -p "$out/runs"
    local deadline=$(( t_start + budget )) S_runs=() S_spread=() S_stop=()
    for i in "${!S_name[@]}"; do S_runs+=(0); S_spread+=(nan); S_stop+=(""); done
    for pass in $(seq 1 "$repeat"); do
        more=0
        for i in "${!S_name[@]}"; do
            [ -n "${S_stop[$i]}" ] && continue
            if [ "$pass" -gt 1 ]; then
                if { [ "${S_runs[$i]}" -ge 2 ] || [ "${S_runs[$i]}" -ge "$repeat" ]; } &&
                   awk -v s="${S_spread[$i]}" -v t="$spread_target" 'BEGIN { exit !(s <= t) }'; then
                    S_stop[i]=stable; continue
                fi
                [ "$(date +%s)" -lt "$deadline" ] || { S_stop[i]=budget; continue; }
            fi
            name=${S_name[$i]}
            set -- ${S_args[$i]}
            progress "[servers] pass $pass: $name (K = $srv_k, n = $srv_bytes, link $link_bw, $link_lat) ..."
            if sweep_job "$1" "$srv_k" "$nb" "$out/runs/$name.csv" "$name" "$((S_runs[i] + 1))" "${@:2}"; then
                res=$(awk -f "$here/lab_points.awk" "$out/runs/$name.csv" | csv_awk 'FNR == 2 { print $c["runs"], $c["spread"] }')
                set -- $res
                S_runs[i]=$1 S_spread[i]=$2
                done_line "[servers] pass $pass: $name ${S_runs[$i]} run(s), spread ${S_spread[$i]} ($(elapsed))"
            else
                S_stop[i]=failed
            fi
            more=1
        done
        [ "$more" = 1 ] || break
    done
    : > "$out/servers_runs.csv"
    for name in "${S_name[@]}"; do
        [ -s "$out/runs/$name.csv" ] || continue
        if [ -s "$out/servers_runs.csv" ]; then tail -n +2 "$out/runs/$name.csv"; else cat "$out/runs/$name.csv"; fi \
            >> "$out/servers_runs.csv"
    done
    [ -s "$out/servers_runs.csv" ] && awk -f "$here/lab_points.awk" "$out/servers_runs.csv" > "$out/servers.csv"
    local busy sub
    busy=$(csv_awk 'FNR > 1 && c["bound_by"] && $c["bound_by"] == "busy" { n++ } END { print n + 0 }' "$out/servers_runs.csv" 2>/dev/null)
    sub="K = $srv_k, n = $srv_bytes; EMULATED links: $link_bw per host, $link_lat one-way; synthetic f32; 127.0.0.1, $(nproc) CPUs"
    for fmt in png svg; do
        gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; file='$out/servers.csv'; fmt='$fmt'; out='$out/ps_servers.$fmt'; sub='$sub'; bucket=$bucket" \
            "$root/plots/ps_servers.gp" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
    done
    {
        echo "# psring lab manifest (--only servers)"
        echo "command: $cmdline"
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (modified)')"
        echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) online; load: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "servers: K=$srv_k extra servers k=\"$srv_ks\" bytes=$srv_bytes bucket=$bucket (PS: per-bucket push and pull, $srv_layers layers) steps=$steps warmup=$warmup link_bw=$link_bw ($bps bytes/s, EMULATED, per host) link_latency=$link_lat"
        echo "split: ${placement_note:-Theorem 1 (bin/model --split), --range where uneven}"
        echo "repeat: each point until spread <= $spread_target or $repeat runs, budget $budget s"
        echo "busy_runs: ${busy:-0} (bound_by=busy: other programs slowed them; their points are marked)"
        echo "jobs_failed: $failed"
        cat "$out/commands.txt" 2>/dev/null
    } > "$out/manifest.txt"
    echo "servers at K = $srv_k (time_s: the median run; model_s: that placement's model, the PS's pipelined with $bucket-byte buckets: t_opt + one bucket / bw + 2a; t_opt: Theorem 1, push and pull overlapped):"
    csv_awk -v model="$PSR_BIN/model" -v bw="$link_bw" -v lat="$link_lat" '
        function flag() { if (c["bound_by"] && $c["bound_by"] == "busy") return "  HOST-BOUND (busy: other programs)"
                          if (c["bound_by"] && $c["bound_by"] == "cpu") return "  HOST-BOUND (cpu: its own processes)"
                          return $c["host_bound"] == 1 ? "  HOST-BOUND" : "" }
        FNR > 1 && $c["model_s"] != "" {
            if ($c["system"] == "ring") { what = "ring"; q = sprintf("--algo ring --K %d", $c["K"]) }
            else { k = $c["placement"] == "separate" ? $c["servers"] : $c["servers"] - $c["K"]
                   what = sprintf("ps k=%d %s", k, $c["placement"])
                   q = sprintf("--algo ps --placement colocated --servers %d --K %d", k, $c["K"]) }
            cmd = sprintf("\"%s\" %s --bytes %s --bw %s --latency %s --quantity t_opt", model, q, $c["bytes"], bw, lat)
            t = "nan"; cmd | getline t; close(cmd)
            printf "  %-26s time %8.4f s  model %8.4f s  ratio %.3f  t_opt %8.4f s  %d run(s) %.4f..%.4f%s\n", what, $c["time_s"],
                   $c["model_s"], $c["time_s"] / $c["model_s"], t, $c["runs"], $c["run_min_s"], $c["run_max_s"], flag() }' \
        "$out/servers.csv" 2>/dev/null
    [ -n "$placement_note" ] && echo "note: $placement_note"
    if [ "${busy:-0}" -gt 0 ]; then
        echo "THE MACHINE WAS BUSY: $busy run(s) were slowed by other programs (bound_by=busy); their points are marked." >&2
    fi
    echo "results: $out (manifest.txt, servers.csv, servers_runs.csv, ps_servers.png/svg) in $(elapsed)"
    [ "$failed" -eq 0 ] || { echo "lab.sh: $failed job(s) failed; logs in $out/logs" >&2; exit 1; }
    exit 0
}
[ "$only" = servers ] && servers_lab

# ------------------------------------------------------------ 1. calibration
progress "[1/5] loopback rate ..."
loop=$("$PSR_BIN/bench_link" --loopback 2>/dev/null | awk '$1 == "loopback_MBps" { print $2 }')
[ -n "$loop" ] || loop=0
ncpu=$(nproc)
done_line "[1/5] loopback TCP, unpaced: $loop MB/s; $ncpu CPUs ($(elapsed))"

kmax=$(echo $ks | tr ' ' '\n' | sort -n | tail -n 1)
# model_time ALGO K BYTES RATE: the model's step time in seconds (bin/model).
model_time() { "$PSR_BIN/model" --algo "$1" --K "$2" --bytes "$3" --bw "$4" --latency "$link_lat" 2>/dev/null || echo 0; }
# rate_Bps RATE: bytes/s (bin/model's own parser: a 1-byte PS with K = 1
# and no latency takes 2/rate).
rate_Bps() { awk -v t="$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$1" --latency 0)" 'BEGIN { printf "%.17g", 2 / t }'; }

# k_bytes RATE: the K sweep's n at RATE (unless --bytes was given): it
# follows the rate down from n at 62.5 MB/s, a power of two, at least
# 64 KiB.
k_bytes() {
    if [ "$bytes_given" = 1 ]; then echo "$nb"; return; fi
    awk -v b="$(rate_Bps "$1")" -v nb="$nb" 'BEGIN { p = 65536; while (p * 2 <= nb * b / 62.5e6) p *= 2; print (p < nb ? p : nb) }'
}

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
    { printf 'probe_%s:' "$r"; printf ' %q' "$@"; echo; } >> "$out/commands.txt"
    job "the calibration probe at $r" "$d.out" "$d.log" "$@" || return 1
    t=$(model_time ring "$k" "$n" "$r")
    read -r ratio bound < <(csv_awk 'FNR == 2 && $c["model_s"] > 0 { printf "%.3f %s\n", $c["time_s"] / $c["model_s"], $c["bound_by"] }' "$d.out" 2>/dev/null)
    awk -v t="$t" -v c="$ncpu" -v n="$n" -v q="${ratio:-nan}" -v b="${bound:-unknown}" -v i="$probe_steps" '/^cpu_s / { s += $2 }
        END { if (s <= 0 || t <= 0) exit 1; printf "%.3f %.4g %d %s %s\n", s / i / (t * c), s / i, n, q, b }' "$d"/rec.*
}

calib="explicit --link-bw"
auto=0
if [ "$link_bw" = auto ]; then
    auto=1
    # The ladder, fastest first; the first rate whose probe stays under
    # half the cores, bound by the link and within 5% of its model wins
    # (10% let 16 Mbit/s win at 1.09x, and the sweep's K = 8 ring then read
    # 1.11x: the probe's margin is the sweep's).
    # After a probe over the CPU target the next rate tried is the
    # ladder's fastest at or below rate x target / share (at least one
    # step down): the CPU per second falls with the rate, though not
    # always in proportion (the link's piece size has a floor); after one
    # off its model or flagged, the next rate down.
    ladder="500Mbit 250Mbit 125Mbit 64Mbit 32Mbit 16Mbit 8Mbit"
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
        want=$(awk -v s="$1" -v t="$target" -v b="$(rate_Bps "$r")" 'BEGIN { printf "%.17g", (s > t ? b * t / s : b / 2) }')
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
# plan_s: the model's seconds for one run of every point, startup included.
plan_s() {
    local t=0 k s alg
    for k in $ks; do
        t=$(awk -v t="$t" -v m="$(model_time ps "$k" "$nb" "$link_bw")" -v s="$steps" 'BEGIN { print t + 1.5 + s * m }')
        [ "$k" -ge 2 ] && t=$(awk -v t="$t" -v m="$(model_time ring "$k" "$nb" "$link_bw")" -v s="$steps" 'BEGIN { print t + 1.5 + s * m }')
    done
    for s in $sizes; do
        for alg in ps ring rd; do
            [ "$alg" != ps ] && [ "$size_k" -lt 2 ] && continue
            t=$(awk -v t="$t" -v m="$(model_time $alg "$size_k" "$(size_bytes "$s")" "$link_bw")" \
                -v s="$(size_steps_for $alg "$(size_bytes "$s")")" \
                'BEGIN { print t + 1.5 + s * m }')
        done
    done
    echo "$t"
}
left=$(( budget - reserve - ($(date +%s) - t_start) ))
while :; do
    p=$(plan_s)
    awk -v p="$p" -v l="$left" 'BEGIN { exit !(p > l) }' || break
    set -- $sizes
    [ $# -gt 2 ] || break
    last=${!#}
    sizes=$(echo $sizes | sed "s/ *$last\$//")
    cuts="$cuts size $last dropped (the first runs alone would take ${p%.*} s of the $left s left);"
done
[ -n "$cuts" ] && done_line "[1/5] to fit the $budget s budget:$cuts"
deadline=$(( t_start + budget - reserve ))

# ------------------------------------------------------------ 2-3. the sweeps, repeated
# The points: the K sweep (PS and ring at every K), then the size sweep
# (PS, ring and rd at each size, interleaved so that the ring and rd, whose
# crossover the plot marks, see the same machine; rd is the ring worker
# with --algo rd: its rows say system ring, algo rd, and psr_merge gives
# them rd's model). Pass 1 runs each point once; every later pass reruns
# the points whose spread is still over the target, while a run fits
# before the deadline. Each run appends to runs/NAME.csv.
mkdir -p "$out/runs"
P_name=(); P_sys=(); P_k=(); P_n=(); P_steps=(); P_sweep=(); P_extra=(); P_runs=(); P_spread=(); P_wall=(); P_stop=()
add_point() {     # NAME SWEEP SYS K BYTES STEPS [WORKER-ARGS]
    P_name+=("$1"); P_sweep+=("$2"); P_sys+=("$3"); P_k+=("$4"); P_n+=("$5"); P_steps+=("$6"); P_extra+=("${7-}")
    P_runs+=(0); P_spread+=(nan); P_wall+=(0); P_stop+=("")
}
for sys in ps ring; do
    for k in $ks; do
        [ "$sys" = ring ] && [ "$k" -lt 2 ] && continue     # a ring of one moves nothing
        add_point "k_${sys}_$k" k "$sys" "$k" "$nb" "$steps"
    done
done
for s in $sizes; do
    for alg in ps ring rd; do
        [ "$alg" != ps ] && [ "$size_k" -lt 2 ] && continue
        case $alg in
        ps) add_point "size_ps_$s" size ps "$size_k" "$(size_bytes "$s")" "$(size_steps_for ps "$(size_bytes "$s")")" ;;
        ring) add_point "size_ring_$s" size ring "$size_k" "$(size_bytes "$s")" "$(size_steps_for ring "$(size_bytes "$s")")" ;;
        rd) add_point "size_rd_$s" size ring "$size_k" "$(size_bytes "$s")" "$(size_steps_for rd "$(size_bytes "$s")")" "--algo rd" ;;
        esac
    done
done
# run_point I: one more run of point I; updates its runs, spread and wall.
run_point() {
    local i=$1 name=${P_name[$1]} t0 extra=() res
    [ -n "${P_extra[$i]}" ] && extra=(--worker-args "${P_extra[$i]}")
    steps=${P_steps[$i]}
    t0=$(date +%s.%N)
    sweep_job "${P_sys[$i]}" "${P_k[$i]}" "${P_n[$i]}" "$out/runs/$name.csv" "$name" "$((P_runs[i] + 1))" "${extra[@]}" || return 1
    P_wall[i]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    res=$(awk -f "$here/lab_points.awk" "$out/runs/$name.csv" | csv_awk 'FNR == 2 { print $c["runs"], $c["spread"] }')
    set -- $res
    P_runs[i]=$1 P_spread[i]=$2
}
# settled I: point I has two runs or more (or all --repeat allows) and
# its spread is within the target.
settled() {
    [ "${P_runs[$1]}" -ge 2 ] || [ "${P_runs[$1]}" -ge "$repeat" ] || return 1
    awk -v s="${P_spread[$1]}" -v t="$spread_target" 'BEGIN { exit !(s <= t) }'
}
steps_saved=$steps
stage() { [ "${P_sweep[$1]}" = k ] && echo "2/5] K sweep" || echo "3/5] size sweep"; }
for pass in $(seq 1 "$repeat"); do
    more=0
    for i in "${!P_name[@]}"; do
        [ -n "${P_stop[$i]}" ] && continue
        if [ "$pass" -gt 1 ]; then
            if settled "$i"; then P_stop[i]=stable; continue; fi
            if [ "$(awk -v now="$(date +%s)" -v w="${P_wall[$i]}" 'BEGIN { printf "%d", now + w }')" -gt "$deadline" ]; then
                P_stop[i]=budget; continue
            fi
        fi
        progress "[$(stage "$i") pass $pass: ${P_name[$i]} (n = ${P_n[$i]}, link $link_bw, $link_lat) ..."
        if run_point "$i"; then
            done_line "[$(stage "$i") pass $pass: ${P_name[$i]} ${P_runs[$i]} run(s), spread ${P_spread[$i]} ($(elapsed))"
        else
            P_stop[i]=failed
        fi
        more=1
    done
    [ "$more" = 1 ] || break
done
steps=$steps_saved
# The points that stopped before their runs agreed, and why.
unsettled=""
for i in "${!P_name[@]}"; do
    settled "$i" && continue
    why=${P_stop[$i]:-cap}
    [ "$why" = cap ] && why="cap of $repeat runs"
    [ "$why" = budget ] && why="time budget"
    unsettled="$unsettled ${P_name[$i]} (${P_runs[$i]} runs, spread ${P_spread[$i]}, $why);"
done
# The sweeps' CSVs: every run (*_runs.csv), and one row per point.
for sw in k size; do
    f=$sw; [ $sw = k ] && f=k_sweep; [ $sw = size ] && f=size_sweep
    : > "$out/${f}_runs.csv"
    for i in "${!P_name[@]}"; do
        [ "${P_sweep[$i]}" = "$sw" ] && [ -s "$out/runs/${P_name[$i]}.csv" ] || continue
        if [ -s "$out/${f}_runs.csv" ]; then tail -n +2 "$out/runs/${P_name[$i]}.csv"; else cat "$out/runs/${P_name[$i]}.csv"; fi \
            >> "$out/${f}_runs.csv"
    done
    [ -s "$out/${f}_runs.csv" ] && awk -f "$here/lab_points.awk" "$out/${f}_runs.csv" > "$out/$f.csv"
done

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
            echo "netns_${sys}_$k: $*" >> "$out/commands.txt"
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
    for p in k_time k_bytes; do
        for fmt in png svg; do
            gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; file='$out/netns/k_sweep.csv'; fmt='$fmt'; out='$out/netns/$p.$fmt'; sub='n = $bytes, $nsub'" \
                "$root/plots/$p.gp" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
        done
    done
fi

# ------------------------------------------------------------ 4. model table, loss curves
"$PSR_BIN/model" > "$out/model.txt"
"$PSR_BIN/model" --elements $((nb / 4)) --elem-bytes 4 --bw "$link_bw" --latency "$link_lat" \
    --workers "$(echo $ks | tr ' ' ,)" >> "$out/model.txt"
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
# The link's rate in bytes/s: one byte through one link takes 1/rate.
lb=$(awk -v l="$loop" -v t="$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$link_bw" --quantity ingress)" -v ks="$ks" 'BEGIN {
        r = 1 / t; n = split(ks, k, " "); m = 0; for (i = 1; i <= n; i++) if (k[i] > m) m = k[i];
        if (l > 0 && m * r / 1e6 > 0.5 * l) print "K x link rate = " m * r / 1e6 " MB/s is not well below the loopback rate " l " MB/s" }')

# The busy banner: a run whose processes were slowed by OTHER programs
# (bound_by = busy, common/measure/metrics.h; a CSV without the column has none)
# measured the machine, not the network.
busy=$(csv_awk 'FNR > 1 && c["bound_by"] && $c["bound_by"] == "busy" { n++ } END { print n + 0 }' \
       "$out/k_sweep_runs.csv" "$out/size_sweep_runs.csv" 2>/dev/null)
banner=""
if [ "${busy:-0}" -gt 0 ]; then
    banner="THE MACHINE WAS BUSY: $busy run(s) of the sweeps were slowed by other programs (bound_by=busy); \
their points are marked on the plots and measure the machine, not the network. Close other programs and \
run 'make lab' again, or lower the link rate (--link-bw, e.g. half of $link_bw), or use fewer workers (--ks \"1 2 4 8\")."
fi

# ------------------------------------------------------------ 5. plots
sub="EMULATED links: $link_bw$([ "$auto" = 1 ] && echo ' (auto)'), $link_lat one-way; synthetic f32; 127.0.0.1, $(nproc) CPUs"
for p in k_time k_bytes k_scaling; do
    for fmt in png svg; do
        gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; file='$out/k_sweep.csv'; fmt='$fmt'; out='$out/$p.$fmt'; sub='n = $bytes, $sub'" \
            "$root/plots/$p.gp" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
    done
done
"$PSR_BIN/fit" "$out/size_sweep.csv" >"$out/fit.txt" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
for fmt in png svg; do
    gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; fitter='$PSR_BIN/fit'; file='$out/size_sweep.csv'; fmt='$fmt'; out='$out/size.$fmt'; sub='$sub'" \
        "$root/plots/size.gp" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
done
done_line "[5/5] plots: $out/{k_time,k_bytes,k_scaling,size}.{png,svg} ($(elapsed))"
if [ $tty = 1 ] && [ -s "$out/k_sweep.csv" ]; then
    gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; file='$out/k_sweep.csv'; fmt='dumb'; out=''; sub=''" "$root/plots/k_time.gp" 2>/dev/null
fi

# ------------------------------------------------------------ manifest
{
    echo "# psring lab manifest"
    echo "command: $cmdline"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (modified)')"
    echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) online"
    echo "kernel: $(uname -sr)"
    echo "loopback_MBps: $loop"
    echo "link_bw: $link_bw ($([ "$auto" = 1 ] && echo 'auto, ')EMULATED, per process, each direction; $(printf '%.6g' "$bw_Bps") bytes/s)"
    echo "calibration: $calib; $ncpu CPUs, loopback $loop MB/s"
    echo "repeat: each point until spread <= $spread_target or $repeat runs (spread: (max - min) / median of the runs' time_s, the run farthest from the median left out from 4 runs on); rows: the median, runs in *_runs.csv"
    echo "unsettled: ${unsettled:-none}"
    echo "cut: ${cuts:-nothing} (budget $budget s)"
    [ -n "$banner" ] && echo "BANNER: $banner"
    echo "link_latency: $link_lat (EMULATED, one-way)"
    echo "k_sweep: ks=\"$ks\" bytes=$bytes steps=$steps warmup=$warmup workload=synthetic dtype=f32"
    echo "size_sweep: K=$size_k sizes=\"$sizes\" steps=$size_steps$([ "$steps_given" = 1 ] || echo " or more (timed part ${size_min_timed} s in the model; each job's --steps in the command lines below)") algorithms: ps, ring, rd (ring_worker --algo rd)"
    [ "$netns" = 1 ] && echo "netns: K sweep across network namespaces, tc tbf $tc_rate (REAL kernel shaping), results in netns/"
    echo "host_bound_rows: ${hb:-none}"
    [ -n "$lb" ] && echo "warning: $lb"
    echo "jobs_failed: $failed"
    echo "# every job's command line (the loss curves: experiments/lab_loss.sh \"$out\", logs/loss.log)"
    cat "$out/commands.txt" 2>/dev/null
} > "$out/manifest.txt"

# flag(): the row's mark, as the plots name it.
flagfn='function flag() { if (c["bound_by"] && $c["bound_by"] == "busy") return "  HOST-BOUND (busy: other programs)";
                       if (c["bound_by"] && $c["bound_by"] == "cpu") return "  HOST-BOUND (cpu: its own processes)";
                       return $c["host_bound"] == 1 ? "  HOST-BOUND (CPU, not the link)" : "" }'
echo "model vs measured (time_s / model_s: the median run), K sweep:"
csv_awk "$flagfn"'FNR > 1 && $c["model_s"] != "" { printf "  %-4s K=%-3s time %8.4f s  model %8.4f s  ratio %.3f%s\n", $c["system"], $c["K"],
                                          $c["time_s"], $c["model_s"], $c["time_s"] / $c["model_s"],
                                          sprintf("  %d run(s) %.4f..%.4f", $c["runs"], $c["run_min_s"], $c["run_max_s"]) flag() }' \
    "$out/k_sweep.csv" 2>/dev/null
echo "model vs measured (time_s / model_s: the median run), size sweep at K = $size_k:"
csv_awk "$flagfn"'FNR > 1 && $c["model_s"] != "" { printf "  %-4s n=%-9s time %8.4f s  model %8.4f s  ratio %.3f%s\n",
                                          ($c["algo"] == "rd" ? "rd" : $c["system"]), $c["bytes"],
                                          $c["time_s"], $c["model_s"], $c["time_s"] / $c["model_s"],
                                          sprintf("  %d run(s) %.4f..%.4f", $c["runs"], $c["run_min_s"], $c["run_max_s"]) flag() }' \
    "$out/size_sweep.csv" 2>/dev/null
grep '^crossover' "$out/fit.txt" 2>/dev/null     # ring against rd, measured and model (bin/fit)
if [ "$netns" = 1 ]; then
    echo "namespaces (tc tbf $tc_rate, latency 0 in the model), K sweep:"
    csv_awk 'FNR > 1 && !/^#/ && $c["model_s"] != "" { printf "  %-4s K=%-3s time %8.4f s  model %8.4f s  ratio %.3f\n",
                                                       $c["system"], $c["K"], $c["time_s"], $c["model_s"], $c["time_s"] / $c["model_s"] }' \
        "$out/netns/k_sweep.csv" 2>/dev/null
fi
[ -n "$hb" ] && echo "host-bound rows (the CPU, not the emulated link, set the pace): $hb"
[ -n "$lb" ] && echo "warning: $lb; the emulated link may not be the bottleneck"
[ -n "$unsettled" ] && echo "points whose runs did not settle within $spread_target:$unsettled"
[ -n "$cuts" ] && echo "cut to fit the $budget s budget:$cuts"
bash "$here/lab_html.sh" "$out" || failed=$((failed + 1))
echo "results: $out (index.html, manifest.txt, k_sweep.csv, size_sweep.csv, *_runs.csv, model.txt, fit.txt, plots) in $(elapsed)"
if [ -n "$banner" ]; then
    echo "********************************************************************************" >&2
    echo "$banner" | fold -s -w 80 >&2
    echo "********************************************************************************" >&2
fi
if [ "$failed" -gt 0 ]; then
    echo "lab.sh: $failed job(s) failed; logs in $out/logs" >&2
    exit 1
fi
exit 0
