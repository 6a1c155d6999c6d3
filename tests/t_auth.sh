# t_auth.sh -- strangers against real jobs (issue 14; docs/security.md):
# each attack is made from a raw socket (bash /dev/tcp) by something that
# does not hold the job's secret, and the real job must finish with the
# weights of the same job run without the stranger (the synthetic
# workload, compared exactly) or fail naming the right reason. Also: no
# secret beyond loopback is a usage error; a wildcard --listen with a
# secret says once that it is exposed.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

if [ ! -x "$PSR_BIN/ps_server" ] || [ ! -x "$PSR_BIN/ring_worker" ] || ! command -v bash >/dev/null
then
    t_skip auth "strangers against real jobs" "no binaries in $PSR_BIN, or no bash"
    t_exit
fi

T=3
BOUND=$((3 * T + 20))
JOB="--workload synthetic --params 4K --steps 30 --timeout $T"
export PSRING_SECRET=t-auth-secret-0123456789abcdef0123456789

# The same jobs without strangers: the weights every attacked run must end with.
PSR_BIN="$PSR_BIN" bash "$launch" ps 2 $JOB --weights-out "$T_TMP/psref" --time-limit 60 \
    >/dev/null 2>"$T_TMP/psref.err" || t_fail "the PS reference job failed: $(tail -c 300 "$T_TMP/psref.err")"
PSR_BIN="$PSR_BIN" bash "$launch" ring 3 $JOB --weights-out "$T_TMP/ringref" --time-limit 60 \
    >/dev/null 2>"$T_TMP/ringref.err" || t_fail "the ring reference job failed: $(tail -c 300 "$T_TMP/ringref.err")"

# hello_bytes: a HELLO frame (version 2) from rank 0 of K = 2, n 4096, as
# printf escapes: what a stranger who read proto.h would send.
HELLO='PSRG\003\000\001\000\000\000\000\000\002\000\000\000\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\050\0\0\0\0\0\0\0\0\020\0\0\0\0\0\0\002\0\0\0\003\0\0\0\007\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\020\0\0\0\0\0\0'
# REGISTER for rank 1 of K = 5 (the real K is 3), address 127.0.0.1 port 9.
REG='PSRG\003\000\011\000\001\000\000\000\005\000\000\000\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\071\0\0\0\0\0\0\0\0\020\0\0\0\0\0\0\002\0\0\0\003\0\0\0\007\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\020\0\0\0\0\0\0\011\0\011\0\0\0\0\000127.0.0.1'

# wait_port FILE: the port a server or rank 0 wrote there.
wait_port() {
    i=0
    while [ $i -lt 500 ] && [ ! -s "$1" ]; do sleep 0.02; i=$((i + 1)); done
    cat "$1" 2>/dev/null
}

# stranger_start PORT SCRIPT OUT: SCRIPT (bash; $1 the port) against PORT
# under the watchdog, its output in OUT, half a second ahead of what
# follows; stranger_stop ends it.
stranger_start() {
    timeout -s KILL $BOUND bash -c "$2" stranger "$1" >"$3" 2>&1 &
    xp=$!
    sleep 0.5
}
stranger_stop() {
    kill $xp 2>/dev/null
    wait $xp 2>/dev/null
}

# attacked NAME STRANGER FIRST OTHER RANK...: a job by hand with a
# stranger. FIRST NAME (the server, or rank 0 as the coordinator) writes
# its port to $T_TMP/NAME.port; STRANGER (a bash script, $1 the port) runs
# against that port before OTHER NAME RANK PORT starts each other process.
# Sets rc_first and rc_RANK, their exit statuses.
attacked() {
    name=$1 stranger=$2 first=$3 other=$4; shift 4
    rm -f "$T_TMP/$name.port"
    $first "$name" &
    p_first=$!
    port=$(wait_port "$T_TMP/$name.port")
    [ -n "$port" ] || { t_fail "$name: no port from $first"; return; }
    stranger_start "$port" "$stranger" "$T_TMP/$name.x.out"
    pids=""
    for r in "$@"; do
        $other "$name" "$r" "$port" &
        pids="$pids $r:$!"
    done
    for rp in $pids; do
        wait "${rp#*:}"
        eval "rc_${rp%%:*}=\$?"
    done
    wait $p_first; rc_first=$?
    stranger_stop
}

