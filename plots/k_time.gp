# k_time.gp -- plot 1: time per step against the worker count K.
#   gnuplot -e "file='results/RUN/k_sweep.csv'; fmt='png'; out='k_time.png'" plots/k_time.gp
# Points: measured medians, bars from the fastest to the slowest step.
# Lines: the alpha-beta model (common/measure/model.h) for the same n, rate and
# latency: the CSV's model_s (psr_merge) and bin/model's PS ingress. A
# ringed point is host-bound: the CPU, not the emulated link, set its pace,
# so it says nothing about the network; the marker and its key entry say
# why (style.gp's flag_marks: cpu, busy, or no reason given). A flagged
# PS row is marked twice: its combine point and its ingress point.
load dir."style.gp"
if (!exists("sub")) sub = ''

set title "Time per step vs workers K".(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
set xlabel "workers K"
set ylabel "time per step (ms)"
@k_axis
set offsets graph 0.03, graph 0.03, graph 0.4, 0    # headroom: the key covers no point or line
set yrange [0:*]

# A flagged row is boxed on every point it draws: the PS's combine and its
# server's ingress (the same run).
marks = flag_marks("column(c_k)", "1e3*column(c_time)").flag_marks_more("column(c_k)", "is('ps') ? 1e3*column(c_ingress) : NaN")
plot sorted(file) skip 1 using (is("ps") ? column(c_k) : NaN):(1e3*column(c_time)):(1e3*column(c_tmin)):(1e3*column(c_tmax)) \
        with yerrorbars pt 7 ps 2*pscale lc rgb ps_color title "PS combine step (push+pull), measured", \
     "" skip 1 using (is("ps") ? column(c_k) : NaN):(1e3*column(c_model)) with lines lc rgb ps_color dt 2 title "PS step model: 2(a + K n/bw)", \
     "" skip 1 using (is("ps") ? column(c_k) : NaN):(1e3*column(c_ingress)) with points pt 5 ps 2*pscale lc rgb ps2_color title "PS server ingress, measured", \
     "" skip 1 using (is("ps") ? column(c_k) : NaN) \
        :(is("ps") && column(c_bw) > 0 ? 1e3*model_at("ps", "ingress", column(c_k), column(c_bytes), column(c_bw), column(c_lat)) : NaN) \
        with lines lc rgb ps2_color dt 3 title "PS ingress model: a + K n/bw", \
     "" skip 1 using (is("ring") ? column(c_k) : NaN):(1e3*column(c_time)):(1e3*column(c_tmin)):(1e3*column(c_tmax)) \
        with yerrorbars pt 9 ps 2*pscale lc rgb ring_color title "ring all-reduce, measured", \
     "" skip 1 using (is("ring") ? column(c_k) : NaN):(1e3*column(c_model)) with lines lc rgb ring_color dt 2 title "ring model: 2(K-1)a + 2(K-1)/K n/bw" \
     @marks
