# grade_fault.sh -- sourced by grade_code.sh and grade_bucket.sh (the
# student track, `grade.sh --code FILE`): what both tracks do alike (their
# arguments, bookkeeping and build: grade_args, grade_start, grade_build)
# and the killed-neighbour check they run on the student's ring_worker.
#
#   grade_fault SBIN ARGS...
#       K = 3 ranks of SBIN/ring_worker with ARGS (the track's flags and a
#       workload long enough not to end), rank 1 SIGKILLed once rank 0 is
#       stepping: ranks 0 and 2 must end with status 1 within 20 s, each
#       naming rank 1 (not a hang). One "ok fault: ..." line, or a failed
#       check through bad(). Uses the caller's $tmp, line, bad, and adds the
#       ranks' process groups to $pids (the caller's cleanup kills them).
# grade_args TRACK ARGS...: the tracks' arguments (--code FILE, --quick;
# TRACK names the student's file in the usage lines); sets file (an
# absolute path) and quick.
grade_args() {
    _what=$1; shift
    file="" quick=0
    while [ $# -gt 0 ]; do
        case $1 in
        --code | --code=*) opt_value "$@"; file=$val; shift $((1 + extra)) ;;
        --quick) quick=1; shift ;;
        *) die_usage "$1: unknown argument (grade.sh --code FILE [--quick])" ;;
        esac
    done
    [ -n "$file" ] || die_usage "--code: missing FILE"
    [ -f "$file" ] || usage_error --code "$file" "not a file (the student's $_what)"
    case $file in /*) ;; *) file=$(pwd)/$file ;; esac
}

# grade_start: the checks' bookkeeping (fails; line and bad print a
# check's verdict) and the cleanup of $tmp and of the process groups in
# $pids, at exit or on ^C.
grade_start() {
    pids=""
    trap grade_cleanup EXIT
    trap 'exit 130' INT TERM
    fails=0
}
grade_cleanup() {
    for p in $pids; do kill -KILL "-$p" 2>/dev/null; done
    rm -rf "$tmp"
}
line() { printf '%-6s %s\n' "$1" "$2"; }
bad() { line "$1" "$2"; fails=$((fails + 1)); }

# grade_build TARGET FLAG: $file built with `make TARGET STUDENT=$file`
# into build/TARGET (build/san/TARGET when PSR_BIN is build/san/bin: the
# tests under the sanitizers), one verdict line (FLAG: how ring_worker
# runs it), exit 1 when it does not build; sets sbin, a copy of PSR_BIN
# with the student's ring_worker.
grade_build() {
    san=""
    case $PSR_BIN in */build/san/bin | */build/san/bin/) san="SANITIZER=${PSR_SANITIZER:-address,undefined}" ;; esac
    build=$root/build/$1
    [ -n "$san" ] && build=$root/build/san/$1
    # shellcheck disable=SC2086
    if ! make -s -C "$root" "$1" STUDENT="$file" $san > "$tmp/build.log" 2>&1; then
        bad build "$file does not compile or link; the compiler said:"
        grep -E 'error|warning' "$tmp/build.log" | head -n 15 | sed 's/^/       /'
        echo "grade: 0 checks passed; fix the build first"
        exit 1
    fi
    line ok "build: $file as ring_worker $2 ($build/ring_worker)"
    sbin=$tmp/bin
    mkdir -p "$sbin"
    for p in "$PSR_BIN"/*; do [ -f "$p" ] && [ -x "$p" ] && ln -s "$p" "$sbin/"; done
    rm -f "$sbin/ring_worker"
    ln -s "$build/ring_worker" "$sbin/ring_worker"
}

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
