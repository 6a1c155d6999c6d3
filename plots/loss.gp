# loss.gp -- plot 5: the loss against the step, two panels.
#   gnuplot -e "dir='plots/'; data='results/RUN/loss'; fmt='png'; out='loss.png'" plots/loss.gp
# Input: the folder `data` of "# step loss" files (--loss-out, the format
# of common/train/losscurve.h) that experiments/lab_loss.sh writes:
#   loss_ref.dat            bin/reference, the single-process big batch
#   loss_ps.dat             the parameter server (ps_server --loss-out)
#   loss_ring.dat           the ring (ring_worker rank 0 --loss-out)
#   loss_ps_MISTAKE.dat     the parameter server with --mistake MISTAKE
#   loss_ring_MISTAKE.dat   the ring with --mistake MISTAKE (optional)
# Left: the three correct runs on the same data: the reference as a line,
# the PS as rings and the ring as dots inside them, so one sees that they
# lie on each other. Right: the correct run against each mistake mode
# (log y); a curve that leaves the chart (sum-not-mean) is labelled with
# where it ends. Bottom: a zoom, the relative difference of the mistakes
# that lie on the correct curve (mean-of-means, sync-every-micro) from the
# correct run, in percent, so that mean-of-means' small bias is seen
# (on the log panel it hides under the correct line). Optional: `sub` (a subtitle), `note` (a line under the
# left panel, e.g. the largest difference between the runs).
load dir."style.gp"
if (!exists("sub")) sub = ''
if (!exists("note")) note = ''
if (data[strlen(data):] ne '/') data = data.'/'

# Two panels side by side: wider than style.gp's single plot, same fonts.
if (fmt eq 'png') { set terminal pngcairo size 2600,1600 font "Sans,24" linewidth 3 }
if (fmt eq 'svg') { set terminal svg size 2600,1600 font "Sans,24" linewidth 3 dynamic }
if (fmt eq 'dumb') { set terminal dumb size 160,60 }
if (exists("out") && out ne '') set output out

set datafile separator whitespace
set datafile commentschars "#"

f(name) = data.name
have(name) = int(system("test -s '".f(name)."' && echo 1 || echo 0"))
mistakes = "sum-not-mean no-divide-micro mean-of-means zero-grad-inside sync-every-micro"
colors = "#d62728 #ff7f0e #2ca02c #9467bd #17becf"
points = "5 7 9 11 6"     # each mistake its own point type: the ones that
dashes = "1 1 1 1 2"      # lie on the correct curve stay apart
# The mistakes with a PS file / a ring file, as word lists.
ps_list = system("for m in ".mistakes."; do [ -s '".data."loss_ps_'$m.dat ] && printf '%s ' $m; done")
ring_list = system("for m in ".mistakes."; do [ -s '".data."loss_ring_'$m.dat ] && printf '%s ' $m; done")
idx(m) = sum [i=1:words(mistakes)] (word(mistakes, i) eq m ? i : 0)
color(m) = word(colors, idx(m))
point(m) = int(word(points, idx(m)))
dash(m) = int(word(dashes, idx(m)))

ylo = 0.005; yhi = 1e5      # the right panel's range: 10^-2.3 .. 10^5

# Three panels placed by hand: two side by side on top, the zoom below
# across the width; one left margin per column so the step axes line up.
set multiplot title "Loss against step".(sub ne '' ? "\n{/*0.7 ".sub."}" : '')

# ---------------------------------------------------------------- left
set origin 0, 0.36
set size 0.5, 0.57
set lmargin 14
set title "PS, ring and single-process reference: the same data"
set xlabel "step"
set ylabel "loss (mean squared residual per example)"
set logscale y
set format y "10^{%L}"
set key top right box opaque
set offsets 0, 1, 0, 0
if (note ne '') { set label 1 note at graph 0.02, graph 0.04 font ",18" } else { unset label 1 }
plot f("loss_ref.dat") using 1:2 with lines lw 4 lc rgb "#888888" title "reference (one process, big batch)", \
     f("loss_ps.dat") using 1:2 with points pt 6 ps 3*pscale lc rgb ps_color title "parameter server", \
     f("loss_ring.dat") using 1:2 with points pt 7 ps 1.2*pscale lc rgb ring_color title "ring all-reduce"
