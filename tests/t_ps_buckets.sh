# t_ps_buckets.sh -- the parameter server's gradient buckets (ps_worker
# --bucket-size, --no-overlap, --trace; common/train/step.h) as real
# processes on 127.0.0.1 through experiments/launch.sh: every worker pushes
# its gradient bucket by bucket, from the top of the vector down, each
# bucket as soon as its last layer is ready (overlap) or after the
# backward pass (--no-overlap); then pulls the weights once.
#
# What is checked: the synthetic workload stays exactly the big-batch
# update (== bin/reference) at every bucket size, overlap on or off, with
# one server or two sharded ones (buckets then straddle the shard
# boundary); the mlp (f64, --micro 2) within 1e-12 relative of the
# reference: the server adds each element once per worker in the order
# the pushes arrive (common/ps/store.h SUMMATION ORDER), so bucketing may
# change the last bits but no more; every worker ends with the same
# weights; --trace writes each bucket's push; a worker killed while its
# pushes are in flight is named by the server; bad flags exit 64.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need ps-buckets "parameter-server buckets" reference ps_server ps_worker

T=2
WD=$((3 * T + 10))

# ps NAME K LAUNCH-FLAGS... -- WORKER-FLAGS: a launch.sh ps job, weights in
# $T_TMP/NAME.r (all K the same), its stderr in $T_TMP/NAME.err.
ps() {
    name=$1 k=$2; shift 2
    flags=
    while [ $# -gt 0 ] && [ "$1" != -- ]; do flags="$flags $1"; shift; done
    [ $# -gt 0 ] && shift
    t_launched ps "$name" "$k" 90 $flags --worker-args "$*"
}

SYN="--workload synthetic --params 8192 --dtype f64 --steps 4"
MLP="--workload mlp --dtype f64 --steps 6 --micro 2"

t_case ps-buckets-1.1 "synthetic: == reference exactly at every bucket size, overlap on and off, 1 and 2 servers"
t_reference syn $SYN
for bs in 1 16K 40K 25M; do
    for ov in "" --no-overlap; do
        for s in 1 2; do
            ps "syn.$bs$ov.$s" 4 $SYN --servers $s -- --bucket-size $bs $ov --backward-time 20ms
            cmp -s "$T_TMP/syn.ref.0" "$T_TMP/syn.$bs$ov.$s.0" ||
                t_fail "synthetic --bucket-size $bs $ov, $s server(s): not the reference's weights"
        done
    done
done
grep -q "8 buckets of .*pushed one by one, overlap on" "$T_TMP/syn.1.1.err" ||
    t_fail "no '8 buckets ... overlap on' line for --bucket-size 1"
grep -q "overlap off: --no-overlap" "$T_TMP/syn.1--no-overlap.1.err" || t_fail "no 'overlap off' line"
grep -q "medians over [0-9]* timed steps: .*(8 buckets, overlap on)" "$T_TMP/syn.1.1.err" ||
    t_fail "no medians line naming 8 buckets"
grep -q "medians over [0-9]* timed steps: .*(1 bucket, overlap off)" "$T_TMP/syn.25M.1.err" ||
    t_fail "no medians line for one bucket"
t_end

t_case ps-buckets-1.2 "mlp f64 --micro 2, unequal shards: within 1e-12 of the reference at every bucket size (K = 4, 2 servers)"
t_reference mlp $MLP
for bs in 1 20K 25M; do
    for ov in "" --no-overlap; do
        ps "mlp.$bs$ov" 4 $MLP --shard-weights 1,1,2,3 --servers 2 -- --bucket-size $bs $ov
        why=$(t_close "$T_TMP/mlp.$bs$ov.0" "$T_TMP/mlp.ref.0" 1e-12) ||
            t_fail "mlp --bucket-size $bs $ov: $why"
    done
done
grep -q "3 buckets" "$T_TMP/mlp.1.err" || t_fail "the mlp at --bucket-size 1 is not 3 buckets"
# the loss the server logs comes with the buckets too: the same as one push's
l1=$(grep -o 'step 5 loss [0-9.e+-]*' "$T_TMP/mlp.1.err" | head -1)
l2=$(grep -o 'step 5 loss [0-9.e+-]*' "$T_TMP/mlp.25M.err" | head -1)
[ -n "$l1" ] && [ "$l1" = "$l2" ] || t_fail "server's loss with 3 buckets '$l1', with one '$l2'"
t_end

t_case ps-buckets-1.3 "--trace: each worker's timeline has its layers, every bucket's push, the wait and the pull"
ps tr 2 $SYN -- --bucket-size 16K --backward-time 20ms --trace "$T_TMP/trace"
for r in 0 1; do
    f="$T_TMP/trace.$r"
    if [ ! -s "$f" ]; then t_fail "no $f"; continue; fi
    [ "$(head -1 "$f")" = "[" ] && [ "$(tail -1 "$f")" = "]" ] || t_fail "$f is not a JSON array"
    for ev in '"backward layer 7"' '"push bucket 0"' '"push bucket 3"' '"wait for the pushes"' \
              '"pull weights"'; do
        grep -q "\"name\":$ev" "$f" || t_fail "$f has no $ev event"
    done
    n=$(grep -c '"name":"push bucket' "$f")
    [ "$n" = 16 ] || t_fail "$f: $n bucket pushes, want 4 per step x 4 steps"
done
t_end

t_case ps-buckets-1.4 "a worker killed while its buckets are pushed: the server names it, the other worker exits"
KF="--world 2 --workload synthetic --params 65536 --steps 400 --timeout $T"
setsid timeout -s KILL $WD "$PSR_BIN/ps_server" $KF --listen 127.0.0.1:0 \
    --port-file "$T_TMP/kport" 2>"$T_TMP/ks" & ps_pid=$!
i=0
while [ ! -s "$T_TMP/kport" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$T_TMP/kport" 2>/dev/null)
for r in 0 1; do
    setsid timeout -s KILL $WD "$PSR_BIN/ps_worker" --rank $r $KF --server 127.0.0.1:$port \
        --backward-time 50ms --bucket-size 64K 2>"$T_TMP/k$r" &
    eval "p$r=\$!"
done
i=0
while ! grep -q "step 1 " "$T_TMP/ks" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL -$p1 2>/dev/null
{ wait $p1; } 2>/dev/null    # the shell says "Killed": expected
wait $ps_pid; src=$?
wait $p0; wrc=$?
[ "$src" != 0 ] || t_fail "the server exited 0 although worker 1 was killed"
[ "$src" != 137 ] && [ "$wrc" != 137 ] || t_fail "a process hung (the watchdog fired)"
grep -q "worker 1" "$T_TMP/ks" || t_fail "the server does not name worker 1: $(tail -c 300 "$T_TMP/ks")"
[ "$wrc" != 0 ] || t_fail "worker 0 exited 0"
kill -KILL -$p0 -$ps_pid 2>/dev/null
t_end

t_case ps-buckets-1.5 "bad --bucket-size (0, abc) and buckets on the GPU: exit 64, one line"
for v in 0 abc; do
    job 10 "$PSR_BIN/ps_worker" --server 127.0.0.1:1 --world 1 --bucket-size "$v"
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "--bucket-size $v: $(wc -l <"$T_TMP/err") stderr lines"
done
job 10 "$PSR_BIN/ps_worker" --server 127.0.0.1:1 --world 1 --device cuda --bucket-size 1M
expect_rc 64
expect_grep err "use --device cpu"
t_end

t_exit
