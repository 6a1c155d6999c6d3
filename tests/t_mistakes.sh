# t_mistakes.sh -- the mistake modes (--mistake, common/train/mistake.h) and
# --loss-out, on the parameter server and the ring (experiments/launch.sh,
# K = 4 on 127.0.0.1) against bin/reference. Each mode shows its
# observable effect against the correct run, and each system with a
# mistake still matches the reference with the same mistake:
#   sum-not-mean      the loss explodes (x 1e6 within 5 steps), every file
#                     still finite
#   no-divide-micro   --micro 4: after one step from w0 = 0 the weights are
#                     4 x the correct ones
#   mean-of-means     equal shards: the correct weights; --shard-weights
#                     5,1,1,3: different, and the reference's mean-of-means
#   zero-grad-inside  --micro 4: the reference's run on the last
#                     micro-batches, not the correct one
#   sync-every-micro  --micro 4: the correct weights exactly (synthetic
#                     f32), 4 x the bytes per step in the merged CSV row
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need mistakes "mistake modes" ps_server ps_worker ring_worker reference psr_merge

# ratio A B R TOL: every value of A is R times B's, within TOL relative
# (values of B that are 0 must be 0 in A too).
ratio() {
    awk -v r="$3" -v tol="$4" '
        NR == FNR { ref[++n] = $NF; next }
        { m++; want = r * ref[m]; d = $NF - want; if (d < 0) d = -d
          b = want; if (b < 0) b = -b
          if (!(d <= tol * b)) { if (++bad <= 3) printf "value %d: %s, want %s x %s; ", m, $NF, r, ref[m] } }
        END { if (m != n || n == 0) { printf "%d values vs %d", m, n; exit 1 }
              exit bad > 0 }' "$2" "$1"
}

# differ A B REL: some value of A differs from B's by more than REL relative.
differ() {
    awk -v rel="$3" '
        NR == FNR { ref[++n] = $NF; next }
        { m++; d = $NF - ref[m]; if (d < 0) d = -d; b = ref[m]; if (b < 0) b = -b
          if (d > rel * b) far = 1 }
        END { exit !(far && m == n) }' "$2" "$1"
}

# run SYSTEM NAME FLAGS...: a K = 4 job through the launcher, the weights
# in $T_TMP/NAME.w.R, the loss per step in $T_TMP/NAME.loss (the server's,
# or ring rank 0's), the merged row in $T_TMP/NAME.csv.
run() {
    sys=$1 name=$2
    shift 2
    if [ "$sys" = ps ]; then role="--server-args"; else role="--worker-args"; fi
    job 60 "$launch" "$sys" 4 --timeout 10 --weights-out "$T_TMP/$name.w" \
        "$role" "--loss-out $T_TMP/$name.loss" --csv-out "$T_TMP/$name.csv" "$@"
    expect_rc 0
    [ -s "$T_TMP/$name.w.0" ] || t_fail "$sys $name: no weights ($T_TMP/$name.w.0)"
    [ -s "$T_TMP/$name.w.3" ] && ! cmp -s "$T_TMP/$name.w.0" "$T_TMP/$name.w.3" &&
        t_fail "$sys $name: workers 0 and 3 ended with different weights"
    cp "$T_TMP/err" "$T_TMP/$name.err"
}

# ref NAME FLAGS...: bin/reference, weights in $T_TMP/NAME.ref.0, loss
# per step in $T_TMP/NAME.ref.loss (--loss-out) and on stdout.
ref() {
    name=$1
    shift
    "$PSR_BIN/reference" --world 4 "$@" --weights-out "$T_TMP/$name.ref" \
        --loss-out "$T_TMP/$name.ref.loss" >"$T_TMP/$name.ref.out" 2>"$T_TMP/$name.ref.err" ||
        t_fail "bin/reference $*: $(cat "$T_TMP/$name.ref.err")"
}

# same A B TOL WHAT: the weights (or loss) files A and B agree within TOL.
same() {
    why=$(t_close "$1" "$2" "$3") || t_fail "$4: $why"
}

# bytes_in FILE: the bytes_in column (14) of a merged CSV row.
bytes_in() {
    awk -F, 'NR == 2 { print $14 }' "$1"
}

t_case mistakes-1.1 "--loss-out: PS server, ring rank 0 and the reference write the same loss, every step"
ref lin --steps 12
for sys in ps ring; do
    run $sys "lin-$sys" --steps 12
    [ "$(head -n 1 "$T_TMP/lin-$sys.loss")" = "# step loss" ] ||
        t_fail "$sys: header is '$(head -n 1 "$T_TMP/lin-$sys.loss")'"
    [ "$(grep -vc '^#' "$T_TMP/lin-$sys.loss")" = 12 ] ||
        t_fail "$sys: $(grep -vc '^#' "$T_TMP/lin-$sys.loss") loss lines, want 12 (every step)"
    awk '!/^#/ && $1 != NR - 2 { exit 1 }' "$T_TMP/lin-$sys.loss" ||
        t_fail "$sys: steps not numbered 0..11"
    same "$T_TMP/lin-$sys.loss" "$T_TMP/lin.ref.loss" 1e-12 "$sys loss vs the reference's"
    same "$T_TMP/lin-$sys.w.0" "$T_TMP/lin.ref.0" 1e-12 "$sys weights vs the reference's"
