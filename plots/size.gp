# size.gp -- plot 3: time per step against message size n at a fixed K,
# log-log, for the three ways to combine gradients the lab compares: the
# parameter server, the ring, and recursive doubling (ring_worker --algo rd,
# rows with system ring, algo rd). For each, on one panel:
#   - the measured medians, with min-max bars;
#   - the algorithm's own model formula with a and b FITTED to them by
#     gnuplot's fit (dashed; "the fits" below), the fitted a and 1/b
#     printed against the link's;
#   - the alpha-beta MODEL (solid), with the link's a (one-way
#     latency, link_latency) and b (1 / link_bw) and the sweep's K, all read
#     from the CSV:
#       PS    2(a + K n b)               push then pull, K n through one link
#       ring  2(K-1) a + 2(K-1)/K n b
#       rd    s (a + n b), s = log2 K; floor(log2 K) + 2 if K is not a
#             power of two (the fold: docs/rd.md)
#     bin/model draws them (--sweep: one call per curve), from the same
#     code that psr_merge writes into every row's model_s (common/measure/model.c);
#     stdout says how well the two agree.
# The ring and rd cross where rd stops being faster. Measured: the last size
# at which ring/rd falls below 1, log-interpolated between the two sizes
# around it (noise at the small sizes may dip earlier; bench_rd.sh does the
# same). Model: n* = (2(K-1) - s) a / ((s - 2(K-1)/K) b), bin/model
# --crossover. Both are drawn as
# vertical lines and printed on stdout (lab.sh keeps it as fit.txt).
#
#   gnuplot -e "dir='plots/'; file='results/RUN/size_sweep.csv'; fmt='png'; out='size.png'" plots/size.gp
#
# The fit weights each point by 5% of its own time (relative error), so the
# small, latency-bound sizes count as much as the large ones. It uses every
# point, flagged ones too (they are ringed: style.gp's flag_marks).
# An algorithm with fewer than two sizes in the CSV gets no fit; one with
# none draws nothing (an older CSV without rd rows still plots).
load dir."style.gp"
if (!exists("sub")) sub = ''
set fit quiet
set fit logfile '/dev/null'
set print "-"

# ------------------------------------------------------------ the rows
# awk over the CSV's data rows (not the header, not # comments). COND and
# ACTION are awk text; they must not contain a single quote.
csv_awk(cond, action) = system("awk -F, 'NR > 1 && !/^#/ && (".cond.") ".action."' '".file."'")
sel_ps = sprintf('$%d == "ps"', c_system)
sel_ring = sprintf('$%d == "ring" && $%d == "ring"', c_system, c_algo)
sel_rd = sprintf('$%d == "ring" && $%d == "rd"', c_system, c_algo)
count = '{ n++ } END { print n + 0 }'
n_ps = int(csv_awk(sel_ps, count))
n_ring = int(csv_awk(sel_ring, count))
n_rd = int(csv_awk(sel_rd, count))

# ------------------------------------------------------------ the fits
# Each algorithm's points are fitted INSIDE ITS OWN MODEL FORMULA, with the
# link's a (latency, s) and b (s per byte, 1/rate) as the two unknowns:
#       T(n) = La * a + Lb * n * b
# where La and Lb are the algorithm's latency and byte coefficients at the
# sweep's K, taken from bin/model (La = T(a = 1) - T(a = 0), Lb = T(n = 1,
# rate 1, a = 0)): PS La = 2, Lb = 2K; ring 2(K-1) and 2(K-1)/K; rd s and
# s. So all three fits estimate the same two numbers, the one link's, and
# print them against the configured link_latency and link_bw. (A free
# a + n b line would give the whole operation's intercept and slope: for
# the PS at K = 4 a slope 8 times the link's b, which reads like a link
# 8 times slower than it is.)
f_k = int(csv_awk('1', sprintf('{ print $%d; exit }', c_k)))
coef_lat(algo) = f_k >= 1 ? model_at(algo, "time", f_k, 1, 1, 1) - model_at(algo, "time", f_k, 1, 1, 0) : NaN
coef_byte(algo) = f_k >= 1 ? model_at(algo, "time", f_k, 1, 1, 0) : NaN
La_ps = coef_lat("ps"); Lb_ps = coef_byte("ps")
La_ring = coef_lat("ring"); Lb_ring = coef_byte("ring")
La_rd = coef_lat("rd"); Lb_rd = coef_byte("rd")
t_ps(x) = La_ps*a_ps + Lb_ps*x*b_ps
t_ring(x) = La_ring*a_ring + Lb_ring*x*b_ring
t_rd(x) = La_rd*a_rd + Lb_rd*x*b_rd
a_ps = 1e-4; b_ps = 1e-8; a_ring = 1e-4; b_ring = 1e-8; a_rd = 1e-4; b_rd = 1e-8
if (n_ps >= 2) {
    fit t_ps(x) file skip 1 using (is("ps") ? column(c_bytes) : NaN):(column(c_time)):(0.05*column(c_time)) yerror via a_ps, b_ps
} else { a_ps = NaN; b_ps = NaN }
if (n_ring >= 2) {
    fit t_ring(x) file skip 1 using (is_algo("ring", "ring") ? column(c_bytes) : NaN):(column(c_time)):(0.05*column(c_time)) yerror via a_ring, b_ring
} else { a_ring = NaN; b_ring = NaN }
if (n_rd >= 2) {
    fit t_rd(x) file skip 1 using (is_algo("ring", "rd") ? column(c_bytes) : NaN):(column(c_time)):(0.05*column(c_time)) yerror via a_rd, b_rd
} else { a_rd = NaN; b_rd = NaN }

