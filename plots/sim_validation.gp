# sim_validation.gp -- psring_sim's time per step against the real
# processes' on the EMULATED link, row by row, the same flags
# (experiments/sim_all.sh's validation.csv: system, algo, K, bytes,
# link_bw, link_latency, model_s, sim_s, real_s, bound_by; read by name).
# Without real rows (sim_all.sh --no-real) against bin/model's instead.
# Filled points: the rows >= 1 MiB the bandwidth factor is fitted on;
# open points: the rows below 1 MiB it is validated on. A real row that is
# not bound_by link (the machine, or the software: sw, not the link, set its pace) is ringed in
# black and left out of the figures.
#   gnuplot -e "dir='plots/'; vfile='DIR/validation.csv'; fmt='png'; out='DIR/sim_validation.png'" plots/sim_validation.gp
load dir."style.gp"

vhead = system("head -n 1 '".vfile."' | tr ',' ' '")
vcol(name) = sum [i=1:words(vhead)] (word(vhead, i) eq name ? i : 0)
v_algo = vcol("algo"); v_k = vcol("K"); v_bytes = vcol("bytes")
v_model = vcol("model_s"); v_sim = vcol("sim_s"); v_real = vcol("real_s"); v_bound = vcol("bound_by")
if (v_algo * v_k * v_bytes * v_model * v_sim * v_real == 0) { exit error vfile.": a column is missing (sim_all.sh)" }
n_real = int(system("awk -F, -v c=".v_real." 'NR > 1 && $c != \"\" { n++ } END { print n + 0 }' '".vfile."'"))
n_flag = v_bound == 0 ? 0 : int(system("awk -F, -v c=".v_real." -v b=".v_bound." 'NR > 1 && $c != \"\" && $b != \"link\" { n++ } END { print n + 0 }' '".vfile."'"))
kset = system("awk -F, -v c=".v_k." 'NR > 1 { print $c }' '".vfile."' | sort -n | uniq | paste -sd, - | sed 's/,/, /g'")
sizes = system("awk -F, -v c=".v_bytes." 'NR > 1 { print $c }' '".vfile."' | sort -n | uniq | awk 'NR == 1 { a = $1 } { b = $1 } END { printf \"%g KiB - %g MiB\", a / 1024, b / 1048576 }'")
v_x = n_real > 0 ? v_real : v_model
lo = real(system("awk -F, -v x=".v_x." -v y=".v_sim." 'NR > 1 && $x != \"\" { m = $x < $y ? $x : $y; if (!n++ || m < lo) lo = m } END { print lo / 2 }' '".vfile."'"))
hi = real(system("awk -F, -v x=".v_x." -v y=".v_sim." 'NR > 1 && $x != \"\" { m = $x > $y ? $x : $y; if (m > hi) hi = m } END { print hi * 2 }' '".vfile."'"))
against = n_real > 0 ? "the real processes (EMULATED link)" : "bin/model (no real runs: --no-real)"

# The figures of the right panel: over the unflagged real rows, the
# geometric mean and the worst |simulated / measured - 1| (factor 1: the
# fitted factor of calibration.txt is not applied here).
errs = n_real == 0 ? "" : system("awk -F, -v r=".v_real." -v s=".v_sim." -v b=".v_bound." 'NR > 1 && $r != \"\" && $b == \"link\" { e = $s / $r - 1; if (e < 0) e = -e; g += log(e > 1e-6 ? e : 1e-6); if (e > w) w = e; n++ } END { if (n) printf \"%.1f%% %.1f%% %d\", 100 * exp(g / n), 100 * w, n }' '".vfile."'")
color(a) = a eq "ps" ? ps_color : a eq "ring" ? ring_color : rd_color
# at(a, big): the row's x when it is algo a and (big) >= 1 MiB or (!big) below.
at(a, big) = (strcol(v_algo) eq a && strcol(v_x) ne "" && (column(v_bytes) >= 1048576) == big) ? column(v_x) : NaN
atb(a, big) = (strcol(v_algo) eq a && strcol(v_x) ne "" && (column(v_bytes) >= 1048576) == big) ? column(v_bytes) : NaN
flagged = '(strcol(v_real) ne "" && strcol(v_bound) ne "link")'