done
# The reference's file is its stdout's "# step loss" part, byte for byte.
sed -n '/^# step loss/,$p' "$T_TMP/lin.ref.out" | cmp -s - "$T_TMP/lin.ref.loss" ||
    t_fail "reference: --loss-out differs from its stdout"
t_end

t_case mistakes-1.2 "sum-not-mean: the loss explodes (x1e6 in 5 steps) on both systems, as in the reference"
ref snm --steps 5 --mistake sum-not-mean
for sys in ps ring; do
    run $sys "snm-$sys" --steps 5 --mistake sum-not-mean
    grep -q 'MISTAKE MODE sum-not-mean: ' "$T_TMP/snm-$sys.err" ||
        t_fail "$sys: no 'MISTAKE MODE sum-not-mean' line on stderr"
    awk '!/^#/ { if (n++ == 0) first = $2; last = $2 }
         END { exit !(n == 5 && last > 1e6 * first) }' "$T_TMP/snm-$sys.loss" ||
        t_fail "$sys: loss did not explode: $(grep -v '^#' "$T_TMP/snm-$sys.loss" | sed -n '1p;$p' | tr '\n' ' ')"
    same "$T_TMP/snm-$sys.loss" "$T_TMP/snm.ref.loss" 1e-9 "$sys loss vs the reference's sum-not-mean"
    same "$T_TMP/snm-$sys.w.0" "$T_TMP/snm.ref.0" 1e-9 "$sys weights vs the reference's sum-not-mean"
done
# ... while the correct run's loss went down over the same 5 steps.
awk '!/^#/ { if (n++ == 0) first = $2; if (n == 5) fifth = $2 } END { exit !(fifth < first) }' \
    "$T_TMP/lin.ref.loss" || t_fail "the correct loss did not go down"
t_end

t_case mistakes-1.3 "no-divide-micro, --micro 4: one step from w0 = 0 moves 4x as far as the correct one"
ref ndm1 --steps 1 --micro 4 --mistake no-divide-micro
ref ok1 --steps 1 --micro 4
for sys in ps ring; do
    run $sys "ok1-$sys" --steps 1 --micro 4
    run $sys "ndm1-$sys" --steps 1 --micro 4 --mistake no-divide-micro
    why=$(ratio "$T_TMP/ndm1-$sys.w.0" "$T_TMP/ok1-$sys.w.0" 4 1e-12) ||
        t_fail "$sys: weights after one step are not 4x the correct ones: $why"
    same "$T_TMP/ndm1-$sys.w.0" "$T_TMP/ndm1.ref.0" 1e-12 "$sys vs the reference's no-divide-micro"
done
why=$(ratio "$T_TMP/ndm1.ref.0" "$T_TMP/ok1.ref.0" 4 1e-12) || t_fail "reference: not 4x: $why"
t_end

t_case mistakes-1.4 "mean-of-means: exact with equal shards; --shard-weights 5,1,1,3 differs (= reference's)"
ref ok5 --steps 5
ref mom --steps 5 --shard-weights 5,1,1,3 --mistake mean-of-means
for sys in ps ring; do
    run $sys "mome-$sys" --steps 5 --mistake mean-of-means
    same "$T_TMP/mome-$sys.w.0" "$T_TMP/ok5.ref.0" 1e-12 "$sys, equal shards: not the correct weights"
    run $sys "momu-$sys" --steps 5 --shard-weights 5,1,1,3 --mistake mean-of-means
    differ "$T_TMP/momu-$sys.w.0" "$T_TMP/ok5.ref.0" 1e-6 ||
        t_fail "$sys, shards 5,1,1,3: the weights do not differ from the correct ones"
    same "$T_TMP/momu-$sys.w.0" "$T_TMP/mom.ref.0" 1e-12 "$sys vs the reference's mean-of-means"
    same "$T_TMP/momu-$sys.loss" "$T_TMP/mom.ref.loss" 1e-12 "$sys loss vs the reference's mean-of-means"
done
t_end

t_case mistakes-1.5 "zero-grad-inside, --micro 4: trains on the last micro-batches only (= reference's), not the correct run"
ref zgi --steps 5 --micro 4 --mistake zero-grad-inside
for sys in ps ring; do
    run $sys "zgi-$sys" --steps 5 --micro 4 --mistake zero-grad-inside
    same "$T_TMP/zgi-$sys.w.0" "$T_TMP/zgi.ref.0" 1e-12 "$sys vs the reference's zero-grad-inside"
    differ "$T_TMP/zgi-$sys.w.0" "$T_TMP/ok5.ref.0" 1e-3 ||
        t_fail "$sys: zero-grad-inside ended on the correct weights"
