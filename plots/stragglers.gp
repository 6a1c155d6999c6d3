# stragglers.gp -- the stragglers section of the lab (experiments/
# lab_stragglers.sh, issue 16): one slow worker against the ring and the
# parameter server's modes (sync, backup:B, ssp:N, async).
#   panel='sweep' (default), stragglers.png: three panels against the
#       straggler's factor F (rank 1 computes F x the others' EMULATED
#       time), one line per mode:
#         left    time to the target loss (the CSV's ttt_s), seconds;
#         middle  seconds per step of the modes that run in steps
#                 (mode_step_s: ring and sync the slowest worker's,
#                 backup:B the (K-B)-th);
#         right   updates per second of ssp and async (K / mode_step_s);
#       one unit a panel. Measured (solid, the mode's colour) and the cost
#       model's (model_step_s, bin/model --stragglers: black dashed with
#       hollow markers in the mode's colour, drawn on top).
#   panel='loss', loss_time.png: the loss against wall-clock time at one
#       factor, one curve per mode, and the target as a dashed line. Takes
#       losses='MODE=FILE MODE=FILE ...' ("# step loss wall_s" files,
#       --loss-time-out) and lossf (the factor).
#   gnuplot -e "dir='plots/'; file='results/RUN/stragglers.csv'; fmt='png'; out='stragglers.png'; target=0.6" plots/stragglers.gp
# The CSV is psr_merge's with the lab's columns appended (mode,
# straggler_factor, jitter, mode_step_s, model_step_s, comm_s), all read
# by name; its rows are grouped by mode. Flagged rows are ringed as in
# every plot (style.gp's flag_marks): without an emulated link psr_merge
# decides no host_bound, so there are usually none, and the CPU check of
# lab_stragglers.sh says whether the sleep or the CPU set the pace.
# F is on a linear axis: the synchronous step max_r c_r + t grows as
# F T + t, a straight line, while backup's and async's stay flat.
load dir."style.gp"
if (!exists("sub")) sub = ''
if (!exists("panel")) panel = 'sweep'
if (!exists("target")) target = NaN
c_mode = col_of("mode"); c_f = col_of("straggler_factor"); c_ms = col_of("mode_step_s")
c_mm = col_of("model_step_s"); c_ttt = col_of("ttt_s")
if (c_mode * c_f * c_ms * c_mm == 0) { exit error file.": no mode, straggler_factor, mode_step_s or model_step_s column (experiments/lab_stragglers.sh)" }

# The modes, in the CSV's order; K from its rows.
modes = system(sprintf("awk -F, -v m=%d 'NR > 1 && !seen[$m]++ { printf \"%%s \", $m }' '%s'", c_mode, file))
stats file skip 1 using (column(c_k)) name "K_" nooutput
K = int(K_max)
mode_color(m) = m eq "ring" ? ring_color : m eq "sync" ? ps_color : m[1:6] eq "backup" ? "#2ca02c" \
              : m[1:3] eq "ssp" ? rd_color : "#9467bd"
mode_pt(m) = m eq "ring" ? 9 : m eq "sync" ? 7 : m[1:6] eq "backup" ? 5 : m[1:3] eq "ssp" ? 11 : 13
mode_title(m) = m eq "ring" ? "ring" : m eq "sync" ? "sync PS" : m
# at(i): the x of mode i's rows, its factor shifted a little per mode
# (dodged) so that modes on the same point (the ring and sync PS) do not
# hide each other's markers; NaN on the other modes' rows.
nm = words(modes)
at(i) = strcol(c_mode) eq word(modes, i) ? column(c_f) + 0.06 * (i - (nm + 1) / 2.0) : NaN
stats file skip 1 using (column(c_f)) name "F_" nooutput
# The flag marks, built out here: a macro inside a { } block is expanded
# when the block is read, before anything in it runs.
marks_t = c_ttt > 0 ? flag_marks("column(c_f)", "column(c_ttt)") : ''
# The modes that run in steps (the ring, sync, backup:B: seconds per step)
# and those that run in updates (ssp:N, async: updates per second, K /
# mode_step_s): two panels, one unit each. idx(m): m's place in `modes`
# (its colour and dodge stay the same in every panel).
is_rate(m) = m eq "async" || (strlen(m) >= 3 && m[1:3] eq "ssp")
step_modes = ''; rate_modes = ''
do for [i=1:words(modes)] {
    if (is_rate(word(modes, i))) { rate_modes = rate_modes.word(modes, i).' ' } else { step_modes = step_modes.word(modes, i).' ' }
}
idx(m) = sum [i=1:words(modes)] (word(modes, i) eq m ? i : 0)
at_m(m) = strcol(c_mode) eq m ? column(c_f) + 0.06 * (idx(m) - (nm + 1) / 2.0) : NaN
marks_s = flag_marks("column(c_f)", "is_rate(strcol(c_mode)) ? NaN : column(c_ms)")
marks_r = flag_marks("column(c_f)", "is_rate(strcol(c_mode)) ? K / column(c_ms) : NaN")

