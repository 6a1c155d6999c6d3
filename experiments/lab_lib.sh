# experiments/lab_lib.sh -- what the lab's scripts share: lab.sh (the K
# and size sweeps) and lab_servers.sh (lab.sh --only servers) take the same
# flags, run their points the same way and write the same kind of results.
#
# Sourced after lib.sh, never run (bash: arrays):
#     here=$(cd "$(dirname "$0")" && pwd); . "$here/lib.sh"; . "$here/lab_lib.sh"
#
#   lab_options ARG...        lab.sh's flags into the variables below (their
#                             defaults); --help prints usage; a bad one is
#                             one line and exit 64
#   rate_Bps RATE             the rate in bytes/s
#   model_time ALGO K N RATE  the model's seconds per step at --link-latency
#   k_bytes RATE              the K sweep's n at RATE
#   lab_ready                 the binaries and gnuplot are there (else exit
#                             2), the link's rate and latency parse (else
#                             64); makes $out/logs; sets t_start, failed=0
#   sweep_job SYS K BYTES CSV NAME RUN [LAUNCHER-ARGS...]
#                             one run of one point (launch.sh), its command
#                             line into commands.txt; failed+1 if it fails
#   add_point NAME SWEEP SYS K BYTES STEPS [LAUNCHER-ARGS]
#                             a point to run, LAUNCHER-ARGS one string (eval'd:
#                             quote inside it); points_clear: none
#   repeat_points LABEL DEADLINE
#                             THE REPEAT RULE: every point until its runs
#                             agree, in passes (below)
#   points_csv SWEEP BASE     SWEEP's runs into BASE_runs.csv, one row per
#                             point into BASE.csv (lab_points.awk)
#   points_unsettled          "NAME (N runs, spread S, why);" for each point
#                             whose runs did not agree
#   draw PLOT CSV OUT SUB [SET]
#                             plots/PLOT.gp over CSV into OUT.png and OUT.svg
#                             (SUB its subtitle, SET more gnuplot assignments);
#                             failed+1 for each that fails
#   flag_awk                  awk text: flag(), a row's mark as the plots
#                             name it (host-bound: busy, cpu)
#   busy_runs CSV...          how many runs other programs slowed (bound_by=busy)
# Sourcing it also makes ^C stop the script (lib.sh, stop_on_interrupt).

stop_on_interrupt

# ------------------------------------------------------------ the flags
link_bw=auto
link_lat=1ms
bytes=4M
bytes_given=0
repeat=5
spread_target=0.05
budget=180
budget_given=0
budget_max=300          # ... which rises to this when the lab's scale needs it (lab.sh, THE TIME BUDGET)
ks="1 2 4 8 16"          # ... up to 8 ranks per CPU (ks_given 0: K <= 8 x nproc)
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

# THE LAB'S SCALE (issue 27): K up to 16, n >= 1 MiB in the K sweep, the
# size sweep to 16 MiB, at 100 Mbit/s or more (scale_Bps), on 2 cores.
# The calibration (lab_calibrate.sh) looks for the fastest rate at which
# the K = 16 ring keeps to its model; where it finds none at 100 Mbit/s
# or more, the lab runs below its scale and the manifest's "scale:" line
# says so and why.
scale_Bps=12500000      # 100 Mbit/s
scale_bytes=1048576     # the K sweep's n at the scale's rates: at least 1 MiB

