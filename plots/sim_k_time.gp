# sim_k_time.gp -- simulated time per step against K, one panel per
# message size, the parameter server and the ring on the star and on
# fat-tree:4, with bin/model's values (experiments/sim_all.sh, large_k.csv:
# the shared CSV's columns, read by name, plus `platform`).
#   gnuplot -e "dir='plots/'; file='DIR/large_k.csv'; fmt='png'; out='DIR/k_time_sim.png'" plots/sim_k_time.gp
# Every point is SIMULATED (SimGrid, CM02, factors 1): no process ran, so
# no point can be host-bound.
load dir."style.gp"

c_platform = col_of("platform")
if (c_platform == 0) { exit error file.": no column platform in its header (sim_all.sh)" }
bw_Bps = real(system("awk -F, -v c=".c_bw." 'NR == 2 { print $c }' '".file."'"))
lat_s = real(system("awk -F, -v c=".c_lat." 'NR == 2 { print $c }' '".file."'"))
sizes = system("awk -F, -v c=".c_bytes." 'NR > 1 { print $c }' '".file."' | sort -n | uniq | paste -sd' ' -")
nsz = words(sizes)
kmax = system("awk -F, -v c=".c_k." 'NR > 1 && $c > m { m = $c } END { print m }' '".file."'")
sz(b) = b >= 1048576 ? sprintf("%.0f MiB", b / 1048576) : sprintf("%.0f KiB", b / 1024)

# One series per platform, system and size, filtered by awk so that its
# points join in one line.
series(p, s, b) = sprintf("< awk -F, -v pc=%d -v sc=%d -v bc=%d -v p='%s' -v s='%s' -v b='%s' 'NR == 1 || ($pc == p && $sc == s && $bc == b)' '%s'", \
                          c_platform, c_system, c_bytes, p, s, b, file)
# Several panels: a bigger page and smaller fonts (the terminal's settings
# of style.gp, once more; set output after the terminal).
if (nsz > 1 && fmt eq 'png') { set terminal pngcairo size 2400,1500 font "Sans,18" linewidth 2; set output out }
if (nsz > 1 && fmt eq 'svg') { set terminal svg size 2400,1500 font "Sans,18" linewidth 2 dynamic; set output out }
rows = nsz <= 1 ? 1 : nsz <= 3 ? 1 : 2
cols = nsz <= 1 ? 1 : nsz <= 3 ? nsz : int((nsz + 1) / 2)
if (fmt ne "table") { set format y "10^{%L}" }
set logscale xy
set xrange [1.5:kmax * 1.4]
set multiplot layout rows, cols title sprintf("Simulated time per step against K, to K = %s (psring\\_sim, SimGrid)\n{/*0.7 star and fat-tree:4 (4:1 uplinks; where its points lie on the star's, the uplinks are not the bottleneck); %.0f Mbit/s, %.0f us one-way; bin/model circled (the PS's: one pull; the PS simulated pulls per 25 MiB bucket, so at 64 MiB it is below); no process ran: SIMULATED}", \
        kmax, bw_Bps * 8 / 1e6, lat_s * 1e6)
do for [i = 1:nsz] {
    b = word(sizes, i)
    set title "n = ".sz(real(b))
    set xlabel "workers K"
    set ylabel "time per step (s)"
    if (i == 1) { set key top left font ",15" spacing 1 } else { unset key }
    plot series("star", "ps", b) skip 1 using (column(c_k)):(column(c_time)) \
             with linespoints pt 7 ps 1.2*pscale lc rgb ps_color title "PS, star", \
         series("fat-tree:4", "ps", b) skip 1 using (column(c_k)):(column(c_time)) \
             with linespoints pt 5 ps 0.8*pscale dt 2 lc rgb ps2_color title "PS, fat-tree:4", \
         series("star", "ring", b) skip 1 using (column(c_k)):(column(c_time)) \
             with linespoints pt 9 ps 1.2*pscale lc rgb ring_color title "ring, star", \
         series("fat-tree:4", "ring", b) skip 1 using (column(c_k)):(column(c_time)) \
             with linespoints pt 11 ps 0.8*pscale dt 2 lc rgb rd_color title "ring, fat-tree:4", \
         "< awk -F, -v bc=".c_bytes." -v b='".b."' 'NR == 1 || $bc == b' '".file."'" skip 1 \
             using (strcol(c_platform) eq "star" ? column(c_k) : NaN):(column(c_model)) \
             with points pt 6 ps 2.5*pscale lw 2 lc rgb host_color title "bin/model"
}
unset multiplot