unset label 1

# ---------------------------------------------------------------- right
set title "Correct run against each mistake mode (--mistake)"
set origin 0.5, 0.36
set size 0.5, 0.57
# The key in the wedge between the diverging and the slow curves; each
# entry with the loss of the last step, so the curves that lie on the
# correct one (mean-of-means, sync-every-micro) still show their numbers.
set key at graph 0.99, graph 0.60 right top box opaque font ",18" spacing 1.05
# last(name): the loss of the file's last step, for the key.
last(name) = real(system("grep -v '^#' '".f(name)."' | tail -n 1 | cut -d' ' -f2"))
# A mistake whose loss leaves the chart: say where it ends (stats before
# the range is set: stats leaves out points outside it).
nlab = 0
do for [i=1:words(ps_list)] {
    m = word(ps_list, i)
    stats f("loss_ps_".m.".dat") using 1:2 nooutput
    if (STATS_max_y > yhi) {
        nlab = nlab + 1
        set label 10+nlab sprintf("%s: off the chart, %.1e at step %d", m, STATS_max_y, int(STATS_max_x)) \
            at graph 0.06, graph 0.97 - 0.06*nlab left tc rgb color(m) font ",20" front
    }
}
set yrange [ylo:yhi]
plot f("loss_ps.dat") using 1:2 with lines lw 6 lc rgb "#000000" \
        title sprintf("correct (PS), last %.4g", last("loss_ps.dat")), \
     for [i=1:words(ps_list)] f("loss_ps_".word(ps_list, i).".dat") using 1:2 with linespoints \
        pt point(word(ps_list, i)) ps 2*pscale lw 2 dt dash(word(ps_list, i)) lc rgb color(word(ps_list, i)) \
        title sprintf("%s, last %.4g", word(ps_list, i), last("loss_ps_".word(ps_list, i).".dat")), \
     for [i=1:words(ring_list)] f("loss_ring_".word(ring_list, i).".dat") using 1:2 with points \
        pt 7 ps 0.7*pscale lc rgb color(word(ring_list, i)) title (i == 1 ? "dots: the same on the ring" : "")

# ---------------------------------------------------------------- zoom
# 100 (mistake - correct) / correct per step, the two files joined by
# step with paste (both "# step loss" files, one line per step).
near = "mean-of-means sync-every-micro"
near_list = system("for m in ".near."; do [ -s '".data."loss_ps_'$m.dat ] && printf '%s ' $m; done")
unset label
set origin 0, 0
set size 1, 0.36
set title "Zoom on the curves that lie on the correct one: difference from the correct run (PS)"
unset logscale y
set format y "%g%%"
set ylabel "loss difference"
set xlabel "step"
set autoscale y
unset key     # forgets the right panel's "at" position
set key inside top right box opaque font ",18"
diff(name) = "< paste '".f("loss_ps.dat")."' '".f(name)."'"
if (words(near_list) > 0) {
    plot 0 with lines lw 2 lc rgb "#000000" title "correct (PS)", \
         for [i=1:words(near_list)] diff("loss_ps_".word(near_list, i).".dat") using 1:(100*($4 - $2)/$2) with linespoints \
            pt point(word(near_list, i)) ps 2*pscale lw 2 dt dash(word(near_list, i)) lc rgb color(word(near_list, i)) \
            title sprintf("%s: %+.3g%% at the last step", word(near_list, i), \
                          100*(last("loss_ps_".word(near_list, i).".dat") - last("loss_ps.dat"))/last("loss_ps.dat"))
}
unset multiplot