# ps_job NAME STRANGER: a server and 2 workers by hand, STRANGER run
# against the server before the workers start; sets rc_s, rc_w0, rc_w1.
ps_server_for() {
    setsid timeout -s KILL $BOUND "$PSR_BIN/ps_server" --workers 2 --port-file "$T_TMP/$1.port" \
        $JOB >"$T_TMP/$1.s.out" 2>"$T_TMP/$1.s.err"
}
ps_worker_for() {
    setsid timeout -s KILL $BOUND "$PSR_BIN/ps_worker" --rank "$2" --world 2 \
        --server "127.0.0.1:$3" $JOB --weights-out "$T_TMP/$1.w" \
        >"$T_TMP/$1.w$2.out" 2>"$T_TMP/$1.w$2.err"
}
ps_job() {
    attacked "$1" "$2" ps_server_for ps_worker_for 0 1
    rc_s=$rc_first rc_w0=$rc_0 rc_w1=$rc_1
}

t_case auth-4.1 "PS: a stranger says HELLO as rank 0 before the real one: refused, learns nothing; the job finishes with the reference weights"
ps_job ps1 'exec 3<>/dev/tcp/127.0.0.1/$1; printf "'"$HELLO"'" >&3; timeout 5 cat <&3 | tr -c "[:print:]" "." >/dev/stdout'
[ "$rc_s$rc_w0$rc_w1" = 000 ] || t_fail "exit statuses server $rc_s, workers $rc_w0 $rc_w1: $(tail -c 400 "$T_TMP/ps1.s.err")"
grep -q "not authenticated: HELLO before the AUTH handshake" "$T_TMP/ps1.x.out" \
    || t_fail "the stranger was not told 'not authenticated': $(head -c 300 "$T_TMP/ps1.x.out")"
grep -q "4096\|K = 2\|n = " "$T_TMP/ps1.x.out" && t_fail "the refusal names the job: $(head -c 300 "$T_TMP/ps1.x.out")"
grep -q "refused: not authenticated" "$T_TMP/ps1.s.err" || t_fail "the server did not log the refusal"
cmp -s "$T_TMP/ps1.w.0" "$T_TMP/psref.0" || t_fail "worker 0's weights differ from the job without the stranger"
t_end

t_case auth-4.2 "PS lock-out before the join: 80 idle connections held, then the workers join (the oldest strangers evicted) and the job finishes"
ps_job ps2 'for i in $(seq 3 82); do eval "exec $i<>/dev/tcp/127.0.0.1/$1"; done; sleep 30'
[ "$rc_s$rc_w0$rc_w1" = 000 ] || t_fail "exit statuses server $rc_s, workers $rc_w0 $rc_w1: $(tail -c 400 "$T_TMP/ps2.s.err") / $(tail -c 300 "$T_TMP/ps2.w0.err")"
grep -q "evicted" "$T_TMP/ps2.s.err" || t_fail "the server evicted nobody"
cmp -s "$T_TMP/ps2.w.0" "$T_TMP/psref.0" || t_fail "worker 0's weights differ from the job without the strangers"
t_end

t_case auth-4.3 "PS: a trickling stranger (a byte every 200 ms) is dropped at T after it connected, not later"
ps_job ps3 'exec 3<>/dev/tcp/127.0.0.1/$1; for i in $(seq 1 100); do printf "P" >&3 2>/dev/null || exit 0; sleep 0.2; done'
[ "$rc_s$rc_w0$rc_w1" = 000 ] || t_fail "exit statuses server $rc_s, workers $rc_w0 $rc_w1"
cmp -s "$T_TMP/ps3.w.0" "$T_TMP/psref.0" || t_fail "worker 0's weights differ from the job without the stranger"
t_end

# ring_job NAME STRANGER: rank 0 (coordinator) of 3, STRANGER against the
# coordinator port, then ranks 1 and 2; sets rc0 rc1 rc2.
ring_rank() {
    _n=$1 _r=$2 _c=$3; shift 3
    setsid timeout -s KILL $BOUND "$PSR_BIN/ring_worker" --rank "$_r" --world 3 \
        --coordinator "$_c" "$@" $JOB --weights-out "$T_TMP/$_n.w" \
        >"$T_TMP/$_n.$_r.out" 2>"$T_TMP/$_n.$_r.err"
}
ring_first() { ring_rank "$1" 0 127.0.0.1:0 --port-file "$T_TMP/$1.port"; }
ring_other() { ring_rank "$1" "$2" "127.0.0.1:$3"; }
ring_job() {
    attacked "$1" "$2" ring_first ring_other 1 2
    rc0=$rc_first rc1=$rc_1 rc2=$rc_2
}

