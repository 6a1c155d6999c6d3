#!/usr/bin/env bash
# lab_html.sh DIR -- write DIR/index.html: one lab run on one page.
#
# experiments/lab.sh calls it last; it can be rerun on any results folder
# (experiments/lab_html.sh results/RUN). The page shows, top to bottom: the
# busy banner (manifest.txt's BANNER line, when there is one), the run in
# one line (link, calibration, date, git), the plots (the SVGs lab.sh drew,
# PNG where there is no SVG; the ring's phases when lab_phases.sh drew
# them here, exercise 21), measured against the model as a table per
# sweep (flagged rows marked as on the plots: host-bound, cpu, busy or sw),
# the fit and crossover (fit.txt), the stragglers section's table
# (stragglers.txt, lab.sh --only stragglers), this lab beside a cluster
# (lab_scale.sh, exercise 0), the seed's model table (model.txt), the
# manifest, and links to every CSV. It is self-contained: one inline style
# sheet and one inline script, images by relative path, nothing fetched
# from the network. The script counts the images that loaded into the page
# (element #loaded, "N of M"), which is what tests/t_html.sh reads back
# from headless Chromium.
#
# Written atomically: DIR/index.html.tmp, then renamed.
set -uo pipefail
prog=lab_html.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# = 1 ] || die_usage "usage: experiments/lab_html.sh RESULTS-DIR"
case $1 in -h|--help) echo "usage: experiments/lab_html.sh RESULTS-DIR (writes RESULTS-DIR/index.html)"; exit 0 ;; esac
dir=$1
[ -d "$dir" ] || die_usage "'$dir' is not a directory"
tmp=$dir/index.html.tmp

# esc: HTML-escape stdin.
esc() { sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g'; }
# man KEY: the manifest's "KEY: value" line's value.
man() { [ -f "$dir/manifest.txt" ] && sed -n "s/^$1: //p" "$dir/manifest.txt" | head -n 1; }
# table CSV CAPTION XCOL: the sweep's rows against the model as an HTML
# table; XCOL (K or bytes) names the point. Flagged rows get class
# flag-REASON and the reason in the last cell.
table() {
    [ -s "$1" ] || return 0
    echo "<table><caption>$2</caption>"
    echo "<tr><th>system</th><th>K</th><th>n (bytes)</th><th>time_s (median)</th><th>model_s</th><th>time / model</th><th>runs</th><th>flag</th></tr>"
    csv_awk 'FNR > 1 && !/^#/ {
        sys = ($c["algo"] == "rd") ? "rd" : $c["system"]
        why = ""
        if (c["bound_by"] && $c["bound_by"] != "" && $c["bound_by"] != "link") why = $c["bound_by"]
        else if ($c["host_bound"] == 1) why = "host"
        cls = why == "" ? "" : " class=\"flag-" why "\""
        txt = why == "busy" ? "host-bound: busy (other programs)" : why == "cpu" ? "host-bound: cpu (its own processes)" : why == "host" ? "host-bound" : why == "sw" ? "link idle over 5% (sw: the software set the pace)" : ""
        ratio = ($c["model_s"] > 0) ? sprintf("%.3f", $c["time_s"] / $c["model_s"]) : ""
        printf "<tr%s><td class=\"sys-%s\">%s</td><td>%s</td><td>%s</td><td>%.4g</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
               cls, sys, sys, $c["K"], $c["bytes"], $c["time_s"], ($c["model_s"] == "" ? "" : sprintf("%.4g", $c["model_s"])),
               ratio, (c["runs"] ? $c["runs"] : ""), txt }' "$1"
    echo "</table>"
}

