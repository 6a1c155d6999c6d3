# t_ps_range.sh -- the parameter server's per-bucket pull and uneven
# ranges as real processes on 127.0.0.1: every worker pushes its gradient
# bucket by bucket and the servers send each part of the new weights as
# soon as every worker has pushed it (common/ps/store.h, RELEASE).
#
# What is checked: the synthetic workload (odd n, f32: its sums are exact
# in any order) ends bit for bit on the big-batch reference's weights
# (bin/reference) for S = 1, 2, 3 equal shards (experiments/launch.sh
# --servers S) at K = 1..4 and several bucket sizes; servers started by
# hand with uneven --range FIRST:COUNT (BytePS's split needs one), given
# to the workers in a scrambled order, do the same, and each server's
# payload counters (its last log line) are K x count x 4 bytes each way per
# step exactly; ranges with a gap or an overlap are refused by every
# worker with one line naming the servers; --range with --shard, and a
# range outside n, exit 64 with one line.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need ps-range "parameter-server ranges and per-bucket pull" reference ps_server ps_worker

N=1001
SYN="--workload synthetic --params $N --layers 7 --dtype f32 --steps 3"

# by_hand NAME K RANGES WORKER-FLAGS...: S servers with --range (RANGES:
# "FIRST:COUNT ..."), then K workers given the servers in reverse order;
# weights in $T_TMP/NAME.r; the servers' stderr in $T_TMP/NAME.srvI, the
# workers' in $T_TMP/NAME.wkR; $rc the first non-zero worker status.
by_hand() {
    name=$1 k=$2 ranges=$3; shift 3
    rm -f "$T_TMP/$name".port* "$T_TMP/$name".srv* "$T_TMP/$name".wk*
    cat >"$T_TMP/$name.sh" <<EOF
i=0 list=
for r in $ranges; do
    "$PSR_BIN/ps_server" --workers $k --range \$r --port-file "$T_TMP/$name.port\$i" \
        --timeout 10 $SYN 2>"$T_TMP/$name.srv\$i" &
    i=\$((i + 1))
done
j=0
while [ \$j -lt \$i ]; do
    t=0
    while [ ! -s "$T_TMP/$name.port\$j" ] && [ \$t -lt 100 ]; do sleep 0.1; t=\$((t + 1)); done
    list="127.0.0.1:\$(cat "$T_TMP/$name.port\$j")\${list:+,}\$list"
    j=\$((j + 1))
done
w=0 pids=
while [ \$w -lt $k ]; do
    "$PSR_BIN/ps_worker" --server "\$list" --rank \$w --world $k --timeout 10 $SYN \
        --weights-out "$T_TMP/$name" $* 2>"$T_TMP/$name.wk\$w" &
    pids="\$pids \$!"
    w=\$((w + 1))
done
st=0
for p in \$pids; do wait \$p || { s=\$?; [ \$st = 0 ] && st=\$s; }; done
wait
exit \$st
EOF
    job 60 sh "$T_TMP/$name.sh"
}

t_reference syn $SYN


t_case ps-range-1.1 "equal shards S = 1, 2, 3 at K = 1..4, per-bucket pull: == reference bit for bit"
for s in 1 2 3; do
    for k in 1 2 3 4; do
        for bs in 1 2K; do
            job 90 "$launch" ps "$k" $SYN --servers "$s" --timeout 10 \
                --weights-out "$T_TMP/eq.$s.$k.$bs" --worker-args "--bucket-size $bs"
            [ "$rc" = 0 ] || { t_fail "S=$s K=$k --bucket-size $bs: exit $rc: $(tail -c 300 "$T_TMP/err")"; continue; }
            t_ranks_same "$k" "$T_TMP/eq.$s.$k.$bs"
            cmp -s "$T_TMP/syn.ref.0" "$T_TMP/eq.$s.$k.$bs.0" ||
                t_fail "S=$s K=$k --bucket-size $bs: not the reference's weights"
        done
    done
