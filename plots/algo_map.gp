# algo_map.gp -- 9. the map: which all-reduce algorithm, or which placement
# of the parameter server, wins each cell (K, n) (issue 29;
# experiments/algo_map.awk's CSV, experiments/lab_algorithms.sh). Each
# cell is coloured by its winner (the same colour for a candidate in every
# panel and every run: its place in `names`) and carries the winner's name
# and its margin over the runner-up (+12%: the runner-up took 1.12x as
# long); a thin cell (margin under 5%) is hatched: a close call. One panel
# per source (`srcs`: measured, model, ...), side by side.
#   gnuplot -e "dir='plots/'; map='algo_map.csv'; srcs='measured model'; \
#       names='ps ps-S ps-coloc ring rd rabenseifner tree dbtree'; fmt='png'; \
#       out='algo_map.png'; sub='EMULATED link: ...'" plots/algo_map.gp
# `map` is not the shared CSV, so it is not `file` (style.gp checks that).
load dir."style.gp"
if (!exists("sub")) sub = ''
if (!exists("srcs")) srcs = 'model'
if (!exists("names")) names = 'ps ps-S ps-coloc ring rd rabenseifner tree dbtree'
if (fmt eq 'png') { set terminal pngcairo size 1000*words(srcs)+200,1000 font "Sans,20" linewidth 2 }
if (fmt eq 'svg') { set terminal svg size 1000*words(srcs)+200,1000 font "Sans,20" linewidth 2 dynamic }
if (exists("out") && out ne '') set output out
array pal[12] = [0xd62728, 0xff9896, 0x9467bd, 0x1f77b4, 0xe69f00, 0x2ca02c, 0x8c564b, 0x17becf, \
                 0xbcbd22, 0xe377c2, 0x7f7f7f, 0xaec7e8]
colour(i) = i >= 1 && i <= 12 ? pal[int(i)] : 0x7f7f7f
# tics(s, i, v): a panel's tics, "label" position pairs, from the map's rows
# of source s: position column i (9: xi, 10: yi), label column v (3: the
# size, as 4K or 16M; 2: K). Each source has its own grid.
tics(s, i, v) = system(sprintf('awk -F, -v s=''%s'' ''NR > 1 && $1 == s && !seen[$%d]++ { b = $%d; l = %d != 3 ? b : b %% 1048576 == 0 ? b / 1048576 "M" : b %% 1024 == 0 ? b / 1024 "K" : b; printf "%%s\"%%s\" %%d", n++ ? ", " : "", l, $%d }'' ''%s''', s, i, v, v, i, map))
margin_text(m) = strlen(m) == 0 ? "" : sprintf("+%.0f%%", 100 * real(m))
of(s) = strcol(1) eq s

unset key
unset grid
set xlabel "message size n (bytes per rank)"
set ylabel "ranks K"
set offsets 0.5, 0.5, 0.5, 0.5
set border lw 1
set multiplot layout 1, words(srcs) title "Who wins: all-reduce algorithms and the PS by K and n".(sub ne '' ? "\n{/*0.7 ".sub."}" : '')
do for [s in srcs] {
    set title s
    eval sprintf("set xtics (%s)", tics(s, 9, 3))
    eval sprintf("set ytics (%s)", tics(s, 10, 2))
    plot map skip 1 using (of(s) ? column(9) : NaN):10:(0.48):(0.48):(colour(column(11))) \
            with boxxyerror fs solid 0.55 lc rgb variable, \
         "" skip 1 using (of(s) && strlen(strcol(8)) > 0 && real(strcol(8)) < 0.05 ? column(9) : NaN):10:(0.48):(0.48) \
            with boxxyerror fs pattern 4 transparent lc rgb "#333333", \
         "" skip 1 using (of(s) ? column(9) : NaN):10:(strcol(4)."\n".margin_text(strcol(8))) \
            with labels font ",16"
}
unset multiplot
