# t_hostile_trickle.sh -- a member that holds the job's secret and then
# trickles a frame, falls silent, or stops mid-frame (RELIABILITY.md row
# 11; issue 28, "Why" 2). After AUTH a frame has a deadline that bytes do
# not extend: --timeout plus its time at the link's rate, at least 1 MB/s
# (common/wire/net.h, FRAME DEADLINES; docs/security.md). The member is
# tests/peer_hostile.c, one byte a second at T = 3 (with the idle timeout
# alone, each byte restarted the wait: the honest processes ran on past
# 90 s). Each case: the honest processes exit non-zero, naming the
# member, and no honest rank is blamed; or, where the member only stands
# beside the honest ranks, the job is not held up and succeeds. Times are
# printed (the promise is 2T plus the frame's time at the rate) but
# asserted only against the watchdog, 3T + 10 s: the machine is shared.
# Section 4: members whose frames come whole but lie in a header field (a
# wrong step, length or count; peer_hostile --lie): refused at once,
# naming the liar. The cases run at the same time, so the file takes about
# one case's time.
# KEEP=1 in the environment keeps the processes' output ($T_TMP).
. "$PSR_TESTS/lib.sh"
export PSRING_SECRET=hostile-trickle-secret-0123456789

t_need hostile-trickle "hostile members" ring_worker ps_server ps_worker
H="$PSR_TESTBIN/peer_hostile"
if [ ! -x "$H" ]; then
    t_skip hostile-trickle "hostile members" "no peer_hostile in $PSR_TESTBIN"
    t_exit
fi

T=3                             # --timeout, seconds
WD=$((3 * T + 10))              # the honest processes' watchdog
HWD=$((WD + 20))                # the member outlives them: its close is no help
JOB="--workload synthetic --params 1000 --timeout $T"
HELLO=1000,2,2,7,1024           # JOB's HELLO: n, f64, synthetic, seed 7, batch 1024
trap 'bg_kill_all; [ -n "$KEEP" ] || rm -rf "$T_TMP"' EXIT

# port_of NAME: waits (up to 10 s) for NAME's port file; the port in $port.
port_of() {
    _i=0
    while [ $_i -lt 200 ] && [ ! -s "$T_TMP/$1.port" ]; do sleep 0.05; _i=$((_i + 1)); done
    port=$(cat "$T_TMP/$1.port" 2>/dev/null)
}

# ring CASE K STEPS: rank 0 of K (CASE.r0), its coordinator's port in $port.
ring() {
    bg_start "$1.r0" $WD "$PSR_BIN/ring_worker" --rank 0 --world "$2" --steps "$3" $JOB \
        --coordinator 127.0.0.1:0 --port-file "$T_TMP/$1.port"
    port_of "$1"
}

# rank CASE R K STEPS: ring rank R of K at CASE's coordinator (CASE.rR).
rank() {
    bg_start "$1.r$2" $WD "$PSR_BIN/ring_worker" --rank "$2" --world "$3" --steps "$4" $JOB \
        --coordinator "127.0.0.1:$(cat "$T_TMP/$1.port")"
}

# hostile CASE MODE PORT ARGS...: the member (CASE.h).
hostile() {
    _c=$1 _m=$2 _p=$3; shift 3
    bg_start "$_c.h" $HWD "$H" "$_m" "127.0.0.1:$_p" --hello $HELLO --max $HWD "$@"
    echo "$(now)" >"$T_TMP/$_c.t0"
}

# reap NAME: waits for NAME to end; $st its status (137: the watchdog),
# $dt seconds from its case's start (CASE.t0) to its end.
reap() {
    while [ ! -s "$T_TMP/$1.rc" ]; do sleep 0.05; done
    st=$(cat "$T_TMP/$1.rc")
    dt=$(awk -v a="$(cat "$T_TMP/${1%%.*}.t0")" -v b="$(cat "$T_TMP/$1.t")" \
        'BEGIN { printf "%.1f", b - a }')
}

# failed NAME PATTERN: NAME exited non-zero (not by the watchdog) with a
# line matching PATTERN; the time is printed.
failed() {
    reap "$1"
    echo "     $1: exit $st after ${dt} s"
    [ "$st" != 0 ] && [ "$st" != 137 ] ||
        t_fail "$1 exited $st (want 1; 137: killed by the watchdog): $(tail -c 300 "$T_TMP/$1.err")"
    ! grep -q 'Sanitizer\|runtime error' "$T_TMP/$1.err" || t_fail "$1: a sanitizer report"
    grep -q "$2" "$T_TMP/$1.err" ||
        t_fail "$1 does not name the member ($2): $(tail -c 400 "$T_TMP/$1.err")"
}

# done_ok NAME: NAME finished its job (exit 0).
done_ok() {
    reap "$1"
    echo "     $1: exit $st after ${dt} s"
    [ "$st" = 0 ] || t_fail "$1 exited $st (want 0): $(tail -c 300 "$T_TMP/$1.err")"
}