if (fmt eq 'png') { set terminal pngcairo size 2400,1100 font "Sans,22" linewidth 3; set output out }
if (fmt eq 'svg') { set terminal svg size 2400,1100 font "Sans,22" linewidth 3 dynamic; set output out }
set multiplot layout 1, 2 title sprintf("psring\\_sim against %s, row by row, the same flags\n{/*0.75 PS, ring, rd; K = %s; n = %s; SIMULATED: SimGrid CM02, factors 1}\n{/*0.75 %d of %d real rows flagged (ringed: not bound\\_by link; left out of the figures)}", \
        against, kset, sizes, n_flag, n_real)
set logscale xy
set xlabel (n_real > 0 ? "measured time per step (s), real processes" : "bin/model's time per step (s)")
set ylabel "simulated time per step (s)"
if (fmt ne "table") { set format y "10^{%L}"; set format x "10^{%L}" }
set key top left font ",18"
set style fill transparent solid 0.2 noborder
set xrange [lo:hi]; set yrange [lo:hi]
set title "time per step"
flag_plot = n_flag > 0 ? ', vfile skip 1 using ('.flagged.' ? column(v_real) : NaN):(column(v_sim)) with points pt 6 ps 3.5*pscale lw 2 lc rgb host_color title "flagged: the machine set the pace"' : ''
plot '+' using 1:($1 / 1.15):($1 * 1.15) with filledcurves lc rgb "#888888" title "within 15%", \
     x with lines dt 2 lc rgb "#444444" title "simulated = measured", \
     for [a in "ps ring rd"] vfile skip 1 using (at(a, 1)):(column(v_sim)) with points pt 7 ps 1.4*pscale lc rgb color(a) title a.", n >= 1 MiB (fit)", \
     for [a in "ps ring rd"] vfile skip 1 using (at(a, 0)):(column(v_sim)) with points pt 6 ps 1.4*pscale lw 2 lc rgb color(a) title a.", n < 1 MiB (validation)" \
     @flag_plot

# Right: the ratio, where the left panel's decades hide it.
unset logscale y
set logscale x 2
set format y "%.2f"
if (fmt ne "table") { set format x "%.0b%BB" }
set xrange [*:*]; set yrange [0.8:1.2]
set xlabel "message size n (bytes)"
set ylabel (n_real > 0 ? "simulated / measured" : "simulated / bin/model")
set title (errs eq "" ? "the ratio" : sprintf("the ratio, factor 1: |error| geometric mean %s, worst %s\n{/*0.8 over the %s unflagged rows (calibration.txt: with the fitted factor)}", word(errs, 1), word(errs, 2), word(errs, 3)))
set key bottom right font ",18"
# jitter the K's apart a little along x, so that the rows of one size do not hide each other
jx(k) = 2 ** ((k - 8) / 40.0)
r_at(a, big) = atb(a, big) * jx(column(v_k))
flag_plot2 = n_flag > 0 ? ', vfile skip 1 using ('.flagged.' ? column(v_bytes) * jx(column(v_k)) : NaN):(column(v_sim) / column(v_x)) with points pt 6 ps 3.5*pscale lw 2 lc rgb host_color notitle' : ''
plot 1 with lines dt 2 lc rgb "#444444" notitle, 1.15 with lines dt 3 lc rgb "#888888" title "±15%", 0.85 with lines dt 3 lc rgb "#888888" notitle, \
     for [a in "ps ring rd"] vfile skip 1 using (r_at(a, 1)):(column(v_sim) / column(v_x)) with points pt 7 ps 1.4*pscale lc rgb color(a) title a, \
     for [a in "ps ring rd"] vfile skip 1 using (r_at(a, 0)):(column(v_sim) / column(v_x)) with points pt 6 ps 1.4*pscale lw 2 lc rgb color(a) notitle \
     @flag_plot2
unset multiplot
