# t_html.sh -- experiments/lab_html.sh writes a results folder's index.html,
# and headless Chromium renders it: every plot loaded (the page's own script
# writes "images loaded: N of M" into #loaded), the tables, the fit, the
# banner and the CSV links are in the rendered DOM, and nothing on the page
# points at the network. The folder is built here from bin/model's numbers
# and plots/*.gp (no lab run). Chromium (Debian's `chromium`, make
# deps-check installs it where it can; PSR_CHROMIUM names another binary,
# e.g. chromium-browser) missing: the Chromium cases skip and say so; the
# page's own checks run anyway.
. "$PSR_TESTS/lib.sh"
t_need html-1 "lab index.html" model
h="$PSR_TESTS/../experiments/lab_html.sh"
plots="$PSR_TESTS/../plots"
m="$PSR_BIN/model"
d=$T_TMP/run
mkdir -p "$d/logs"

# A results folder: two sweeps on the model's numbers (500 Mbit/s, 200 us),
# one row flagged busy, one sw, the plots drawn by plots/*.gp, a manifest with the
# busy banner, fit.txt, model.txt.
hdr=system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound,bound_by,machine_busy,job_busy,run_queue,runs,run_min_s,run_max_s,spread
row() {   # SYSTEM ALGO K BYTES BOUND_BY
    a=$2; [ -n "$a" ] || a=ps
    ts=$("$m" --algo "$a" --K "$3" --bytes "$4" --bw 500Mbit --latency 200us)
    bi=$("$m" --algo "$a" --K "$3" --bytes "$4" --quantity bytes_in)
    hb=1; case $5 in link|sw) hb=0 ;; esac     # sw: no machine signal
    echo "$1,$2,tcp,$3,$4,4,$ts,$ts,$ts,,,1,1,$bi,$bi,6.25e+07,0.0002,$ts,$hb,$5,0.1,0.1,1,2,$ts,$ts,0.01"
}
{ echo "$hdr"; for k in 1 2 4; do row ps "" $k 1048576 link; done; row ring ring 2 1048576 sw; row ring ring 4 1048576 busy; } > "$d/k_sweep.csv"
{ echo "$hdr"; for n in 4096 65536 1048576; do row ps "" 4 $n link; row ring ring 4 $n link; row ring rd 4 $n link; done; } > "$d/size_sweep.csv"
{ echo "# psring lab manifest (fixture)"; echo "date: 2026-01-01T00:00:00Z"; echo "link_bw: 500Mbit (EMULATED)"
  echo "link_latency: 200us (EMULATED, one-way)"; echo "git: fixture"
  echo "BANNER: THE MACHINE WAS BUSY: 1 run(s) of the sweeps were slowed by other programs <test & check>"; } > "$d/manifest.txt"
"$m" > "$d/model.txt"
"$m" --elements 16384 --elem-bytes 4 --bw 8Mbit --latency 1ms --workers 1,2 >> "$d/model.txt"
for p in k_time k_bytes k_scaling; do
    gnuplot -e "dir='$plots/'; model='$m'; file='$d/k_sweep.csv'; fmt='svg'; out='$d/$p.svg'; sub='fixture'" "$plots/$p.gp" 2>>"$T_TMP/gp.err"
done
gnuplot -e "dir='$plots/'; model='$m'; file='$d/size_sweep.csv'; fmt='svg'; out='$d/size.svg'; sub='fixture'" "$plots/size.gp" \
    2>>"$T_TMP/gp.err"
"$PSR_BIN/fit" "$d/size_sweep.csv" > "$d/fit.txt" 2>>"$T_TMP/gp.err"

t_case html-1.1 "lab_html.sh writes index.html atomically: plots, both tables, fit, model (readable units), banner (escaped), CSV links, no network"
job 30 bash "$h" "$d"
expect_rc 0
f=$d/index.html
[ -s "$f" ] || t_fail "no index.html"
[ -e "$d/index.html.tmp" ] && t_fail "index.html.tmp left behind"
for p in k_time k_bytes k_scaling size; do
    grep -q "<img src=\"$p.svg\"" "$f" || t_fail "no <img> for $p.svg"