banner=$(man BANNER)
title="psring lab: $(man date)"
{
cat <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
EOF
echo "<title>$(echo "$title" | esc)</title>"
cat <<'EOF'
<style>
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 1em 2em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
.run { color: #555; margin-top: 0; }
.banner { background: #fbe3fb; border: 3px solid #cc00cc; padding: 0.8em 1em; font-weight: 600; }
.ok { background: #e8f5e9; border: 2px solid #2e7d32; padding: 0.5em 1em; }
figure { margin: 1.5em 0; }
figure img { width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #444; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
table { border-collapse: collapse; margin: 1em 0; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
td:first-child, td:last-child { text-align: left; }
.sys-ps { color: #d62728; font-weight: 600; }
.sys-ring { color: #1f77b4; font-weight: 600; }
.sys-rd { color: #b07800; font-weight: 600; }
tr.flag-busy td:last-child { color: #cc00cc; font-weight: 600; }
tr.flag-cpu td:last-child, tr.flag-host td:last-child { font-weight: 600; }
tr.flag-sw td:last-child { color: #2ca02c; font-weight: 600; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
#loaded { color: #777; font-size: 0.85em; }
</style>
</head>
<body>
EOF
echo "<h1>psring lab: the parameter server against the ring</h1>"
echo "<p class=\"run\">$( { echo "$(man date) · link $(man link_bw) · latency $(man link_latency) · git $(man git)"; } | esc)</p>"
if [ -n "$banner" ]; then
    echo "<p class=\"banner\" id=\"banner\">$(echo "$banner" | esc)</p>"
else
    echo "<p class=\"ok\" id=\"banner\">No run of the sweeps was slowed by other programs (no bound_by=busy row).</p>"
fi
echo "<p>Every link here is EMULATED (paced in the processes on 127.0.0.1), not a real network. Points and rows marked host-bound measured the machine, not the link.</p>"

echo "<h2>Plots</h2>"
# fig NAME CAPTION: the plot, SVG where lab.sh drew one.
fig() {
    local f=
    [ -s "$dir/$1.svg" ] && f=$1.svg
    [ -z "$f" ] && [ -s "$dir/$1.png" ] && f=$1.png
    [ -n "$f" ] || return 0
    echo "<figure><a href=\"$f\"><img src=\"$f\" alt=\"$1\"></a><figcaption>$2</figcaption></figure>"
}
fig k_time "1. Time per step against K: the server's time grows as K n/bw, the ring's stays near 2n/bw."
fig k_bytes "2. Bytes per step through the busiest link: K n at the server, 2(K-1)/K n at a ring worker."
fig size "3. Time against message size at fixed K: the parameter server, the ring and recursive doubling, with the fitted link and the ring/rd crossover."
fig k_scaling "4. Throughput and scaling efficiency against K (communication measured, compute ASSUMED)."
fig loss "5. Loss against step: the three correct runs agree; each --mistake mode, and a zoom on the ones that hide under the correct curve."
fig stragglers "Stragglers (lab.sh --only stragglers): time to the target loss and the step each mode runs at, against the slow worker's factor; the model dashed. EMULATED compute, behind the EMULATED link (stragglers.txt says its rate)."
fig loss_time "Stragglers: loss against wall-clock time for each mode, one worker slowed (EMULATED compute)."
# The ring's phases (exercise 21; experiments/lab_phases.sh --out DIR):
# the answer's chart once --answer drew it, else the blank sheet; its
# setting from the sub.txt lab_phases.sh writes beside them.
phsub=$(head -n 1 "$dir/sub.txt" 2>/dev/null | esc)
if [ -s "$dir/ring_phases.svg" ] || [ -s "$dir/ring_phases.png" ]; then
    fig ring_phases "The ring's phases from a run (exercise 21): each rank's 2(K-1) steps on the run's own time axis, each bar the chunk it sent &gt; received, the reduce-scatter then the all-gather${phsub:+ ($phsub)}."
else
    fig ring_phases_blank "The ring's phases, blank (exercise 21): fill in each bar's chunks (sent &gt; received), then experiments/lab_phases.sh --answer${phsub:+ ($phsub)}."
fi
for f in "$dir"/*.svg; do      # any other plot a section of lab.sh drew
    b=$(basename "$f" .svg)
    case " k_time k_bytes size k_scaling loss stragglers loss_time ring_phases ring_phases_blank " in *" $b "*) continue ;; esac
    [ -s "$f" ] && fig "$b" "$b"
done

echo "<h2>Measured against the model</h2>"
table "$dir/k_sweep.csv" "K sweep (the median run of each point)"
table "$dir/size_sweep.csv" "Size sweep"
if [ -s "$dir/stragglers.txt" ]; then
    echo "<h3>Stragglers: per mode and factor (experiments/lab_stragglers.sh)</h3>"
    echo "<pre id=\"stragglers\">$(esc < "$dir/stragglers.txt")</pre>"
fi
if [ -s "$dir/compression.txt" ]; then
    echo "<h3>Compression: time to target and the break-even bandwidth (experiments/lab_compression.sh)</h3>"
    echo "<pre id=\"compression\">$(esc < "$dir/compression.txt")</pre>"
fi
if [ -s "$dir/fit.txt" ]; then
    echo "<h3>The fit and the crossover (bin/fit)</h3>"
    echo "<pre id=\"fit\">$(esc < "$dir/fit.txt")</pre>"
fi
# This lab's scale beside a cluster's (docs/lab.md, exercise 0): the same
# table lab_scale.sh prints, model only (no simulator run here).
if sh "$here/lab_scale.sh" "$dir" --no-sim --html "$tmp.scale" >/dev/null 2>&1 && [ -s "$tmp.scale" ]; then
    echo "<h2>This lab beside a cluster (exercise 0; experiments/lab_scale.sh)</h2>"
    echo "<p>The lab's links are slower and its gradients smaller than a cluster's; what the bottleneck argument is about, n/bw (the unit of time), a bw/n (latency's weight) and K, is dimensionless. The ring's and the server's model times below are the same formulas in both settings.</p>"
    cat "$tmp.scale"
fi
rm -f "$tmp.scale"
# readable_units: bin/model's table header in units a reader sees at a
# glance ("64 KiB per gradient, links of 8 Mbit/s each way, latency a =
# 1 ms", not "6.5536e-05 GB per gradient, links of 0.001 GB/s"); the
# seed's "4 GB", "25 GB/s" stay as they are.
readable_units() {
    awk 'function bytes(n) { return n >= 1e9 ? sprintf("%g GB", n / 1e9) : n >= 1048576 && n % 1048576 == 0 ? sprintf("%g MiB", n / 1048576) \
                                : n >= 1024 && n % 1024 == 0 ? sprintf("%g KiB", n / 1024) : sprintf("%g bytes", n) }
         function rate(b) { return b >= 1e9 ? sprintf("%g GB/s", b / 1e9) : sprintf("%g Mbit/s", b * 8 / 1e6) }
         function secs(t) { return t >= 1 || t == 0 ? sprintf("%g s", t) : t >= 1e-3 ? sprintf("%g ms", t * 1e3) : sprintf("%g us", t * 1e6) }
         /^# alpha-beta model .*elements x .* B = .* GB per gradient,$/ {
             n = split($0, w, " "); for (i = 1; i <= n; i++) { if (w[i] == "elements") p = w[i - 1]; if (w[i] == "B") e = w[i - 1] }
             sub(/ = [^ ]* GB per gradient,$/, " = " bytes(p * e) " per gradient,"); print; next }
         /^# links of .* GB\/s each way, latency a = .* s$/ {
             print "# links of " rate($4 * 1e9) " each way, latency a = " secs($NF == "s" ? $(NF - 1) : $NF); next }
         { print }'
}
if [ -s "$dir/model.txt" ]; then
    echo "<h2>The model's table (bin/model)</h2>"
    echo "<pre id=\"model\">$(readable_units < "$dir/model.txt" | esc)</pre>"
fi

echo "<h2>Data</h2><ul id=\"data\">"
for f in "$dir"/*.csv "$dir"/manifest.txt "$dir"/fit.txt "$dir"/model.txt; do
    [ -f "$f" ] || continue
    b=$(basename "$f")
    echo "<li><a href=\"$b\">$b</a></li>"
done
[ -d "$dir/logs" ] && echo "<li><a href=\"logs/\">logs/</a> (every job's stderr)</li>"
echo "</ul>"
if [ -s "$dir/manifest.txt" ]; then
    echo "<details><summary>The manifest (machine, settings, calibration, cuts, every command)</summary>"
    echo "<pre id=\"manifest\">$(esc < "$dir/manifest.txt")</pre></details>"
fi
cat <<'EOF'
<p id="loaded">images: not counted (scripts off)</p>
<script>
// Count the images that loaded (decoded, with a size), for the reader and
// for tests/t_html.sh, which reads this element back from headless Chromium.
window.addEventListener("load", function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++)
    if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  var p = document.getElementById("loaded");
  p.textContent = "images loaded: " + ok + " of " + imgs.length;
  p.setAttribute("data-loaded", ok);
  p.setAttribute("data-total", imgs.length);
});
</script>
</body>
</html>
EOF
} > "$tmp" || { rm -f "$tmp"; echo "$prog: cannot write $tmp" >&2; exit 1; }
mv -f "$tmp" "$dir/index.html" || { rm -f "$tmp"; echo "$prog: cannot write $dir/index.html" >&2; exit 1; }