# ks_for_cpus: the default worker counts on this machine: those of ks up
# to 8 x the CPUs (1-16 on 2). Until issue 27 4 x: K = 16 on 2 cores read
# 1.35-1.53x its model at every rate, when a synthetic step's hashing cost
# a rank 15 ms per MiB of gradient and a ring rank 6 ms more to move it
# (docs/link.md, THE TRAINING PATH).
ks_for_cpus() { local k out="" c; c=$(nproc); for k in $ks; do [ "$k" -le $((8 * c)) ] && out="$out${out:+ }$k"; done; echo "${out:-1}"; }

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
  --ks "K ..."         worker counts (default those of "$ks" up to 8 per CPU:
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
  --budget SECONDS     the whole lab's time budget (default $budget, rising to
                       $budget_max when the first run of every point needs it):
                       sizes and repeats are cut to fit, and the cuts listed
  --out DIR            results folder (default results/<date-time>)
  --quick              a small lab for tests: K 2 4, sizes 4K 64K, 3 steps
  --netns              also run the K sweep across network namespaces with
                       REAL kernel shaping (experiments/netns_cluster.sh, tc
                       tbf at --rate; needs root or user namespaces), into
                       <out>/netns/ with its own plots
  --rate RATE          the tc rate for --netns (default $tc_rate)
  --only servers       only the server placements (lab_servers.sh; not in
                       the default run): K = $srv_k workers, k in "$srv_ks" extra
                       servers with a shard on each worker's host (BytePS's
                       mix), the ring, the model's t_opt; ps_servers.png,
                       servers.csv. Its n is $srv_bytes, pushed and pulled in
                       $srv_layers buckets; --link-bw auto means $srv_rate here
  --only algorithms [...]  first: only the map of who wins where (lab_algorithms.sh; not in
                       the default run): the PS (1, 2 and colocated servers) and
                       every all-reduce algorithm at K = 2..8, 4 KiB-16 MiB, the
                       model's map beside it, the selector (--algo auto) scored;
                       algo_map.png, algo_map.md; its own --prune X
  --only zero [...]    first, alone: only the ZeRO section (lab_zero.sh: bytes
                       and memory per rank for --zero 0..3 against K,
                       zero.png; its options: --only zero --help)
  --only stragglers [...]  first, alone: only the stragglers section
                       (lab_stragglers.sh: the mlp at K = 8, one worker
                       slowed 1x..4x, the ring and the PS's sync, backup,
                       ssp and async modes; stragglers.png, loss_time.png;
                       its options: --only stragglers --help)
  --only compression [...]  first, alone: time to accuracy with each
                       compressor on the EMULATED link and the break-even
                       bandwidth, measured and predicted (lab_compression.sh;
                       compression.png; its options: --only compression --help)
  --help               this text
EOF
}

# lab_options checks every value before any work (no calibration, no file):
# a bad one is THE USAGE LINE (lib.sh) and exit 64. The link's rate and
# latency are the programs' own parser's (bin/model), in lab_ready.
lab_options() {
    local s k
    while [ $# -gt 0 ]; do
        case $1 in
        --link-bw | --link-latency | --bytes | --ks | --steps | --warmup | --sizes | --size-k | --repeat | \
            --spread | --budget | --out | --rate | --only)
            [ $# -ge 2 ] || die_usage "$1: missing value"
            [ -n "$2" ] || usage_error "$1" "" "empty value" ;;
        esac
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
        --budget) budget=$2; budget_given=1; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --netns) netns=1; shift ;;
        --rate) tc_rate=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --quick) quick=1; ks="2 4"; sizes="4K 64K"; steps=3; warmup=1; size_steps=3; steps_given=1; bytes=256K; bytes_given=1; repeat=2; shift ;;
        --help|-h) usage; exit 0 ;;
        *) die_usage "$(shown_value "$1"): unknown option" ;;
        esac
    done
    [ -z "$only" ] || [ "$only" = servers ] ||
        usage_error --only "$only" "not servers (--only algorithms, zero and stragglers come first: experiments/lab.sh --only zero [its options])"
    [ "$quick" = 0 ] || { srv_k=4; srv_ks="0 2 4"; srv_bytes=64K; }
    [ "$quick" = 1 ] || [ "$ks_given" = 1 ] || ks=$(ks_for_cpus)
    [[ $repeat =~ ^[1-9][0-9]?$ ]] || usage_error --repeat "$repeat" "not a run count 1..99"
    [[ $spread_target =~ ^0?\.[0-9]+$|^[01]$ ]] || usage_error --spread "$spread_target" "not a fraction like 0.05"
    [[ $budget =~ ^[1-9][0-9]{0,5}$ ]] || usage_error --budget "$budget" "not a number of seconds 1..999999"
    nb=$(size_bytes "$bytes") && [ "$nb" -gt 0 ] ||
        usage_error --bytes "$bytes" "not a size like 4M (4096, 4K, 1M, 1G; at least 1)"
    [ -n "${ks// /}" ] || usage_error --ks "$ks" "no worker count (give e.g. \"1 2 4\")"
    for k in $ks; do
        [[ $k =~ ^[1-9][0-9]{0,4}$ ]] && [ "$k" -le 65536 ] ||
            usage_error --ks "$ks" "'$k' is not a worker count 1..65536"
    done
    [[ $steps =~ ^[1-9][0-9]{0,8}$ ]] || usage_error --steps "$steps" "not a step count 1..999999999"
    [[ $warmup =~ ^[0-9]{1,9}$ ]] || usage_error --warmup "$warmup" "not a step count 0..999999999"
    [ "$warmup" -lt "$steps" ] ||
        usage_error --warmup "$warmup" "not below the steps per job ($steps): nothing would be timed"
    [ -n "${sizes// /}" ] || usage_error --sizes "$sizes" "no size (give e.g. \"4K 64K\")"
    for s in $sizes; do
        size_bytes "$s" >/dev/null && [ "$(size_bytes "$s")" -gt 0 ] ||
            usage_error --sizes "$sizes" "'$s' is not a size like 4K (4096, 4K, 1M, 1G; at least 1)"
    done
    [[ $size_k =~ ^[1-9][0-9]{0,4}$ ]] && [ "$size_k" -le 65536 ] ||
        usage_error --size-k "$size_k" "not a worker count 1..65536"
    # netns_cluster.sh's own rule for its --rate (tc's units, 8kbit .. 100gbit).
    [[ ${tc_rate,,} =~ ^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit)$ ]] &&
        awk -v r="${tc_rate,,}" 'BEGIN { m = r ~ /gbit$/ ? 1e9 : r ~ /mbit$/ ? 1e6 : r ~ /kbit$/ ? 1e3 : 1
                                          b = (r + 0) * m; exit !(b >= 8000 && b <= 1e11) }' ||
        usage_error --rate "$tc_rate" "not a tc rate 8kbit .. 100gbit like 500mbit (bit, kbit, mbit, gbit)"
}

