#!/usr/bin/env bash
# lab.sh -- psring's main job (`make lab`): measure the parameter server
# against the ring on one machine, and draw it.
#
#   1. the unpaced loopback rate (bench_link --loopback): what the host can
#      move at all, so that every emulated point can be checked to be
#      link-bound (K x the link rate well below it);
#   2. the K sweep: the parameter server and the ring for K = 1..16 on
#      127.0.0.1, every process behind an EMULATED link (--link-bw,
#      --link-latency), the synthetic workload (n bytes of f32), a few steps
#      after warm-up each;
#   3. the size sweep: the parameter server, the ring and recursive
#      doubling (ring_worker --algo rd, docs/rd.md) at a fixed K from 4 KiB
#      to 16 MiB, the three interleaved at each size; the plot marks where
#      rd stops being faster than the ring, measured and in the model;
#   4. the seed's exercise table (bin/model), and short linreg trainings
#      of both systems and of each mistake mode for the loss curves
#      (experiments/lab_loss.sh);
#   5. the plots (plots/*.gp: PNG and SVG, and a terminal view of plot 1).
#
# Results go to results/<run>/: k_sweep.csv and size_sweep.csv in the
# shared schema (docs/design.md), model.txt, manifest.txt (command lines,
# settings, git revision, CPU, kernel, loopback rate), logs/ (every job's
# stderr) and the plots.
#
# WHY THESE DEFAULTS. 500 Mbit/s links and n = 4 MiB: the server's link
# carries K n per step each way, so K = 16 moves 64 MiB in and 64 MiB out
# per step at 62.5 MB/s, about 2 s, while the host's loopback moves several
# GB/s: every point stays link-bound with room to spare, and the whole lab
# fits in about 3 minutes on 2 cores. A latency of 200 us is above the
# emulated link's floor (docs/link.md measured ~45 us; from 200 us it is
# accurate). Every default can be overridden by a flag.
set -uo pipefail

cmdline="$0${*:+ $*}"
prog=lab.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

link_bw=500Mbit
link_lat=200us
bytes=4M
ks="1 2 4 8 16"
steps=6
warmup=2
sizes="4K 16K 64K 256K 1M 4M 16M"
size_k=4
size_steps=5
out=
quick=0
netns=0
tc_rate=500mbit
time_limit=120

usage() {
    cat <<EOF
usage: experiments/lab.sh [options]
psring's main job: the parameter server against the ring on EMULATED links,
on 127.0.0.1, with the alpha-beta model, as CSV and plots under results/.
  --link-bw RATE       emulated link rate per process (default $link_bw)
  --link-latency TIME  emulated one-way latency (default $link_lat)
  --bytes SIZE         message size n for the K sweep (default $bytes)
  --ks "K ..."         worker counts (default "$ks")
  --steps S            steps per job, warm-up included (default $steps)
  --warmup W           warm-up steps left out of timing (default $warmup)
  --sizes "SIZE ..."   the size sweep: PS, ring and rd at each size (default
                       "$sizes")
  --size-k K           K for the size sweep (default $size_k)
  --out DIR            results folder (default results/<date-time>)
  --quick              a small lab for tests: K 2 4, sizes 4K 64K, 3 steps
  --netns              also run the K sweep across network namespaces with
                       REAL kernel shaping (experiments/netns_cluster.sh, tc
                       tbf at --rate; needs root or user namespaces), into
                       <out>/netns/ with its own plots
  --rate RATE          the tc rate for --netns (default $tc_rate)
  --help               this text
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    --link-bw) link_bw=$2; shift 2 ;;
    --link-latency) link_lat=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --ks) ks=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --size-k) size_k=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --netns) netns=1; shift ;;
    --rate) tc_rate=$2; shift 2 ;;
    --quick) quick=1; ks="2 4"; sizes="4K 64K"; steps=3; warmup=1; size_steps=3; bytes=256K; shift ;;
    --help|-h) usage; exit 0 ;;
    *) die_usage "unknown option '$1' (try --help)" ;;
    esac
