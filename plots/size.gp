# size.gp -- plot 3: time per step against message size n at a fixed K,
# log-log, for the three ways to combine gradients the lab compares: the
# parameter server, the ring, and recursive doubling (ring_worker --algo rd,
# rows with system ring, algo rd). For each, on one panel:
#   - the measured medians, with min-max bars;
#   - the algorithm's own model formula with the link's a and b FITTED to
#     its points (dashed), the fitted a and 1/b printed against the link's;
#   - the alpha-beta MODEL (solid), with the link's a (one-way latency,
#     link_latency) and b (1 / link_bw) and the sweep's K, all read from
#     the CSV:
#       PS    2(a + K n b)               push then pull, K n through one link
#       ring  2(K-1) a + 2(K-1)/K n b
#       rd    s (a + n b), s = log2 K; floor(log2 K) + 2 if K is not a
#             power of two (the fold: docs/rd.md)
#     bin/model draws them (--sweep: one call per curve), from the same
#     code that psr_merge writes into every row's model_s
#     (common/measure/model.c);
#   - as vertical lines: where the model's ring starts to beat the PS, and
#     where the ring's latency term equals its bandwidth term (K a bw):
#     exercise 3's; where the ring and rd cross, measured and in the
#     model: exercise 8's. Each label names its exercise.
# This script only draws. The numbers (the fits, the crossovers, the link
# the model is drawn at) are bin/fit's (experiments/fit.c, which says how
# they are found; lab.sh keeps its text as fit.txt): `fit --gnuplot` prints
# them as assignments, loaded below. Set `fitter` to another bin/fit; by
# default the one beside `model`.
#
#   gnuplot -e "dir='plots/'; file='results/RUN/size_sweep.csv'; fmt='png'; out='size.png'" plots/size.gp
#
# Flagged points are ringed (style.gp's flag_marks). An algorithm with
# fewer than two sizes in the CSV gets no fitted line; one with no rows
# draws nothing (an older CSV without rd rows still plots).
load dir."style.gp"
if (!exists("sub")) sub = ''
if (!exists("fitter")) fitter = (strlen(model) > 5 && model[strlen(model) - 4:] eq "model") \
    ? model[1:strlen(model) - 5]."fit" : dir."../bin/fit"

# n_ALGO (rows), La_ALGO, Lb_ALGO, a_ALGO, b_ALGO (the fit: T = La a + Lb
# n b), have_model, m_k, m_bw, m_a, rd_steps, pow2, nstar (the model's
# crossover), n_x (the measured one): NaN where there is none.
load "< '".fitter."' --gnuplot '".file."'"
t_ps(x) = La_ps*a_ps + Lb_ps*x*b_ps
t_ring(x) = La_ring*a_ring + Lb_ring*x*b_ring
t_rd(x) = La_rd*a_rd + Lb_rd*x*b_rd
s_text = pow2 ? "log_2 K" : "(floor(log_2 K) + 2)"
# curve(algo): the model's time against n across the panel (x_lo..x_hi,
# set below), 200 sizes evenly spaced in log n, as "bytes,seconds" lines
# from bin/model; an empty source where there is no model to draw.
curve(algo, rows) = (have_model && rows > 0) \
    ? sprintf("< '%s' --algo %s --K %d --bw %.17g --latency %.17g --sweep %.17g,%.17g,200", model, algo, m_k, m_bw, m_a, x_lo, x_hi) \
    : "< true"
# sched_curve ("PS: egress pieces"): the PS as its server's round-robin egress serves it
# (bin/model --quantity sched, model.h's model_ps_sched: what the rows'
# model_s holds; the seeds' formula above stays the headline): under it
# where a weights frame is a piece or two, the same beyond.
sched_curve(rows) = (have_model && rows > 0) \
    ? sprintf("< '%s' --algo ps --quantity sched --K %d --bw %.17g --latency %.17g --sweep %.17g,%.17g,200", model, m_k, m_bw, m_a, x_lo, x_hi) \
    : "< true"
kib(n) = n < 1024 ? sprintf("%.0f bytes", n) : n < 1048576 ? sprintf("%.3g KiB", n/1024) : sprintf("%.3g MiB", n/1048576)

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
y_hi = STATS_max * 3
set yrange [y_lo : y_hi]
# The key below the panel, one column per algorithm (model, fit, measured),
# so that it covers no point and no crossover label, and the flagged
# points' entry a fourth column with its short title (flag_short: with
# the long one gnuplot dropped the columns that did not fit the canvas,
# the parameter server's and the flags').
flag_short = 1
set key below center vertical maxrows 3 Left reverse samplen 2 width -5 height 1 font ",16" nobox noopaque

