# t_algo_map.sh -- the map of who wins where and the selector (issue 29):
# experiments/algo_map.awk on a small fixture (the winner, runner-up and
# margin of every cell checked exactly, and the markdown table), the heat
# map drawn from it by plots/algo_map.gp (a PNG that exists and is not
# empty), the model's map (lab_algorithms.sh with LAB_ALG_MODEL=1, what
# `make lab` draws) agreeing with bin/model, bin/model --algo auto, and
# ring_worker --algo auto as real processes: rank 0's choice in every
# rank's record, the calibration written and then read back, its refusals.
. "$PSR_TESTS/lib.sh"
root=$PSR_TESTS/..
launch="$root/experiments/launch.sh"
t_need algo-map "the map and the selector" model ring_worker psr_merge

# The fixture: shared-schema rows (columns by name, some extra and some
# reordered), four cells, the PS in its three placements.
cat > "$T_TMP/rows.csv" <<'EOF'
algo,system,K,bytes,time_s,servers,placement,model_s
ring,ring,2,4096,0.010,,,
rd,ring,2,4096,0.005,,,
,ps,2,4096,0.006,1,separate,
ring,ring,2,1048576,0.30,,,
rd,ring,2,1048576,0.40,,,
,ps,2,1048576,0.50,2,separate,
,ps,2,1048576,0.29,4,colocated,
ring,ring,4,4096,0.02,,,
rabenseifner,ring,4,4096,0.012,,,
rabenseifner,ring,4,4096,0.011,,,
rd,ring,4,1048576,0.9,,,
ring,ring,4,1048576,0.6,,,
tree,ring,4,1048576,0.7,,,
dbtree,ring,4,1048576,,,,
EOF
names="ps ps-S ps-coloc ring rd rabenseifner tree dbtree"

t_case algo-map-1.1 "algo_map.awk: each cell's winner, runner-up and margin, exactly (the least time of a candidate counts)"
job 10 awk -F, -v source=fx -v names="$names" -f "$root/experiments/algo_map.awk" "$T_TMP/rows.csv"
expect_rc 0
cut -d, -f1-8,11,12 "$T_TMP/out" > "$T_TMP/got"
cat > "$T_TMP/want" <<'EOF'
source,K,bytes,winner,winner_s,runner_up,runner_up_s,margin,wi,candidates
fx,2,4096,rd,0.005,ps,0.006,0.2000,5,3
fx,2,1048576,ps-coloc,0.29,ring,0.3,0.0345,3,4
fx,4,4096,rabenseifner,0.011,ring,0.02,0.8182,6,2
fx,4,1048576,ring,0.6,tree,0.7,0.1667,4,3
EOF
diff "$T_TMP/want" "$T_TMP/got" > "$T_TMP/diff" || t_fail "the map: $(cat "$T_TMP/diff")"
cp "$T_TMP/out" "$T_TMP/map.csv"
t_end

t_case algo-map-1.2 "the markdown table: a row per K, a column per n, 'winner +margin%'"
job 10 awk -F, -v mode=md -f "$root/experiments/algo_map.awk" "$T_TMP/map.csv"
expect_rc 0
grep -qx '| 2 | rd +20% | ps-coloc +3% |' "$T_TMP/out" || t_fail "K = 2 row: $(cat "$T_TMP/out")"
grep -qx '| 4 | rabenseifner +82% | ring +17% |' "$T_TMP/out" || t_fail "K = 4 row: $(cat "$T_TMP/out")"
grep -qx '| K \\ n | 4K | 1M |' "$T_TMP/out" || t_fail "header: $(head -n 1 "$T_TMP/out")"
t_end

if command -v gnuplot >/dev/null; then
    t_case algo-map-1.3 "plots/algo_map.gp draws the fixture's map (a PNG, not empty)"
    job 30 gnuplot -e "dir='$root/plots/'; map='$T_TMP/map.csv'; srcs='fx'; names='$names'; fmt='png'; out='$T_TMP/map.png'; sub='fixture'" \
        "$root/plots/algo_map.gp"
    expect_rc 0
    [ -s "$T_TMP/map.png" ] || t_fail "no PNG: $(cat "$T_TMP/err")"
    t_end

    t_case algo-map-1.4 "the model's map (make lab): every candidate in every cell, winners bin/model's least time"
    job 60 env LAB_ALG_MODEL=1 bash "$root/experiments/lab_algorithms.sh" --out "$T_TMP/lab" \
        --link-bw 32Mbit --link-latency 1ms --ks "2 8" --sizes "4K 16M"
    expect_rc 0
    [ -s "$T_TMP/lab/algo_map_model.png" ] || t_fail "no algo_map_model.png: $(cat "$T_TMP/err")"
    n=$(grep -c '^model,' "$T_TMP/lab/algo_map_model.csv")
    [ "$n" = 4 ] || t_fail "$n cells, want 4"
    # the all-reduce panel: the same 4 cells, no PS among the winners
    n=$(grep -c '^all-reduce,' "$T_TMP/lab/algo_map_model.csv")
    [ "$n" = 4 ] || t_fail "$n all-reduce cells, want 4"
    grep -q '^all-reduce,[0-9]*,[0-9]*,ps' "$T_TMP/lab/algo_map_model.csv" && t_fail "a PS won the all-reduce panel"
    want=$(( 3 + $("$PSR_BIN/model" --help 2>&1 | sed -n 's/^  --algo ps|\([^ ]*\).*/\1/p' | tr '|' '\n' | grep -vc -e '^auto$' -e '^swing-' -e '^hring$') ))
    awk -F, -v w="$want" '$1 == "model" && $12 != w { bad = 1 } END { exit bad }' "$T_TMP/lab/algo_map_model.csv" ||
        t_fail "candidates per cell, want $want: $(cat "$T_TMP/lab/algo_map_model.csv")"
    # K = 8, 4 KiB: rd 3 (a + n/bw) = 6.072 ms against the colocated PS's
    # 2 (a + 7/8 n/bw) = 3.792 ms (one round of K-1 parallel messages each way)
    grep -q '^model,8,4096,ps-coloc,0.003792,' "$T_TMP/lab/algo_map_model.csv" ||
        t_fail "K = 8, 4K: $(grep '^model,8,4096' "$T_TMP/lab/algo_map_model.csv")"
    t_end