# ---------------------------------------------------------------- start all
# 1: the coordinator. a: in place of rank 2; b: beside all three ranks.
ring c1a 3 2
hostile c1a register "$port" --rank 2 --world 3 --gap 1
rank c1a 1 3 2
ring c1b 3 2
hostile c1b register "$port" --rank 2 --world 3 --gap 1
rank c1b 1 3 2
rank c1b 2 3 2
ring c1c 3 2
hostile c1c register "$port" --rank 2 --world 3 --gap 0
rank c1c 1 3 2
ring c1d 3 2
hostile c1d register "$port" --rank 1 --world 3 --gap 0
rank c1d 1 3 2
rank c1d 2 3 2
# 2: the ring's data ports: rank 2 is the member.
ring c2a 3 50
hostile c2a ring-hello "$port" --rank 2 --world 3 --gap 1
rank c2a 1 3 50
ring c2b 3 50
hostile c2b member "$port" --rank 2 --world 3 --gap 1 --elems 333
rank c2b 1 3 50
ring c2c 3 50
hostile c2c member "$port" --rank 2 --world 3 --gap 0.001 --stop-after 20 --elems 333
rank c2c 1 3 50
# c2d: rank 3 of 4 is the member, trickling a HELLO at rank 1's data port,
# where rank 1 waits for rank 0: rank 0 must get in all the same.
ring c2d 4 50
hostile c2d ring-hello "$port" --rank 3 --world 4 --to 1 --gap 1
rank c2d 1 4 50
rank c2d 2 4 50
# 3: the parameter server: worker 1 is the member.
for c in c3a c3b; do
    bg_start "$c.s" $WD "$PSR_BIN/ps_server" --listen 127.0.0.1:0 --port-file "$T_TMP/$c.port" \
        --workers 2 --steps 50 $JOB
    port_of "$c"
done
hostile c3a push "$(cat "$T_TMP/c3a.port")" --rank 1 --world 2 --gap 1 --elems 1000
hostile c3b push "$(cat "$T_TMP/c3b.port")" --rank 1 --world 2 --gap 0.001 --stop-after 100 \
    --elems 1000
# c3c: the member is the server, trickling the weights to worker 0 of 1.
bg_start c3c.h $HWD "$H" server 127.0.0.1:0 --world 1 --gap 1 --elems 1000 --max $HWD \
    --port-file "$T_TMP/c3c.port"
echo "$(now)" >"$T_TMP/c3c.t0"
port_of c3c
for c in c3a:2 c3b:2 c3c:1; do
    bg_start "${c%:*}.w0" $WD "$PSR_BIN/ps_worker" --server "127.0.0.1:$(cat "$T_TMP/${c%:*}.port")" \
        --rank 0 --world "${c#*:}" --steps 50 $JOB
done

# 4: members that send whole frames whose header lies (a wrong step, a
# wrong length, a wrong count): refused at once, the liar named.
G=0.00001                       # --gap: the whole frame at once
ring c4a 3 50
hostile c4a member "$port" --rank 2 --world 3 --gap $G --elems 333 --lie step=5
rank c4a 1 3 50
ring c4b 3 50
hostile c4b member "$port" --rank 2 --world 3 --gap $G --elems 333 --lie length=2656
rank c4b 1 3 50
for c in c4c c4d c4e; do
    bg_start "$c.s" $WD "$PSR_BIN/ps_server" --listen 127.0.0.1:0 --port-file "$T_TMP/$c.port" \
        --workers 2 --steps 50 $JOB
    port_of "$c"
done
bg_start c4f.h $HWD "$H" server 127.0.0.1:0 --world 1 --gap $G --elems 1000 --max $HWD \
    --port-file "$T_TMP/c4f.port" --lie step=3
echo "$(now)" >"$T_TMP/c4f.t0"
port_of c4f
for c in c4c:2 c4d:2 c4e:2 c4f:1; do
    bg_start "${c%:*}.w0" $WD "$PSR_BIN/ps_worker" --server "127.0.0.1:$(cat "$T_TMP/${c%:*}.port")" \
        --rank 0 --world "${c#*:}" --steps 50 $JOB
done
# The member joins once the honest worker has (a lie at once would end
# the server before worker 0 found it).
for c in c4c c4d c4e; do
    _i=0
    while [ $_i -lt 200 ] && ! grep -q 'worker 0 joined' "$T_TMP/$c.s.err" 2>/dev/null; do
        sleep 0.05; _i=$((_i + 1))
    done
done
hostile c4c push "$(cat "$T_TMP/c4c.port")" --rank 1 --world 2 --gap $G --elems 1000 --lie step=7
hostile c4d push "$(cat "$T_TMP/c4d.port")" --rank 1 --world 2 --gap $G --elems 1000 --lie length=8000
hostile c4e push "$(cat "$T_TMP/c4e.port")" --rank 1 --world 2 --gap $G --elems 1000 \
    --lie examples=1000000000

