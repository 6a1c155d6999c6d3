# t_powersgd.sh -- ring_worker --compress powersgd:R as real processes on
# 127.0.0.1 through experiments/launch.sh: the mlp at K = 3 on the ring
# (R = 2) and with --algo rd (R = 4) ends with every rank's weights
# bit-identical and the loss going down; the bytes the links count per
# step are the model's, two all-reduces of the factors (and the raw
# biases, W3 and the trailer), against the uncompressed run's one; the
# synthetic workload runs without its closed-form check; psring_sim's
# simulated ring carries the same bytes and reaches the same loss; the
# unfit combinations (the PS's buckets and stale modes, tree, --bench, --sync-every, a bad R) exit
# 64 with one line naming what powersgd needs; bin/model's bytes.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need powersgd-proc "--compress powersgd" ring_worker ps_server ps_worker psr_merge model

# col FILE NAME: row 2's column NAME of a launch.sh CSV.
col() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c[n] }' "$1"
}
# loss_at STEP: rank 0's logged loss at STEP in the last job's stderr.
loss_at() {
    sed -n "s/^rank0| .* step $1: loss \([0-9.e+-]*\).*/\1/p" "$T_TMP/err"
}

t_case powersgd-proc-1.1 "mlp K = 3, powersgd:2 on the ring and powersgd:4 with --algo rd: bit-identical ranks, the loss at step 29 below a fifth of step 0's and within 5% of the uncompressed run's"
job 120 "$launch" ring 3 --workload mlp --steps 30 --timeout 10 --csv-out "$T_TMP/none.csv"
expect_rc 0
want=$(loss_at 29)
for a in "powersgd:2 ring" "powersgd:4 rd"; do
    set -- $a
    job 120 "$launch" ring 3 --workload mlp --worker-args "--compress $1 --algo $2" --steps 30 \
        --timeout 10 --weights-out "$T_TMP/w$2" --csv-out "$T_TMP/$2.csv"
    expect_rc 0
    t_ranks_same 3 "$T_TMP/w$2"
    first=$(loss_at 0) got=$(loss_at 29)
    awk -v f="$first" -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d
        exit !(g > 0 && g < f / 5 && d <= 0.05 * w) }' ||
        t_fail "$1 $2: loss $first -> $got at step 29, uncompressed $want"
    [ "$(col "$T_TMP/$2.csv" compress)" = "$1" ] || t_fail "$1: compress column '$(col "$T_TMP/$2.csv" compress)'"
done
t_end

t_case powersgd-proc-1.2 "the ring's bytes per step, counted by the links: the model's 2(K-1)/K x 644 f64 elements (R = 2: P 128 + 128, raw 196, Q 64 + 128) and 8 frame headers, within 16 bytes; the uncompressed run's 6340 elements in 4 frames give the header size"
none=$(col "$T_TMP/none.csv" bytes_out) psgd=$(col "$T_TMP/ring.csv" bytes_out)
awk -v n="$none" -v p="$psgd" 'BEGIN { h = (n - 4 / 3 * 6340 * 8) / 4; m = 4 / 3 * 644 * 8 + 8 * h
    d = p - m; if (d < 0) d = -d; exit !(h > 0 && d <= 16) }' ||
    t_fail "bytes_out: powersgd:2 $psgd, uncompressed $none"
t_end

t_case powersgd-proc-1.3 "the synthetic workload, 4 layers of 128 x 128 at R = 4: runs (its closed-form check is for exact sums: off under PowerSGD), bit-identical ranks, bytes out under a tenth of the vector's"
job 120 "$launch" ring 3 --workload synthetic --params 65536 --layers 4 --steps 4 --timeout 10 \
    --worker-args "--compress powersgd:4" --weights-out "$T_TMP/ws" --csv-out "$T_TMP/syn.csv"
expect_rc 0
t_ranks_same 3 "$T_TMP/ws"
[ "$(col "$T_TMP/syn.csv" bytes_out)" -lt 52429 ] || t_fail "bytes_out $(col "$T_TMP/syn.csv" bytes_out)"
t_end

