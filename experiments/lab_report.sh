#!/usr/bin/env bash
# lab_report.sh DIR -- a lab run's results as text on stdout: each sweep's
# rows against the model, the ring/rd crossover (exercise 8) and exercise
# 3's two model crossovers, and what the run flagged.
#
# experiments/lab.sh prints it after the plots; it can be rerun on any
# results folder (experiments/lab_report.sh results/RUN), like lab_html.sh.
# It reads DIR only: k_sweep.csv and size_sweep.csv (the median run of each
# point, by column name), fit.txt (bin/fit's crossover lines),
# netns/k_sweep.csv when the run had --netns, and manifest.txt's lines:
# scale, size_sweep (K), repeat (the spread target), unsettled, cut, netns,
# host_bound_rows, sw_rows, warning. Flagged rows are marked as the plots mark them
# (lab_lib.sh, flag_awk).
set -uo pipefail
prog=lab.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/lab_lib.sh"

# RESULTS-DIR left out: the newest results/2*/ with a manifest.txt (the
# student's own `make lab` run, as lab_scale.sh finds it). --settings: only
# the settings exercises 2, 3 and 8 predict with (docs/lab.md), before the
# student looks at the rows.
settings=0 dir=
while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) echo "usage: experiments/lab_report.sh [--settings] [RESULTS-DIR] (the run's results as text; default: the newest results/2*/)"; exit 0 ;;
    --settings) settings=1; shift ;;
    -*) die_usage "$(shown_value "$1"): unknown option" ;;
    *) [ -z "$dir" ] || die_usage "usage: experiments/lab_report.sh [--settings] [RESULTS-DIR]"; dir=$1; shift ;;
    esac
done
if [ -z "$dir" ]; then
    for d in "$root"/results/2*/; do [ -f "$d/manifest.txt" ] && dir=${d%/}; done
    [ -n "$dir" ] || die_usage "no make lab folder in results/: run make lab, or give its folder"
fi
[ -d "$dir" ] || die_usage "'$dir' is not a directory"

# man KEY: the manifest's "KEY: value" line's value ("none" and "nothing"
# read as empty).
man() { sed -n "s/^$1: //p" "$dir/manifest.txt" 2>/dev/null | head -n 1 | sed 's/^none$//; s/^nothing\( (budget .*)\)$//'; }
# vs_model CSV X: each row's median run against its model, X (K or n)
# naming the point.
vs_model() {
    csv_awk -v x="$2" "$flag_awk"'FNR > 1 && $c["model_s"] != "" {
        printf "  %-4s %s time %8.4f s  model %8.4f s  ratio %.3f  %d run(s) %.4f..%.4f%s\n", ($c["algo"] == "rd" ? "rd" : $c["system"]),
               (x == "K" ? sprintf("K=%-3s", $c["K"]) : sprintf("n=%-9s", $c["bytes"])), $c["time_s"], $c["model_s"],
               $c["time_s"] / $c["model_s"], $c["runs"], $c["run_min_s"], $c["run_max_s"], flag() }' "$1" 2>/dev/null
}

# The settings the run chose (the calibration's rate, the latency, the K
# sweep's n, the size sweep's K), read from the rows themselves.
host_msg "settings: $dir"      # the host's folder in a container (lib.sh)
csv_awk 'FNR > 1 { if (!lo) { bw = $c["link_bw"]; a = $c["link_latency"]; n = $c["bytes"]; lo = hi = $c["K"] }
                   if ($c["K"] + 0 < lo + 0) lo = $c["K"]; if ($c["K"] + 0 > hi + 0) hi = $c["K"] }
         END { if (lo) printf "  link: %s bytes/s (%.6g Mbit/s), latency a = %s s, one-way (EMULATED); the K sweep: n = %s bytes, K = %s..%s\n",
                              bw, bw * 8 / 1e6, a, n, lo, hi }' "$dir/k_sweep.csv" 2>/dev/null
