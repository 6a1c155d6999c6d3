# t_zero.sh -- the optimizers with state (--optimizer momentum|adam) and
# ZeRO on the ring (--zero 1|2|3), as real processes on 127.0.0.1 through
# experiments/launch.sh:
#   - ring and parameter server with momentum and Adam: every rank or
#     worker ends with bit-identical weights, exactly bin/reference's for
#     the synthetic workload (exact sums in any order), within 1e-9 for
#     linreg f64;
#   - --zero 1, 2 and 3 give weights bit-identical to the ring's DDP
#     path (mlp, n = 6337 odd, whose sums are NOT exact: the same chunks,
#     the same order of adds), for K in 1 2 3 5 8, f32 and f64, momentum
#     and Adam, one bucket and several;
#   - rank 0's bytes per step (the link's counters) are the all-reduce's
#     exactly under --zero 1 and 2, and under --zero 3 its formula (one
#     more all-gather of the parameters, and the count's 3-element slots);
#   - each rank holds the optimizer state of its shard only: the states of
#     the K ranks add up to the whole (2 n elements for Adam);
#   - bad input exits 64 with one line.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need zero "ZeRO and the optimizers" ring_worker ps_server ps_worker reference

# ring NAME K ZERO FLAGS...: a ring job; weights in $T_TMP/NAME.w.R, the
# row in $T_TMP/NAME.csv, the log in $T_TMP/NAME.err.
ring() {
    _n=$1 _k=$2 _z=$3; shift 3
    job 180 "$launch" ring "$_k" --timeout 10 --weights-out "$T_TMP/$_n.w" \
        --csv-out "$T_TMP/$_n.csv" --worker-args "--zero $_z" "$@"
    cp "$T_TMP/err" "$T_TMP/$_n.err"
    [ "$rc" = 0 ] || t_fail "ring $_k --zero $_z $*: exit $rc: $(tail -c 400 "$T_TMP/err")"
    t_ranks_same "$_k" "$T_TMP/$_n.w"
}

# bytes_out NAME: rank 0's bytes sent per step (the row's bytes_out).
bytes_out() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "bytes_out") c = i; next }
             NR == 2 { print $c }' "$T_TMP/$1.csv"
}

t_case zero-1.1 "ring and PS, momentum and Adam, synthetic f32 (odd n): exactly the reference"
for opt in momentum adam; do
    t_reference syn$opt --workload synthetic --params 1001 --dtype f32 --steps 6 \
        --optimizer $opt --lr 0.01
    ring rs$opt 3 0 --workload synthetic --params 1001 --dtype f32 --steps 6 --optimizer $opt \
        --lr 0.01
    cmp -s "$T_TMP/rs$opt.w.0" "$T_TMP/syn$opt.ref.0" ||
        t_fail "ring $opt: not exactly the reference: $(diff "$T_TMP/rs$opt.w.0" "$T_TMP/syn$opt.ref.0" | head -3 | tr '\n' ' ')"
    job 180 "$launch" ps 3 --servers 2 --timeout 10 --weights-out "$T_TMP/ps$opt.w" \
        --workload synthetic --params 1001 --dtype f32 --steps 6 --optimizer $opt --lr 0.01
    [ "$rc" = 0 ] || t_fail "ps $opt: exit $rc: $(tail -c 400 "$T_TMP/err")"
    t_ranks_same 3 "$T_TMP/ps$opt.w"
    cmp -s "$T_TMP/ps$opt.w.0" "$T_TMP/syn$opt.ref.0" || t_fail "ps $opt: not exactly the reference"
done
# The optimizer really changes the run: Adam's weights are not SGD's.
t_reference synsgd --workload synthetic --params 1001 --dtype f32 --steps 6 --lr 0.01
cmp -s "$T_TMP/synsgd.ref.0" "$T_TMP/synadam.ref.0" && t_fail "adam's weights are sgd's"
cmp -s "$T_TMP/synmomentum.ref.0" "$T_TMP/synadam.ref.0" && t_fail "adam's weights are momentum's"
t_end

t_case zero-1.2 "ring and PS with Adam, linreg f64: the big batch within 1e-9"
t_reference lin --steps 10 --optimizer adam --lr 0.01
ring rl 4 0 --steps 10 --optimizer adam --lr 0.01
why=$(t_close "$T_TMP/rl.w.0" "$T_TMP/lin.ref.0" 1e-9) || t_fail "ring vs reference: $why"
job 180 "$launch" ps 4 --timeout 10 --weights-out "$T_TMP/pl.w" --steps 10 --optimizer adam \
    --lr 0.01
[ "$rc" = 0 ] || t_fail "ps: exit $rc: $(tail -c 400 "$T_TMP/err")"
why=$(t_close "$T_TMP/pl.w.0" "$T_TMP/lin.ref.0" 1e-9) || t_fail "ps vs reference: $why"
t_end