if (panel eq 'loss') {
    if (!exists("losses") || words(losses) == 0) { exit error "stragglers.gp: panel 'loss' needs losses='MODE=FILE ...'" }
    if (!exists("lossf")) { lossf = '?' }
    set datafile separator whitespace
    lmode(i) = substr(word(losses, i), 1, strstrt(word(losses, i), "=") - 1)
    lfile(i) = substr(word(losses, i), strstrt(word(losses, i), "=") + 1, strlen(word(losses, i)))
    set title sprintf("Loss against wall-clock time, one worker %sx slower (K = %d)", lossf, K).(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
    set xlabel "wall-clock time since the first step (s; EMULATED compute included)"
    set ylabel "training loss"
    set key top right font ",18" spacing 1.0 samplen 2
    set yrange [0:*]
    set offsets 0, 0, graph 0.05, 0
    # The ring and sync PS make the same updates (the same bits): their
    # curves lie on each other, so the ring's markers are drawn larger,
    # first, and its key says so.
    lps(m) = m eq "ring" ? 2.2 : 1.2
    ltitle(m) = m eq "ring" ? "ring (the same updates as sync PS)" : mode_title(m)
    plot for [i=1:words(losses)] lfile(i) using 3:2 with linespoints pt mode_pt(lmode(i)) ps lps(lmode(i))*pscale \
            lw 2 lc rgb mode_color(lmode(i)) title ltitle(lmode(i)), \
         target with lines dt 2 lw 2 lc rgb host_color title sprintf("target loss %g", target)
} else {
set multiplot layout 1,3 title sprintf("One slow worker of K = %d: the ring and the parameter server's modes", K).(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
unset logscale x
set xlabel "the slow worker's factor F"
set xtics 1
set xrange [0.5:F_max + 0.5]
set offsets 0, 0, graph 0.05, 0
set key top left font ",14" spacing 1.0 samplen 2
set yrange [0:*]

set title "time to the target loss" font ",17"
set ylabel "seconds"
if (c_ttt == 0) {
    set label 1 "no ttt_s column: psr_merge\nwithout --target-loss" at graph 0.5, graph 0.5 center font ",18" noenhanced
    unset key
    plot [] [0:1] -1 notitle     # an empty frame (-1 lies below it)
    unset label 1
    set key
} else {
    plot for [i=1:words(modes)] file skip 1 using (at(i)):(column(c_ttt)) with linespoints \
            pt mode_pt(word(modes, i)) ps 2*pscale lw 2 lc rgb mode_color(word(modes, i)) title mode_title(word(modes, i)) \
         @marks_t
}

# The measured lines first, the model on top of them: black dashed with
# hollow markers in the mode's colour, so that a model under its
# measured line still shows.
set title "s per step: ring, sync, backup" font ",17"
set ylabel "seconds per step"
set key top left font ",14" spacing 1.0 samplen 2
if (words(step_modes) == 0) { unset key; plot [] [0:1] -1 notitle; set key } else {
plot for [i=1:words(step_modes)] file skip 1 using (at_m(word(step_modes, i))):(column(c_ms)) with linespoints \
        pt mode_pt(word(step_modes, i)) ps 2*pscale lw 2 lc rgb mode_color(word(step_modes, i)) title mode_title(word(step_modes, i)), \
     for [i=1:words(step_modes)] file skip 1 using (at_m(word(step_modes, i))):(column(c_mm)) with lines \
        dt 2 lw 1.5 lc rgb host_color notitle, \
     for [i=1:words(step_modes)] file skip 1 using (at_m(word(step_modes, i))):(column(c_mm)) with points \
        pt 6 ps 1.6*pscale lw 2 lc rgb mode_color(word(step_modes, i)) notitle, \
     NaN with linespoints dt 2 lw 1.5 pt 6 ps 1.6*pscale lc rgb host_color title "model" \
     @marks_s
}

set title "updates per s: ssp, async" font ",17"
set ylabel "updates per second"
if (words(rate_modes) == 0) { unset key; plot [] [0:1] -1 notitle; set key } else {
plot for [i=1:words(rate_modes)] file skip 1 using (at_m(word(rate_modes, i))):(K / column(c_ms)) with linespoints \
        pt mode_pt(word(rate_modes, i)) ps 2*pscale lw 2 lc rgb mode_color(word(rate_modes, i)) title mode_title(word(rate_modes, i)), \
     for [i=1:words(rate_modes)] file skip 1 using (at_m(word(rate_modes, i))):(K / column(c_mm)) with lines \
        dt 2 lw 1.5 lc rgb host_color notitle, \
     for [i=1:words(rate_modes)] file skip 1 using (at_m(word(rate_modes, i))):(K / column(c_mm)) with points \
        pt 6 ps 1.6*pscale lw 2 lc rgb mode_color(word(rate_modes, i)) notitle, \
     NaN with linespoints dt 2 lw 1.5 pt 6 ps 1.6*pscale lc rgb host_color title "model" \
     @marks_r
}
unset multiplot
}
