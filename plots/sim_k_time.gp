# sim_k_time.gp -- simulated time per step against K, 4 MiB, the parameter
# server and the ring on the star and on fat-tree:4, with bin/model's
# values (experiments/sim_all.sh, large_k.csv: the shared CSV's columns,
# read by name, plus `platform`).
#   gnuplot -e "dir='plots/'; file='DIR/large_k.csv'; fmt='png'; out='DIR/k_time_sim.png'" plots/sim_k_time.gp
# Every point is SIMULATED (SimGrid, CM02, factors 1): no process ran, so
# no point can be host-bound.
load dir."style.gp"

c_platform = col_of("platform")
if (c_platform == 0) { exit error file.": no column platform in its header (sim_all.sh)" }
bw_Bps = real(system("awk -F, -v c=".c_bw." 'NR == 2 { print $c }' '".file."'"))
lat_s = real(system("awk -F, -v c=".c_lat." 'NR == 2 { print $c }' '".file."'"))
n_B = real(system("awk -F, -v c=".c_bytes." 'NR == 2 { print $c }' '".file."'"))

set title sprintf("Simulated time per step against K (psring\\_sim, SimGrid)\n{/*0.7 n = %.0f MiB, star and fat-tree:4 (4:1 uplinks; its points lie on the star's), %.0f Mbit/s, %.0f us one-way; bin/model circled}", \
                  n_B / 1048576, bw_Bps * 8 / 1e6, lat_s * 1e6)
set logscale xy
set xlabel "workers K"
set ylabel "time per step (s)"
if (fmt ne "table") { set format y "10^{%L}" }
set key top left
# One series per platform and system, filtered by awk so that its points
# join in one line.
series(p, s) = sprintf("< awk -F, -v pc=%d -v sc=%d -v p='%s' -v s='%s' 'NR == 1 || ($pc == p && $sc == s)' '%s'", \
                       c_platform, c_system, p, s, file)
plot series("star", "ps") skip 1 using (column(c_k)):(column(c_time)) \
         with linespoints pt 7 ps 2*pscale lc rgb ps_color title "PS, star", \
     series("fat-tree:4", "ps") skip 1 using (column(c_k)):(column(c_time)) \
         with linespoints pt 5 ps 1.2*pscale dt 2 lc rgb ps2_color title "PS, fat-tree:4", \
     series("star", "ring") skip 1 using (column(c_k)):(column(c_time)) \
         with linespoints pt 9 ps 2*pscale lc rgb ring_color title "ring, star", \
     series("fat-tree:4", "ring") skip 1 using (column(c_k)):(column(c_time)) \
         with linespoints pt 11 ps 1.2*pscale dt 2 lc rgb rd_color title "ring, fat-tree:4", \
     file skip 1 using (strcol(c_platform) eq "star" ? column(c_k) : NaN):(column(c_model)) \
         with points pt 6 ps 4*pscale lw 2 lc rgb host_color title "bin/model"
