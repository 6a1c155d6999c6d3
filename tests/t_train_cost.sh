# t_train_cost.sh -- cpu_s_per_gb of a training row counts what moving
# the bytes cost, not the workload's compute (issue 27; metrics.h, MERGE
# RULES: cpu_s_per_gb): every training rank's and worker's record carries
# compute_cpu_s (its gradient, closed-form check and apply, counted on
# the threads that ran them: step.h, step_compute_cpu), a part of its
# cpu_s; psr_merge takes (cpu_s - compute_cpu_s) / GB moved, the largest
# over the records. A --bench record has none. Relations between the
# records' own figures, never a time against a bound.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need train-cost-1 "cpu_s_per_gb without the compute" ring_worker ps_server ps_worker psr_merge

csv_awk() {
    awk -F, "FNR == 1 { split(\"\", c); for (i = 1; i <= NF; i++) c[\$i] = i } $1" "$2"
}
# cost DIR GLOB: the largest (cpu_s - compute_cpu_s) / GB and cpu_s / GB
# over DIR's records matching GLOB ("comm all"), bytes from the step lines.
cost() {
    for f in "$1"/$2; do
        awk '$1 == "cpu_s" { c = $2 } $1 == "compute_cpu_s" { k = $2 } $1 == "step" { m += $6 + $7 }
             END { if (m > 0) printf "%.9g %.9g\n", (c - k) / (m * 1e-9), c / (m * 1e-9) }' "$f"
    done | awk '{ if ($1 > a) a = $1; if ($2 > b) b = $2 } END { printf "%.9g %.9g\n", a, b }'
}
# 1 MiB of f32: a step's hashing (the gradient and the check) is a few ms
SYN="--workload synthetic --dtype f32 --params 262144 --steps 4 --warmup 1 --timeout 20"

t_case train-cost-1.1 "ring K=2 training: each record's compute_cpu_s is in (0, cpu_s); the row's cpu_s_per_gb is the largest (cpu_s - compute_cpu_s) / GB, below cpu_s / GB"
job 120 "$launch" ring 2 $SYN --link-bw 1Gbit --out "$T_TMP/r" --csv-out "$T_TMP/r.csv"
expect_rc 0
for f in "$T_TMP"/r/rec.rank.*; do
    awk '$1 == "cpu_s" { c = $2 } $1 == "compute_cpu_s" { k = $2; n++ } END { exit !(n == 1 && k > 0 && k < c) }' "$f" ||
        t_fail "$f: compute_cpu_s not in (0, cpu_s): $(grep cpu_s "$f" | tr '\n' ' ')"
done
set -- $(cost "$T_TMP/r" 'rec.rank.*')
got=$(csv_awk 'FNR == 2 { print $c["cpu_s_per_gb"] }' "$T_TMP/r.csv")
awk -v g="$got" -v w="$1" -v all="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g > 0 && d <= 1e-4 * w && g < all) }' ||
    t_fail "cpu_s_per_gb $got: want the records' $1, positive and below their cpu_s / GB $2"
t_end

t_case train-cost-1.2 "PS K=2: the workers' records carry compute_cpu_s, the server's none; cpu_s_per_gb positive"
job 120 "$launch" ps 2 $SYN --link-bw 1Gbit --out "$T_TMP/p" --csv-out "$T_TMP/p.csv"
expect_rc 0
for f in "$T_TMP"/p/rec.worker.*; do
    awk '$1 == "cpu_s" { c = $2 } $1 == "compute_cpu_s" { k = $2; n++ } END { exit !(n == 1 && k > 0 && k < c) }' "$f" ||
        t_fail "$f: compute_cpu_s not in (0, cpu_s): $(grep cpu_s "$f" | tr '\n' ' ')"
done
! grep -q '^compute_cpu_s' "$T_TMP"/p/rec.server.* || t_fail "a server's record has compute_cpu_s"
csv_awk 'FNR == 2 { exit !($c["cpu_s_per_gb"] > 0) }' "$T_TMP/p.csv" ||
    t_fail "cpu_s_per_gb not positive: $(tail -n 1 "$T_TMP/p.csv")"
t_end

t_case train-cost-1.3 "ring --bench: no compute_cpu_s (the loop computes nothing); a record's compute_cpu_s above its cpu_s counts 0, a negative one is refused"
job 120 "$launch" ring 2 --bench -b 64K -e 64K -n 3 -w 1 --link-bw 1Gbit --timeout 20 --out "$T_TMP/b" \
    --csv-out "$T_TMP/b.csv"
expect_rc 0
! grep -q '^compute_cpu_s' "$T_TMP"/b/rec.rank.* || t_fail "a --bench record has compute_cpu_s"
for r in 0 1; do sed 's/^compute_cpu_s .*/compute_cpu_s 1000/' "$T_TMP/r/rec.rank.$r" >"$T_TMP/big.$r"; done
job 10 "$PSR_BIN/psr_merge" "$T_TMP/big.0" "$T_TMP/big.1"
expect_rc 0
csv_awk 'FNR == 2 { exit !($c["cpu_s_per_gb"] == 0) }' "$T_TMP/out" ||
    t_fail "compute over cpu_s: cpu_s_per_gb $(csv_awk 'FNR == 2 { print $c["cpu_s_per_gb"] }' "$T_TMP/out"), want 0"
sed 's/^compute_cpu_s .*/compute_cpu_s -1/' "$T_TMP/r/rec.rank.1" >"$T_TMP/neg.1"
job 10 "$PSR_BIN/psr_merge" "$T_TMP/r/rec.rank.0" "$T_TMP/neg.1"
expect_rc 1
expect_grep err "neg.1"
t_end
t_exit