done
[ "$(grep -c '<table>' "$f")" = 2 ] || t_fail "want 2 tables (K sweep, size sweep)"
[ "$(grep -c '<tr class="flag-busy">' "$f")" = 1 ] || t_fail "want exactly one row flagged busy"
[ "$(grep -c '<tr class="flag-sw">.*link idle over 5% (sw: the software set the pace)' "$f")" = 1 ] ||
    t_fail "want exactly one row flagged sw, with its reason"
grep -q 'THE MACHINE WAS BUSY' "$f" || t_fail "no banner"
grep -q '&lt;test &amp; check&gt;' "$f" || t_fail "the banner's < & > are not escaped"
grep -q '^fit ring: ' "$f" || t_fail "no fit.txt lines"
grep -q ' 512 ' "$f" || t_fail "no model table"
# the model table's header in readable units (bin/model prints GB and GB/s)
grep -q 'x 2 B = 4 GB per gradient,$' "$f" || t_fail "the seed's gradient is not 4 GB"
grep -q 'x 4 B = 64 KiB per gradient,$' "$f" || t_fail "the lab's gradient not in KiB: $(grep 'per gradient' "$f" | tail -n 1)"
grep -q '^# links of 8 Mbit/s each way, latency a = 1 ms$' "$f" || t_fail "the lab's link not in Mbit/s and ms: $(grep '^# links of' "$f" | tail -n 1)"
for c in k_sweep.csv size_sweep.csv manifest.txt; do
    grep -q "<a href=\"$c\">" "$f" || t_fail "no link to $c"
done
grep -Eiq '(src|href)="(https?:)?//' "$f" && t_fail "a network resource: $(grep -Eio '(src|href)="(https?:)?//[^"]*' "$f" | head -n 1)"
t_end