done

nb=$(size_bytes "$bytes") || die_usage "--bytes: '$bytes' is not a size like 4M (4096, 4K, 1M, 1G)"
for s in $sizes; do
    size_bytes "$s" >/dev/null || die_usage "--sizes: '$s' is not a size like 4K (4096, 4K, 1M, 1G)"
done

for b in ps_server ps_worker ring_worker psr_merge bench_link model; do
    [ -x "$PSR_BIN/$b" ] || { echo "lab.sh: $PSR_BIN/$b is missing: run 'make' first" >&2; exit 2; }
done
command -v gnuplot >/dev/null || { echo "lab.sh: gnuplot is missing: apt-get install gnuplot-nox (or run 'make deps' as root)" >&2; exit 2; }

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

# sweep_job SYSTEM K BYTES CSV NAME [LAUNCHER-ARGS...]: one launcher run
# (extra arguments go to launch.sh, e.g. --worker-args "--algo rd"); its
# stderr to logs/NAME.log.
sweep_job() {
    local sys=$1 k=$2 nbytes=$3 csv=$4 name=$5 elems
    shift 5
    elems=$(( nbytes / 4 ))
    [ "$elems" -ge 1 ] || elems=1
    set -- "$here/launch.sh" "$sys" "$k" --workload synthetic --dtype f32 --params "$elems" \
        --steps "$steps" --warmup "$warmup" --link-bw "$link_bw" --link-latency "$link_lat" \
        --timeout 30 --time-limit "$time_limit" --csv-out "$csv" "$@"
    { printf '%s:' "$name"; printf ' %q' "$@"; echo; } >> "$out/commands.txt"   # the manifest lists every job
    job "$name" "$out/logs/$name.out" "$out/logs/$name.log" "$@" && return 0
    failed=$((failed + 1))
    return 1
}

# ------------------------------------------------------------ 1. loopback
progress "[1/5] loopback rate ..."
loop=$("$PSR_BIN/bench_link" --loopback 2>/dev/null | awk '$1 == "loopback_MBps" { print $2 }')
[ -n "$loop" ] || loop=0
done_line "[1/5] loopback TCP, unpaced: $loop MB/s ($(elapsed))"

# ------------------------------------------------------------ 2. K sweep
i=0
for sys in ps ring; do
    for k in $ks; do
        [ "$sys" = ring ] && [ "$k" -lt 2 ] && continue     # a ring of one moves nothing
        i=$((i + 1))
        progress "[2/5] K sweep: $sys K=$k (n = $bytes, link $link_bw, $link_lat) ..."
        if sweep_job "$sys" "$k" "$nb" "$out/k_sweep.csv" "k_${sys}_$k"; then
            done_line "[2/5] K sweep: $sys K=$k done ($(elapsed))"
        fi
    done
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

# ------------------------------------------------------------ 3. size sweep
# Three algorithms at each size, one after the other, so that the ring and
# recursive doubling, whose crossover the plot marks, see the same machine.
# rd is the ring worker with --algo rd: its rows say system ring, algo rd,
# and psr_merge gives them rd's model (common/model.c).
steps_saved=$steps; steps=$size_steps
for s in $sizes; do
    for alg in ps ring rd; do
        sys=ps; extra=()
        case $alg in
        ring) sys=ring ;;
        rd) sys=ring; extra=(--worker-args "--algo rd") ;;
        esac
        [ "$sys" = ring ] && [ "$size_k" -lt 2 ] && continue     # a ring of one moves nothing
        progress "[3/5] size sweep: $alg K=$size_k n=$s ..."
        if sweep_job "$sys" "$size_k" "$(size_bytes "$s")" "$out/size_sweep.csv" "size_${alg}_$s" "${extra[@]}"; then
            done_line "[3/5] size sweep: $alg K=$size_k n=$s done ($(elapsed))"
        fi
    done
done
steps=$steps_saved

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

