# t_plot_columns.sh -- the lab's plots find the CSV's columns by their
# names in the header, never by position: the same CSV with a column
# appended at the end, and with its columns in reverse order, plots the
# same numbers (gnuplot's `set table`: fmt='table' in plots/style.gp); the
# model lines come from bin/model; a CSV without a needed column is
# refused with its name.
. "$PSR_TESTS/lib.sh"

command -v gnuplot >/dev/null || { t_skip plotcols-1 "plots by column name" "gnuplot not installed"; exit 0; }
[ -x "$PSR_BIN/model" ] || { t_skip plotcols-1 "plots by column name" "no model in $PSR_BIN"; exit 0; }
plots="$PSR_TESTS/../plots"

# Rows as psr_merge writes them (a lab run's, trimmed): K sweep and sizes.
cat >"$T_TMP/k.csv" <<'CSV'
system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound
ps,,tcp,1,1048576,3,0.0342757,0.0339467,0.0372722,0.0168171,0.0157363,3.05924e+07,3.05924e+07,1048632,1048616,6.25e+07,0.0002,0.0339544,0
ring,ring,tcp,2,1048576,3,0.0181668,0.0180462,0.0184533,,,5.77192e+07,5.77192e+07,1048668,1048668,6.25e+07,0.0002,0.0171772,0
ps,,tcp,2,1048576,3,0.0676633,0.067175,0.0687007,0.0331675,0.0326811,1.5497e+07,3.09939e+07,2097264,2097232,6.25e+07,0.0002,0.0675089,0
ps,,tcp,4,1048576,3,0.141823,0.136743,0.142211,0.0664222,0.0661618,7.39354e+06,2.95742e+07,4194528,4194464,6.25e+07,0.0002,0.134618,1
ring,ring,tcp,4,1048576,3,0.0345039,0.0338698,0.0436437,,,3.03901e+07,4.55851e+07,1573124,1573120,6.25e+07,0.0002,0.0263658,0
CSV
cat >"$T_TMP/s.csv" <<'CSV'
system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound
ps,,tcp,4,4096,4,0.000847169,0.00069824,0.000964026,6.5324e-05,0.000146148,4.83493e+06,1.93397e+07,16608,16544,6.25e+07,0.0002,0.000924288,0
ring,ring,tcp,4,4096,4,0.00213135,0.00182606,0.00418521,,,1.92178e+06,2.88268e+06,6404,6400,6.25e+07,0.0002,0.0012983,0
ring,rd,tcp,4,4096,4,0.000885396,0.000733076,0.00239179,,,4.62618e+06,6.93927e+06,8296,8296,6.25e+07,0.0002,0.000531072,0
ps,,tcp,4,65536,4,0.00742821,0.00736176,0.00753058,0.00348507,0.00345545,8.82259e+06,3.52904e+07,262368,262304,6.25e+07,0.0002,0.00878861,0
ring,ring,tcp,4,65536,4,0.00575099,0.00439962,0.0063196,,,1.13956e+07,1.70934e+07,98564,98560,6.25e+07,0.0002,0.00277286,0
ring,rd,tcp,4,65536,4,0.00460733,0.00436449,0.00758984,,,1.42243e+07,2.13364e+07,131176,131176,6.25e+07,0.0002,0.00249715,0
ps,,tcp,4,1048576,4,0.134603,0.133926,0.141368,0.0675017,0.066104,7.79016e+06,3.11606e+07,4194528,4194464,6.25e+07,0.0002,0.134618,0
ring,ring,tcp,4,1048576,4,0.0402015,0.0296187,0.0526703,,,2.6083e+07,3.91245e+07,1573124,1573120,6.25e+07,0.0002,0.0263658,0
ring,rd,tcp,4,1048576,4,0.0455572,0.0378544,0.0543936,,,2.30167e+07,3.45251e+07,2097256,2097256,6.25e+07,0.0002,0.0339544,0
CSV
# variants NAME: NAME.extra.csv (a column "later" appended, holding junk
# that would break a plot reading it), NAME.rev.csv (columns reversed).
variants() {
    awk -F, -v OFS=, '{ $(NF + 1) = (NR == 1 ? "later" : 999 + NR); print }' "$T_TMP/$1.csv" >"$T_TMP/$1.extra.csv"
    awk -F, -v OFS=, '{ l = $NF; for (i = NF - 1; i >= 1; i--) l = l OFS $i; print l }' "$T_TMP/$1.csv" >"$T_TMP/$1.rev.csv"
}
variants k
variants s
# table PLOT CSV OUT: the numbers PLOT draws from CSV, into OUT (stdout,
# the fit and crossover lines, to OUT.txt).
table() {
    job 60 gnuplot -e "dir='$plots/'; model='$PSR_BIN/model'; file='$2'; fmt='table'; out='$3'" "$plots/$1.gp"
    cp "$T_TMP/out" "$3.txt"
}