t_case auth-5.1 "ring: a fake REGISTER for rank 1 with a wrong K, before the real one: refused without failing the rendezvous; the ring finishes with the reference weights"
ring_job r1 'exec 3<>/dev/tcp/127.0.0.1/$1; printf "'"$REG"'" >&3; timeout 5 cat <&3 | tr -c "[:print:]" "."'
[ "$rc0$rc1$rc2" = 000 ] || t_fail "exit statuses $rc0 $rc1 $rc2: $(tail -c 400 "$T_TMP/r1.0.err")"
grep -q "not authenticated: REGISTER before the AUTH handshake" "$T_TMP/r1.x.out" \
    || t_fail "the stranger was not told 'not authenticated': $(head -c 300 "$T_TMP/r1.x.out")"
t_ranks_same 3 "$T_TMP/r1.w"
cmp -s "$T_TMP/r1.w.0" "$T_TMP/ringref.0" || t_fail "rank 0's weights differ from the ring without the stranger"
t_end

t_case auth-5.2 "ring: 80 garbage connections at the coordinator, then the real ranks register and the ring finishes"
ring_job r2 'for i in $(seq 3 82); do eval "exec $i<>/dev/tcp/127.0.0.1/$1"; printf "GET / HTTP/1.0\r\n" >&$i 2>/dev/null; done; sleep 30'
[ "$rc0$rc1$rc2" = 000 ] || t_fail "exit statuses $rc0 $rc1 $rc2: $(tail -c 400 "$T_TMP/r2.0.err") / $(tail -c 300 "$T_TMP/r2.1.err")"
grep -q "too many connections" "$T_TMP/r2.1.err" "$T_TMP/r2.2.err" && t_fail "a real rank was told 'too many connections'"
cmp -s "$T_TMP/r2.w.0" "$T_TMP/ringref.0" || t_fail "rank 0's weights differ from the ring without the strangers"
t_end

t_case auth-5.3 "ring: a stranger trickling into the coordinator port during set-up: the ring finishes"
ring_job r3 'exec 3<>/dev/tcp/127.0.0.1/$1; for i in $(seq 1 100); do printf "P" >&3 2>/dev/null || exit 0; sleep 0.2; done'
[ "$rc0$rc1$rc2" = 000 ] || t_fail "exit statuses $rc0 $rc1 $rc2: $(tail -c 400 "$T_TMP/r3.0.err")"
cmp -s "$T_TMP/r3.w.0" "$T_TMP/ringref.0" || t_fail "rank 0's weights differ from the ring without the stranger"
t_end

t_case auth-5.4 "ring: a rank with another secret is refused at the coordinator, naming the secret"
rm -f "$T_TMP/r4.port"
setsid timeout -s KILL $BOUND "$PSR_BIN/ring_worker" --rank 0 --world 2 --coordinator 127.0.0.1:0 \
    --port-file "$T_TMP/r4.port" $JOB >/dev/null 2>"$T_TMP/r4.0.err" &
p0=$!
port=$(wait_port "$T_TMP/r4.port")
PSRING_SECRET=another-secret-0123456789abcdef setsid timeout -s KILL $BOUND "$PSR_BIN/ring_worker" \
    --rank 1 --world 2 --coordinator "127.0.0.1:$port" $JOB >/dev/null 2>"$T_TMP/r4.1.err"
rc1=$?
wait $p0; rc0=$?
[ "$rc1" = 1 ] || t_fail "the rank with the wrong secret exited $rc1, want 1"
grep -q "secret" "$T_TMP/r4.1.err" || t_fail "rank 1 does not name the secret: $(tail -c 300 "$T_TMP/r4.1.err")"
grep -q "never registered" "$T_TMP/r4.0.err" || t_fail "rank 0 does not say rank 1 never registered: $(tail -c 300 "$T_TMP/r4.0.err")"
t_end