# ------------------------------------------------------------ the model
# K, the link rate (bytes/s) and latency (s) of the first row that had an
# emulated link; the lab's size sweep runs them all at one K on one link.
# (printf %.17g: gnuplot's real() refuses "4e+06", an integer mantissa.)
lnk = csv_awk(sprintf('$%d + 0 > 0', c_bw), sprintf('{ printf "%%d %%.17g %%.17g\n", $%d, $%d, $%d; exit }', c_k, c_bw, c_lat))
have_model = words(lnk) == 3
m_k = have_model ? int(word(lnk, 1)) : 0
m_bw = have_model ? real(word(lnk, 2)) : NaN
m_b = 1.0 / m_bw
m_a = have_model ? real(word(lnk, 3)) : NaN
pow2 = m_k >= 1 && (m_k & (m_k - 1)) == 0
rd_steps = m_k >= 1 ? int(model_bytes("rd", "steps", m_k, 1)) : 0
s_text = pow2 ? "log_2 K" : "(floor(log_2 K) + 2)"
# curve(algo): the model's time against n across the panel (x_lo..x_hi,
# set below), 200 sizes evenly spaced in log n, as "bytes,seconds" lines
# from bin/model; an empty source where there is no model to draw.
curve(algo, rows) = (have_model && rows > 0) \
    ? sprintf("< '%s' --algo %s --K %d --bw %.17g --latency %.17g --sweep %.17g,%.17g,200", model, algo, m_k, m_bw, m_a, x_lo, x_hi) \
    : "< true"
m_of(b) = model_at(is("ps") ? "ps" : is_algo("ring", "rd") ? "rd" : "ring", "time", m_k, b, m_bw, m_a)
# n*: ring and rd cost the same; none when rd is never slower (K = 2:
# one step of the whole vector against two of half of it).
nstar = have_model ? real(system(sprintf("'%s' --crossover --K %d --bw %.17g --latency %.17g || echo nan", model, m_k, m_bw, m_a))) : NaN

if (have_model) {
    print sprintf("model: K = %d, a = %.4g s (link_latency), 1/b = %.4g MB/s (link_bw); ps 2*pscale(a + K n b), ring 2(K-1) a + 2(K-1)/K n b, rd %s (a + n b) = %d (a + n b)", \
                  m_k, m_a, 1e-6/m_b, pow2 ? "log2 K" : "(floor(log2 K) + 2)", rd_steps)
    # The lines drawn against the model_s that psr_merge wrote: the ratio
    # should be 1 (to the CSV's 6 digits) for every row.
    stats file skip 1 using (column(c_model) / m_of(column(c_bytes))) nooutput
    print sprintf("model: the CSV's model_s / the lines drawn: %.6f to %.6f over %d rows", STATS_min, STATS_max, STATS_records)
} else {
    print "model: no row has an emulated link (link_bw), so no model is drawn"
}


# The fits' lines (fit.txt): the formula, the fitted a and 1/b, and the
# configured link's, one line per algorithm.
link_text = have_model ? sprintf(" (link: a = %.6g s, 1/b = %.6g MB/s)", m_a, 1e-6*m_bw) : ""
fit_line(name, a, b, la, lb, rows) = (a == a) \
    ? sprintf("fit %-5s T = %g a + %g n b: a = %.6g s, 1/b = %.6g MB/s%s", name.":", la, lb, a, 1e-6/b, link_text) \
    : sprintf("fit %-5s %s", name.":", rows == 0 ? "no rows" : "one size only: nothing to fit")
