# compression.gp -- the compression section of the lab (experiments/
# lab_compression.sh, issue 30): time to accuracy with a compressed
# gradient on an EMULATED link.
#   panel='time' (default), compression.png: the training loss against
#       wall-clock time, one panel per link rate (the slowest first), one
#       line per system and compressor (the ring solid, the PS dashed), the
#       target loss as a grey dashed line. Where a compressed line reaches
#       the target before its system's "none", compression paid at that
#       rate; the rate where they arrive together is the break-even.
#   panel='step', compression_steps.png: the loss against the step, one
#       panel per system, at the slowest rate (the step's loss does not
#       depend on the link: what a compressor costs in steps).
#   gnuplot -e "dir='plots/'; fmt='png'; out='c.png'; lossdir='results/RUN/loss'; rates='8Mbit 32Mbit'; runs='ring:none ps:sign'; target=0.1" plots/compression.gp
# The loss files are --loss-time-out's ("# step loss wall_s"), named
# SYS_C_RATE.loss with C's ':' and '.' as '_' (lab_compression.sh's tag).
load dir."style.gp"
if (!exists("sub")) sub = ''
if (!exists("panel")) panel = 'time'
if (!exists("target")) target = NaN
if (!exists("lossdir") || !exists("rates") || !exists("runs")) { exit error "compression.gp: needs lossdir, rates and runs" }

rsys(x) = substr(x, 1, strstrt(x, ":") - 1)
rc(x) = substr(x, strstrt(x, ":") + 1, strlen(x))
ctag(c) = system(sprintf("printf %%s '%s' | tr ':.' '__'", c))
lfile(x, r) = sprintf("%s/%s_%s_%s.loss", lossdir, rsys(x), ctag(rc(x)), r)
c_color(c) = c eq "none" ? "#000000" : c eq "fp16" ? ring_color : c eq "bf16" ? "#8c564b" \
           : c[1:3] eq "pow" ? "#2ca02c" : c[1:4] eq "topk" ? rd_color : "#9467bd"
lt_of(x) = rsys(x) eq "ring" ? 1 : 2
set datafile separator whitespace      # the loss files are columns, not the CSV
set ylabel "training loss"
set logscale y
set yrange [*:1]
set key top right
nr = words(rates)
nx = words(runs)
# Wide enough that each panel keeps its tics apart (a panel 600 px), the
# key in a panel of its own at the right (it covered the first's curves).
if (panel eq 'time' && fmt eq 'png') { set terminal pngcairo size 600*nr+500,1000 font "Sans,24" linewidth 3; set output out }
if (panel eq 'time' && fmt eq 'svg') { set terminal svg size 600*nr+500,1000 font "Sans,24" linewidth 3 dynamic; set output out }
# the files that exist (a failed run has none)
have(x, r) = int(system(sprintf("[ -s '%s' ] && echo 1 || echo 0", lfile(x, r))))

if (panel eq 'time') {
    set multiplot title "Loss against wall-clock time: compressors on the EMULATED link".(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
    set xlabel "wall-clock time (s)"
    set xtics autofreq font ",18"
    set mxtics 2
    set autoscale yfixmin               # the losses' own floor, not the decade below
    pw = 600.0 / (600*nr+500)          # one panel's width, a fraction of the figure
    unset key
    do for [j=1:nr] {
        r = word(rates, j)
        set size pw, 0.9
        set origin (j - 1) * pw, 0.0
        set title sprintf("link %s each way", r) font ",20"
        plot for [i=1:nx] (have(word(runs, i), r) ? lfile(word(runs, i), r) : '/dev/null') \
                 using 3:2 with lines lw 2 dt lt_of(word(runs, i)) lc rgb c_color(rc(word(runs, i))) \
                 notitle, \
             target with lines dt 3 lw 2 lc rgb "#888888" notitle
    }
    # the key: the same lines, drawn off-range, in the space at the right
    set size 1 - nr * pw, 0.9
    set origin nr * pw, 0.0
    unset title
    unset border
    unset tics
    unset xlabel
    unset ylabel
    unset logscale y
    set xrange [0:1]
    set yrange [0:1]
    set key center left Left reverse
    plot for [i=1:nx] NaN with lines lw 2 dt lt_of(word(runs, i)) lc rgb c_color(rc(word(runs, i))) \
             title word(runs, i), \
         NaN with lines dt 3 lw 2 lc rgb "#888888" title sprintf("target %g", target)
    unset multiplot
} else {
    systems = ''
    do for [i=1:nx] { s = rsys(word(runs, i)); if (strstrt(systems, s.' ') == 0) { systems = systems.s.' ' } }
    r = word(rates, 1)
    set multiplot layout 1, words(systems) title sprintf("Loss against the step (at %s)", r).(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
    set xlabel "step"
    do for [s=1:words(systems)] {
        sy = word(systems, s)
        set title (sy eq "ring" ? "ring" : "parameter server") font ",20"
        plot for [i=1:nx] (rsys(word(runs, i)) eq sy && have(word(runs, i), r) ? lfile(word(runs, i), r) : '/dev/null') \
                 using 1:2 with lines lw 2 lc rgb c_color(rc(word(runs, i))) \
                 title (rsys(word(runs, i)) eq sy ? rc(word(runs, i)) : ''), \
             target with lines dt 3 lw 2 lc rgb "#888888" title sprintf("target %g", target)
    }
    unset multiplot
}
