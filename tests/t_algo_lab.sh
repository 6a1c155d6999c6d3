# tier: full
# t_algo_lab.sh -- experiments/lab.sh --only algorithms on a 2-cell grid
# (K = 2; 4 KiB and 8 KiB; a fast EMULATED link; --prune 1.5 leaves the few
# candidates the model puts near each cell's best): every file of the
# section is written, the measured map has both cells with a winner among
# the candidates that ran, the model's panel beside it, the selector and
# the two fixed rules scored on both cells, the pruned ones listed.
# Timings are printed by the lab, never asserted.
. "$PSR_TESTS/lib.sh"
t_need algo-lab "lab.sh --only algorithms" model ring_worker ps_server ps_worker psr_merge psr_json bench_link fit
command -v gnuplot >/dev/null || { t_skip algo-lab "lab.sh --only algorithms" "gnuplot not installed"; exit 0; }

t_case algo-lab-1.1 "lab.sh --only algorithms, 2 cells: the map (csv, md, png), the selector's score, the manifest"
job 240 bash "$PSR_TESTS/../experiments/lab.sh" --only algorithms --out "$T_TMP/alg" --ks 2 --sizes "4K 8K" \
    --link-bw 200Mbit --link-latency 200us --warmup 1 --repeat 1 --budget 60 --prune 1.5
expect_rc 0
for f in algorithms.csv algo_map.csv algo_map.md algo_map.png algo_map.svg selector.csv selector.txt calibration.txt manifest.txt; do
    [ -s "$T_TMP/alg/$f" ] || t_fail "no $f"
done
[ "$(grep -c '^measured,2,' "$T_TMP/alg/algo_map.csv")" = 2 ] || t_fail "measured cells: $(cat "$T_TMP/alg/algo_map.csv")"
[ "$(grep -c '^model,2,' "$T_TMP/alg/algo_map.csv")" = 2 ] || t_fail "model cells: $(cat "$T_TMP/alg/algo_map.csv")"
# every measured winner is a candidate that ran (a row of algorithms.csv)
awk -F, 'NR == FNR { if (FNR > 1) ran[$1 == "ps" ? "ps" : $2] = 1; next }
         $1 == "measured" && !($4 in ran) { bad = 1 } END { exit bad }' "$T_TMP/alg/algorithms.csv" "$T_TMP/alg/algo_map.csv" ||
    t_fail "a winner that did not run: $(cat "$T_TMP/alg/algo_map.csv")"
for r in selector ompi mpich; do
    grep -q "^$r  *2 cells: " "$T_TMP/alg/selector.txt" || t_fail "selector.txt lacks $r: $(cat "$T_TMP/alg/selector.txt")"
done
grep -q '^pruned (model time over 1.5 x' "$T_TMP/alg/manifest.txt" || t_fail "manifest lacks the pruned list"
grep -q '^selector: .*gamma_s_per_byte' "$T_TMP/alg/manifest.txt" || t_fail "manifest lacks the calibration"
t_end
t_exit
