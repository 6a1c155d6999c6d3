# sim_k_time.gp -- simulated time per step against K, 4 MiB, PS and ring,
# star and fat-tree:4, with the model (experiments/sim_all.sh, large_k.csv).
set terminal pngcairo size 900,600
set output dir.'/k_time_sim.png'
set datafile separator ','
set logscale xy
set xlabel 'K (workers / ranks)'
set ylabel 'time per step (s)'
set key top left
set title 'psring_sim: 4 MiB, 500 Mbit/s, 200 us'
f = dir.'/large_k.csv'
plot f using 5:(strcol(1) eq 'star' && strcol(2) eq 'ps' ? $8 : 1/0) with linespoints title 'PS star', \
     f using 5:(strcol(1) eq 'fat-tree:4' && strcol(2) eq 'ps' ? $8 : 1/0) with linespoints title 'PS fat-tree:4', \
     f using 5:(strcol(1) eq 'star' && strcol(2) eq 'ring' ? $8 : 1/0) with linespoints title 'ring star', \
     f using 5:(strcol(1) eq 'fat-tree:4' && strcol(2) eq 'ring' ? $8 : 1/0) with linespoints title 'ring fat-tree:4', \
     f using 5:(strcol(1) eq 'star' ? $19 : 1/0) with points pt 6 ps 2 title 'model'