# The crossovers, where they fall inside the panel, as vertical lines
# with their labels at the top: exercise 3's two (the model's n where the
# ring starts to beat the PS, and where the ring's latency term equals its
# bandwidth term, K a bw), then exercise 8's (where the ring and rd
# cross: the model's dashed, the measured one solid), each label naming
# its exercise so that no one reads the ring-rd crossover as the ring-PS
# one. The labels stand one below the other, each on the side of its line
# with room (fx: where n lies across the panel, 0 to 1), on white so
# that no line crosses them.
set style textbox opaque noborder margins 1, 1
fx(n) = log(n / x_lo) / log(x_hi / x_lo)
inside(n) = n == n && fx(n) > 0 && fx(n) < 1
# the model's crossovers of exercise 3, from its formulas (2(a + K n b)
# against 2(K-1) a + 2(K-1)/K n b)
n_pr = (have_model && n_ps > 0 && n_ring > 0 && m_k > 2) ? (2*m_k - 4) * m_a * m_bw / (2*m_k - 2.0*(m_k - 1)/m_k) : NaN
n_kab = (have_model && n_ring > 0 && m_k > 1) ? m_k * m_a * m_bw : NaN
vl_row = 0
vline(i, n, txt, col, d) = sprintf("set arrow %d from %.17g, graph 0 to %.17g, graph 1 nohead lw 1.5 dt %d lc rgb '%s' back; ", i, n, n, d, col) \
    .sprintf("set label %d '%s' at %.17g, graph %g tc rgb '%s' font ',17' boxed front %s", i, txt, n, 0.95 - 0.06 * vl_row, col, \
             fx(n) < 0.6 ? "left offset 0.6, 0" : "right offset -0.6, 0")
if (inside(n_pr)) { eval vline(1, n_pr, sprintf("ring = PS (ex. 3), model: %s", kib(n_pr)), ps_color, 2); vl_row = vl_row + 1 }
# ... and where the ring-PS crossover falls outside the panel (at a slow
# link it lies below the smallest size: 615 bytes at 8 Mbit/s, 1 ms and
# K = 4), its label alone, on the side it lies, so that exercise 3 still
# reads it off the plot.
side(n) = fx(n) <= 0 ? "left" : "right"
pr_txt(n) = sprintf("ring = PS (ex. 3), model: %s, %s of the panel: %s at every size drawn", kib(n), side(n), \
                    fx(n) <= 0 ? "the ring wins" : "the PS wins")
if (n_pr == n_pr && !inside(n_pr)) { \
    eval sprintf("set label 1 '%s' at graph %g, %g %s tc rgb '%s' font ',17' boxed front", pr_txt(n_pr), \
                 fx(n_pr) <= 0 ? 0.01 : 0.99, 0.95 - 0.06 * vl_row, side(n_pr), ps_color); vl_row = vl_row + 1 }
if (inside(n_kab)) { eval vline(2, n_kab, sprintf("ring: latency = bandwidth term, K a bw (ex. 3): %s", kib(n_kab)), ring_color, 2); vl_row = vl_row + 1 }
if (inside(nstar) && n_rd > 0) { eval vline(6, nstar, sprintf("ring = rd (ex. 8), model: %s", kib(nstar)), "#555555", 2); vl_row = vl_row + 1 }
if (inside(n_x)) { eval vline(7, n_x, sprintf("ring = rd (ex. 8), measured: %s", kib(n_x)), "#555555", 1); vl_row = vl_row + 1 }
# room above the highest bar for the labels: 6% of the panel a label
vl_f = 0.06 * vl_row + 0.03
vl_top = exp(log(y_hi / 3) + vl_f / (1 - vl_f) * log(y_hi / 3 / y_lo))
if (vl_row > 0 && vl_top > y_hi) { set yrange [y_lo : vl_top] }

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
    nan_unless(a_ps == a_ps, t_ps(x)) with lines dt 2 lc rgb ps_color title "PS fit: a, b fitted", \
    file skip 1 using (is("ps") ? column(c_bytes) : NaN):(column(c_time)):(column(c_tmin)):(column(c_tmax)) \
        with yerrorbars pt 7 ps 2*pscale lc rgb ps_color title "PS measured", \
    curve("ring", n_ring) using 1:2 with lines lw 1.5 lc rgb ring_color title "ring model: 2(K-1)(a + n b/K)", \
    nan_unless(a_ring == a_ring, t_ring(x)) with lines dt 2 lc rgb ring_color title "ring fit: a, b fitted", \
    file skip 1 using (is_algo("ring", "ring") ? column(c_bytes) : NaN):(column(c_time)):(column(c_tmin)):(column(c_tmax)) \
        with yerrorbars pt 9 ps 2*pscale lc rgb ring_color title "ring measured", \
    curve("rd", n_rd) using 1:2 with lines lw 1.5 lc rgb rd_color title "rd model: ".s_text." (a + n b)", \
    nan_unless(a_rd == a_rd, t_rd(x)) with lines dt 2 lc rgb rd_color title "rd fit: a, b fitted", \
    file skip 1 using (is_algo("ring", "rd") ? column(c_bytes) : NaN):(column(c_time)):(column(c_tmin)):(column(c_tmax)) \
        with yerrorbars pt 13 ps 2*pscale lc rgb rd_color title "rd measured", \
    sched_curve(n_ps) using 1:2 with lines lw 2 dt 3 lc rgb ps_color title "PS: egress pieces" \
    @marks