t_case html-1.2 "a folder without a banner says the sweeps were not slowed; a bad argument exits 64 with one line"
d2=$T_TMP/quiet
mkdir -p "$d2" && cp "$d/k_sweep.csv" "$d2/" && grep -v '^BANNER' "$d/manifest.txt" > "$d2/manifest.txt"
job 30 bash "$h" "$d2"
expect_rc 0
grep -q 'class="ok" id="banner"' "$d2/index.html" || t_fail "no 'not slowed' line"
job 10 bash "$h" "$T_TMP/nosuch"
expect_rc 64
[ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "want one line on stderr: $(cat "$T_TMP/err")"
t_end

t_case html-1.3 "the ring's phases (exercise 21): no panel without lab_phases.sh's chart; the blank sheet, then the answer (PNG or SVG) in its place, once, captioned with its setting"
d3=$T_TMP/phases
mkdir -p "$d3" && cp "$d/manifest.txt" "$d/k_sweep.csv" "$d3/"
# panels: the <figure> lines naming ring_phases
panels() { grep '<figure>.*ring_phases' "$d3/index.html"; }
job 30 bash "$h" "$d3"
expect_rc 0
grep -q 'ring_phases\|exercise 21' "$d3/index.html" && t_fail "a phases panel without the chart: $(grep -m 1 'ring_phases\|exercise 21' "$d3/index.html")"
# lab_phases.sh's first form: the blank sheet and sub.txt (PNG and SVG)
printf '1M per rank, EMULATED link 16Mbit, 1ms & more\n' > "$d3/sub.txt"
printf '\211PNG\r\n\032\n' > "$d3/ring_phases_blank.png"
printf '<svg xmlns="http://www.w3.org/2000/svg"/>\n' > "$d3/ring_phases_blank.svg"
job 30 bash "$h" "$d3"
expect_rc 0
[ "$(panels | wc -l)" = 1 ] || t_fail "want one phases panel, got: $(panels | tr '\n' ' ')"
panels | grep -q '<img src="ring_phases_blank.svg".*<figcaption>The ring.s phases, blank (exercise 21): .*lab_phases.sh --answer (1M per rank, EMULATED link 16Mbit, 1ms &amp; more)' ||
    t_fail "the blank sheet's panel: $(panels)"
# --answer's chart, PNG alone: it replaces the blank sheet
printf '\211PNG\r\n\032\n' > "$d3/ring_phases.png"
job 30 bash "$h" "$d3"
expect_rc 0
[ "$(panels | wc -l)" = 1 ] || t_fail "want one phases panel, got: $(panels | tr '\n' ' ')"
panels | grep -q '<img src="ring_phases.png".*<figcaption>The ring.s phases from a run (exercise 21): .* sent &gt; received, .*(1M per rank, EMULATED link 16Mbit, 1ms &amp; more)\.</figcaption>' ||
    t_fail "the answer's panel (PNG): $(panels)"
# and with its SVG, the SVG, still once (not again as an unnamed plot)
printf '<svg xmlns="http://www.w3.org/2000/svg"/>\n' > "$d3/ring_phases.svg"
job 30 bash "$h" "$d3"
expect_rc 0
[ "$(grep -c 'ring_phases' "$d3/index.html")" = 1 ] || t_fail "ring_phases on $(grep -c 'ring_phases' "$d3/index.html") lines, want 1: $(grep 'ring_phases' "$d3/index.html" | tr '\n' ' ')"
panels | grep -q '<img src="ring_phases.svg"' || t_fail "the answer's panel (SVG): $(panels)"
t_end

# chromium FILE OUT: the DOM after the page's scripts ran (headless; the
# virtual time budget lets the load event fire without a wall-clock wait).
chrome=${PSR_CHROMIUM:-chromium}
chromium_dom() {
    job 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-dev-shm-usage --virtual-time-budget=10000 --dump-dom "file://$1"
    cp "$T_TMP/out" "$2"
}
if ! command -v "$chrome" >/dev/null 2>&1; then
    t_skip html-2 "index.html in headless Chromium" "$chrome not installed (as root: make deps-check, or apt-get install chromium)"
    t_exit
fi

t_case html-2.1 "headless Chromium renders index.html: every image loaded (4 of 4), the tables and the banner in the DOM"
chromium_dom "$d/index.html" "$T_TMP/dom"
grep -q 'id="loaded"' "$T_TMP/dom" || t_fail "no #loaded in the DOM (chromium: $(tail -n 2 "$T_TMP/err"))"
grep -q 'images loaded: 4 of 4' "$T_TMP/dom" || t_fail "not every image loaded: $(grep -o 'images[^<]*' "$T_TMP/dom")"
[ "$(grep -c '<table>' "$T_TMP/dom")" = 2 ] || t_fail "the DOM lacks the two tables"
grep -q 'THE MACHINE WAS BUSY' "$T_TMP/dom" || t_fail "the DOM lacks the banner"
# A screenshot of the page: a PNG, not a blank few bytes.
( cd "$T_TMP" && job 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-dev-shm-usage --hide-scrollbars --window-size=1200,2000 --virtual-time-budget=10000 \
    --screenshot="$T_TMP/shot.png" "file://$d/index.html" )
[ "$(head -c 4 "$T_TMP/shot.png" 2>/dev/null | od -An -c | tr -d ' ')" = '211PNG' ] || t_fail "no PNG screenshot"
[ "$(wc -c < "$T_TMP/shot.png" 2>/dev/null || echo 0)" -gt 20000 ] || t_fail "the screenshot is nearly empty"
t_end

t_case html-2.2 "the check can fail: with one plot missing Chromium counts 3 of 4"
rm "$d/size.svg"
chromium_dom "$d/index.html" "$T_TMP/dom2"
grep -q 'images loaded: 3 of 4' "$T_TMP/dom2" || t_fail "a missing image was not noticed: $(grep -o 'images[^<]*' "$T_TMP/dom2")"
t_end
t_exit