# rate_Bps RATE: bytes/s (bin/model's own parser: a 1-byte PS with K = 1
# and no latency takes 2/rate).
rate_Bps() { awk -v t="$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$1" --latency 0)" 'BEGIN { printf "%.17g", 2 / t }'; }

# model_time ALGO K BYTES RATE: the model's step time in seconds (bin/model).
model_time() { "$PSR_BIN/model" --algo "$1" --K "$2" --bytes "$3" --bw "$4" --latency "$link_lat" 2>/dev/null || echo 0; }

# k_bytes RATE: the K sweep's n at RATE (unless --bytes was given): it
# follows the rate down from n at 62.5 MB/s (500 Mbit/s), a power of two,
# at least scale_bytes (1 MiB) at the scale's rates (scale_Bps and up), at
# least 64 KiB below them. (rate_Bps's figure of 500 Mbit/s is a hair
# under 62.5e6: the 1e-9 lets 4 MiB be 4 MiB there.)
k_bytes() {
    if [ "$bytes_given" = 1 ]; then echo "$nb"; return; fi
    awk -v b="$(rate_Bps "$1")" -v nb="$nb" -v s="$scale_Bps" -v sn="$scale_bytes" 'BEGIN {
        p = 65536; while (p * 2 <= nb * b / 62.5e6 * (1 + 1e-9)) p *= 2
        if (b >= s * (1 - 1e-9) && p < sn) p = sn
        print (p < nb ? p : nb) }'
}

# model_why LINE: the why of bin/model's usage line ("model: --bw x: WHY;
# see model --help").
model_why() { printf '%s\n' "$1" | head -n 1 | sed 's/^model: --[a-z-]* [^:]*: //; s/; see model --help$//'; }

lab_ready() {
    local why
    need_programs ps_server ps_worker ring_worker psr_merge psr_json bench_link model fit gnuplot
    # The link's rate and latency, checked by the programs' own parser
    # (bin/model) before any job starts: a bad one is one line and exit 64,
    # not every job failing.
    if [ "$link_bw" != auto ]; then
        why=$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw "$link_bw" --latency 0 2>&1 >/dev/null) ||
            usage_error --link-bw "$link_bw" "$(model_why "$why") (or auto)"
    fi
    why=$("$PSR_BIN/model" --algo ps --K 1 --bytes 1 --bw 1Mbit --latency "$link_lat" 2>&1 >/dev/null) ||
        usage_error --link-latency "$link_lat" "$(model_why "$why")"
    make_out logs runs
    t_start=$(date +%s)
    failed=0
}

# ------------------------------------------------------------ the runs
# sweep_job SYSTEM K BYTES CSV NAME RUN [LAUNCHER-ARGS...]: run RUN of one
# point, one launcher run at $steps steps (extra arguments go to launch.sh,
# e.g. --worker-args "--algo rd"); its stderr to logs/NAME.log (NAME.RUN.log
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
    note_command "$tag" "$@"
    job "$tag" "$out/logs/$tag.out" "$out/logs/$tag.log" "$@" && return 0
    failed=$((failed + 1))
    return 1
}

