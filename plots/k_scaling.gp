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

set multiplot layout 2,1 title "Scaling with K: communication measured, compute ASSUMED\n{/*0.7 ".sprintf("compute: %g examples in %g s per worker per step (assumed)", b, tc).(sub ne '' ? "; ".sub : '')."}" font ",24"
set logscale x 2
set xtics (1, 2, 4, 8, 16, 32, 64)
set offsets graph 0.05, graph 0.05, 0, 0
set key top left font ",18"
set ylabel "examples / s"
marks = flag_marks("column(c_k)", "column(c_k)*b/(tc + column(c_time))")
set yrange [0:*]
set format x ""
plot sorted(file) skip 1 using (is("ps") ? column(c_k) : NaN):(column(c_k)*b/(tc + column(c_time))) with linespoints pt 7 ps 2 lc rgb ps_color title "parameter server", \
     "" skip 1 using (is("ring") ? column(c_k) : NaN):(column(c_k)*b/(tc + column(c_time))) with linespoints pt 9 ps 2 lc rgb ring_color title "ring", \
     "" skip 1 using (is("ps") ? column(c_k) : NaN):(column(c_k)*b/tc) with lines dt 3 lc rgb "#555555" title "perfect scaling (no communication)" \
     @marks
set format x "%g"
set xlabel "workers K"
set ylabel "scaling efficiency"
set yrange [0:1.05]
set key bottom left
marks = flag_marks("column(c_k)", "tc/(tc + column(c_time))")
plot sorted(file) skip 1 using (is("ps") ? column(c_k) : NaN):(tc/(tc + column(c_time))) with linespoints pt 7 ps 2 lc rgb ps_color title "parameter server", \
     "" skip 1 using (is("ring") ? column(c_k) : NaN):(tc/(tc + column(c_time))) with linespoints pt 9 ps 2 lc rgb ring_color title "ring" \
     @marks
unset multiplot