# zero3_bytes K ES DDP: rank 0's bytes per step under --zero 3 from the
# all-reduce's (docs/design.md, ZeRO): one more all-gather of the n + 3
# elements (every chunk but chunk 1 leaves rank 0: c - size(1) elements,
# K - 1 frames of a 40-byte header), and the 3-element slots of the count
# and loss (3 (K - 1) elements, K - 1 frames).
zero3_bytes() {
    awk -v k="$1" -v es="$2" -v ddp="$3" 'BEGIN {
        c = 6340; q = int(c / k); e = c % k; s1 = q + (1 < e ? 1 : 0)
        if (k == 1) { print ddp; exit }
        printf "%d\n", ddp + (c - s1) * es + 3 * (k - 1) * es + 2 * (k - 1) * 40 }'
}

t_case zero-1.3 "--zero 1, 2, 3 == DDP bit for bit (mlp n 6337; K 1 2 3 5 8; f32 momentum, f64 adam)"
for k in 1 2 3 5 8; do
    for cfg in "f32 momentum 4" "f64 adam 8"; do
        set -- $cfg
        for z in 0 1 2 3; do
            ring m$k$1$z "$k" "$z" --workload mlp --steps 4 --dtype "$1" --optimizer "$2" --lr 0.01
        done
        for z in 1 2 3; do
            cmp -s "$T_TMP/m$k${1}0.w.0" "$T_TMP/m$k$1$z.w.0" ||
                t_fail "K $k $cfg: --zero $z's weights differ from DDP's"
        done
        ddp=$(bytes_out m$k${1}0)
        for z in 1 2; do
            [ "$(bytes_out m$k$1$z)" = "$ddp" ] ||
                t_fail "K $k $cfg: --zero $z sends $(bytes_out m$k$1$z) B per step, DDP $ddp"
        done
        want=$(zero3_bytes "$k" "$3" "$ddp")
        [ "$(bytes_out m$k${1}3)" = "$want" ] ||
            t_fail "K $k $cfg: --zero 3 sends $(bytes_out m$k${1}3) B per step, the formula $want (DDP $ddp)"
    done
done
# Not vacuous: the f32 and f64 runs differ, and the bytes are counted.
cmp -s "$T_TMP/m3f320.w.0" "$T_TMP/m3f640.w.0" && t_fail "f32 and f64 runs gave the same file"
[ "$(bytes_out m3f641)" -gt 0 ] 2>/dev/null || t_fail "K 3: no bytes counted: $(bytes_out m3f641)"
t_end

t_case zero-1.4 "several buckets with overlap (--bucket-size 16K): --zero 2 and 3 == DDP, ZeRO-2's bytes DDP's"
ring b0 3 0 --workload mlp --steps 4 --optimizer adam --lr 0.01 --bucket-size 16K
ring b2 3 2 --workload mlp --steps 4 --optimizer adam --lr 0.01 --bucket-size 16K
grep -q 'buckets of .* overlap on' "$T_TMP/b2.err" || t_fail "no plan of several buckets with overlap"
cmp -s "$T_TMP/b0.w.0" "$T_TMP/b2.w.0" || t_fail "--zero 2 with buckets differs from DDP"
[ "$(bytes_out b2)" = "$(bytes_out b0)" ] || t_fail "bytes: --zero 2 $(bytes_out b2), DDP $(bytes_out b0)"
ring b3 3 3 --workload mlp --steps 4 --optimizer adam --lr 0.01 --bucket-size 16K
cmp -s "$T_TMP/b0.w.0" "$T_TMP/b3.w.0" || t_fail "--zero 3 with buckets differs from DDP"
t_end

t_case zero-1.7 "--zero 3 on linreg f64, K 4, Adam: DDP's weights; 1.5x the bytes (+ the count's slots)"
ring l0 4 0 --steps 6 --optimizer adam --lr 0.01
ring l3 4 3 --steps 6 --optimizer adam --lr 0.01
cmp -s "$T_TMP/l0.w.0" "$T_TMP/l3.w.0" || t_fail "linreg --zero 3 differs from DDP"
# n + 3 = 15, chunks 4 4 4 3: DDP sends (11 + 11) x 8 + 6 x 40 = 416 B,
# --zero 3 adds 11 x 8 + 3 x 3 x 8 + 6 x 40 = 400 B.
[ "$(bytes_out l0)" = 416 ] || t_fail "DDP bytes $(bytes_out l0), want 416"
[ "$(bytes_out l3)" = 816 ] || t_fail "--zero 3 bytes $(bytes_out l3), want 816"
grep -q 'rank0| .*memory (--zero 3, .*parameters 32 B' "$T_TMP/l3.err" ||
    t_fail "ZeRO-3 rank 0 keeps its 4-element shard: $(grep 'rank0.*memory' "$T_TMP/l3.err")"
