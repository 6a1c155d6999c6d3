# t_ps_ckpt.sh -- checkpoint and resume of the parameter server
# (common/ps/checkpoint.h, resume.h; docs/design.md, "Checkpoint and
# resume"): the server SIGKILLed at 10 steps drawn from a fixed seed and
# resumed each time ends with the same bits as a run never interrupted;
# a SIGKILL while a checkpoint is written (the test hook before the
# rename) leaves the old one, which resumes; corrupt, truncated, missing
# and other-job checkpoints are refused (65, 65, 64, 65); sharded servers
# checkpoint and resume their own shards; a worker without
# --reconnect-window still exits naming the server; a worker SIGKILLed
# and restarted rejoins at the server's step, the same bits again; linreg
# and mlp resume to the same bits too (one worker); the new flags' bounds. The kills come from the test hooks (environment
# variables, test-only), never from timing; each process runs under a
# KILL watchdog in a session of its own. Version 2's seal and the value
# checks: forged files (NaN, Inf, a negative Adam v, a step past --steps,
# the checksum or MAC recomputed by tests/test_checkpoint forge) are
# refused with and without a secret, another secret's file is refused, a
# version-1 file resumes only without one; a dead writer's temp files go
# at the next start, a live one's stay. About 12 s.
# tier: full
. "$PSR_TESTS/lib.sh"
export PSRING_SECRET=ckpt-secret-0123456789abcdef
t_need ps-ckpt ps-ckpt ps_server ps_worker

T=5
WD=60                                   # every process's watchdog, s
K=2
STEPS=40
# The synthetic workload is exact in any order (workload.h): every run
# of it, interrupted or not, must give the same bits.
JOB="--workload synthetic --params 3000 --dtype f32 --steps $STEPS --timeout $T --world $K"

# bg NAME CMD...: CMD in a session of its own under the watchdog
# (bg_start, tests/lib.sh), stderr in $T_TMP/NAME.err, its status in
# NAME.rc when it ends; $pid: its group.
bg() {
    _n=$1; shift
    bg_start "$_n" "$WD" "$@"
}
# reap NAME: wait for NAME's end (its watchdog bounds it); $st its status.
reap() {
    while [ ! -s "$T_TMP/$1.rc" ]; do sleep 0.02; done
    st=$(cat "$T_TMP/$1.rc")
}
# wait_grep NAME PATTERN: until NAME's stderr matches (or NAME ended).
wait_grep() {
    while ! grep -q -e "$2" "$T_TMP/$1.err" 2>/dev/null && [ ! -s "$T_TMP/$1.rc" ]; do
        sleep 0.02
    done
    grep -q -e "$2" "$T_TMP/$1.err"
}
trap 'bg_kill_all; rm -rf "$T_TMP"' EXIT

# server NAME FLAGS...: a ps_server on port 0 (or FLAGS' --listen); sets
# $port from its port file.
server() {
    n=$1; shift
    rm -f "$T_TMP/$n.port"
    bg "$n" "$PSR_BIN/ps_server" --port-file "$T_TMP/$n.port" $JOB "$@"
    i=0
    while [ $i -lt 1000 ] && [ ! -s "$T_TMP/$n.port" ] && [ ! -s "$T_TMP/$n.rc" ]; do
        sleep 0.01; i=$((i + 1)); done
    port=$(cat "$T_TMP/$n.port" 2>/dev/null)
}
# workers PREFIX SERVERS FLAGS...: K workers; PREFIX.w.RANK their weights.
workers() {
    p=$1 s=$2; shift 2
    r=0
    while [ $r -lt $K ]; do
        bg "$p$r" "$PSR_BIN/ps_worker" --server "$s" --rank $r $JOB \
            --weights-out "$T_TMP/$p.w" "$@"
        r=$((r + 1))
    done
}
# workers_ok PREFIX: every worker exited 0 and wrote the reference's bits.
workers_ok() {
    r=0
    while [ $r -lt $K ]; do
        reap "$1$r"
        [ "$st" = 0 ] || t_fail "worker $r exited $st: $(tail -c 400 "$T_TMP/$1$r.err")"
        cmp -s "$T_TMP/ref.w.$r" "$T_TMP/$1.w.$r" \
            || t_fail "worker $r's weights differ from the uninterrupted run's"
        r=$((r + 1))
    done
}