done
# With 7 layers and --bucket-size 1 a step's weights come back in parts.
job 90 "$launch" ps 2 $SYN --timeout 10 --worker-args "--bucket-size 1"
frames=$(sed -n 's/.*payload bytes per step: .*; \([0-9]*\) WEIGHTS frames.*/\1/p' "$T_TMP/err")
[ -n "$frames" ] && [ "$frames" -gt 6 ] ||
    t_fail "K=2, 7 buckets, 3 steps: want more than one WEIGHTS frame per worker and step, got '$frames': $(grep payload "$T_TMP/err")"
t_end

t_case ps-range-1.2 "uneven --range servers ([0,1) [1,700) [700,1001)), listed out of order: == reference; payload K x count x 4 each way"
for k in 1 3 4; do
    for bs in 1 25M; do
        by_hand "un.$k.$bs" "$k" "0:1 1:699 700:301" --bucket-size "$bs"
        [ "$rc" = 0 ] || { t_fail "K=$k --bucket-size $bs: exit $rc: $(cat "$T_TMP/un.$k.$bs.wk0" | tail -3)"; continue; }
        t_ranks_same "$k" "$T_TMP/un.$k.$bs"
        cmp -s "$T_TMP/syn.ref.0" "$T_TMP/un.$k.$bs.0" ||
            t_fail "K=$k --bucket-size $bs: not the reference's weights"
        i=0
        for count in 1 699 301; do
            want=$((k * count * 4))
            grep -q "payload bytes per step: in $want, out $want (3 steps;" "$T_TMP/un.$k.$bs.srv$i" ||
                t_fail "K=$k server $i (count $count): want payload $want each way: $(grep -h payload "$T_TMP/un.$k.$bs.srv$i")"
            i=$((i + 1))
        done
    done
done
t_end

t_case ps-range-1.3 "ranges with a gap or an overlap: the worker refuses, one line naming the servers; the servers' logs say why"
for bad in "0:500 501:500|a gap" "0:600 500:501|they overlap" "0:500 500:500|leaves the top"; do
    ranges=${bad%%|*} what=${bad#*|}
    by_hand bad 1 "$ranges"
    [ "$rc" = 1 ] || t_fail "ranges $ranges: worker exit $rc, want 1"
    grep -q "^ps_worker\[0\]: hello: the servers' ranges do not tile \[0, $N).*server [01] (127.0.0.1:[0-9]*).*$what" \
        "$T_TMP/bad.wk0" || t_fail "ranges $ranges: worker 0: $(cat "$T_TMP/bad.wk0")"
    [ "$(grep -c 'do not tile' "$T_TMP/bad.wk0")" = 1 ] || t_fail "ranges $ranges: not one line"
    for i in 0 1; do
        grep -q "run failed: worker 0 .*sent ERROR.*do not tile" "$T_TMP/bad.srv$i" ||
            t_fail "ranges $ranges: server $i's log: $(tail -2 "$T_TMP/bad.srv$i")"
    done
done
# K = 2: whoever sees the WELCOMEs refuses; the run ends everywhere.
by_hand bad 2 "0:500 501:500"
[ "$rc" = 1 ] || t_fail "K = 2, a gap: worker exit $rc, want 1"
cat "$T_TMP/bad.wk0" "$T_TMP/bad.wk1" | grep -q "do not tile" ||
    t_fail "K = 2, a gap: no worker said so: $(cat "$T_TMP/bad.wk0" "$T_TMP/bad.wk1")"
t_end

t_case ps-range-1.4 "--range with --shard, malformed, empty or outside n: exit 64, one line"
for args in "--range 0:10 --shard 0/2|give one" "--range 10|not FIRST:COUNT" \
            "--range 5:0|COUNT 1 .. 2^40" "--range 1000:2|not inside the $N parameters" \
            "--range 1001:1|not inside"; do
    a=${args%%|*} what=${args#*|}
    job 10 "$PSR_BIN/ps_server" --workers 2 $SYN $a
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$a: want one line: $(cat "$T_TMP/err")"
    grep -q -e "$what" "$T_TMP/err" || t_fail "$a: $(cat "$T_TMP/err")"
done
t_end

t_exit
