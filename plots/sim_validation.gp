# sim_validation.gp -- simulated against the model and the emulated link
# (experiments/sim_all.sh, validation.csv). gnuplot -e "dir='DIR'" ...
set terminal pngcairo size 900,600
set output dir.'/sim_validation.png'
set datafile separator ','
set logscale xy
set xlabel 'message size (bytes)'
set ylabel 'time per step (s)'
set key top left
set title 'psring_sim (CM02, factors 1) vs model and vs real (500 Mbit/s, 200 us)'
f = dir.'/validation.csv'
plot f using 4:(strcol(2) eq 'ps' ? $6 : 1/0) with points pt 7 title 'PS sim', \
     f using 4:(strcol(2) eq 'ps' ? $5 : 1/0) with points pt 6 ps 2 title 'PS model', \
     f using 4:(strcol(2) eq 'ps' ? $7 : 1/0) with points pt 2 title 'PS real', \
     f using 4:(strcol(2) eq 'ring' ? $6 : 1/0) with points pt 5 title 'ring sim', \
     f using 4:(strcol(2) eq 'ring' ? $7 : 1/0) with points pt 3 title 'ring real', \
     f using 4:(strcol(2) eq 'rd' ? $6 : 1/0) with points pt 9 title 'rd sim', \
     f using 4:(strcol(2) eq 'rd' ? $7 : 1/0) with points pt 4 title 'rd real'