# The uninterrupted run, and a sharded one (S = 2): the references.
server refsrv --loss-out "$T_TMP/ref.loss"
workers ref "127.0.0.1:$port"
reap refsrv
[ "$st" = 0 ] || { echo "FAIL ps-ckpt-0 the reference run: $(tail -c 300 "$T_TMP/refsrv.err")"; exit 1; }
r=0; while [ $r -lt $K ]; do reap ref$r; r=$((r + 1)); done

# ---------------------------------------------------------------------------
t_case ps-ckpt-1 "server SIGKILLed at 10 seeded-random steps, resumed each time: cmp-equal weights and loss"
kills=$(awk -v n=$STEPS 'BEGIN { srand(14); while (c < 10) { s = int(rand() * (n - 1)); if (!(s in u)) { u[s] = 1; c++ } }
                                 for (s = 0; s < n; s++) if (s in u) printf "%d ", s }')
echo "     kill steps (seed 14): $kills"
ck="$T_TMP/k1.ck"
CK="--checkpoint $ck --checkpoint-every 3 --loss-out $T_TMP/k1.loss"
run=0 resume="" listen=""
for k in $kills; do
    PSRING_TEST_KILL_AT_STEP=$k server "k1s$run" $CK $resume $listen
    [ $run = 0 ] && { workers k1 "127.0.0.1:$port" --reconnect-window 30; listen="--listen 127.0.0.1:$port"; }
    reap "k1s$run"
    [ "$st" = 137 ] || t_fail "server run $run (kill at step $k) exited $st, not 137: $(tail -c 300 "$T_TMP/k1s$run.err")"
    grep -q "killing myself after the update of step $k " "$T_TMP/k1s$run.err" \
        || t_fail "server run $run did not reach step $k: $(tail -c 300 "$T_TMP/k1s$run.err")"
    resume="--resume $ck" run=$((run + 1))
done
server "k1s$run" $CK $resume $listen
reap "k1s$run"
[ "$st" = 0 ] || t_fail "the last server exited $st: $(tail -c 300 "$T_TMP/k1s$run.err")"
workers_ok k1
n=$(grep -c "joined at the server's step" "$T_TMP/k10.err")
[ "$n" = 10 ] || t_fail "worker 0 rejoined $n times, not 10"
cmp -s "$T_TMP/ref.loss" "$T_TMP/k1.loss" || t_fail "the loss file differs from the uninterrupted run's"
bg_kill_all
t_end

# ---------------------------------------------------------------------------
t_case ps-ckpt-2 "SIGKILL during a checkpoint write (before the rename): the old one stays and resumes"
ck="$T_TMP/k2.ck"
PSRING_TEST_KILL_BEFORE_RENAME=9 server k2s0 --checkpoint "$ck" --checkpoint-every 3
workers k2 "127.0.0.1:$port" --reconnect-window 30
reap k2s0
[ "$st" = 137 ] || t_fail "the server exited $st, not 137"
grep -q "KILL_BEFORE_RENAME: killing myself before the rename" "$T_TMP/k2s0.err" \
    || t_fail "the hook did not fire: $(tail -c 300 "$T_TMP/k2s0.err")"
