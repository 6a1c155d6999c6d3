# zero.gp -- the ZeRO section's plot (experiments/lab_zero.sh): per rank,
# against K, for each stage (--zero 0: the all-reduce, DDP; 1; 2; 3):
#   left   bytes sent per step by rank 0, over the all-reduce's (1 for
#          stages 1 and 2 exactly; about 1.5 for stage 3);
#   middle memory rank 0 keeps between steps (parameters + gradient +
#          Adam's state, as accounted), over DDP's;
#   right  the optimizer state as measured in the RSS (RSS(adam) -
#          RSS(sgd), --zero 1, the synthetic workload of zero_rss.csv),
#          MiB, against 2 n e / K.
#   gnuplot -e "zfile='zero.csv'; rfile='zero_rss.csv'; dir='plots/'; fmt='png'; out='zero.png'" plots/zero.gp
# The CSVs are lab_zero.sh's own (columns named in their header line); the
# shared CSV's columns are not needed here.
load dir."style.gp"

zhead = system("head -n 1 '".zfile."' | tr ',' ' '")
zcol(name) = sum [i=1:words(zhead)] (word(zhead, i) eq name ? i : 0)
rhead = system("head -n 1 '".rfile."' | tr ',' ' '")
rcol(name) = sum [i=1:words(rhead)] (word(rhead, i) eq name ? i : 0)
z_k = zcol("K"); z_stage = zcol("stage"); z_ratio = zcol("ratio_to_ddp"); z_total = zcol("total_B")
r_k = rcol("K"); r_diff = rcol("diff_B"); r_pred = rcol("predicted_B")
if (z_k * z_stage * z_ratio * z_total * r_k * r_diff * r_pred == 0) { exit error "zero.gp: a column is missing" }
MiB = 1048576.0
stage_color(s) = s == 0 ? ring_color : s == 1 ? rd_color : s == 2 ? "#2ca02c" : ps_color
at(s) = column(z_stage) == s ? column(z_k) : NaN

# zero.csv has four rows per K (stages 0..3): `every 4::S` is stage S.
set multiplot layout 1,3 title "ZeRO stages on the ring, per rank, against K"
set xlabel "ranks K"
set xtics 1
set offsets graph 0.08, graph 0.08, graph 0.05, 0
set key bottom left font ",16"
set ylabel "sent per step / the all-reduce's"
set yrange [0:2]
set title "bytes sent (mlp f64)" font ",20"
plot zfile skip 1 every 4::0 using (column(z_k)):(column(z_ratio)) with linespoints pt 7 ps 2 lc rgb stage_color(0) title "DDP", \
     "" skip 1 every 4::1 using (column(z_k)):(column(z_ratio)) with linespoints pt 5 ps 2.5 lc rgb stage_color(1) title "ZeRO-1", \
     "" skip 1 every 4::2 using (column(z_k)):(column(z_ratio)) with linespoints pt 9 ps 2 lc rgb stage_color(2) dt 2 title "ZeRO-2", \
     "" skip 1 every 4::3 using (column(z_k)):(column(z_ratio)) with linespoints pt 11 ps 2 lc rgb stage_color(3) title "ZeRO-3"
set ylabel "kept / DDP's"
set yrange [0:1.1]
set title "memory kept (mlp f64 Adam)" font ",20"
ddp_total = real(system("awk -F, 'NR == 2 { print $".z_total." }' '".zfile."'"))
plot zfile skip 1 every 4::0 using (column(z_k)):(column(z_total)/ddp_total) with linespoints pt 7 ps 2 lc rgb stage_color(0) title "DDP", \
     "" skip 1 every 4::1 using (column(z_k)):(column(z_total)/ddp_total) with linespoints pt 5 ps 2 lc rgb stage_color(1) title "ZeRO-1", \
     "" skip 1 every 4::2 using (column(z_k)):(column(z_total)/ddp_total) with linespoints pt 9 ps 2 lc rgb stage_color(2) title "ZeRO-2", \
     "" skip 1 every 4::3 using (column(z_k)):(column(z_total)/ddp_total) with linespoints pt 11 ps 2 lc rgb stage_color(3) title "ZeRO-3"
set ylabel "MiB"
set yrange [0:*]
set offsets graph 0.08, graph 0.08, graph 0.25, 0
set key bottom left font ",14" reverse Left samplen 2
set title "Adam state in the RSS (ZeRO-1)" font ",20"
plot rfile skip 1 using (column(r_k)):(column(r_diff)/MiB) with points pt 13 ps 3 lc rgb host_color title "RSS(adam) - RSS(sgd)", \
     "" skip 1 using (column(r_k)):(column(r_pred)/MiB) with lines dt 2 lc rgb host_color title "2 n e / K"
unset multiplot
