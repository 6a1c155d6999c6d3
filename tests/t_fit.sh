# t_fit.sh -- bin/fit (experiments/fit.c), the size sweep's fits and
# crossovers that `make lab` keeps as fit.txt and plots/size.gp draws:
# from the reference run's CSV it gives the reference run's fit.txt (that
# run's numbers came from gnuplot's fit, before the fitting left the plot);
# its gnuplot assignments carry the same numbers; bad input is one line.
# (bin/fit on exact-model rows, and on CSVs with their columns reordered:
# tests/t_plot_columns.sh.)
. "$PSR_TESTS/lib.sh"
t_need fit-1 "bin/fit" fit model
ref="$PSR_TESTS/../docs/reference-results/lab"

# sig3 FILE: FILE's lines with every number rounded to 3 significant
# digits, one number per line after its line's first two words.
sig3() {
    awk '{ printf "%s %s", $1, $2
           n = split($0, w, /[^0-9.e+-]+/)
           for (i = 1; i <= n; i++) if (w[i] ~ /^[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$/) printf " %.3g", w[i]
           printf "\n" }' "$1"
}

t_case fit-1.1 "fit docs/reference-results/lab/size_sweep.csv: that run's fit.txt, every number to 3 significant digits"
job 10 "$PSR_BIN/fit" "$ref/size_sweep.csv"
expect_rc 0
sig3 "$ref/fit.txt" >"$T_TMP/want"
sig3 "$T_TMP/out" >"$T_TMP/got"
cmp -s "$T_TMP/want" "$T_TMP/got" || t_fail "not the reference's numbers: $(diff "$T_TMP/want" "$T_TMP/got" | head -n 6)"
[ "$(wc -l <"$T_TMP/out")" = 7 ] || t_fail "want 7 lines (2 model, 3 fit, 2 crossover): $(cat "$T_TMP/out")"
t_end

t_case fit-1.2 "fit --gnuplot: the same fits and crossovers as gnuplot assignments (a, 1/b, n*, the measured crossover)"
job 10 "$PSR_BIN/fit" --gnuplot "$ref/size_sweep.csv"
expect_rc 0
# ps: a = 0.0013564 s, 1/b = 0.999243 MB/s; ring 1/b = 0.979115 MB/s;
# crossover measured 10516 bytes, model 8000; K = 4 on 1 MB/s and 1 ms.
awk '{ v[$1] = $3 } END {
        ok = v["a_ps"] > 0.0013563 && v["a_ps"] < 0.0013565 && 1e-6 / v["b_ps"] > 0.999242 && 1e-6 / v["b_ps"] < 0.999244 &&
             1e-6 / v["b_ring"] > 0.979114 && 1e-6 / v["b_ring"] < 0.979116 && v["n_x"] > 10515.5 && v["n_x"] < 10516.5 &&
             v["nstar"] > 7999.999 && v["nstar"] < 8000.001 && v["m_k"] == 4 && v["m_bw"] == 1e6 && v["m_a"] == 0.001 && v["n_rd"] == 5 && v["pow2"] == 1
        exit !ok }' "$T_TMP/out" || t_fail "assignments off: $(tr '\n' ' ' <"$T_TMP/out")"
t_end

t_case fit-1.3 "bad input: no CSV (64), a missing file or column (1), one line on stderr each"
job 10 "$PSR_BIN/fit"
expect_rc 64
job 10 "$PSR_BIN/fit" "$T_TMP/none.csv"
expect_rc 1
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "missing file: not one line: $(cat "$T_TMP/err")"
cut -d, -f1-6,8- "$ref/size_sweep.csv" >"$T_TMP/cut.csv"     # no time_s
job 10 "$PSR_BIN/fit" "$T_TMP/cut.csv"
expect_rc 1
expect_grep err 'no column time_s'
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "missing column: not one line: $(cat "$T_TMP/err")"
t_end
t_exit
