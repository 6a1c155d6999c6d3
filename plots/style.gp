# style.gp -- what every psring plot shares: the terminal, fonts, colours
# and the CSV layout. The caller sets:
#   fmt   'png', 'svg' or 'dumb' (a terminal view)
#   out   the output file ('' for the terminal)
# Sizes are for a projector: big fonts, thick lines, few colours that stay
# apart in greyscale too.
if (!exists("fmt")) fmt = 'png'
if (fmt eq 'png') { set terminal pngcairo size 1600,1000 font "Sans,24" linewidth 3 }
if (fmt eq 'svg') { set terminal svg size 1600,1000 font "Sans,24" linewidth 3 dynamic }
if (fmt eq 'dumb') { set terminal dumb size 100,32 }
if (exists("out") && out ne '') set output out

set datafile separator ","
set datafile missing ""
set key top left box opaque font ",20" spacing 1.1
set grid lw 0.5 lc rgb "#cccccc"
set border lw 1.5

# Columns of the shared CSV (docs/design.md, common/metrics.h).
c_system = 1; c_k = 4; c_bytes = 5; c_time = 7; c_tmin = 8; c_tmax = 9
c_ingress = 10; c_egress = 11; c_busbw = 13; c_in = 14; c_out = 15
c_bw = 16; c_lat = 17; c_model = 18; c_host = 19
c_algo = 2

# is(sys): the row belongs to system sys ("ps" or "ring").
is(sys) = strcol(c_system) eq sys
# is_algo(sys, algo): and ran that algorithm ("ring" or "rd" for the ring
# workers, --algo; the parameter server's rows leave the column empty).
is_algo(sys, algo) = is(sys) && strcol(c_algo) eq algo

ps_color = "#d62728"; ps2_color = "#ff9896"; ring_color = "#1f77b4"; host_color = "#000000"
# recursive doubling: orange, which stays apart from the ring's blue for
# colour-blind readers and is lighter than the PS red in greyscale.
rd_color = "#e69f00"

# sorted(f): the CSV with its rows grouped by system, then by K and bytes,
# header first, so that a line drawn through one system's points is not
# broken by the other system's rows in between.
sorted(f) = "< (head -n 1 '".f."'; tail -n +2 '".f."' | LC_ALL=C sort -t, -k1,1 -k4,4n -k5,5n)"
