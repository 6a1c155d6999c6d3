# grade_fault.sh -- sourced by grade_code.sh and grade_bucket.sh (the
# student track, `grade.sh --code FILE`): the killed-neighbour check both
# tracks run on the student's ring_worker.
#
#   grade_fault SBIN ARGS...
#       K = 3 ranks of SBIN/ring_worker with ARGS (the track's flags and a
#       workload long enough not to end), rank 1 SIGKILLed once rank 0 is
#       stepping: ranks 0 and 2 must end with status 1 within 20 s, each
#       naming rank 1 (not a hang). One "ok fault: ..." line, or a failed
#       check through bad(). Uses the caller's $tmp, line, bad, and adds the
#       ranks' process groups to $pids (the caller's cleanup kills them).
grade_fault() {
    _fbin=$1; shift
    # rank_up R ARGS: ring_worker --rank R in a process group of its own.
    rank_up() {
        _r=$1; shift
        (
            sh -c 'echo $$ >"$1"; shift; exec setsid "$@"' sh "$tmp/pid.$_r" \
                "$_fbin/ring_worker" --rank "$_r" --world 3 "$@" > "$tmp/f.out.$_r" 2> "$tmp/f.err.$_r" < /dev/null
            echo $? > "$tmp/f.rc.$_r"
        ) &
    }
    rank_up 0 --coordinator 127.0.0.1:0 --port-file "$tmp/port" "$@"
    i=0
    while [ $i -lt 200 ] && [ ! -s "$tmp/port" ]; do sleep 0.05; i=$((i + 1)); done
    port=$(cat "$tmp/port" 2>/dev/null)
    [ -n "$port" ] && { rank_up 1 --coordinator "127.0.0.1:$port" "$@"; rank_up 2 --coordinator "127.0.0.1:$port" "$@"; }
    i=0
    while [ $i -lt 100 ] && ! grep -q 'step' "$tmp/f.err.0" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    sleep 1
    for r in 0 1 2; do [ -s "$tmp/pid.$r" ] && pids="$pids $(cat "$tmp/pid.$r")"; done
    if [ -z "$port" ] || [ ! -s "$tmp/pid.1" ]; then
        bad off "fault: the K = 3 job did not start: $(tail -c 200 "$tmp/f.err.0" 2>/dev/null)"
        return
    fi
    kill -KILL "$(cat "$tmp/pid.1")" 2>/dev/null
    i=0
    while [ $i -lt 400 ] && { [ ! -s "$tmp/f.rc.0" ] || [ ! -s "$tmp/f.rc.2" ]; }; do sleep 0.05; i=$((i + 1)); done
    verdict=ok
    for r in 0 2; do
        rc=$(cat "$tmp/f.rc.$r" 2>/dev/null)
        if [ -z "$rc" ]; then
            verdict="rank $r still running 20 s after rank 1 was killed: a hang (return the call's error code at once, do not go on)"
        elif [ "$rc" != 1 ]; then
            verdict="rank $r ended with status $rc, not 1: $(tail -n 1 "$tmp/f.err.$r")"
        elif ! grep -q 'rank 1' "$tmp/f.err.$r"; then
            verdict="rank $r did not name rank 1: $(tail -n 1 "$tmp/f.err.$r")"
        fi
        [ "$verdict" = ok ] || break
    done
    if [ "$verdict" = ok ]; then
        line ok "fault: rank 1 killed at K = 3; ranks 0 and 2 ended with status 1, naming it ($(grep -h 'rank 1' "$tmp/f.err.0" | head -n 1 | sed 's/^ring_worker\[0\]: //' | cut -c1-90))"
    else
        bad off "fault: $verdict"
    fi
}