ls -a "$T_TMP" | grep -q '^\.k2\.ck\.tmp\.' || t_fail "no temp file left by the killed write"
server k2s1 --listen "127.0.0.1:$port" --checkpoint "$ck" --checkpoint-every 3 --resume "$ck"
reap k2s1
ls -a "$T_TMP" | grep -q '^\.k2\.ck\.tmp\.' && t_fail "the killed writer's temp file is still there"
grep -q "removed 1 temp file of .*k2.ck left by a writer that died" "$T_TMP/k2s1.err" \
    || t_fail "no line about the removed temp file: $(head -c 300 "$T_TMP/k2s1.err")"
[ "$st" = 0 ] || t_fail "the resumed server exited $st: $(tail -c 300 "$T_TMP/k2s1.err")"
grep -q "resuming from .* at step 6 " "$T_TMP/k2s1.err" \
    || t_fail "not resumed from the previous checkpoint (step 6): $(head -c 300 "$T_TMP/k2s1.err")"
workers_ok k2
bg_kill_all
t_end

# ---------------------------------------------------------------------------
# A good checkpoint to spoil: step 0's, written at start by a server that
# then waits for workers it never gets (it is killed).
server good --checkpoint "$T_TMP/good.ck"
bg_kill_all
good="$T_TMP/good.ck"

# refused WANT_RC PATTERN FLAGS...: ps_server --resume ... exits WANT_RC
# with one line matching PATTERN.
refused() {
    want=$1 pat=$2; shift 2
    job 30 $NOKEY "$PSR_BIN/ps_server" $JOB --listen 127.0.0.1:0 "$@"
    expect_rc "$want"
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "not one line: $(head -c 400 "$T_TMP/err")"
    expect_grep err "$pat"
}

NOKEY=                                  # refused's prefix: "env -u PSRING_SECRET"

t_case ps-ckpt-3 "a corrupt, truncated or missing checkpoint is refused with one line (65, 65, 64)"
[ -s "$good" ] || t_fail "no checkpoint written at start"
cp "$good" "$T_TMP/bad.ck"
printf 'X' | dd of="$T_TMP/bad.ck" bs=1 seek=200 conv=notrunc 2>/dev/null
refused 65 "MAC does not match" --resume "$T_TMP/bad.ck"
head -c 150 "$good" >"$T_TMP/short.ck"
refused 65 "not a checkpoint\|MAC does not match" --resume "$T_TMP/short.ck"
refused 64 "cannot read" --resume "$T_TMP/none.ck"
t_end

t_case ps-ckpt-4 "a checkpoint of another job (K, n, lr, shard) is refused, naming the field (65)"
refused 65 "another job: K 2 in the checkpoint, 3 here" --resume "$good" --world 3
refused 65 "another job: n (parameters) 3000 in the checkpoint, 4000 here" --resume "$good" --params 4000
refused 65 "another job: lr" --resume "$good" --lr 0.5
refused 65 "another job: shard count S 1 in the checkpoint, 2 here" --resume "$good" --shard 0/2
t_end

# ---------------------------------------------------------------------------
t_case ps-ckpt-5 "two sharded servers, each its own checkpoint, both SIGKILLed and resumed: cmp-equal"
PSRING_TEST_KILL_AT_STEP=13 server k5a --shard 0/2 --checkpoint "$T_TMP/k5a.ck" --checkpoint-every 4
pa=$port
# Server 1 is SIGKILLed by the test. (Both killing themselves at step 13
# raced: when server 1 went first, server 0 went back to step 12, waited
# out its --timeout for workers that were redialling server 1 and exited
# 1, and the workers gave up: the fresh-root CI of 60e33eb.)
server k5b --shard 1/2 --checkpoint "$T_TMP/k5b.ck" --checkpoint-every 4
pb=$port
workers k5 "127.0.0.1:$pa,127.0.0.1:$pb" --reconnect-window 30
reap k5a
[ "$st" = 137 ] || t_fail "server 0 exited $st, not 137"
# Server 1, its workers cut off mid-step when server 0 died, went back to
# its checkpoint of step 12 and waits (or has failed waiting): the test
# kills it. Its file says step 12 either way.
kill -KILL "-$(cat "$T_TMP/k5b.pid")" 2>/dev/null
reap k5b
server k5c --shard 0/2 --listen "127.0.0.1:$pa" --checkpoint "$T_TMP/k5a.ck" --checkpoint-every 4 \
    --resume "$T_TMP/k5a.ck"