# ------------------------------------------------------------ 5. plots
sub="EMULATED links: $link_bw, $link_lat one-way; synthetic f32; 127.0.0.1, $(nproc) CPUs"
for p in k_time k_bytes k_scaling; do
    for fmt in png svg; do
        gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; file='$out/k_sweep.csv'; fmt='$fmt'; out='$out/$p.$fmt'; sub='n = $bytes, $sub'" \
            "$root/plots/$p.gp" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
    done
done
for fmt in png svg; do
    gnuplot -e "dir='$root/plots/'; model='$PSR_BIN/model'; file='$out/size_sweep.csv'; fmt='$fmt'; out='$out/size.$fmt'; sub='$sub'" \
        "$root/plots/size.gp" >"$out/fit.txt" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
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
    echo "link_bw: $link_bw (EMULATED, per process, each direction)"
    echo "link_latency: $link_lat (EMULATED, one-way)"
    echo "k_sweep: ks=\"$ks\" bytes=$bytes steps=$steps warmup=$warmup workload=synthetic dtype=f32"
    echo "size_sweep: K=$size_k sizes=\"$sizes\" steps=$size_steps algorithms: ps, ring, rd (ring_worker --algo rd)"
    [ "$netns" = 1 ] && echo "netns: K sweep across network namespaces, tc tbf $tc_rate (REAL kernel shaping), results in netns/"
    echo "host_bound_rows: ${hb:-none}"
    [ -n "$lb" ] && echo "warning: $lb"
    echo "jobs_failed: $failed"
    echo "# every job's command line (the loss curves: experiments/lab_loss.sh \"$out\", logs/loss.log)"
    cat "$out/commands.txt" 2>/dev/null
} > "$out/manifest.txt"

echo "model vs measured (time_s / model_s), K sweep:"
csv_awk 'FNR > 1 && $c["model_s"] != "" { printf "  %-4s K=%-3s time %8.4f s  model %8.4f s  ratio %.3f%s\n", $c["system"], $c["K"],
                                          $c["time_s"], $c["model_s"], $c["time_s"] / $c["model_s"],
                                          ($c["host_bound"] == 1 ? "  HOST-BOUND (CPU, not the link)" : "") }' \
    "$out/k_sweep.csv" 2>/dev/null
echo "model vs measured (time_s / model_s), size sweep at K = $size_k:"
csv_awk 'FNR > 1 && $c["model_s"] != "" { printf "  %-4s n=%-9s time %8.4f s  model %8.4f s  ratio %.3f%s\n",
                                          ($c["algo"] == "rd" ? "rd" : $c["system"]), $c["bytes"],
                                          $c["time_s"], $c["model_s"], $c["time_s"] / $c["model_s"],
                                          ($c["host_bound"] == 1 ? "  HOST-BOUND (CPU, not the link)" : "") }' \
    "$out/size_sweep.csv" 2>/dev/null
grep '^crossover' "$out/fit.txt" 2>/dev/null     # ring against rd, measured and model (plots/size.gp)
if [ "$netns" = 1 ]; then
    echo "namespaces (tc tbf $tc_rate, latency 0 in the model), K sweep:"
    csv_awk 'FNR > 1 && !/^#/ && $c["model_s"] != "" { printf "  %-4s K=%-3s time %8.4f s  model %8.4f s  ratio %.3f\n",
                                                       $c["system"], $c["K"], $c["time_s"], $c["model_s"], $c["time_s"] / $c["model_s"] }' \
        "$out/netns/k_sweep.csv" 2>/dev/null
fi
[ -n "$hb" ] && echo "host-bound rows (the CPU, not the emulated link, set the pace): $hb"
[ -n "$lb" ] && echo "warning: $lb; the emulated link may not be the bottleneck"
echo "results: $out (manifest.txt, k_sweep.csv, size_sweep.csv, model.txt, plots)"
if [ "$failed" -gt 0 ]; then
    echo "lab.sh: $failed job(s) failed; logs in $out/logs" >&2
    exit 1
fi
exit 0