t_case powersgd-proc-2.1 "unfit combinations: exit 64, one line naming what powersgd needs (the PS's buckets and stale modes, --algo tree, --bench, --sync-every 2, R 0)"
for a in "ring_worker|powersgd:2|--algo tree|the ring and rd only" \
         "ring_worker|powersgd:2|--bench|needs training" \
         "ring_worker|powersgd:2|--sync-every 2|needs --sync-every 1" \
         "ring_worker|powersgd:0||powersgd:R\[:noef\] with R 1..16" \
         "ps_worker|powersgd:2|--server 127.0.0.1:1 --bucket-size 1K|not with --bucket-size" \
         "ps_server|powersgd:4:noef|--workers 2 --mode async|only with --mode sync"; do
    prog=${a%%|*} rest=${a#*|}
    c=${rest%%|*} rest=${rest#*|}
    args=${rest%%|*} need=${rest#*|}
    extra=""
    [ "$prog" = ring_worker ] && extra="--coordinator 127.0.0.1:0 --timeout 3"
    # shellcheck disable=SC2086
    job 30 "$PSR_BIN/$prog" --compress $c $args $extra
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q -e "^$prog: --compress $c: .*$need" "$T_TMP/err" ||
        t_fail "$prog $c $args: $(cat "$T_TMP/err")"
done
t_end

t_case powersgd-proc-3.1 "bin/model --compress powersgd:4, 16 MiB f32 (2048 x 2048): the ring's bytes out 2(K-1)/K x (2048 + 2048) x 4 x 4, twice the steps; a time adds --compress-cost per element"
b=$("$PSR_BIN/model" --algo ring --K 4 --bytes 16M --quantity bytes_out --compress powersgd:4)
s0=$("$PSR_BIN/model" --algo ring --K 4 --bytes 16M --quantity steps)
s=$("$PSR_BIN/model" --algo ring --K 4 --bytes 16M --quantity steps --compress powersgd:4)
t0=$("$PSR_BIN/model" --algo ring --K 4 --bytes 16M --bw 1e9 --compress powersgd:4 --compress-cost 0)
t1=$("$PSR_BIN/model" --algo ring --K 4 --bytes 16M --bw 1e9 --compress powersgd:4 --compress-cost 1e-9)
awk -v b="$b" -v s0="$s0" -v s="$s" -v t0="$t0" -v t1="$t1" 'BEGIN { d = t1 - t0 - 4194304e-9
    if (d < 0) d = -d; exit !(b == 98304 && s == 2 * s0 && t0 > 0 && d < 1e-12) }' ||
    t_fail "bytes_out $b (want 98304), steps $s vs $s0, time $t0 -> $t1 with 1e-9 s per element"
"$PSR_BIN/model" --algo ring --K 4 --bytes 1M --bw 1e9 --compress powersgd:2 >/dev/null 2>"$T_TMP/err" ||
    t_fail "a measured cost: exit $?"
expect_grep err "^model: powersgd:2: the compressor's cost [0-9.e+-]* s per element (measured here"
t_end
t_case powersgd-proc-4.1 "psring_sim ring 4 --workload mlp --compress powersgd:2: the simulated link carries 1.5 x 644 x 8 = 7728 payload bytes a step (no headers in the simulation), the loss at step 19 is the real ring's; --bench refused (64)"
if [ -x "$PSR_BIN/psring_sim" ]; then
    job 60 "$PSR_BIN/psring_sim" ring 4 --workload mlp --steps 20 --link-bw 1e8 \
        --compress powersgd:2 --csv-out "$T_TMP/sim.csv"
    expect_rc 0
    sim=$(sed -n 's/^psring_sim\[0\]: step 19: loss \([0-9.e+-]*\).*/\1/p' "$T_TMP/err")
    [ "$(col "$T_TMP/sim.csv" bytes_out)" = 7728 ] || t_fail "bytes_out $(col "$T_TMP/sim.csv" bytes_out), want 7728"
    [ "$(col "$T_TMP/sim.csv" compress)" = powersgd:2 ] || t_fail "compress column '$(col "$T_TMP/sim.csv" compress)'"
    job 120 "$launch" ring 4 --workload mlp --steps 20 --timeout 10 --worker-args "--compress powersgd:2"
    expect_rc 0
    [ -n "$sim" ] && [ "$sim" = "$(loss_at 19)" ] || t_fail "step 19: simulated $sim, real $(loss_at 19)"
    job 30 "$PSR_BIN/psring_sim" ring 3 --link-bw 1e8 --compress powersgd:2 --bench
    expect_rc 64
    expect_grep err '^psring_sim: --compress powersgd: .*needs training, not --bench'
else
    echo "     (no psring_sim: SimGrid not installed)"
fi
t_end
t_exit
