# style.gp -- what every psring plot shares: the terminal, fonts, colours
# and the CSV layout. The caller sets:
#   fmt   'png', 'svg', 'dumb' (a terminal view) or 'table' (the numbers)
#   out   the output file ('' for the terminal)
# Sizes are for a projector: big fonts, thick lines, few colours that stay
# apart in greyscale too.
if (!exists("fmt")) fmt = 'png'
if (fmt eq 'png') { set terminal pngcairo size 1600,1000 font "Sans,24" linewidth 3 }
if (fmt eq 'svg') { set terminal svg size 1600,1000 font "Sans,24" linewidth 3 dynamic }
if (fmt eq 'dumb') { set terminal dumb size 100,32 }
# pscale: every point size is multiplied by it; gnuplot's svg terminal
# draws points about twice the pngcairo size, so SVG (index.html) gets
# 0.55, and both look alike.
pscale = (fmt eq 'svg') ? 0.55 : 1
if (exists("out") && out ne '') set output out
# 'table': the plotted numbers as text into `out` (tests compare them).
if (fmt eq 'table') { set table out }

set datafile separator ","
set datafile missing ""
set key top left box opaque font ",20" spacing 1.1
set grid lw 0.5 lc rgb "#cccccc"
set border lw 1.5

# Columns of the shared CSV (docs/design.md, common/measure/metrics.h), found by
# name in the header line of `file`: columns may be appended or reordered,
# nothing here counts them. A CSV without one of these names is refused.
if (exists("file")) {
    csv_header = system("head -n 1 '".file."' | tr ',' ' '")
    col_of(name) = sum [i=1:words(csv_header)] (word(csv_header, i) eq name ? i : 0)
    c_system = col_of("system"); c_algo = col_of("algo"); c_k = col_of("K"); c_bytes = col_of("bytes")
    c_time = col_of("time_s"); c_tmin = col_of("time_min_s"); c_tmax = col_of("time_max_s")
    c_ingress = col_of("ingress_s"); c_egress = col_of("egress_s"); c_busbw = col_of("busbw")
    c_in = col_of("bytes_in"); c_out = col_of("bytes_out"); c_bw = col_of("link_bw")
    c_lat = col_of("link_latency"); c_model = col_of("model_s"); c_host = col_of("host_bound")
    csv_missing = ''
    do for [name in "system algo K bytes time_s time_min_s time_max_s ingress_s egress_s busbw bytes_in bytes_out link_bw link_latency model_s host_bound"] {
        if (col_of(name) == 0) { csv_missing = csv_missing.' '.name }
    }
    if (csv_missing ne '') { exit error file.": no column".csv_missing." in its header (docs/design.md)" }
    # Optional: bound_by (link, sw, cpu or busy: why the row is or is not
    # host-bound, or the link stood idle (sw); common/measure/metrics.h). 0 where the CSV has no such column:
    # then a row with host_bound = 1 is flagged without a reason.
    c_bound = col_of("bound_by")
}

# ------------------------------------------------------------ flagged points
# flag_is(r): the row is flagged for reason r: "cpu" (the job's own
# processes used most of the cores), "busy" (other programs did), "sw"
# (no machine signal, but the link's own record says it stood idle over
# 5% of the combine: the software set the pace; link_util), or "host"
# (host_bound = 1 and no bound_by to say why). n_flag(r): how many
# rows of `file` are. flag_marks(x, y): the plot elements (a string for
# `plot ..., @marks`) that ring every flagged point at (x, y), one marker
# and one key entry per reason present: a black circle (cpu), a magenta
# square (busy), a green triangle (sw), a black diamond (host). Every
# plot of the CSV draws them.
busy_color = "#cc00cc"
sw_color = "#2ca02c"
flag_is(r) = (c_bound > 0 && strcol(c_bound) ne "" && strcol(c_bound) ne "link") ? strcol(c_bound) eq r \
           : (r eq "host" && column(c_host) == 1)
n_flag(r) = int(system(sprintf("awk -F, -v b=%d -v h=%d -v r=%s 'NR > 1 && !/^#/ { f = (b && $b != \"\" && $b != \"link\") ? $b : ($h == 1 ? \"host\" : \"\"); if (f == r) n++ } END { print n + 0 }' '%s'", \
                               c_bound, c_host, r, file)))
