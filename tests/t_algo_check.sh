# t_algo_check.sh -- experiments/algo_check.sh (issue 29: every all-reduce
# algorithm against its formula and psring_sim) at one cheap point, K = 4,
# 4 KiB, one rep: a row for every algorithm in the CSV and the markdown
# table, each with a measured time, bin/model's time as its model_s, the
# ratios computed from those, the simulator's time where psring_sim is
# built (the ring's and the trees' on the star equal to their formulas);
# every real run in
# runs.csv; bad flags refused with one line, exit 64.
. "$PSR_TESTS/lib.sh"
script="$PSR_TESTS/../experiments/algo_check.sh"
t_need algo-check "the algorithm check" ring_worker psr_merge model
algos="ring rd rabenseifner tree dbtree hring swing-lat swing-bw"

t_case algo-check-1.1 "K = 4, 4 KiB, one rep: a row per algorithm, real and model times, bin/model's model_s, ratios from them"
job 120 bash "$script" --ks 4 --sizes 4K --reps 1 --link-bw 32Mbit --link-latency 1ms --out "$T_TMP/ac"
expect_rc 0
csv=$T_TMP/ac/algo_check.csv
for a in $algos; do
    row=$(awk -F, -v a="$a" '$1 == a && $2 == 4 && $3 == 4096' "$csv" 2>/dev/null)
    [ -n "$row" ] || { t_fail "no row for $a in $csv: $(cat "$csv" 2>/dev/null)"; continue; }
    g=""; [ "$a" = hring ] && g="--ranks-per-host 2"
    # shellcheck disable=SC2086
    m=$("$PSR_BIN/model" --algo "$a" --K 4 --bytes 4096 --bw 32Mbit --latency 1ms $g)
    echo "$row" | awk -F, -v m="$m" '
        $4 != m { print "model_s " $4 " is not bin/model'"'"'s " m; bad = 1 }
        !($5 > 0) { print "real_s " $5 " is not a time"; bad = 1 }
        $9 != sprintf("%.3f", $5 / $4) { print "real_model " $9 " is not " $5 " / " $4; bad = 1 }
        $13 != 1 { print "reps " $13 ", want 1"; bad = 1 }
        END { exit bad }' > "$T_TMP/why" || t_fail "$a: $(cat "$T_TMP/why"): $row"
    if [ -x "$PSR_BIN/psring_sim" ]; then
        echo "$row" | awk -F, '!($8 > 0) || $10 != sprintf("%.3f", $8 / $4) || $11 != sprintf("%.3f", $8 / $5) { exit 1 }' ||
            t_fail "$a: the sim columns (sim_s, sim_model, sim_real) are wrong: $row"
    fi
    grep -q "^| $a | 4 | " "$T_TMP/ac/algo_check.md" || t_fail "no row for $a in algo_check.md"
done
if [ -x "$PSR_BIN/psring_sim" ]; then
    awk -F, '$1 == "ring" && $10 != "1.000" { exit 1 }' "$csv" ||
        t_fail "the ring on the simulated star is not its formula: $(grep '^ring,' "$csv")"
    # The trees at 4 KiB: one segment, sent whole with its header (eager)
    # in both the model and the simulator (base/tree_shape.h, tree_cost;
    # xport_sim.c, EAGER AND RENDEZVOUS): equal. A rendezvous in either
    # reads 1.33 here.
    awk -F, '($1 == "tree" || $1 == "dbtree") && $10 != "1.000" { bad = 1 } END { exit bad }' "$csv" ||
        t_fail "a tree on the simulated star is not its formula: $(grep 'tree,' "$csv")"
fi
n=$(awk -F, 'NR > 1' "$T_TMP/ac/runs.csv" 2>/dev/null | wc -l)
[ "$n" = 8 ] || t_fail "runs.csv has $n runs, want 8"
grep -q '^jobs_failed: 0' "$T_TMP/ac/manifest.txt" 2>/dev/null || t_fail "the manifest does not say jobs_failed: 0"
t_end

t_case algo-check-1.2 "bad flags: one usage line, exit 64, nothing run"
for args in "--ks 1" "--ks x" "--sizes 4Q" "--algos ring,rd" "--algos auto" "--reps 0" "--link-bw fast" "--bogus"; do
    # shellcheck disable=SC2086
    job 20 bash "$script" $args --out "$T_TMP/bad"
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$args: not one line: $(cat "$T_TMP/err")"
    grep -q 'see ' "$T_TMP/err" || t_fail "$args: no 'see ... --help': $(cat "$T_TMP/err")"
    [ ! -e "$T_TMP/bad" ] || t_fail "$args: made the results folder"
done
job 20 bash "$script" --help
expect_rc 0
expect_grep out "algo_check.csv"
t_end
t_exit
