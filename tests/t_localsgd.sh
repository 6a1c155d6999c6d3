# t_localsgd.sh -- local SGD on the ring and the parameter server
# (ring_worker, ps_worker and ps_server --sync-every H;
# common/train/localsgd.h), as real processes on 127.0.0.1 through
# experiments/launch.sh:
#   - H = 1 is today's run: the same weights, bit for bit, and the same
#     record as without the flag;
#   - H > 1 on linreg f64 (ring, rd, rabenseifner; H 4 with a shorter last
#     round, H 3 at K = 4): every rank ends bit-identical, equal to
#     bin/reference --sync-every H (the same local SGD in one process)
#     within 1e-12 relative; the weights are not the every-step run's;
#   - the record has one row per sync round: a quarter of the rows at
#     H = 4, each with the bytes of one every-step all-reduce;
#   - mlp's loss goes down with H = 4;
#   - the PS: H = 1 is today's run bit for bit (synthetic: the server's
#     sums are in arrival order); H > 1 (one server and two
#     shards) every worker and the server end with the same weights, equal
#     to bin/reference --sync-every H within 1e-12; a worker whose H is
#     not the server's is refused at join;
#   - bad combinations and values exit 64 with one line; ranks that
#     disagree on H are stopped at the rendezvous naming the flag;
#   - with --compress bf16 both systems still agree with themselves and
#     stay near the uncompressed reference.
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need localsgd "local SGD" ring_worker ps_server ps_worker reference

# ring NAME K ARGS... -- WORKER_ARGS: a ring job; weights $T_TMP/NAME.w.R,
# the row $T_TMP/NAME.csv, the log $T_TMP/NAME.err.
ring() {
    _n=$1 _k=$2; shift 2
    _wa=$1; shift
    job 120 "$launch" ring "$_k" --timeout 10 --weights-out "$T_TMP/$_n.w" \
        --csv-out "$T_TMP/$_n.csv" --worker-args "$_wa" "$@"
    cp "$T_TMP/err" "$T_TMP/$_n.err"
    [ "$rc" = 0 ] || t_fail "ring $_k $_wa $*: exit $rc: $(tail -c 400 "$T_TMP/err")"
    t_ranks_same "$_k" "$T_TMP/$_n.w"
}

# col NAME COLUMN: the merged row's COLUMN.
col() {
    awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
                       NR == 2 { print $k }' "$T_TMP/$1.csv"
}

t_case localsgd-1.1 "--sync-every 1 is today's run: the same weights bit for bit, the same row shape"
ring plain 3 "" --steps 8 --warmup 0
ring one 3 "--sync-every 1" --steps 8 --warmup 0
t_ranks_exact 3 "$T_TMP/one.w" "$T_TMP/plain.w.0"
[ "$(col one steps)" = 8 ] && [ "$(col one bytes_out)" = "$(col plain bytes_out)" ] ||
    t_fail "rows: $(col one steps) steps, $(col one bytes_out) B vs $(col plain bytes_out) B"
t_end

t_case localsgd-1.2 "linreg f64, K 3, H 4 over 10 steps (a last round of 2): ring, rd, rabenseifner bit-identical ranks, == bin/reference --sync-every 4 within 1e-12"
t_reference l4 --world 3 --sync-every 4 --steps 10
t_reference big --steps 10
for algo in ring rd rabenseifner; do
    ring l4$algo 3 "--sync-every 4 --algo $algo" --steps 10
    why=$(t_close "$T_TMP/l4$algo.w.0" "$T_TMP/l4.ref.0" 1e-12) || t_fail "$algo vs reference: $why"
done
# Local SGD is not the big batch: the test can tell them apart.
t_close "$T_TMP/l4ring.w.0" "$T_TMP/big.ref.0" 1e-6 >/dev/null &&
    t_fail "H = 4's weights are the every-step run's"
t_end

t_case localsgd-1.3 "K 4, H 3, unequal shards: == the reference within 1e-12; a quarter of the rows at H 4, each one all-reduce's bytes"
t_reference l3 --world 4 --sync-every 3 --steps 9 --shard-weights 1,2,3,4
ring l3 4 "--sync-every 3" --steps 9 --shard-weights 1,2,3,4
why=$(t_close "$T_TMP/l3.w.0" "$T_TMP/l3.ref.0" 1e-12) || t_fail "vs reference: $why"
ring e1 2 "" --steps 12 --warmup 0
ring e4 2 "--sync-every 4" --steps 12 --warmup 0
[ "$(col e1 steps)" = 12 ] && [ "$(col e4 steps)" = 3 ] ||
    t_fail "rows: $(col e1 steps) at H 1, $(col e4 steps) at H 4 (want 12 and 3)"
