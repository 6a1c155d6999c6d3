# ring_phases.gp -- the ring's chunk schedule as it ran (docs/lab.md 21):
# ranks down, time across, each step of each rank a bar from its start to
# its end, labelled with the chunk it SENT (big) and the chunk it
# received (small, "in"), the reduce-scatter's bars blue, the all-gather's
# orange; above them each step's name. blank=1 draws the same grid with
# no chunk numbers: the sheet students fill in first.
#   gnuplot -e "dir='plots/'; data='results/phases/ph'; fmt='png'; out='ring_phases.png'" plots/ring_phases.gp
#   gnuplot -e "dir='plots/'; data='results/phases/ph'; fmt='png'; out='ring_phases_blank.png'; blank=1" plots/ring_phases.gp
# Input: the files data.RANK of ring_worker --bench --phases DATA
# (common/coll/ring_steps.h: rank phase step send recv bytes t_begin_s
# t_end_s, whitespace under '#' lines), one per rank, on one clock (the
# ranks of one machine). Optional: `sub` (a subtitle: the run's K, size
# and link). The time axis starts at the first step's start.
load dir."style.gp"
if (!exists("blank")) blank = 0
if (!exists("sub")) sub = ''
if (!exists("data")) { exit error "ring_phases.gp: give data='PREFIX' (ring_worker --phases PREFIX)" }
src = "< cat '".data."'.[0-9]* 2>/dev/null"
nrows = int(system("cat '".data."'.[0-9]* 2>/dev/null | grep -vc '^#'"))
if (nrows == 0) { exit error "ring_phases.gp: no steps in ".data.".RANK (ring_worker --bench --phases)" }

set datafile separator whitespace
set datafile commentschars "#"
stats src using 7 nooutput
t00 = STATS_min
stats src using 8 nooutput
t_end = (STATS_max - t00) * 1e3
stats src using 1 nooutput
K = int(STATS_max) + 1
stats src using 3 nooutput
nsteps = int(STATS_max) + 1

rs_fill = "#a6cee3"; rs_edge = ring_color
ag_fill = "#fdbf6f"; ag_edge = "#d95f02"
is_rs(x) = strcol(2) eq "reduce-scatter"
ms(t) = (t - t00) * 1e3
h = 0.32                        # half a bar's height, in ranks

set title "The ring's chunk schedule, K = ".K.(blank ? ": which chunk does each rank send?" : ", as it ran") \
    .(sub ne '' ? "\n{/*0.7 ".sub."}" : '') enhanced
set xlabel "time since the first step began (ms)\n{/*0.75 ".(blank ? "in each bar write the chunk the rank SENDS to its right neighbour, and the chunk it receives from its left (in)" : "in each bar: the chunk the rank SENDS to its right neighbour (big), the chunk it receives from its left (in)")."}" enhanced
set ylabel ""
set yrange [K - 0.4 : -1.1]     # rank 0 at the top; room above it for the step names
set ytics () font ",24"
do for [r = 0:K - 1] { set ytics add (sprintf("rank %d", r) r) }
set xrange [-0.01 * t_end : 1.01 * t_end]
set grid xtics noytics lw 0.5 lc rgb "#dddddd"
set border 3 lw 1.5
set xtics nomirror
set ytics nomirror
set key below center vertical Left reverse font ",20" width 2 samplen 2
set style fill solid 1.0 border
set bmargin 7

# The bars (x, y, xlow, xhigh, ylow, yhigh), one plot per phase for its
# colours; then the chunk numbers, and the step names above rank 0.
mid(a, b) = ms(0.5 * (a + b))
rs_x(a, b) = is_rs(0) ? mid(a, b) : NaN
ag_x(a, b) = is_rs(0) ? NaN : mid(a, b)
num_x(a, b) = blank ? NaN : mid(a, b)
blank_x(a, b) = blank ? mid(a, b) : NaN
head_x(r, a, b) = r == 0 ? mid(a, b) : NaN
# Each chunk's number in a colour of its own, so that a chunk's path
# down the ring (one rank per step) reads as a diagonal.
chunk_rgb(c) = word("0x08306b 0xa50f15 0x006d2c 0x54278f 0x7f2704 0x252525 0x01665e 0x8e0152", int(c) % 8 + 1) + 0
head_t(s) = (is_rs(0) ? "RS " : "AG ").sprintf("%d", s)
rs_bg = blank ? "#ffffff" : rs_fill
ag_bg = blank ? "#ffffff" : ag_fill
plot \
    src using (rs_x($7, $8)):1:(ms($7)):(ms($8)):($1 - h):($1 + h) with boxxyerror \
        lc rgb rs_bg fs solid 1.0 border lc rgb rs_edge \
        title "reduce-scatter: receive a chunk, ADD it in, pass it on", \
    src using (ag_x($7, $8)):1:(ms($7)):(ms($8)):($1 - h):($1 + h) with boxxyerror \
        lc rgb ag_bg fs solid 1.0 border lc rgb ag_edge \
        title "all-gather: receive a finished chunk, COPY it in", \
    src using (num_x($7, $8)):($1 - 0.05):(sprintf("%d", $4)):(chunk_rgb($4)) with labels \
        font "Sans Bold,34" tc rgb variable notitle, \
    src using (num_x($7, $8)):($1 + 0.21):(sprintf("in: %d", $5)) with labels \
        font ",16" tc rgb "#333333" notitle, \
    src using (blank_x($7, $8)):($1 + 0.21):("sends ___   in: ___") with labels \
        font ",16" tc rgb "#999999" noenhanced notitle, \
    src using (head_x($1, $7, $8)):(-0.7):(head_t($3)) with labels \
        font ",20" tc rgb "#333333" notitle