server k5d --shard 1/2 --listen "127.0.0.1:$pb" --checkpoint "$T_TMP/k5b.ck" --checkpoint-every 4 \
    --resume "$T_TMP/k5b.ck"
reap k5c; sa=$st
reap k5d
[ "$sa $st" = "0 0" ] || t_fail "the resumed servers exited $sa and $st: $(tail -c 300 "$T_TMP/k5c.err")"
grep -q "at step 12 " "$T_TMP/k5d.err" || t_fail "shard 1 not resumed at step 12"
workers_ok k5
bg_kill_all
t_end

# ---------------------------------------------------------------------------
t_case ps-ckpt-6 "without --reconnect-window a worker still exits non-zero when the server dies, naming it"
PSRING_TEST_KILL_AT_STEP=5 server k6s --checkpoint "$T_TMP/k6.ck" --checkpoint-every 3
workers k6 "127.0.0.1:$port"
reap k6s
r=0
while [ $r -lt $K ]; do
    reap "k6$r"
    [ "$st" = 1 ] || t_fail "worker $r exited $st, not 1"
    grep -q "server 0 (127\.0\.0\.1:$port)" "$T_TMP/k6$r.err" \
        || t_fail "worker $r does not name the server: $(tail -c 300 "$T_TMP/k6$r.err")"
    grep -q "redialling" "$T_TMP/k6$r.err" && t_fail "worker $r redialled without the flag"
    r=$((r + 1))
done
bg_kill_all
t_end

# ---------------------------------------------------------------------------
t_case ps-ckpt-7 "a worker SIGKILLed and restarted rejoins at the server's step: cmp-equal"
# EMULATED 50 ms of backward time a step: the run lasts at least 2 s
# after the join, so a kill 0.5 s after it lands mid-run (about step 10)
# whatever the machine's load.
server k7s --checkpoint "$T_TMP/k7.ck" --checkpoint-every 4 --backward-time 50ms
workers k7 "127.0.0.1:$port" --reconnect-window 30 --backward-time 50ms
wait_grep k7s "joined .*(2 of 2)" || t_fail "the workers did not join"
sleep 0.5
kill -KILL "-$(cat "$T_TMP/k71.pid")"
wait_grep k7s "going back to the last checkpoint" \
    || t_fail "the server did not go back: $(tail -c 400 "$T_TMP/k7s.err")"
bg k7r "$PSR_BIN/ps_worker" --server "127.0.0.1:$port" --rank 1 $JOB --backward-time 50ms \
    --weights-out "$T_TMP/k7.w"
reap k7s
[ "$st" = 0 ] || t_fail "the server exited $st: $(tail -c 400 "$T_TMP/k7s.err")"
for w in k70 k7r; do
    reap $w
    [ "$st" = 0 ] || t_fail "$w exited $st: $(tail -c 300 "$T_TMP/$w.err")"
done
grep -q "joined at the server's step" "$T_TMP/k7r.err" \
    || t_fail "the restarted worker did not join at the server's step: $(tail -c 300 "$T_TMP/k7r.err")"
for r in 0 1; do
    cmp -s "$T_TMP/ref.w.$r" "$T_TMP/k7.w.$r" \
        || t_fail "worker $r's weights differ from the uninterrupted run's"
done
bg_kill_all
t_end

