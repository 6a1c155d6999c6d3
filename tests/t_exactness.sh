# t_exactness.sh -- bin/exactness reproduces the seed's Output 10.5.1 and
# its unequal-shard exercise, within the bounds the foundation issue sets.
. "$PSR_TESTS/lib.sh"

# field LABEL: the number after "LABEL ... :" in the last job's output.
field() { awk -F': *' -v k="$1" 'index($0, k) == 1 { split($2, a, " "); print a[1] }' "$T_TMP/out"; }
# le A B: A <= B as numbers (awk reads 2.50e-16).
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0 && a != "") }'; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > b + 0 && a != "") }'; }

t_case exactness-1.1 "seed's table: N=4096 K=8 m=4, distributed step == big batch"
job 60 "$PSR_BIN/exactness"
expect_rc 0
expect_grep out '^examples N  *: 4096$'
expect_grep out '^workers K, micro m  *: 8 4$'
d=$(field "max |w_acc - w_big|"); r=$(field "rel error of the step"); m=$(field "sum/N vs mean-of-means")
le "$d" 1e-14 || t_fail "max |w_acc - w_big| = '$d', want <= 1e-14"
le "$r" 1e-13 || t_fail "relative error = '$r', want <= 1e-13"
le "$m" 1e-14 || t_fail "sum/N vs mean-of-means (equal shards) = '$m', want <= 1e-14"
t_end

t_case exactness-1.2 "unequal shards: mean-of-means is off, sum/B stays exact"
s=$(field "sum/B vs big batch"); mm=$(field "mean-of-means vs big")
le "$s" 1e-14 || t_fail "sum/B vs big = '$s', want <= 1e-14"
gt "$mm" 1e-6 || t_fail "mean-of-means vs big = '$mm', want > 1e-6"
expect_grep out 'worker 0 has 2048 rows'
# the other seven share 2048 rows as 292 and 293: the line gives the true min..max
expect_grep out 'workers 1\.\.7 have 292\.\.293$'
t_end

t_case exactness-1.3 "other shapes keep the bound (K=3, m=5, 1000 rows; K=1)"
job 60 "$PSR_BIN/exactness" --workers 3 --micro 5 --rows 1000
expect_rc 0
d=$(field "max |w_acc - w_big|")
le "$d" 1e-14 || t_fail "K=3 m=5: max diff '$d'"
job 60 "$PSR_BIN/exactness" --workers 1 --micro 1
expect_rc 0
d=$(field "max |w_acc - w_big|")
le "$d" 0 || t_fail "K=1 m=1 must be bit-identical, got '$d'"
t_end

t_case exactness-1.4 "impossible shapes are usage errors"
job 10 "$PSR_BIN/exactness" --workers 100 --micro 100 --rows 50
expect_rc 64
expect_grep err 'exceeds --rows'
job 10 "$PSR_BIN/exactness" --workers 0
expect_rc 64
expect_grep err '--workers'
t_end
t_exit