print fit_line("ps", a_ps, b_ps, La_ps, Lb_ps, n_ps)
print fit_line("ring", a_ring, b_ring, La_ring, Lb_ring, n_ring)
print fit_line("rd", a_rd, b_rd, La_rd, Lb_rd, n_rd)

# ------------------------------------------------------------ the crossover
# Rows sorted by bytes; per size the ring's and rd's medians; the last size
# where ring/rd drops from >= 1 to < 1. Prints "at N LO HI" (the crossover
# and the sizes around it), or else "rd" (rd faster at the largest size),
# "ring" (the ring faster at every size), "none" (no size has both).
xo = system(sprintf("LC_ALL=C sort -t, -k%d,%dn '%s' | awk -F, '", c_bytes, c_bytes, file) \
    .sprintf('%s && $%d > 0 { r[$%d] = $%d } ', sel_ring, c_time, c_bytes, c_time) \
    .sprintf('%s && $%d > 0 { if (!($%d in d)) x[++m] = $%d; d[$%d] = $%d } ', sel_rd, c_time, c_bytes, c_bytes, c_bytes, c_time) \
    .'END { for (i = 1; i <= m; i++) if (x[i] in r) { k++; n[k] = x[i]; q[k] = r[x[i]] / d[x[i]] } ' \
    .'      for (i = 2; i <= k; i++) if (q[i - 1] >= 1 && q[i] < 1) c = i; ' \
    .'      if (c) { f = log(q[c - 1]) / (log(q[c - 1]) - log(q[c])); ' \
    .'               printf "at %.6g %.0f %.0f\n", exp(log(n[c - 1]) + f * (log(n[c]) - log(n[c - 1]))), n[c - 1], n[c] } ' \
    .'      else if (k == 0) print "none"; else if (q[k] >= 1) print "rd"; else print "ring" }' ."'")
xo_kind = word(xo, 1)
n_x = xo_kind eq "at" ? real(word(xo, 2)) : NaN
kib(n) = n < 1048576 ? sprintf("%.0f KiB", n/1024) : sprintf("%.3g MiB", n/1048576)
if (xo_kind eq "at") {
    print sprintf("crossover measured (ring vs rd, K = %d): %.0f bytes (%.1f KiB), between %s and %s: rd faster below, the ring above", \
                  m_k, n_x, n_x/1024, word(xo, 3), word(xo, 4))
} else {
    print sprintf("crossover measured (ring vs rd, K = %d): none within the sizes run (%s)", m_k, \
                  xo_kind eq "rd" ? "rd still faster at the largest size" : xo_kind eq "ring" ? "the ring faster at every size" : "no size has both a ring and an rd row")
}
if (nstar == nstar) {
    print sprintf("crossover model: n* = (2(K-1) - s) a / ((s - 2(K-1)/K) b), s = %s = %d: %.0f bytes (%.1f KiB)", \
                  pow2 ? "log2 K" : "floor(log2 K) + 2", rd_steps, nstar, nstar/1024)
} else {
    print sprintf("crossover model: none (K = %d: rd is never slower than the ring in the model, or no model)", m_k)
}