done
# The first step of it is a quarter of the correct one's (one micro-batch
# of four, divided by the full count): the last quarter's gradient only.
ref zgi1 --steps 1 --micro 4 --mistake zero-grad-inside
differ "$T_TMP/zgi1.ref.0" "$T_TMP/ok1.ref.0" 0.5 || t_fail "reference: first step not much shorter"
t_end

t_case mistakes-1.6 "sync-every-micro, --micro 4: exactly the correct weights (synthetic f32), 4x bytes_in per step"
syn="--workload synthetic --params 1000 --dtype f32 --batch 1000 --lr 0.25 --steps 6 --micro 4"
# shellcheck disable=SC2086
ref syn $syn
for sys in ps ring; do
    # shellcheck disable=SC2086
    run $sys "syn-$sys" $syn
    # shellcheck disable=SC2086
    run $sys "sem-$sys" $syn --mistake sync-every-micro
    grep -q 'MISTAKE MODE sync-every-micro: ' "$T_TMP/sem-$sys.err" ||
        t_fail "$sys: no 'MISTAKE MODE sync-every-micro' line"
    cmp -s "$T_TMP/sem-$sys.w.0" "$T_TMP/syn-$sys.w.0" ||
        t_fail "$sys: weights differ from the correct run's: $(diff "$T_TMP/sem-$sys.w.0" "$T_TMP/syn-$sys.w.0" | head -2 | tr '\n' ' ')"
    cmp -s "$T_TMP/syn-$sys.w.0" "$T_TMP/syn.ref.0" || t_fail "$sys: correct run is not the reference"
    a=$(bytes_in "$T_TMP/syn-$sys.csv") b=$(bytes_in "$T_TMP/sem-$sys.csv")
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b == 4 * a) }' ||
        t_fail "$sys: bytes_in per step $b with the mistake, $a without: want exactly 4x"
    echo "     $sys bytes_in per step: correct $a, sync-every-micro $b"
done
t_end

t_case mistakes-1.7 "bad --mistake and --loss-out: exit 64 with one line; GPU paths refuse what they do not make"
# args B: the least a binary needs besides the flag under test.
args() {
    case $1 in
    ps_server) echo "--workers 1" ;;
    ps_worker) echo "--rank 0 --world 1 --server 127.0.0.1:1" ;;
    *) echo "--rank 0 --world 1" ;;
    esac
}
for b in ps_server ps_worker ring_worker reference; do
    # shellcheck disable=SC2046
    job 10 "$PSR_BIN/$b" $(args $b) --mistake sum-of-means
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$b: $(wc -l <"$T_TMP/err") lines on stderr, want 1"
    expect_grep err "^$b: --mistake sum-of-means: not a mistake mode.*; see $b --help\$"
    job 10 "$PSR_BIN/$b" --help
    expect_grep out 'zero-grad-inside'
done
for b in ps_server ring_worker reference; do
    # shellcheck disable=SC2046
    job 10 "$PSR_BIN/$b" $(args $b) --loss-out "$T_TMP/no/such/dir/loss"
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$b: $(wc -l <"$T_TMP/err") lines on stderr, want 1"
    expect_grep err 'loss-out'
done
job 10 "$PSR_BIN/ring_worker" --rank 0 --world 1 --device cuda --mistake zero-grad-inside
expect_rc 64
expect_grep err 'not made on the GPU'
job 10 "$PSR_BIN/ps_worker" --rank 0 --world 1 --server 127.0.0.1:1 --device cuda --mistake mean-of-means
expect_rc 64
expect_grep err 'not made on the GPU'
t_end

if command -v gnuplot >/dev/null; then
    t_case mistakes-1.8 "experiments/lab_loss.sh writes every loss file and loss.png/.svg (plot 5)"
    job 120 "$PSR_TESTS/../experiments/lab_loss.sh" --steps 8 "$T_TMP/lab"
    expect_rc 0
    for f in loss_ref loss_ps loss_ring loss_ps_sum-not-mean loss_ring_zero-grad-inside \
        loss_ps_sync-every-micro loss_ring_mean-of-means loss_ps_no-divide-micro; do
        [ "$(grep -vc '^#' "$T_TMP/lab/$f.dat" 2>/dev/null)" = 8 ] || t_fail "$f.dat: not 8 steps"
    done
    for f in loss.png loss.svg; do
        [ -s "$T_TMP/lab/$f" ] || t_fail "no $f"
    done
    expect_grep err 'largest relative difference from the reference'
    t_end
else
    t_skip mistakes-1.8 "lab_loss.sh" "no gnuplot"
fi
t_exit
