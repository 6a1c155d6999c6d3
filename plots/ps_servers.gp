# ps_servers.gp -- the parameter server's placements at one K (issue 15;
# common/measure/model.h, PLACEMENTS): time per step against k, the extra server
# hosts, with a shard on each worker's host (BytePS's mix; k = 0 is the
# colocated S = K placement, k >= K the separate PS with S = k).
#   gnuplot -e "dir='plots/'; file='results/RUN/servers.csv'; fmt='png'; out='ps_servers.png'" plots/ps_servers.gp
# Points: measured medians (experiments/lab.sh --only servers), bars from
# the fastest to the slowest step; the k = 0 point, colocated S = K, as a
# star. Lines, all from bin/model: each row's own model (model_s: with
# several buckets, as lab.sh runs the PS, the pipelined one, t_opt + one
# bucket / bw + 2a; with one bucket, one pull per step), t_opt (BytePS's
# Theorem 1: push and pull fully overlapped), the one-pull time under
# Theorem 1's split (what pulling once per step would cost), and the
# ring, measured and modelled, as horizontal lines. Flagged rows are
# ringed as in every plot (style.gp's flag_marks). The y axis is fitted
# to the points, models and t_opt (not from 0), the key below the panel;
# the k = K point is labelled as the worksheet names it, colocated + k =
# K, which is the separate PS with S = K.
load dir."style.gp"
if (!exists("sub")) sub = ''
c_srv = col_of("servers"); c_place = col_of("placement")
if (c_srv == 0 || c_place == 0) { exit error file.": no servers or placement column in its header (docs/design.md)" }

# The job's K, n, rate and latency: the CSV's parameter-server rows'.
stats file skip 1 using (is("ps") ? column(c_k) : NaN) name "K_" nooutput
stats file skip 1 using (is("ps") ? column(c_bytes) : NaN) name "N_" nooutput
stats file skip 1 using (is("ps") ? column(c_bw) : NaN) name "BW_" nooutput
stats file skip 1 using (is("ps") ? column(c_lat) : NaN) name "LAT_" nooutput
K = int(K_max); n = N_max; bw = BW_max; lat = LAT_max
ring_t = NaN; ring_m = NaN
n_ring = int(system(sprintf("awk -F, -v s=%d 'NR > 1 && $s == \"ring\" { n++ } END { print n + 0 }' '%s'", c_system, file)))
if (n_ring > 0) {
    stats file skip 1 using (is("ring") ? 1e3*column(c_time) : NaN) name "RT_" nooutput
    stats file skip 1 using (is("ring") ? 1e3*column(c_model) : NaN) name "RM_" nooutput
    ring_t = RT_max; ring_m = RM_max
}
# pull_what, model_what: how the PS rows pulled (the manifest lab.sh
# writes beside the CSV says the bucket; without it, one pull per step).
if (!exists("bucket")) bucket = 0
pull_what = bucket > 0 ? sprintf("per-bucket pull, %.0f KiB buckets", bucket / 1024.0) : "one pull per step"
model_what = bucket > 0 ? ": t\\_opt + one bucket / bw + 2a" : ": push, then pull"
# model_k(q, k): quantity q of the colocated placement with k extra servers
# (Theorem 1's split), from bin/model.
model_k(q, k) = real(system(sprintf("'%s' --algo ps --placement colocated --servers %d --K %d --bytes %.17g --bw %.17g --latency %.17g --quantity %s || echo nan", \
                                    model, k, K, n, bw, lat, q)))
# kx(d): a row's x, its extra servers (the ring's line is drawn across).
kx(d) = is("ring") ? NaN : (strcol(c_place) eq "separate" ? column(c_srv) : column(c_srv) - column(c_k))
# xmark(d): where a row's flag goes (the ring's: its point at k = -0.25).
xmark(d) = is("ring") ? -0.25 : kx(d)