# A plot whose key is tight (size.gp's, below the panel in columns) sets
# flag_short = 1 for the short titles; the marks are the same.
flag_title(r) = (exists("flag_short") && flag_short) ? \
                (r eq "cpu" ? "host-bound: cpu" : r eq "busy" ? "host-bound: busy" : \
                 r eq "sw" ? "link idle: sw" : "host-bound") \
              : r eq "cpu" ? "host-bound: its own processes filled the cores (cpu)" \
              : r eq "busy" ? "host-bound: other programs kept the CPUs busy (busy)" \
              : r eq "sw" ? "link idle over 5%: the software set the pace (sw)" \
              : "host-bound: the CPU, not the link, set the pace"
flag_style(r) = r eq "busy" ? "pt 4 ps 5*pscale lw 2 lc rgb busy_color" : \
                r eq "sw" ? "pt 8 ps 5*pscale lw 2 lc rgb sw_color" : r eq "cpu" ? "pt 6 ps 5*pscale lw 2 lc rgb host_color" : "pt 12 ps 5*pscale lw 2 lc rgb host_color"
flag_mark(r, x, y) = n_flag(r) > 0 ? sprintf(", file skip 1 using (flag_is('%s') ? %s : NaN):(%s) with points %s title '%s'", \
                                               r, x, y, flag_style(r), flag_title(r)) : ''
flag_marks(x, y) = flag_mark("cpu", x, y).flag_mark("busy", x, y).flag_mark("sw", x, y).flag_mark("host", x, y)
# flag_marks_more(x, y): the same marks on a second point of the same rows
# (k_time.gp: the PS's ingress beside its combine), without key entries of
# their own: flag_marks drew those. y may be NaN on rows it does not fit.
flag_mark_nt(r, x, y) = n_flag(r) > 0 ? sprintf(", file skip 1 using (flag_is('%s') ? %s : NaN):(%s) with points %s notitle", \
                                                  r, x, y, flag_style(r)) : ''
flag_marks_more(x, y) = flag_mark_nt("cpu", x, y).flag_mark_nt("busy", x, y).flag_mark_nt("sw", x, y).flag_mark_nt("host", x, y)

# The alpha-beta model is bin/model's (common/measure/model.h); no formula is typed
# here. The caller may set `model` (lab.sh passes $PSR_BIN/model).
# model_at(algo, q, K, n, bw, a): quantity q (time, ingress, bytes_in, ...)
# of algo (ps, ring, rd); model_bytes(algo, q, K, n) for the byte counts,
# which need no link. NaN where bin/model refuses (it says why on stderr).
if (!exists("model")) model = dir."../bin/model"
model_at(algo, q, k, n, bw, a) = real(system(sprintf("'%s' --algo %s --quantity %s --K %d --bytes %.17g --bw %.17g --latency %.17g || echo nan", \
                                                     model, algo, q, k, n, bw, a)))
model_bytes(algo, q, k, n) = real(system(sprintf("'%s' --algo %s --quantity %s --K %d --bytes %.17g || echo nan", model, algo, q, k, n)))

# is(sys): the row belongs to system sys ("ps" or "ring").
is(sys) = strcol(c_system) eq sys
# is_algo(sys, algo): and ran that algorithm ("ring" or "rd" for the ring
# workers, --algo; the parameter server's rows leave the column empty).
is_algo(sys, algo) = is(sys) && strcol(c_algo) eq algo

ps_color = "#d62728"; ps2_color = "#ff9896"; ring_color = "#1f77b4"; host_color = "#000000"
# recursive doubling: orange, which stays apart from the ring's blue for
# colour-blind readers and is lighter than the PS red in greyscale.
rd_color = "#e69f00"

# The K axis is LINEAR: the model's lines in K (the server's K n/bw, the
# perfect scaling K b/tc) are straight there, and a log K axis would bend
# them into curves that look exponential (plots/README.md). Ticks at the
# powers of two the lab sweeps; the offsets keep K = 1 off the border.
k_axis = "unset logscale x; set xtics (1, 2, 4, 8, 16, 32, 64, 128); set offsets graph 0.03, graph 0.03, 0, 0"

# sorted(f): the CSV with its rows grouped by system, then by K and bytes,
# header first, so that a line drawn through one system's points is not
# broken by the other system's rows in between.
sorted(f) = "< (head -n 1 '".f."'; tail -n +2 '".f."' | LC_ALL=C sort -t, ". \
            sprintf("-k%d,%d -k%d,%dn -k%d,%dn)", c_system, c_system, c_k, c_k, c_bytes, c_bytes)