[ "$(col e4 bytes_out)" = "$(col e1 bytes_out)" ] && [ "$(col e4 bytes_out)" -gt 0 ] ||
    t_fail "a round's bytes $(col e4 bytes_out), an every-step step's $(col e1 bytes_out)"
t_end

t_case localsgd-1.4 "mlp f32, K 2, H 4: the loss goes down"
ring mlp 2 "--sync-every 4" --workload mlp --dtype f32 --steps 24 --lr 0.1
first=$(sed -n 's/^rank0| .* step 0: loss \([^ ]*\) .*/\1/p' "$T_TMP/mlp.err")
last=$(sed -n 's/^rank0| .* step 23: loss \([^ ]*\) .*/\1/p' "$T_TMP/mlp.err")
awk -v a="$first" -v b="$last" 'BEGIN { exit !(a != "" && b != "" && b < 0.9 * a) }' ||
    t_fail "loss at step 0 '$first', at step 23 '$last' (want below 0.9x)"
grep -q 'rank0| .* step 23: loss .* (a sync: ' "$T_TMP/mlp.err" ||
    t_fail "the last step is not a sync step: $(grep 'step 23' "$T_TMP/mlp.err")"
t_end

t_case localsgd-1.5 "bad values and combinations: exit 64, one line"
for bad in "0|too small" "-1|too small" "2.5|" "x|" "4 --zero 1|not with --zero" \
           "4 --mistake sum-not-mean|not with --mistake" "4 --bench|--bench" \
           "4 --bucket-size 1K|no buckets" "4 --no-overlap|no buckets"; do
    args=${bad%%|*} want=${bad#*|}
    # shellcheck disable=SC2086
    job 20 "$PSR_BIN/ring_worker" --sync-every $args
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "--sync-every $args: $(wc -l <"$T_TMP/err") lines"
    grep -q "^ring_worker: --sync-every ${args%% *}: .*$want.*; see ring_worker --help$" "$T_TMP/err" ||
        t_fail "--sync-every $args: $(cat "$T_TMP/err")"
done
job 20 "$PSR_BIN/reference" --sync-every 4 --optimizer adam
expect_rc 64
expect_grep err "^reference: --sync-every 4: not with --optimizer"
t_end

t_case localsgd-1.6 "ranks that disagree on --sync-every: stopped at the rendezvous naming the flag"
K=2 WD=20
ranks_reset
rank_start 0 --world 2 --coordinator 127.0.0.1:0 --port-file "$T_TMP/port" --timeout 5 \
    --steps 3 --sync-every 2
rank0_port
rank_start 1 --world 2 --coordinator "127.0.0.1:$port" --timeout 5 --steps 3
ranks_wait none "$(now)" || t_fail "the watchdog had to kill ranks"
for r in 0 1; do
    [ "$(cat "$T_TMP/rc.$r" 2>/dev/null)" = 1 ] ||
        t_fail "rank $r: exit status $(cat "$T_TMP/rc.$r" 2>/dev/null), want 1"
done
grep -q "sync-every .* (--sync-every)" "$T_TMP/err.0" "$T_TMP/err.1" ||
    t_fail "no rank names --sync-every: $(tail -c 300 "$T_TMP/err.1")"
t_end

# ps NAME K H ARGS...: a PS job with --sync-every H on both sides; weights
# $T_TMP/NAME.w.R and .server, the log $T_TMP/NAME.err.
ps() {
    _n=$1 _k=$2 _h=$3; shift 3
    job 120 "$launch" ps "$_k" --timeout 10 --weights-out "$T_TMP/$_n.w" \
        --csv-out "$T_TMP/$_n.csv" --worker-args "--sync-every $_h" \
        --server-args "--sync-every $_h" "$@"
    cp "$T_TMP/err" "$T_TMP/$_n.err"
    [ "$rc" = 0 ] || t_fail "ps $_k --sync-every $_h $*: exit $rc: $(tail -c 400 "$T_TMP/err")"
    t_ranks_same "$_k" "$T_TMP/$_n.w"
}

# The server adds the pushes as they arrive: only the synthetic workload's
# sums are the same bits in any order, so H = 1 is compared on it.
t_case localsgd-2.1 "PS --sync-every 1 is today's run: the same weights bit for bit (synthetic f32)"
job 120 "$launch" ps 3 --timeout 10 --weights-out "$T_TMP/pplain.w" --steps 8 \
    --workload synthetic --params 1001 --dtype f32
expect_rc 0
ps pone 3 1 --steps 8 --workload synthetic --params 1001 --dtype f32
t_ranks_exact 3 "$T_TMP/pone.w" "$T_TMP/pplain.w.0"
t_end

t_case localsgd-2.2 "PS linreg f64: K 3 H 4 (one server), K 4 H 3 (two shards, unequal shares): workers and server the same, == bin/reference within 1e-12"
ps p4 3 4 --steps 10
why=$(t_close "$T_TMP/p4.w.0" "$T_TMP/l4.ref.0" 1e-12) || t_fail "H 4 vs reference: $why"
cmp -s "$T_TMP/p4.w.0" "$T_TMP/p4.w.server" || t_fail "H 4: the server's weights are not the workers'"
grep -q 'server0| .*local SGD (--sync-every 4).*(3 rounds)' "$T_TMP/p4.err" ||
    t_fail "no rounds line: $(grep server0 "$T_TMP/p4.err" | head -2)"
[ "$(col p4 steps)" = 3 ] || t_fail "rows: $(col p4 steps), want 3 rounds"
ps p3 4 3 --steps 9 --servers 2 --shard-weights 1,2,3,4
why=$(t_close "$T_TMP/p3.w.0" "$T_TMP/l3.ref.0" 1e-12) || t_fail "H 3, two shards vs reference: $why"
t_end

t_case localsgd-2.3 "PS: workers with --sync-every 3, the server without: refused at join, naming the flag"
job 60 "$launch" ps 2 --timeout 5 --worker-args "--sync-every 3" --steps 9
[ "$rc" != 0 ] || t_fail "the job ran"
expect_grep err "HELLO refused: rank [01]: --sync-every 3, this server has --sync-every 1"
t_end

t_case localsgd-2.4 "PS bad combinations: exit 64, one line"
for bad in "ps_server|4 --workers 2 --mode async|only with --mode sync" \
           "ps_server|4 --workers 2 --mistake sum-not-mean|not with --mistake" \
           "ps_server|4 --workers 2 --checkpoint $T_TMP/ck|not with --checkpoint" \
           "ps_server|0 --workers 2|too small" \
           "ps_worker|4 --server 127.0.0.1:1 --mistake sum-not-mean|not with --mistake" \
           "ps_worker|4 --server 127.0.0.1:1 --bucket-size 1K|no buckets" \
           "ps_worker|4 --server 127.0.0.1:1 --reconnect-window 5|--reconnect-window" \
           "ps_worker|1.5 --server 127.0.0.1:1|whole number"; do
    prog=${bad%%|*} rest=${bad#*|}
    args=${rest%%|*} want=${rest#*|}
    # shellcheck disable=SC2086
    job 20 "$PSR_BIN/$prog" --sync-every $args
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$prog --sync-every $args: $(wc -l <"$T_TMP/err") lines"
    grep -q "^$prog: --sync-every ${args%% *}: .*$want.*; see $prog --help$" "$T_TMP/err" ||
        t_fail "$prog --sync-every $args: $(cat "$T_TMP/err")"
done
t_end

t_case localsgd-3.1 "--compress bf16 with H 4 (f32): ring ranks bit-identical, PS workers and server the same, both within 2e-2 of the uncompressed reference"
t_reference c4 --world 3 --sync-every 4 --steps 10 --dtype f32
ring rc4 3 "--sync-every 4" --steps 10 --dtype f32 --compress bf16
why=$(t_close "$T_TMP/rc4.w.0" "$T_TMP/c4.ref.0" 2e-2) || t_fail "ring vs reference: $why"
ps pc4 3 4 --steps 10 --dtype f32 --compress bf16
why=$(t_close "$T_TMP/pc4.w.0" "$T_TMP/c4.ref.0" 2e-2) || t_fail "ps vs reference: $why"
cmp -s "$T_TMP/pc4.w.0" "$T_TMP/pc4.w.server" || t_fail "ps: the server's weights are not the workers'"
t_end

t_exit
