# k_bytes.gp -- plot 2: bytes per step against K, from the byte counters.
#   gnuplot -e "file='results/RUN/k_sweep.csv'; fmt='png'; out='k_bytes.png'" plots/k_bytes.gp
# The server's link carries K n each way; a ring worker's 2(K-1)/K n, which
# tends to 2n whatever K is (the lines: bin/model's bytes_in). Counters
# include frame headers, so measured points sit a hair above the lines.
load dir."style.gp"
if (!exists("sub")) sub = ''

set title "Bytes per step through the busiest link vs K".(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
set xlabel "workers K"
set ylabel "MiB per step"
@k_axis
set offsets graph 0.03, graph 0.03, graph 0.4, 0    # headroom: the key covers no point or line
set yrange [0:*]
MiB = 1048576.0

# In and out carry the same bytes (K n each way at the server), so their
# points would sit on each other: "in" is drawn a little left of K (filled),
# "out" a little right (hollow, drawn last, so nothing covers it). The
# lines first, then the points on top of them.
dk = 0.15
# No flag marks here (k_time.gp has them): a busy or host-bound row's
# time is the machine's, but its byte counters are exact whatever set the
# pace, so a mark on a byte count would say nothing.
plot sorted(file) skip 1 using (is("ps") ? column(c_k) : NaN):(is("ps") ? model_bytes("ps", "bytes_in", column(c_k), column(c_bytes))/MiB : NaN) \
        with lines lc rgb ps_color dt 2 title "K n", \
     "" skip 1 using (is("ring") ? column(c_k) : NaN):(is("ring") ? model_bytes("ring", "bytes_in", column(c_k), column(c_bytes))/MiB : NaN) \
        with lines lc rgb ring_color dt 2 title "2(K-1)/K n", \
     "" skip 1 using (is("ps") ? column(c_k) - dk : NaN):(column(c_in)/MiB) with points pt 7 ps 2.5*pscale lc rgb ps_color title "PS server in, measured (left of K)", \
     "" skip 1 using (is("ring") ? column(c_k) - dk : NaN):(column(c_in)/MiB) with points pt 9 ps 2.5*pscale lc rgb ring_color title "ring worker in, measured (left of K)", \
     "" skip 1 using (is("ps") ? column(c_k) + dk : NaN):(column(c_out)/MiB) with points pt 6 ps 2.5*pscale lw 2 lc rgb ps_color title "PS server out, measured (right of K)", \
     "" skip 1 using (is("ring") ? column(c_k) + dk : NaN):(column(c_out)/MiB) with points pt 8 ps 2.5*pscale lw 2 lc rgb ring_color title "ring worker out, measured (right of K)"