# ---------------------------------------------------------------------------
t_case ps-ckpt-9 "linreg and mlp (one worker: a fixed summation order), killed and resumed: cmp-equal"
# Their batch is a function of the step (workload.h), so the steps done
# again after the resume see the same data.
for wl in linreg mlp; do
    J="--workload $wl --steps 12 --timeout $T --world 1"
    bg "${wl}r" "$PSR_BIN/ps_server" $J --port-file "$T_TMP/$wl.rport"
    while [ ! -s "$T_TMP/$wl.rport" ] && [ ! -s "$T_TMP/${wl}r.rc" ]; do sleep 0.01; done
    job $WD "$PSR_BIN/ps_worker" $J --rank 0 --server "127.0.0.1:$(cat "$T_TMP/$wl.rport")" \
        --weights-out "$T_TMP/$wl.ref"
    reap "${wl}r"
    [ "$rc $st" = "0 0" ] || t_fail "$wl: the uninterrupted run exited $rc (server $st)"
    PSRING_TEST_KILL_AT_STEP=7 bg "${wl}s0" "$PSR_BIN/ps_server" $J --port-file "$T_TMP/$wl.port" \
        --checkpoint "$T_TMP/$wl.ck" --checkpoint-every 3
    while [ ! -s "$T_TMP/$wl.port" ] && [ ! -s "$T_TMP/${wl}s0.rc" ]; do sleep 0.01; done
    p=$(cat "$T_TMP/$wl.port")
    bg "${wl}w" "$PSR_BIN/ps_worker" $J --rank 0 --server "127.0.0.1:$p" --reconnect-window 30 \
        --weights-out "$T_TMP/$wl.w"
    reap "${wl}s0"
    [ "$st" = 137 ] || t_fail "$wl: the server exited $st, not 137"
    bg "${wl}s1" "$PSR_BIN/ps_server" $J --listen "127.0.0.1:$p" --resume "$T_TMP/$wl.ck"
    reap "${wl}s1"
    [ "$st" = 0 ] || t_fail "$wl: the resumed server exited $st: $(tail -c 300 "$T_TMP/${wl}s1.err")"
    reap "${wl}w"
    [ "$st" = 0 ] || t_fail "$wl: the worker exited $st: $(tail -c 300 "$T_TMP/${wl}w.err")"
    cmp -s "$T_TMP/$wl.ref.0" "$T_TMP/$wl.w.0" || t_fail "$wl: the weights differ from the uninterrupted run's"
done
bg_kill_all
t_end

# ---------------------------------------------------------------------------
t_case ps-ckpt-8 "bounds: --checkpoint-every 0, > --steps, without --checkpoint; --reconnect-window 0, 2 days (64)"
job 10 "$PSR_BIN/ps_server" $JOB --checkpoint "$T_TMP/b.ck" --checkpoint-every 0
expect_rc 64; expect_grep err "checkpoint-every"
job 10 "$PSR_BIN/ps_server" $JOB --checkpoint "$T_TMP/b.ck" --checkpoint-every 41
expect_rc 64; expect_grep err "more than --steps"
job 10 "$PSR_BIN/ps_server" $JOB --checkpoint-every 2
expect_rc 64; expect_grep err "needs --checkpoint"
job 10 "$PSR_BIN/ps_worker" $JOB --server 127.0.0.1:1 --reconnect-window 0
expect_rc 64; expect_grep err "reconnect-window.*1ms"
job 10 "$PSR_BIN/ps_worker" $JOB --server 127.0.0.1:1 --reconnect-window 172800
expect_rc 64; expect_grep err "reconnect-window"
mkfifo "$T_TMP/fifo"
job 10 "$PSR_BIN/ps_server" $JOB --checkpoint "$T_TMP/fifo"
expect_rc 64; expect_grep err "FIFO"
t_end