# ---------------------------------------------------------------- the cases
M='the member at 127\.0\.0\.1:[0-9]*'
t_case hostile-trickle-1.1 "a member trickles its REGISTER: ranks 0, 1 exit 1 naming it, not the coordinator"
failed c1a.r0 "rank 2 never registered .*; $M .*authenticated and had sent [0-9]* bytes of its REGISTER"
failed c1a.r1 "rendezvous failed: rank 2 never registered .*; $M"
grep -q 'never appeared' "$T_TMP/c1a.r1.err" && t_fail "rank 1 blames the coordinator"
t_end

t_case hostile-trickle-1.2 "a member trickles a REGISTER beside all K ranks: the rendezvous is not held up"
done_ok c1b.r0
done_ok c1b.r1
done_ok c1b.r2
t_end

t_case hostile-trickle-1.3 "a member authenticates and says nothing: the rendezvous fails naming it, rank 1 not blamed"
failed c1c.r0 "rank 2 never registered .*; $M authenticated and had sent 0 bytes"
failed c1c.r1 "rendezvous failed: rank 2 never registered .*; $M"
grep -q 'ranks 1, 2' "$T_TMP/c1c.r1.err" && t_fail "rank 1 is said not to have registered"
t_end

t_case hostile-trickle-1.4 "a silent member beside all K ranks: the rendezvous is not held up"
done_ok c1d.r0
done_ok c1d.r1
done_ok c1d.r2
t_end

t_case hostile-trickle-2.1 "a registered member trickles its HELLO on a data port: ranks 0, 1 exit 1 naming rank 2"
failed c2a.r0 "rank 2 (127\.0\.0\.1:[0-9]*) never connected"
grep -q 'HELLO was not complete' "$T_TMP/c2a.r0.err" || t_fail "rank 0 does not say the HELLO came too slowly"
failed c2a.r1 "rank 2 (127\.0\.0\.1:[0-9]*)"
t_end

t_case hostile-trickle-2.2 "a ring member trickles its CHUNK: ranks 0, 1 exit 1 naming rank 2"
failed c2b.r0 "lost rank 2 (127\.0\.0\.1:[0-9]*): frame not complete"
failed c2b.r1 "lost rank 2 (127\.0\.0\.1:[0-9]*)"
t_end

t_case hostile-trickle-2.3 "a ring member stops mid-CHUNK: ranks 0, 1 exit 1 naming rank 2"
failed c2c.r0 "lost rank 2 (127\.0\.0\.1:[0-9]*)"
failed c2c.r1 "lost rank 2 (127\.0\.0\.1:[0-9]*)"
t_end

t_case hostile-trickle-2.4 "a member trickles a HELLO at a data port beside the wanted rank: that rank gets in"
failed c2d.r0 "rank 3 (127\.0\.0\.1:[0-9]*) never connected"
failed c2d.r2 "rank 3 (127\.0\.0\.1:[0-9]*)"
failed c2d.r1 "rank 0"
grep -q 'never connected' "$T_TMP/c2d.r1.err" && t_fail "rank 1 says rank 0 never connected"
t_end

t_case hostile-trickle-3.1 "a worker trickles its PUSH: the server fails naming it, the honest worker exits 1"
failed c3a.s "worker 1 (127\.0\.0\.1:[0-9]*): its [a-zA-Z]* frame was not complete"
failed c3a.w0 "worker 1"
t_end

t_case hostile-trickle-3.2 "a worker stops mid-PUSH: the server fails naming it, the honest worker exits 1"
failed c3b.s "worker 1 (127\.0\.0\.1:[0-9]*)"
failed c3b.w0 "worker 1"
t_end

t_case hostile-trickle-3.3 "a server trickles the weights: the worker exits 1 naming it"
failed c3c.w0 "server 0 (127\.0\.0\.1:[0-9]*): frame not complete"
t_end

t_case hostile-trickle-4.1 "a ring member's CHUNK says the wrong step: ranks 0, 1 exit 1 naming rank 2"
failed c4a.r0 "rank 2"
failed c4a.r1 "rank 2"
t_end

t_case hostile-trickle-4.2 "a ring member's CHUNK has the wrong length: ranks 0, 1 exit 1 naming rank 2"
failed c4b.r0 "rank 2"
failed c4b.r1 "rank 2"
t_end

t_case hostile-trickle-4.3 "a worker's PUSH says the wrong step: the server fails naming it, the honest worker exits 1"
failed c4c.s "worker 1 (127\.0\.0\.1:[0-9]*)"
failed c4c.w0 "worker 1"
t_end

t_case hostile-trickle-4.4 "a worker's PUSH has the wrong length: the server fails naming it, the honest worker exits 1"
failed c4d.s "worker 1 (127\.0\.0\.1:[0-9]*)"
failed c4d.w0 "worker 1"
t_end

t_case hostile-trickle-4.5 "a worker's PUSH claims a wrong count (10^9 examples of a batch of 1024): the server fails naming it"
failed c4e.s "worker 1 (127\.0\.0\.1:[0-9]*)"
failed c4e.w0 "worker 1"
t_end

t_case hostile-trickle-4.6 "a server's WEIGHTS say the wrong step: the worker exits 1 naming it"
failed c4f.w0 "server 0 (127\.0\.0\.1:[0-9]*)"
t_end
t_exit
