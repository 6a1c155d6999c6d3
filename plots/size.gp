# size.gp -- plot 3: time against message size at a fixed K, log-log, with
# the alpha-beta line T(n) = a + n b fitted to each system by gnuplot's fit.
#   gnuplot -e "file='results/RUN/size_sweep.csv'; fmt='png'; out='size.png'" plots/size.gp
# The fit weights each point by 5% of its own time (relative error), so the
# small, latency-bound sizes count as much as the large ones. Where a = n b
# the two regimes meet: below, latency dominates; above, bandwidth.
load dir."style.gp"
if (!exists("sub")) sub = ''
set fit quiet
set fit logfile '/dev/null'

t_ps(x) = a_ps + x*b_ps
t_ring(x) = a_ring + x*b_ring
a_ps = 1e-3; b_ps = 1e-8; a_ring = 1e-3; b_ring = 1e-8
fit t_ps(x) sorted(file) skip 1 using (is("ps") ? column(c_bytes) : NaN):(column(c_time)):(0.05*column(c_time)) yerror via a_ps, b_ps
fit t_ring(x) sorted(file) skip 1 using (is("ring") ? column(c_bytes) : NaN):(column(c_time)):(0.05*column(c_time)) yerror via a_ring, b_ring
n_ps = a_ps/b_ps; n_ring = a_ring/b_ring
set print "-"
print sprintf("fit ps:   a = %.4g s, b = %.4g s/B (1/b = %.4g MB/s), a = n b at n = %.4g B", a_ps, b_ps, 1e-6/b_ps, n_ps)
print sprintf("fit ring: a = %.4g s, b = %.4g s/B (1/b = %.4g MB/s), a = n b at n = %.4g B", a_ring, b_ring, 1e-6/b_ring, n_ring)

set title "Time per step vs message size n (fixed K)".(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
set xlabel "message size n (bytes)"
set ylabel "time per step (s)"
set logscale xy
set xtics ("1 KiB" 1024, "16 KiB" 16384, "256 KiB" 262144, "4 MiB" 4194304, "64 MiB" 67108864, "1 GiB" 1073741824)
set format y "10^{%L}"
set key top left
set label 1 sprintf("PS fit: a = %.3g ms, 1/b = %.3g MB/s", 1e3*a_ps, 1e-6/b_ps) at graph 0.35, 0.12 tc rgb ps_color
set label 2 sprintf("ring fit: a = %.3g ms, 1/b = %.3g MB/s", 1e3*a_ring, 1e-6/b_ring) at graph 0.35, 0.05 tc rgb ring_color
set arrow 1 from n_ring, graph 0 to n_ring, graph 1 nohead dt 3 lc rgb ring_color
set label 3 "ring: latency = bandwidth" at n_ring, graph 0.95 offset 0.5,0 tc rgb ring_color font ",18"

plot sorted(file) skip 1 using (is("ps") ? column(c_bytes) : NaN):(column(c_time)):(column(c_tmin)):(column(c_tmax)) with yerrorbars pt 7 ps 2 lc rgb ps_color title "PS, measured", \
     t_ps(x) with lines lc rgb ps_color dt 2 title "PS: a + n b (fit)", \
     sorted(file) skip 1 using (is("ring") ? column(c_bytes) : NaN):(column(c_time)):(column(c_tmin)):(column(c_tmax)) with yerrorbars pt 9 ps 2 lc rgb ring_color title "ring, measured", \
     t_ring(x) with lines lc rgb ring_color dt 2 title "ring: a + n b (fit)"