# THE REPEAT RULE. Each point is run until its runs agree: spread <=
# --spread (lab_points.awk: (max - min) / median of the runs' time_s, the
# run farthest from the median left out from 4 runs on) over two runs or
# more, or --repeat runs, or the time budget: in passes over all points,
# so that the repeats of one point see the machine at different moments.
# Pass 1 runs each point once; every later pass reruns the points not yet
# settled while their next run (as long as their last) ends before the
# deadline. Each run appends to runs/NAME.csv.
points_clear() {
    P_name=(); P_sweep=(); P_sys=(); P_k=(); P_n=(); P_steps=(); P_args=(); P_runs=(); P_spread=(); P_wall=(); P_stop=()
}
points_clear
add_point() {     # NAME SWEEP SYS K BYTES STEPS [LAUNCHER-ARGS]
    P_name+=("$1"); P_sweep+=("$2"); P_sys+=("$3"); P_k+=("$4"); P_n+=("$5"); P_steps+=("$6"); P_args+=("${7-}")
    P_runs+=(0); P_spread+=(nan); P_wall+=(0); P_stop+=("")
}
# run_point I: one more run of point I; updates its runs, spread and wall.
run_point() {
    local i=$1 name=${P_name[$1]} t0 res steps=${P_steps[$1]}
    eval "set -- ${P_args[$i]}"
    t0=$(date +%s.%N)
    sweep_job "${P_sys[$i]}" "${P_k[$i]}" "${P_n[$i]}" "$out/runs/$name.csv" "$name" "$((P_runs[i] + 1))" "$@" || return 1
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
# repeat_points LABEL DEADLINE: the rule over every point; LABEL I names
# point I's stage in the progress lines ("2/5] K sweep" gives "[2/5] K
# sweep pass 1: ..."); DEADLINE in seconds since the epoch.
repeat_points() {
    local label=$1 deadline=$2 pass i more
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
            progress "[$($label "$i") pass $pass: ${P_name[$i]} (K = ${P_k[$i]}, n = ${P_n[$i]}, link $link_bw, $link_lat) ..."
            if run_point "$i"; then
                done_line "[$($label "$i") pass $pass: ${P_name[$i]} ${P_runs[$i]} run(s), spread ${P_spread[$i]} ($(elapsed))"
            else
                P_stop[i]=failed
            fi
            more=1
        done
        [ "$more" = 1 ] || break
    done
}
# points_csv SWEEP BASE: the runs of SWEEP's points into BASE_runs.csv (one
# header), and lab_points.awk's one row per point into BASE.csv.
points_csv() {
    local i f
    : > "$2_runs.csv"
    for i in "${!P_name[@]}"; do
        f=$out/runs/${P_name[$i]}.csv
        [ "${P_sweep[$i]}" = "$1" ] && [ -s "$f" ] || continue
        if [ -s "$2_runs.csv" ]; then tail -n +2 "$f"; else cat "$f"; fi >> "$2_runs.csv"
    done
    [ -s "$2_runs.csv" ] && awk -f "$here/lab_points.awk" "$2_runs.csv" > "$2.csv"
}
points_unsettled() {
    local i why
    for i in "${!P_name[@]}"; do
        settled "$i" && continue
        why=${P_stop[$i]:-cap}
        [ "$why" = cap ] && why="cap of $repeat runs"
        [ "$why" = budget ] && why="time budget"
        printf ' %s' "${P_name[$i]} (${P_runs[$i]} runs, spread ${P_spread[$i]}, $why);"
    done
}

# ------------------------------------------------------------ the plots, the rows
draw() {
    local fmt
    for fmt in png svg; do
        gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; fitter='$PSR_BIN/fit'; file='$2'; fmt='$fmt'; out='$3.$fmt'; sub='$4'; ${5-}" \
            "$root/plots/$1.gp" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
    done
}
# flag(): the row's mark, as the plots name it (csv_awk "$flag_awk"'...').
flag_awk='function flag() { if (c["bound_by"] && $c["bound_by"] == "busy") return "  HOST-BOUND (busy: other programs)";
                         if (c["bound_by"] && $c["bound_by"] == "cpu") return "  HOST-BOUND (cpu: its own processes)";
                         if (c["bound_by"] && $c["bound_by"] == "sw") return "  SW-BOUND (sw: the link stood idle over 5%)";
                         return $c["host_bound"] == 1 ? "  HOST-BOUND (CPU, not the link)" : "" }'
busy_runs() {
    csv_awk 'FNR > 1 && c["bound_by"] && $c["bound_by"] == "busy" { n++ } END { print n + 0 }' "$@" 2>/dev/null
}