sk=$(csv_awk 'FNR == 2 { print $c["K"] }' "$dir/size_sweep.csv" 2>/dev/null)
[ -n "$sk" ] && echo "  the size sweep: K = $sk, n = $(csv_awk 'FNR > 1 { print $c["bytes"] }' "$dir/size_sweep.csv" | sort -nu | tr '\n' ' ')bytes"
[ "$settings" = 1 ] && exit 0
v=$(man scale) && [ -n "$v" ] && echo "scale: $v"
echo "model vs measured (time_s / model_s: the median run), K sweep:"
vs_model "$dir/k_sweep.csv" K
# Exercise 2's other columns: the bytes into the server (or one ring
# worker) per step, and the server's two phases.
echo "bytes_in per step (into the server, or into one ring worker), the PS's ingress_s and egress_s, bound_by, K sweep:"
csv_awk 'FNR > 1 { printf "  K=%-3s %-4s bytes_in %10s%s  bound_by %s\n", $c["K"], $c["system"], $c["bytes_in"],
                          ($c["system"] == "ps" ? sprintf("  ingress %8.4f s  egress %8.4f s", $c["ingress_s"], $c["egress_s"]) : ""),
                          $c["bound_by"] }' "$dir/k_sweep.csv" 2>/dev/null
echo "model vs measured (time_s / model_s: the median run), size sweep at K = $(man size_sweep | sed 's/^K=\([0-9]*\).*/\1/'):"
vs_model "$dir/size_sweep.csv" n
grep '^crossover' "$dir/fit.txt" 2>/dev/null     # ring against rd, measured and model (bin/fit)
# Exercise 3's crossovers in the model (the ring against the PS, and the
# ring's latency term against its bandwidth term), apart from the ring/rd
# ones above (exercise 8), so that neither is read for the other.
csv_awk 'FNR > 1 && $c["system"] == "ring" && $c["algo"] != "rd" && $c["link_bw"] > 0 && !done {
    k = $c["K"]; a = $c["link_latency"]; bw = $c["link_bw"]; done = 1
    if (k > 2) printf "exercise 3, model (K = %d): the ring beats the PS above n = %.0f bytes; its latency and bandwidth terms are equal at n = K a bw = %.0f bytes (the ring/rd crossover above is exercise 8'"'"'s)\n",
                      k, (2 * k - 4) * a * bw / (2 * k - 2 * (k - 1) / k), k * a * bw }' "$dir/size_sweep.csv" 2>/dev/null
if [ -n "$(man netns)" ]; then
    echo "namespaces (tc tbf $(man netns | sed 's/.*tc tbf \([^ ]*\) .*/\1/'), latency 0 in the model), K sweep:"
    csv_awk 'FNR > 1 && !/^#/ && $c["model_s"] != "" { printf "  %-4s K=%-3s time %8.4f s  model %8.4f s  ratio %.3f\n",
                                                       $c["system"], $c["K"], $c["time_s"], $c["model_s"], $c["time_s"] / $c["model_s"] }' \
        "$dir/netns/k_sweep.csv" 2>/dev/null
fi
v=$(man host_bound_rows) && [ -n "$v" ] && echo "host-bound rows (the CPU, not the emulated link, set the pace): $v"
v=$(man sw_rows) && [ -n "$v" ] &&
    echo "sw rows (the link stood idle over 5% of the combine: the software, not the link, set the pace): $v"
v=$(man warning) && [ -n "$v" ] && echo "warning: $v; the emulated link may not be the bottleneck"
v=$(man unsettled) && [ -n "$v" ] &&
    echo "points whose runs did not settle within $(man repeat | sed 's/.*spread <= \([^ ]*\) .*/\1/'):$v"
v=$(man cut) && [ -n "$v" ] && echo "cut to fit the $(echo "$v" | sed 's/.*(budget \([0-9]*\) s)$/\1/') s budget:${v% (budget * s)}"
exit 0