set title sprintf("Parameter server placements at K = %d: time per step vs extra servers k", K).(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
set xlabel "extra server hosts k (and a shard on each worker's host; k >= K: separate only)"
set ylabel "time per step (ms)"
set xrange [-0.5:K + 0.5]
set xtics 1
# y fitted to what the exercise compares (the placements differ by 10-20%,
# which a range from 0 would flatten): the measured bars, each run's
# model, t_opt over k and the ring's two lines, with 10% to spare; the
# one-pull curve may run off the top (its key entry says so). The key
# below the panel, so that it covers nothing.
stats file skip 1 using (1e3*column(c_tmin)) name "YLO_" nooutput
stats file skip 1 using (1e3*column(c_tmax)) name "YHI_" nooutput
stats file skip 1 using (1e3*column(c_model)) name "YM_" nooutput
y_lo = YLO_min; y_hi = YHI_max
y_lo = YM_min < y_lo ? YM_min : y_lo; y_hi = YM_max > y_hi ? YM_max : y_hi
t_lo = 1e3*model_k("t_opt", K); t_hi = 1e3*model_k("t_opt", 0)
y_lo = t_lo == t_lo && t_lo < y_lo ? t_lo : y_lo; y_hi = t_hi == t_hi && t_hi > y_hi ? t_hi : y_hi
y_lo = ring_t == ring_t && ring_t < y_lo ? ring_t : y_lo; y_hi = ring_t == ring_t && ring_t > y_hi ? ring_t : y_hi
y_lo = ring_m == ring_m && ring_m < y_lo ? ring_m : y_lo; y_hi = ring_m == ring_m && ring_m > y_hi ? ring_m : y_hi
y_pad = 0.1 * (y_hi - y_lo) + 0.02 * y_hi
set yrange [(y_lo - y_pad > 0 ? y_lo - y_pad : 0) : y_hi + 2 * y_pad]
set key below center vertical maxrows 4 Left reverse samplen 2 width -8 height 1 font ",15" nobox noopaque
# k >= K: no shard is left on the workers' hosts (Theorem 1's x = 0), so
# "colocated + k = K" is the separate PS with S = K: the point says both.
set label 1 sprintf("colocated + k = %d\n= %d separate servers", K, K) at K, graph 0.93 right offset -1, 0 font ",16" tc rgb ps_color front

marks = flag_marks("xmark(0)", "1e3*column(c_time)")
plot file skip 1 using (kx(0)):(1e3*column(c_time)):(1e3*column(c_tmin)):(1e3*column(c_tmax)) \
        with yerrorbars pt 7 ps 2 lc rgb ps_color title "PS, measured (".pull_what.")", \
     "" skip 1 using (kx(0)):(1e3*column(c_model)) with linespoints pt 6 ps 1.5 lc rgb ps_color dt 2 \
        title "PS model of each run (model\\_s".model_what.")", \
     "" skip 1 using (kx(0) == 0 ? 0 : NaN):(1e3*column(c_time)) with points pt 3 ps 5 lc rgb ps_color \
        title "colocated S = K: the ring's bytes per host", \
     [k=0:K:1] '+' using (k):(1e3*model_k("t_opt", k)) with lines lw 2 lc rgb host_color \
        title "t\\_opt (Theorem 1): push and pull overlapped", \
     [k=0:K:1] '+' using (k):(1e3*model_k("time", k)) with lines lc rgb ps2_color dt 3 \
        title "one-pull PS, Theorem 1's split (model; may leave the top)", \
     file skip 1 using (is("ring") ? -0.25 : NaN):(1e3*column(c_time)):(1e3*column(c_tmin)):(1e3*column(c_tmax)) \
        with yerrorbars pt 9 ps 2 lc rgb ring_color notitle, \
     [k=-0.5:(K+0.5):0.5] '+' using (k):(ring_t) with lines lc rgb ring_color title "ring all-reduce, measured", \
     [k=-0.5:(K+0.5):0.5] '+' using (k):(ring_m) with lines lc rgb ring_color dt 2 title "ring model" \
     @marks