t_case auth-5.5 "ring: a stranger trickling into rank 1's data port during set-up (a byte every 200 ms): the ring finishes with the reference weights"
if ! command -v ss >/dev/null; then
    echo "     (skipped: no ss to find the data port)"
else
    rm -f "$T_TMP/r5.port"
    setsid timeout -s KILL $BOUND "$PSR_BIN/ring_worker" --rank 0 --world 3 --coordinator 127.0.0.1:0 \
        --port-file "$T_TMP/r5.port" $JOB --weights-out "$T_TMP/r5.w" >/dev/null 2>"$T_TMP/r5.0.err" &
    p0=$!
    port=$(wait_port "$T_TMP/r5.port")
    setsid timeout -s KILL $BOUND "$PSR_BIN/ring_worker" --rank 1 --world 3 --coordinator "127.0.0.1:$port" \
        $JOB --weights-out "$T_TMP/r5.w" >/dev/null 2>"$T_TMP/r5.1.err" &
    p1=$!
    dport="" i=0
    while [ -z "$dport" ] && [ $i -lt 100 ]; do
        # ring_worker is timeout's child (or setsid's grandchild).
        rp=$(pgrep -P "$p1" | head -1)
        rp2=$(pgrep -P "${rp:-0}" | head -1)
        dport=$(ss -ltnpH 2>/dev/null | grep -e "pid=${rp2:-0}," -e "pid=${rp:-0}," | awk '{ n = split($4, a, ":"); print a[n] }' | head -1)
        [ -n "$dport" ] || sleep 0.05
        i=$((i + 1))
    done
    [ -n "$dport" ] || t_fail "rank 1's data port not found"
    echo "     (rank 1 data port $dport; coordinator $port)"
    stranger_start "${dport:-9}" \
        'exec 3<>/dev/tcp/127.0.0.1/$1; for i in $(seq 1 100); do printf "P" >&3 2>/dev/null || exit 0; sleep 0.2; done' \
        /dev/null
    setsid timeout -s KILL $BOUND "$PSR_BIN/ring_worker" --rank 2 --world 3 --coordinator "127.0.0.1:$port" \
        $JOB --weights-out "$T_TMP/r5.w" >/dev/null 2>"$T_TMP/r5.2.err"
    rc2=$?
    wait $p0; rc0=$?
    wait $p1; rc1=$?
    stranger_stop
    [ "$rc0$rc1$rc2" = 000 ] || t_fail "exit statuses $rc0 $rc1 $rc2: $(tail -c 400 "$T_TMP/r5.1.err")"
    cmp -s "$T_TMP/r5.w.0" "$T_TMP/ringref.0" || t_fail "rank 0's weights differ from the ring without the stranger"
fi
t_end

t_case auth-6.1 "no secret beyond loopback: exit 64 naming --secret-file/PSRING_SECRET; on loopback one warning"
job 10 env -u PSRING_SECRET "$PSR_BIN/ps_server" --workers 1 --listen 0.0.0.0:0 --timeout 1
expect_rc 64
expect_grep err "secret-file.*PSRING_SECRET"
job 10 env -u PSRING_SECRET "$PSR_BIN/ring_worker" --rank 1 --world 2 --coordinator 10.9.9.9:5000 --timeout 1
expect_rc 64
expect_grep err "10.9.9.9 is not a loopback address"
job 10 env -u PSRING_SECRET "$PSR_BIN/ps_worker" --rank 0 --world 1 --server 127.0.0.1:9 --timeout 0.5
expect_grep err "warning: no secret"
[ "$(grep -c 'warning: no secret' "$T_TMP/err")" = 1 ] || t_fail "want one warning line"
t_end

t_case auth-6.2 "a wildcard --listen with the secret: one line says it is exposed"
rm -f "$T_TMP/w.port"
setsid timeout -s KILL 10 "$PSR_BIN/ps_server" --workers 1 --listen 0.0.0.0:0 --port-file "$T_TMP/w.port" \
    --timeout 1 >/dev/null 2>"$T_TMP/w.err"
[ "$(grep -c 'reachable beyond this machine' "$T_TMP/w.err")" = 1 ] || t_fail "want one exposure line: $(head -c 300 "$T_TMP/w.err")"
t_end
t_exit
