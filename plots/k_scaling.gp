# k_scaling.gp -- plot 4: throughput (examples/s) and scaling efficiency
# against K, both systems, from the K sweep's measured combine times.
#   gnuplot -e "dir='plots/'; file='results/RUN/k_sweep.csv'; fmt='png'; out='k_scaling.png'" plots/k_scaling.gp
# The sweep's synthetic workload has no compute to speak of, so the
# compute side is ASSUMED, and says so on the plot: every worker processes
# b examples per step in tc seconds (weak scaling: the global batch grows
# with K), then communicates for the measured time_s. Then
#   throughput(K) = K b / (tc + time_s)
#   efficiency(K) = throughput(K) / (K b / tc) = tc / (tc + time_s)
# Variables: tc (default 0.5 s), b (default 256 examples).
load dir."style.gp"
if (!exists("sub")) sub = ''
if (!exists("tc")) tc = 0.5
if (!exists("b")) b = 256

# The title in three lines (the subtitle alone is wider than the canvas
# at the title's size): what is measured, the ASSUMED compute, the run.
set multiplot layout 2,1 title "Scaling with K: communication measured, compute ASSUMED\n{/*0.7 ".\
    sprintf("compute: %g examples in %g s per worker per step (assumed)", b, tc)."}".(sub ne '' ? "\n{/*0.7 ".sub."}" : '') font ",24"
# K linear (style.gp): perfect scaling K b/tc is then a straight line.
@k_axis
# One left margin for both panels, so that their K axes line up.
set lmargin 12
# The key in headroom above the curves (offsets: 35% of the panel on
# top), so it covers no point and no line; the lower panel has the same
# series, colours and marks, and no key of its own.
set key top left font ",18"
set offsets graph 0.03, graph 0.03, graph 0.35, 0
set ylabel "examples / s"
marks = flag_marks("column(c_k)", "column(c_k)*b/(tc + column(c_time))")
set yrange [0:*]
set format x ""
plot sorted(file) skip 1 using (is("ps") ? column(c_k) : NaN):(column(c_k)*b/(tc + column(c_time))) with linespoints pt 7 ps 2*pscale lc rgb ps_color title "parameter server", \
     "" skip 1 using (is("ring") ? column(c_k) : NaN):(column(c_k)*b/(tc + column(c_time))) with linespoints pt 9 ps 2*pscale lc rgb ring_color title "ring", \
     "" skip 1 using (is("ps") ? column(c_k) : NaN):(column(c_k)*b/tc) with lines dt 3 lc rgb "#555555" title "perfect scaling (no communication)" \
     @marks
set format x "%g"
set xlabel "workers K"
set ylabel "scaling efficiency"
set yrange [0:1.05]
set offsets graph 0.03, graph 0.03, 0, 0
unset key
# Why the PS starts below 1: at K = 1 its one worker still pushes n to
# the server and pulls the weights back, 2(a + n/bw) a step, while a ring
# of one moves nothing (no ring point at K = 1). Said on the panel, at
# the right between the two lines: the ring keeps near its K = 2
# efficiency while the PS falls away below it, so that band stays empty
# (low left, the PS line ran through it from K = 8 on).
n_ps1 = int(system(sprintf("awk -F, -v s=%d -v k=%d 'NR > 1 && $s == \"ps\" && $k == 1 { n++ } END { print n + 0 }' '%s'", c_system, c_k, file)))
if (n_ps1 > 0) {
    set label 9 "PS below 1 at K = 1: its one worker still pushes n\nto the server and pulls it back, 2(a + n/bw) a step;\na ring of one moves nothing (no ring point at K = 1)" \
        at graph 0.98, graph 0.55 right font ",15" tc rgb ps_color boxed front
    set style textbox opaque noborder margins 1, 1
}
marks = flag_marks("column(c_k)", "tc/(tc + column(c_time))")
plot sorted(file) skip 1 using (is("ps") ? column(c_k) : NaN):(tc/(tc + column(c_time))) with linespoints pt 7 ps 2*pscale lc rgb ps_color title "parameter server", \
     "" skip 1 using (is("ring") ? column(c_k) : NaN):(tc/(tc + column(c_time))) with linespoints pt 9 ps 2*pscale lc rgb ring_color title "ring" \
     @marks
unset label 9
unset multiplot