t_end

t_case zero-1.5 "each rank keeps its shard's optimizer state: the K states add up to 2 n (Adam)"
# mlp f64, K 3: n + 3 = 6340 cut in chunks 2114, 2113, 2113; the trailer
# is no parameter, so the states are 2 x 8 x (2114, 2113, 2110) bytes.
awk '/memory \(--zero 1/ { for (i = 1; i < NF; i++) if ($i == "state") s[$1] = $(i + 1) }
     END { t = 0; for (r in s) t += s[r]; n = 0; for (r in s) n++
           if (n != 3 || t != 2 * 8 * 6337) { printf "%d ranks, %d bytes\n", n, t; exit 1 } }' \
    "$T_TMP/m3f641.err" || t_fail "optimizer state: $(grep 'memory' "$T_TMP/m3f641.err" | head -3)"
grep -q 'rank0| ring_worker\[0\]: memory (--zero 1, --optimizer adam, K 3): .*optimizer state 33824 B' \
    "$T_TMP/m3f641.err" || t_fail "rank 0: $(grep 'rank0.*memory' "$T_TMP/m3f641.err")"
grep -q 'rank0| ring_worker\[0\]: memory (--zero 0, --optimizer adam, K 3): .*optimizer state 101392 B' \
    "$T_TMP/m3f640.err" || t_fail "DDP rank 0: $(grep 'rank0.*memory' "$T_TMP/m3f640.err")"
grep -q 'rank0| .*memory (--zero 2, .*gradients 50720 B (16912 B kept after' "$T_TMP/m3f642.err" ||
    t_fail "ZeRO-2 rank 0's gradient: $(grep 'rank0.*memory' "$T_TMP/m3f642.err")"
t_end

t_case zero-1.6 "bad input: --zero 3 synthetic, 4, -1, with --algo rd, --mistake, --bench, --device cuda: 64, one line"
for bad in "--zero 3 --workload synthetic --params 64" "--zero 4" "--zero -1" "--zero x" "--zero 1 --algo rd" \
           "--zero 1 --mistake sum-not-mean" "--zero 2 --bench" "--zero 1 --device cuda" \
           "--optimizer rmsprop" "--beta2 1" "--momentum -0.5" "--eps 0"; do
    # shellcheck disable=SC2086
    job 30 "$PSR_BIN/ring_worker" $bad --steps 2 --timeout 3
    [ "$rc" = 64 ] || t_fail "$bad: exit $rc, want 64"
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$bad: want one line: $(cat "$T_TMP/err")"
done
job 30 "$PSR_BIN/ring_worker" --zero 4 --steps 2
grep -q -- '--zero' "$T_TMP/err" || t_fail "--zero 4: the line does not name the flag: $(cat "$T_TMP/err")"
t_end

t_case zero-1.9 "bin/exactness --optimizer momentum|adam: the distributed step is the big batch's to 1e-12"
for opt in momentum adam; do
    job 60 "$PSR_BIN/exactness" --optimizer $opt
    expect_rc 0
    awk '/^rel error of the step/ { v = $NF } END { exit !(v != "" && v + 0 < 1e-12) }' "$T_TMP/out" ||
        t_fail "$opt: $(grep 'rel error' "$T_TMP/out")"
done
job 30 "$PSR_BIN/exactness" --optimizer lamb
expect_rc 64
t_end

t_case zero-1.8 "lab.sh --only zero --quick: stages 1, 2 at 1.0 of DDP's bytes, 3 above 1.5, same weights, zero.png"
if command -v gnuplot >/dev/null; then
    job 600 bash "$PSR_TESTS/../experiments/lab.sh" --only zero --quick --out "$T_TMP/lab"
    expect_rc 0
    awk -F, 'NR > 1 { n++
                      if ($2 == 1 || $2 == 2) bad += $4 != "1.0000"
                      if ($2 == 3) bad += !($4 > 1.5 && $4 < 1.51)
                      bad += $9 != 1 }
             END { exit !(n == 8 && bad == 0) }' "$T_TMP/lab/zero.csv" ||
        t_fail "zero.csv: $(cat "$T_TMP/lab/zero.csv" | tr '\n' ' ')"
    [ "$(wc -l <"$T_TMP/lab/zero_rss.csv")" = 3 ] || t_fail "zero_rss.csv: $(cat "$T_TMP/lab/zero_rss.csv")"
    [ -s "$T_TMP/lab/zero.png" ] || t_fail "no zero.png"
else
    t_fail "gnuplot is not installed (make deps)"
fi
job 30 bash "$PSR_TESTS/../experiments/lab.sh" --only servers-and-more
expect_rc 64
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "--only bad: want one line: $(cat "$T_TMP/err")"
t_end

t_exit