t_case plotcols-1.1 "k_time, k_bytes, size: the same numbers with a column appended or the columns reversed"
for p in k_time:k k_bytes:k size:s; do
    plot=${p%%:*} csv=${p#*:}
    for v in "" .extra .rev; do
        table "$plot" "$T_TMP/$csv$v.csv" "$T_TMP/$plot$v.tab"
        expect_rc 0
        [ -s "$T_TMP/$plot$v.tab" ] || t_fail "$plot on $csv$v.csv: no table"
    done
    for v in .extra .rev; do
        cmp -s "$T_TMP/$plot.tab" "$T_TMP/$plot$v.tab" || t_fail "$plot: $csv$v.csv plots other numbers: $(diff "$T_TMP/$plot.tab" "$T_TMP/$plot$v.tab" | head -n 6)"
        cmp -s "$T_TMP/$plot.tab.txt" "$T_TMP/$plot$v.tab.txt" || t_fail "$plot: $csv$v.csv prints other lines"
    done
done
t_end

t_case plotcols-1.2 "the model lines are bin/model's: K n, 2(K-1)/K n, a + K n/bw, the crossover"
# k_bytes's "K n" line at K = 4, n = 1 MiB: 4 MiB; "2(K-1)/K n" at 4: 1.5.
awk '/Curve title: "K n"/ { on = 1 } /Curve title: "ring worker in/ { on = 0 } on && $1 == 4 { print $2 }' \
    "$T_TMP/k_bytes.tab" | grep -qx 4 || t_fail "k_bytes: K n at K = 4 is not 4 MiB"
awk '/Curve title: "2\(K-1\)\/K n"/ { on = 1 } on && $1 == 4 { print $2; exit }' "$T_TMP/k_bytes.tab" |
    grep -qx 1.5 || t_fail "k_bytes: 2(K-1)/K n at K = 4 is not 1.5 MiB"
# k_time's PS ingress model at K = 2: (a + K n / bw) in ms = 0.2 + 2 x 1048576 / 62500 = 33.7544 ms.
awk '/Curve title: "PS ingress model/ { on = 1 } on && $1 == 2 { print $2; exit }' "$T_TMP/k_time.tab" |
    awk '{ exit !($1 > 33.7543 && $1 < 33.7545) }' || t_fail "k_time: PS ingress model at K = 2 is not 33.7544 ms"
# size: the crossover at K = 4 on 500 Mbit/s, 200 us: 8 a / b = 100000 bytes.
grep -q '^crossover model: .*: 100000 bytes' "$T_TMP/size.tab.txt" || t_fail "size: no model crossover at 100000 bytes"
grep -q "model_s / the lines drawn: 0.99999[0-9] to 1.00000[0-9] over 9 rows" "$T_TMP/size.tab.txt" ||
    t_fail "size: the CSV's model_s and bin/model disagree: $(grep lines "$T_TMP/size.tab.txt")"
t_end

t_case plotcols-1.3 "a CSV without a column the plot needs is refused, naming it"
cut -d, -f1-6,8- "$T_TMP/k.csv" >"$T_TMP/k.cut.csv"     # no time_s
table k_time "$T_TMP/k.cut.csv" "$T_TMP/cut.tab"
[ "$rc" != 0 ] || t_fail "k_time plotted a CSV without time_s"
expect_grep err 'no column time_s'
t_end
t_exit