fi

t_case algo-map-2.1 "bin/model --algo auto: the least time and the runner-up; --gamma adds the sums"
job 10 "$PSR_BIN/model" --algo auto --K 8 --bytes 8K --bw 4MB --latency 1ms
expect_rc 0
[ "$(cat "$T_TMP/out")" = "rd 0.009144 rabenseifner 0.009584" ] || t_fail "g = 0: $(cat "$T_TMP/out")"
job 10 "$PSR_BIN/model" --algo auto --K 8 --bytes 8K --bw 4MB --latency 1ms --gamma 1e-7
[ "$(cut -d' ' -f1,3 "$T_TMP/out")" = "rabenseifner rd" ] || t_fail "g = 1e-7: $(cat "$T_TMP/out")"
job 10 "$PSR_BIN/model" --algo rd --K 6 --bytes 1e6 --bw 1e8 --latency 0 --gamma 1e-9
awk '{ d = $1 - 0.043; exit !(d < 1e-9 && d > -1e-9) }' "$T_TMP/out" || t_fail "rd K = 6 with g: $(cat "$T_TMP/out"), want 4 x 0.01 + 3e-3"
for bad in "--algo auto --K 8 --bytes 8K" "--algo auto --K 8 --sweep 1K,1M,3 --bw 1MB" "--algo rd --K 8 --bytes 8K --bw 1MB --gamma -1"; do
    job 10 "$PSR_BIN/model" $bad
    expect_rc 64
done
t_end

t_case algo-map-2.2 "ring_worker --algo auto, K = 3: rank 0 chooses, every rank runs it, the CSV's algo says it; the calibration is written"
job 60 "$launch" ring 3 --bench --link-bw 32Mbit --link-latency 1ms --csv-out "$T_TMP/row.csv" \
    --worker-args "--algo auto --calibration $T_TMP/cal.txt -b 64K -e 64K -w 0 -n 1" --time-limit 50
expect_rc 0
pick=$(grep 'rank0| .*--algo auto: ' "$T_TMP/err" | sed 's/.*--algo auto: \([a-z-]*\) (.*/\1/')
g=$(awk '$1 == "gamma_s_per_byte" { print $2 }' "$T_TMP/cal.txt")
[ -n "$g" ] && grep -q '^latency_s 0.001$' "$T_TMP/cal.txt" && grep -q '^bw_Bps 4000000$' "$T_TMP/cal.txt" ||
    t_fail "calibration file: $(cat "$T_TMP/cal.txt" 2>&1)"
want=$("$PSR_BIN/model" --algo auto --K 3 --bytes 64K --bw 32Mbit --latency 1ms --gamma "${g:-0}" | cut -d' ' -f1)
[ -n "$pick" ] && [ "$pick" = "$want" ] || t_fail "rank 0 chose '$pick', bin/model '$want': $(grep auto "$T_TMP/err")"
[ "$(grep -c "rank[12]| .*--algo auto: rank 0 chose $want" "$T_TMP/err")" = 2 ] || t_fail "ranks 1, 2: $(grep auto "$T_TMP/err")"
awk -F, -v w="$want" 'NR == 2 { exit !($1 == "ring" && $2 == w && $4 == 3) }' "$T_TMP/row.csv" ||
    t_fail "row: $(sed -n 2p "$T_TMP/row.csv" 2>&1)"
t_end

t_case algo-map-2.3 "--calibration FILE that exists is read: a latency of 1 s makes rd (fewest steps) the choice"
printf '# by hand\nlatency_s 1\nbw_Bps 4e6\ngamma_s_per_byte 0\n' > "$T_TMP/slow.txt"
job 60 "$launch" ring 4 --bench --link-bw 32Mbit --link-latency 1ms --csv-out "$T_TMP/row2.csv" \
    --worker-args "--algo auto --calibration $T_TMP/slow.txt -b 4K -e 4K -w 0 -n 1" --time-limit 50
expect_rc 0
awk -F, 'NR == 2 { exit !($2 == "rd") }' "$T_TMP/row2.csv" || t_fail "row: $(sed -n 2p "$T_TMP/row2.csv" 2>&1)"
grep -q 'rank0| .*--algo auto: rd (.*(--calibration file)' "$T_TMP/err" || t_fail "log: $(grep auto "$T_TMP/err")"
t_end

t_case algo-map-2.4 "--algo auto's refusals: no link and no file, a bad file, --calibration alone, --compress: one line, exit 64"
printf 'latency_s 1\nbw_Bps 0\ngamma_s_per_byte 0\n' > "$T_TMP/bad.txt"
for args in "--algo auto" "--algo auto --calibration $T_TMP/bad.txt" "--algo rd --calibration $T_TMP/slow.txt" \
            "--algo auto --compress fp16 --link-bw 1MB"; do
    job 10 "$PSR_BIN/ring_worker" --rank 0 --world 1 --bench -b 4K -e 4K $args
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$args: $(cat "$T_TMP/err")"
done
t_end
t_exit
