# overlap.gp -- gradient buckets and overlap (issue 6), two pictures, a
# panel per system (and per K).
#   gnuplot -e "dir='plots/'; data='results/overlap'; fmt='png'; systems='ring ps'; ks='2 4'" plots/overlap.gp
# Input: the folder `data` with the whitespace tables of
# experiments/bench_overlap.sh ('#' lines are comments):
#   buckets_SYS.dat    bucket_bytes nbuckets backward_s comm_s pull_s
#                      step_overlap_s step_no_overlap_s best_s hidden
#   overlap_SYS_kK.dat backward_set_s backward_s comm_s pull_s
#                      step_overlap_s step_no_overlap_s max_model_s
#                      sum_model_s best_s
# Output: data/buckets.FMT (step time against the bucket size, with and
# without overlap, the communication time and the best overlapped step,
# each point labelled with the share of communication hidden; one panel
# per system) and data/overlap.FMT (step time against the EMULATED
# backward time, with and without overlap, against max(backward, comm),
# backward + comm and the system's best; one panel per system and K).
# Optional: `sub_bk` and `sub_ov` (a subtitle for each picture), `bwd`
# (the bucket sweep's backward time), `bucket` (the overlap sweep's bucket
# size).
load dir."style.gp"
if (!exists("sub_bk")) sub_bk = ''
if (!exists("sub_ov")) sub_ov = ''
if (!exists("bwd")) bwd = ''
if (!exists("bucket")) bucket = ''
if (!exists("systems")) systems = 'ring ps'
if (!exists("ks")) ks = '2 4'
if (data[strlen(data):] ne '/') data = data.'/'
ext = (fmt eq 'svg') ? 'svg' : 'png'
ns = words(systems); nk = words(ks)

set datafile separator whitespace
set datafile commentschars "#"
unset logscale
on_color = ring_color; off_color = ps_color; model_color = "#555555"; comm_color = "#2ca02c"
best_color = "#9467bd"

# size(b): 1048576 -> "1 MiB"; a bucket of 1 GiB or more is "one bucket".
size(b) = b >= 1073741824 ? "one bucket" : (b >= 1048576 ? sprintf("%g MiB", b / 1048576.0) : sprintf("%g KiB", b / 1024.0))
nb(n) = sprintf("%d bucket%s", n, n == 1 ? "" : "s")
name(s) = s eq 'ps' ? 'parameter server' : 'ring'
comm_name(s) = s eq 'ps' ? 'server ingress + egress' : 'all-reduces'
best_name(s) = s eq 'ps' ? 'max(backward, ingress) + egress: best (the pull waits)' : 'max(backward, comm): perfect overlap'

# ------------------------------------------------------------ buckets
if (fmt ne 'dumb') {
    if (ext eq 'png') { set terminal pngcairo size 1100*ns, 1000 font "Sans,20" linewidth 3 enhanced }
    else { set terminal svg size 1100*ns, 1000 font "Sans,20" linewidth 3 enhanced background rgb "white" }
    set output data.'buckets.'.ext
}
set multiplot layout 1, ns title "Step time vs bucket size, overlap on and off".(bwd ne '' ? ", EMULATED backward ".bwd : '') \
    .(sub_bk ne '' ? "\n{/*0.7 ".sub_bk."}" : '')
set xlabel "bucket size (--bucket-size; whole layers)" offset 0, -0.5
set bmargin 11
set ylabel "time per step (ms)"
set yrange [0:*]
set offsets 0.4, 0.4, graph 0.15, 0
set key below center box opaque font ",16" maxrows 2 width -4
do for [i = 1:ns] {
    s = word(systems, i)
    f = data.'buckets_'.s.'.dat'
    set title name(s)
    plot f using 0:(1e3*$7):xtic(size($1)."\n".nb($2)) with linespoints pt 5 ps 2.5 lc rgb off_color \
            title "overlap off: backward, then ".comm_name(s), \
         "" using 0:(1e3*$6) with linespoints pt 7 ps 2.5 lc rgb on_color title "overlap on", \
         "" using 0:(1e3*$8) with lines dt 2 lw 2 lc rgb model_color title best_name(s), \
         "" using 0:(1e3*$4) with linespoints pt 9 ps 2 dt 3 lc rgb comm_color title comm_name(s).", overlap off", \
         "" using 0:(1e3*$7):(sprintf("%.0f%% hidden", abs($9) < 0.005 ? 0 : 100*$9)) with labels offset 0, 1.4 font ",16" tc rgb on_color notitle
}
unset multiplot

# ------------------------------------------------------------ overlap
if (fmt ne 'dumb') {
    if (ext eq 'png') { set terminal pngcairo size 1000*nk, 900*ns font "Sans,20" linewidth 3 enhanced }
    else { set terminal svg size 1000*nk, 900*ns font "Sans,20" linewidth 3 enhanced background rgb "white" }
    set output data.'overlap.'.ext
}
set multiplot layout ns, nk title "Step time vs EMULATED backward time".(bucket ne '' ? " (".bucket." buckets)" : '') \
    .(sub_ov ne '' ? "\n{/*0.7 ".sub_ov."}" : '')
set xlabel "EMULATED backward time per step (ms)" offset 0, 0
set bmargin 9
set ylabel "time per step (ms)"
set xrange [0:*]
set yrange [0:*]
set offsets graph 0.03, graph 0.03, graph 0.05, 0
unset xtics
set xtics autofreq
set key below center box opaque font ",14" maxcols 2 width -6
do for [i = 1:ns] {
    do for [j = 1:nk] {
        s = word(systems, i); k = word(ks, j)
        f = data.'overlap_'.s.'_k'.k.'.dat'
        set title name(s).", K = ".k
        plot f using (1e3*$1):(1e3*$6) with points pt 5 ps 2.5 lc rgb off_color title "overlap off, measured", \
             "" using (1e3*$1):(1e3*$8) with lines dt 2 lc rgb off_color title "backward + comm (no overlap)", \
             "" using (1e3*$1):(1e3*$5) with points pt 7 ps 2.5 lc rgb on_color title "overlap on, measured", \
             "" using (1e3*$1):(1e3*$7) with lines dt 2 lc rgb on_color title "max(backward, comm)", \
             "" using (1e3*$1):(s eq 'ps' ? 1e3*$9 : NaN) with lines dt 4 lw 2 lc rgb best_color title (s eq 'ps' ? "max(backward, ingress) + egress" : ""), \
             "" using (1e3*$1):(1e3*$3) with linespoints pt 9 ps 2 dt 3 lc rgb comm_color title comm_name(s).", overlap off"
    }
}
unset multiplot
