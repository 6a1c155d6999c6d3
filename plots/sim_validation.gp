# sim_validation.gp -- simulated time per step against bin/model's and, where
# experiments/sim_all.sh ran them, the real processes on the EMULATED link
# (validation.csv: system, algo, K, bytes, model_s, sim_s, real_s, bound_by;
# read by name; real_s empty with --no-real). A real row that is not
# bound_by link (host-bound: the machine set its pace) is ringed in black.
#   gnuplot -e "dir='plots/'; vfile='DIR/validation.csv'; fmt='png'; out='DIR/sim_validation.png'" plots/sim_validation.gp
load dir."style.gp"

vhead = system("head -n 1 '".vfile."' | tr ',' ' '")
vcol(name) = sum [i=1:words(vhead)] (word(vhead, i) eq name ? i : 0)
v_algo = vcol("algo"); v_k = vcol("K"); v_bytes = vcol("bytes")
v_model = vcol("model_s"); v_sim = vcol("sim_s"); v_real = vcol("real_s"); v_bound = vcol("bound_by")
if (v_algo * v_k * v_bytes * v_model * v_sim * v_real == 0) { exit error vfile.": a column is missing (sim_all.sh)" }
n_real = int(system("awk -F, -v c=".v_real." 'NR > 1 && $c != \"\" { n++ } END { print n + 0 }' '".vfile."'"))
n_flag = v_bound == 0 ? 0 : int(system("awk -F, -v c=".v_real." -v b=".v_bound." 'NR > 1 && $c != \"\" && $b != \"link\" { n++ } END { print n + 0 }' '".vfile."'"))
kset = system("awk -F, -v c=".v_k." 'NR > 1 { print $c }' '".vfile."' | sort -n | uniq | paste -sd, - | sed 's/,/, /g'")

set title sprintf("psring\\_sim against the model%s\n{/*0.7 K = %s; SIMULATED: SimGrid CM02, factors 1; dots: simulated, circles: bin/model%s}", \
                  n_real > 0 ? " and the real processes" : "", kset, n_real > 0 ? ", crosses: real, EMULATED link" : "")
set logscale xy
set xlabel "message size n (bytes)"
set ylabel "time per step (s)"
if (fmt ne "table") { set format y "10^{%L}" }
if (fmt ne "table") { set format x "%.0s%cB" }
set key top left
color(a) = a eq "ps" ? ps_color : a eq "ring" ? ring_color : rd_color
at(a) = strcol(v_algo) eq a ? column(v_bytes) : NaN
# The real points (and the ring round the host-bound ones) only where
# sim_all.sh ran them: an empty series would only draw a warning.
real_plots = n_real > 0 ? ', for [a in "ps ring rd"] vfile skip 1 using (at(a)):(column(v_real)) with points pt 2 ps 2*pscale lw 2 lc rgb color(a) title a." real"' : ''
flag_plot = n_flag > 0 ? ', vfile skip 1 using ((strcol(v_real) ne "" && strcol(v_bound) ne "link") ? column(v_bytes) : NaN):(column(v_real)) with points pt 6 ps 5*pscale lw 2 lc rgb host_color title "real, host-bound (not bound\\_by link)"' : ''
plot for [a in "ps ring rd"] vfile skip 1 using (at(a)):(column(v_sim)) with points pt 7 ps 1.5*pscale lc rgb color(a) title a." simulated", \
     for [a in "ps ring rd"] vfile skip 1 using (at(a)):(column(v_model)) with points pt 6 ps 3*pscale lw 2 lc rgb color(a) title a." bin/model" \
     @real_plots @flag_plot
