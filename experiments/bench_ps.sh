#!/usr/bin/env bash
# bench_ps.sh -- the parameter server's benchmarks (figures, never pass/fail).
#
#   1. memory: the server's peak RSS for n = 64 MiB (f32) with K = 2, 4, 8,
#      16 workers. The server sums pushes in place into one accumulator, so
#      its RSS must not grow with K (issue 3: within 10%).
#   2. the emulated link: --link-bw 500Mbit, n = 4 MiB, K = 2..16: server
#      ingress and egress (medians over steps) against the model a + K n/bw,
#      and the workers' combine step against the step model
#      2(a + K n/bw) (common/measure/model.h): push all K gradients in, then the
#      weights out K times, through the one server link.
#   3. unpaced on loopback: the server's ingress rate (K n / ingress_s) for
#      n = 64 MiB, and iperf3 with K parallel streams on the same machine in
#      the same run, interleaved, when iperf3 is installed.
#
#   experiments/bench_ps.sh [--quick] [--reps N]
# Columns under '#' headers on stdout. Each figure is the median of N runs.
set -uo pipefail
prog=bench_ps.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
reps=3 ks="2 4 8 16" big=$((64 * 1048576))     # runs per figure, K values, the big n
while [ $# -gt 0 ]; do
    case $1 in
    --quick) reps=1; ks="2 4"; big=$((16 * 1048576)); shift ;;
    --reps) reps=$2; shift 2 ;;
    --help|-h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die_usage "$(shown_value "$1"): unknown option" ;;
    esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/psring-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT


echo "# bench_ps: parameter server benchmarks, $(nproc) CPUs, median of $reps runs"

# ------------------------------------------------------------ 1. RSS vs K
echo
echo "# 1. server peak RSS, n = $((big / 1048576)) MiB f32, 3 steps, no link limit"
echo "# K rss_MiB rss_over_K2"
first=
for k in $ks; do
    for r in $(seq "$reps"); do
        "$here/launch.sh" ps "$k" --workload synthetic --dtype f32 --params $((big / 4)) --steps 3 --warmup 1 \
            --timeout 60 --out "$tmp/rss" >/dev/null 2>"$tmp/rss.log" || { echo "# K=$k failed: $(tail -n 2 "$tmp/rss.log")"; continue; }
        awk '/peak RSS/ { for (i = 1; i <= NF; i++) if ($i == "RSS") print $(i + 1) }' "$tmp/rss.log" | head -n 1
        rm -rf "$tmp/rss"
    done | median > "$tmp/m"
    m=$(cat "$tmp/m")
    [ -n "$first" ] || first=$m
    awk -v k="$k" -v m="$m" -v f="$first" 'BEGIN { printf "%d %.1f %.3f\n", k, m, m / f }'
done

# ------------------------------------------------------------ 2. emulated link
echo
echo
echo "# 2. EMULATED link 500Mbit, 200us; n = 4 MiB f32; medians over 4 timed steps"
echo "# K ingress_s model_in_s ratio_in egress_s model_out_s ratio_out step_s model_step_s ratio_step"
for k in $ks; do
    for r in $(seq "$reps"); do
        rm -f "$tmp/row.csv"
        "$here/launch.sh" ps "$k" --workload synthetic --dtype f32 --params 1048576 --steps 6 --warmup 2 \
            --link-bw 500Mbit --link-latency 200us --timeout 30 --csv-out "$tmp/row.csv" >/dev/null 2>"$tmp/l.log" ||
            { echo "# K=$k failed: $(tail -n 2 "$tmp/l.log")" >&2; continue; }
        echo "$(csv_col "$tmp/row.csv" ingress_s) $(csv_col "$tmp/row.csv" egress_s) $(csv_col "$tmp/row.csv" time_s)"
    done > "$tmp/runs"
    in=$(awk '{ print $1 }' "$tmp/runs" | median)
    eg=$(awk '{ print $2 }' "$tmp/runs" | median)
    st=$(awk '{ print $3 }' "$tmp/runs" | median)
    # the model (bin/model) for this K on the link above
    m() { "$PSR_BIN/model" --algo ps --K "$k" --bytes 4M --bw 500Mbit --latency 200us "$@"; }
    awk -v k="$k" -v i="$in" -v e="$eg" -v s="$st" -v mi="$(m --quantity ingress)" -v mo="$(m --quantity egress)" \
        -v ms="$(m --quantity time)" 'BEGIN {
        printf "%d %.4f %.4f %.3f %.4f %.4f %.3f %.4f %.4f %.3f\n", k, i, mi, i / mi, e, mo, e / mo, s, ms, s / ms }'
done

# ------------------------------------------------------------ 3. unpaced ingress vs iperf3
echo
echo
echo "# 3. unpaced loopback: server ingress rate K n / ingress_s (n = $((big / 1048576)) MiB) vs iperf3 -P K"
echo "# K ps_ingress_GBps iperf3_GBps ratio"
have_iperf=0
command -v iperf3 >/dev/null && have_iperf=1
[ $have_iperf = 1 ] || echo "# iperf3 not installed (apt-get install iperf3): its column is nan"
for k in $ks; do
    for r in $(seq "$reps"); do
        rm -f "$tmp/row.csv"
        "$here/launch.sh" ps "$k" --workload synthetic --dtype f32 --params $((big / 4)) --steps 4 --warmup 1 \
            --timeout 60 --csv-out "$tmp/row.csv" >/dev/null 2>"$tmp/u.log" || { echo "nan"; continue; }
        i=$(csv_col "$tmp/row.csv" ingress_s)
        ps=$(awk -v k="$k" -v n="$big" -v i="$i" 'BEGIN { printf "%.3f", k * n / i / 1e9 }')
        ip=nan
        if [ $have_iperf = 1 ]; then
            port=$((20000 + RANDOM % 20000))
            iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
            sp=$!
            sleep 0.3
            ip=$(iperf3 -c 127.0.0.1 -p "$port" -P "$k" -t 2 -f g 2>/dev/null |
                 awk '/SUM/ && /receiver/ { for (j = 1; j <= NF; j++) if ($j ~ /bits\/sec/) { print $(j - 1) / 8; exit } }')
            wait "$sp" 2>/dev/null
            [ -n "$ip" ] || ip=nan
        fi
        echo "$ps $ip"
    done > "$tmp/runs"
    p=$(awk '{ print $1 }' "$tmp/runs" | median)
    q=$(awk '{ print $2 }' "$tmp/runs" | median)
    awk -v k="$k" -v p="$p" -v q="$q" 'BEGIN { printf "%d %s %s %s\n", k, p, q, (q + 0 > 0 ? sprintf("%.3f", p / q) : "nan") }'
done