# ---------------------------------------------------------------------------
t_case ps-ckpt-10 "momentum and Adam: their state is in the checkpoint (killed at 3 steps, resumed: the same bits); another optimizer is refused (65, one line)"
JOB0=$JOB
for opt in momentum adam; do
    JOB="$JOB0 --optimizer $opt"
    server "o${opt}r"
    workers "o${opt}r" "127.0.0.1:$port"
    reap "o${opt}r"
    [ "$st" = 0 ] || t_fail "$opt: the reference run exited $st"
    r=0; while [ $r -lt $K ]; do reap "o${opt}r$r"; r=$((r + 1)); done
    ck="$T_TMP/o$opt.ck" run=0 resume="" listen=""
    for k in 4 17 30; do
        PSRING_TEST_KILL_AT_STEP=$k server "o${opt}s$run" --checkpoint "$ck" --checkpoint-every 2 $resume $listen
        [ $run = 0 ] && { workers "o$opt" "127.0.0.1:$port" --reconnect-window 30; listen="--listen 127.0.0.1:$port"; }
        reap "o${opt}s$run"
        [ "$st" = 137 ] || t_fail "$opt: server run $run (kill at step $k) exited $st: $(tail -c 300 "$T_TMP/o${opt}s$run.err")"
        resume="--resume $ck" run=$((run + 1))
    done
    server "o${opt}s$run" --checkpoint "$ck" --checkpoint-every 2 $resume $listen
    reap "o${opt}s$run"
    [ "$st" = 0 ] || t_fail "$opt: the last server exited $st: $(tail -c 300 "$T_TMP/o${opt}s$run.err")"
    r=0
    while [ $r -lt $K ]; do
        reap "o$opt$r"
        [ "$st" = 0 ] || t_fail "$opt: worker $r exited $st"
        cmp -s "$T_TMP/o${opt}r.w.$r" "$T_TMP/o$opt.w.$r" \
            || t_fail "$opt: worker $r's weights differ from the uninterrupted run's"
        r=$((r + 1))
    done
    bg_kill_all
done
JOB=$JOB0
# The Adam checkpoint under momentum, under sgd, and under Adam with
# another beta2: not this job's.
for other in "--optimizer momentum" "--optimizer sgd" "--optimizer adam --beta2 0.99"; do
    job 10 "$PSR_BIN/ps_server" $JOB $other --resume "$T_TMP/oadam.ck"
    expect_rc 65
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$other: stderr not one line: $(cat "$T_TMP/err")"
    expect_grep err "optimizer"
done
t_end

# ---------------------------------------------------------------------------
# Adam checkpoints of step 0, written by a job with the secret (kad.ck)
# and by one without (uad.ck), to forge: test_checkpoint forge spoils one
# value and recomputes the seal as a forger (SHA-256) or a member holding
# the secret (the HMAC) would.
JOB0=$JOB
JOB="$JOB0 --optimizer adam"
server kad --checkpoint "$T_TMP/kad.ck"
bg_kill_all
NOKEY="env -u PSRING_SECRET"
rm -f "$T_TMP/uad.port"
bg uad $NOKEY "$PSR_BIN/ps_server" --port-file "$T_TMP/uad.port" $JOB --checkpoint "$T_TMP/uad.ck"
while [ ! -s "$T_TMP/uad.port" ] && [ ! -s "$T_TMP/uad.rc" ]; do sleep 0.01; done
bg_kill_all
forge() {
    $NOKEY "$PSR_TESTBIN/test_checkpoint" forge "$@" || t_fail "forge $*"
}

