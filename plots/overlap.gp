# overlap.gp -- the ring's buckets and overlap (issue 6), two pictures.
#   gnuplot -e "dir='plots/'; data='results/overlap'; fmt='png'" plots/overlap.gp
# Input: the folder `data` with the two whitespace tables of
# experiments/bench_overlap.sh ('#' lines are comments):
#   buckets.dat   bucket_bytes nbuckets backward_s comm_s step_overlap_s
#                 step_no_overlap_s hidden
#   overlap.dat   backward_set_s backward_s comm_s step_overlap_s
#                 step_no_overlap_s max_model_s sum_model_s
# Output: data/buckets.FMT (step time against the bucket size, with and
# without overlap, the all-reduce time and max(backward, comm), each point
# labelled with the share of communication hidden) and data/overlap.FMT
# (step time against the EMULATED backward time, with and without overlap,
# against max(backward, comm) and backward + comm). fmt 'dumb' draws both
# on the terminal. Optional: `sub` (a subtitle), `bwd` and `bucket` (the
# fixed backward time and bucket size, for the titles).
load dir."style.gp"
if (!exists("sub")) sub = ''
if (!exists("bwd")) bwd = ''
if (!exists("bucket")) bucket = ''
if (data[strlen(data):] ne '/') data = data.'/'
ext = (fmt eq 'svg') ? 'svg' : 'png'

set datafile separator whitespace
set datafile commentschars "#"
unset logscale
on_color = ring_color; off_color = ps_color; model_color = "#555555"; comm_color = "#2ca02c"

# size(b): 262144 -> "256 KiB"; a bucket over 64 MiB is "one bucket".
size(b) = b >= 67108864 ? "one bucket" : (b >= 1048576 ? sprintf("%g MiB", b / 1048576.0) : sprintf("%g KiB", b / 1024.0))
nb(n) = sprintf("%d bucket%s", n, n == 1 ? "" : "s")

# ------------------------------------------------------------ buckets
if (fmt ne 'dumb') set output data.'buckets.'.ext
set title "Step time vs bucket size (ring, overlap on and off)".(bwd ne '' ? ", backward ".bwd : '') \
    .(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
set xlabel "bucket size (--bucket-size; buckets hold whole layers, 8 layers of 1 MiB)" offset 0, -1.2
set bmargin 6.5
set ylabel "time per step (ms)"
set yrange [0:*]
set offsets 0.4, 0.4, graph 0.12, 0
set xrange [*:*]
set key bottom right box opaque
plot data.'buckets.dat' using 0:(1e3*$6):xtic(size($1)."\n".nb($2)) with linespoints pt 5 ps 2.5 lc rgb off_color \
        title "overlap off: backward, then all-reduces", \
     "" using 0:(1e3*$5) with linespoints pt 7 ps 2.5 lc rgb on_color title "overlap on", \
     "" using 0:(1e3*($3 > $4 ? $3 : $4)) with lines dt 2 lw 2 lc rgb model_color title "max(backward, comm): perfect overlap", \
     "" using 0:(1e3*$4) with linespoints pt 9 ps 2 dt 3 lc rgb comm_color title "all-reduces (comm), overlap off", \
     "" using 0:(1e3*$5):(sprintf("%.0f%% hidden", 100*$7)) with labels offset 0, 1.4 font ",18" tc rgb on_color notitle

# ------------------------------------------------------------ overlap
if (fmt ne 'dumb') set output data.'overlap.'.ext
set title "Step time vs EMULATED backward time (ring".(bucket ne '' ? ", ".bucket." buckets" : '').")" \
    .(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
unset bmargin
set xlabel "EMULATED backward time per step (ms)" offset 0, 0
set ylabel "time per step (ms)"
set xrange [0:*]
set yrange [0:*]
set offsets graph 0.03, graph 0.03, graph 0.05, 0
set xtics autofreq
set key top left box opaque
plot data.'overlap.dat' using (1e3*$1):(1e3*$5) with points pt 5 ps 2.5 lc rgb off_color title "overlap off, measured", \
     "" using (1e3*$1):(1e3*$7) with lines dt 2 lc rgb off_color title "backward + comm (no overlap)", \
     "" using (1e3*$1):(1e3*$4) with points pt 7 ps 2.5 lc rgb on_color title "overlap on, measured", \
     "" using (1e3*$1):(1e3*$6) with lines dt 2 lc rgb on_color title "max(backward, comm) (perfect overlap)", \
     "" using (1e3*$1):(1e3*$3) with linespoints pt 9 ps 2 dt 3 lc rgb comm_color title "all-reduces (comm), overlap off"