# ------------------------------------------------------------ the picture
set title "Time per step vs message size n: parameter server, ring, recursive doubling".(m_k > 0 ? sprintf(" (K = %d)", m_k) : '') \
    .(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
set xlabel "message size n (bytes)"
set ylabel "time per step (s): median, min-max bars"
set logscale xy
set xtics ("1 KiB" 1024, "4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576, \
           "4 MiB" 4194304, "16 MiB" 16777216, "64 MiB" 67108864, "256 MiB" 268435456, "1 GiB" 1073741824)
set format y "10^{%L}"
# x: half a step of the sweep beyond its ends; y: the measured points, bars
# included, with a factor of 3 to spare on either side.
stats file skip 1 using (column(c_bytes)):(column(c_tmin)) nooutput
x_lo = STATS_min_x / 2; x_hi = STATS_max_x * 2
set xrange [x_lo : x_hi]
y_lo = STATS_min_y / 3
stats file skip 1 using (column(c_tmax)) nooutput
set yrange [y_lo : STATS_max * 3]
# The key below the panel, one column per algorithm (model, fit, measured),
# so that it covers no point and no crossover label, and the flagged
# points' entry a fourth column with its short title (flag_short: with
# the long one gnuplot dropped the columns that did not fit the canvas,
# the parameter server's and the flags').
flag_short = 1
set key below center vertical maxrows 3 Left reverse samplen 2 width -5 height 1 font ",16" nobox noopaque

# The crossovers, where they fall inside the panel: the measured one solid,
# the model's dashed. Their labels at the top, each on the side of its line
# away from the other line, unless it would run off the panel there (fx:
# where n lies across the panel, 0 to 1); on the same side, one above the
# other. Labels sit on white so that no line crosses them.
set style textbox opaque noborder margins 1, 1
fx(n) = log(n / x_lo) / log(x_hi / x_lo)
show_x = n_x == n_x && fx(n_x) > 0 && fx(n_x) < 1
show_s = nstar == nstar && n_rd > 0 && fx(nstar) > 0 && fx(nstar) < 1
pref_right = !show_s || !show_x || n_x >= nstar
x_right = pref_right ? fx(n_x) < 0.72 : fx(n_x) < 0.25
s_right = (!pref_right || !show_x) ? fx(nstar) < 0.85 : fx(nstar) < 0.15
if (show_x) {
    set arrow 1 from n_x, graph 0 to n_x, graph 1 nohead lw 1 dt 1 lc rgb "#555555" back
    set label 1 sprintf("ring = rd, measured: %s", kib(n_x)) at n_x, graph 0.95 tc rgb "#555555" font ",18" boxed front
    if (x_right) { set label 1 left offset 0.6, 0 } else { set label 1 right offset -0.6, 0 }
}
if (show_s) {
    set arrow 2 from nstar, graph 0 to nstar, graph 1 nohead lw 1 dt 2 lc rgb "#555555" back
    set label 2 sprintf("model n* = %s", kib(nstar)) at nstar, graph (show_x && x_right == s_right ? 0.88 : 0.95) \
        tc rgb "#555555" font ",18" boxed front
    if (s_right) { set label 2 left offset 0.6, 0 } else { set label 2 right offset -0.6, 0 }
}

# The fitted a and b against the link's, bottom right (large n, short
# times: no point there).
us(t) = abs(t) < 1e-3 ? sprintf("%.3g us", 1e6*t) : sprintf("%.3g ms", 1e3*t)
link_label = have_model ? sprintf(" (link: %s, %.3g MB/s)", us(m_a), 1e-6*m_bw) : ""
fit_label(name, a, b, rows) = (a == a) ? sprintf("%s fit: a = %s, 1/b = %.3g MB/s%s", name, us(a), 1e-6/b, link_label) \
                                        : rows == 0 ? "" : name." fit: one size only"
set label 3 fit_label("PS", a_ps, b_ps, n_ps) at graph 0.98, 0.17 right tc rgb ps_color font ",20" boxed front
set label 4 fit_label("ring", a_ring, b_ring, n_ring) at graph 0.98, 0.11 right tc rgb ring_color font ",20" boxed front
set label 5 fit_label("rd", a_rd, b_rd, n_rd) at graph 0.98, 0.05 right tc rgb rd_color font ",20" boxed front
nan_unless(ok, v) = ok ? v : NaN
set samples 200
marks = flag_marks("column(c_bytes)", "column(c_time)")
plot \
    curve("ps", n_ps) using 1:2 with lines lw 1.5 lc rgb ps_color title "PS model: 2(a + K n b)", \
    nan_unless(n_ps >= 2, t_ps(x)) with lines dt 2 lc rgb ps_color title "PS fit: a, b fitted", \
    file skip 1 using (is("ps") ? column(c_bytes) : NaN):(column(c_time)):(column(c_tmin)):(column(c_tmax)) \
        with yerrorbars pt 7 ps 2*pscale lc rgb ps_color title "PS measured", \
    curve("ring", n_ring) using 1:2 with lines lw 1.5 lc rgb ring_color title "ring model: 2(K-1)(a + n b/K)", \
    nan_unless(n_ring >= 2, t_ring(x)) with lines dt 2 lc rgb ring_color title "ring fit: a, b fitted", \
    file skip 1 using (is_algo("ring", "ring") ? column(c_bytes) : NaN):(column(c_time)):(column(c_tmin)):(column(c_tmax)) \
        with yerrorbars pt 9 ps 2*pscale lc rgb ring_color title "ring measured", \
    curve("rd", n_rd) using 1:2 with lines lw 1.5 lc rgb rd_color title "rd model: ".s_text." (a + n b)", \
    nan_unless(n_rd >= 2, t_rd(x)) with lines dt 2 lc rgb rd_color title "rd fit: a, b fitted", \
    file skip 1 using (is_algo("ring", "rd") ? column(c_bytes) : NaN):(column(c_time)):(column(c_tmin)):(column(c_tmax)) \
        with yerrorbars pt 13 ps 2*pscale lc rgb rd_color title "rd measured" \
    @marks