t_case ps-ckpt-11 "forged values, the checksum or MAC recomputed (NaN, Inf weight, negative Adam v, step past --steps): 65, one line; without a secret and with one"
[ -s "$T_TMP/kad.ck" ] && [ -s "$T_TMP/uad.ck" ] || t_fail "the Adam checkpoints were not written"
for keyed in 1 0; do
    if [ $keyed = 1 ]; then NOKEY= src=kad; else NOKEY="env -u PSRING_SECRET" src=uad; fi
    forge "$T_TMP/$src.ck" "$T_TMP/f.ck" nan
    refused 65 "f.ck: checkpoint refused: weight 0 (element 0) is nan, not finite" --resume "$T_TMP/f.ck"
    forge "$T_TMP/$src.ck" "$T_TMP/f.ck" inf
    refused 65 "f.ck: checkpoint refused: weight 2999 (element 2999) is inf, not finite" --resume "$T_TMP/f.ck"
    forge "$T_TMP/$src.ck" "$T_TMP/f.ck" negv
    refused 65 "f.ck: checkpoint refused: optimizer state v (second moment) element 0 is -1, negative" \
        --resume "$T_TMP/f.ck"
    forge "$T_TMP/$src.ck" "$T_TMP/f.ck" step
    refused 65 "f.ck: checkpoint refused: step 41 out of range" --resume "$T_TMP/f.ck"
    # The unspoiled file passes the seal and the values (and reaches the
    # job's shape): the forger's change is what was refused.
    refused 65 "another job: K 2 in the checkpoint, 3 here" --resume "$T_TMP/$src.ck" --world 3
done
t_end

t_case ps-ckpt-12 "secrets: a checkpoint of secret A refused under secret B; an unkeyed one under a secret; a keyed one without (65, one line)"
NOKEY="env PSRING_SECRET=another-secret-0123456789abcdef"
refused 65 "kad.ck: checkpoint refused: its MAC does not match this job's secret" --resume "$T_TMP/kad.ck"
NOKEY=
refused 65 "uad.ck: checkpoint written without a secret" --resume "$T_TMP/uad.ck"
NOKEY="env -u PSRING_SECRET"
refused 65 "kad.ck: checkpoint sealed with a job's secret, and this job has none" --resume "$T_TMP/kad.ck"
t_end

t_case ps-ckpt-13 "a version-1 checkpoint resumes without a secret and is refused with one (65, one line)"
NOKEY="env -u PSRING_SECRET"
forge "$T_TMP/uad.ck" "$T_TMP/v1.ck" v1
bg v1 $NOKEY "$PSR_BIN/ps_server" $JOB --listen 127.0.0.1:0 --resume "$T_TMP/v1.ck"
wait_grep v1 "resuming from .*v1.ck at step 0 " \
    || t_fail "the version-1 file did not resume: $(head -c 300 "$T_TMP/v1.err")"
bg_kill_all
NOKEY=
refused 65 "v1.ck: checkpoint version 1 has no MAC, and this job has a secret" --resume "$T_TMP/v1.ck"
t_end
JOB=$JOB0

t_case ps-ckpt-14 "at start, a dead writer's temp files of the checkpoint are removed; a live process's (this shell's) and another file's are kept"
dead=$(sh -c 'echo $$')
kill -0 "$dead" 2>/dev/null && t_fail "PID $dead is still alive"
mkdir "$T_TMP/sw"
for f in ".sw.ck.tmp.$dead.0" ".sw.ck.tmp.$dead.7" ".sw.ck.tmp.$$.1" ".other.ck.tmp.$dead.0" \
         ".sw.ck.tmp.$dead.x"; do
    printf 'partial' >"$T_TMP/sw/$f"
done
server sw --checkpoint "$T_TMP/sw/sw.ck"
bg_kill_all
grep -q "removed 2 temp files of .*sw.ck left by a writer that died" "$T_TMP/sw.err" \
    || t_fail "no line about 2 removed temp files: $(head -c 300 "$T_TMP/sw.err")"
for f in ".sw.ck.tmp.$dead.0" ".sw.ck.tmp.$dead.7"; do
    [ -e "$T_TMP/sw/$f" ] && t_fail "$f (a dead writer's) was kept"
done
for f in ".sw.ck.tmp.$$.1" ".other.ck.tmp.$dead.0" ".sw.ck.tmp.$dead.x" sw.ck; do
    [ -e "$T_TMP/sw/$f" ] || t_fail "$f was removed"
done
t_end
t_exit
