#!/bin/sh
# tests/run.sh TIER -- run psring's test programs and scripts, count cases.
#
# TIER is quick (unit tests, fuzz smoke, fast scripts), full (everything,
# what `make check` and CI run) or gpu (what `make check-gpu` runs: test_gpu
# and tests/t_gpu*.sh, with PSR_REQUIRE_GPU=1, so that a missing GPU or
# NCCL is a failure rather than a skip). Every program and script runs in its own
# session (setsid) under a watchdog, so a hung test is killed with all its
# children and counted as failed. The last line is the contract:
#     N passed, N failed, N skipped
# Environment: PSR_BIN (the programs), PSR_TESTBIN (the test programs).
tier=${1:-full}
here=$(cd "$(dirname "$0")" && pwd)
: "${PSR_BIN:?set PSR_BIN}" "${PSR_TESTBIN:?set PSR_TESTBIN}"
export PSR_BIN PSR_TESTBIN PSR_TESTS="$here"
log=$(mktemp -d "${TMPDIR:-/tmp}/psring-check.XXXXXX") || exit 1
tests=test_ fuzz=fuzz_ scripts=t_
if [ "$tier" = gpu ]; then
    tests=test_gpu fuzz=none scripts=t_gpu
    export PSR_REQUIRE_GPU=1
fi
trap 'rm -rf "$log"' EXIT INT TERM

# run NAME LIMIT_S CMD...: one program or script, its lines into the count.
# A script's lines come out as it writes them (tail --pid: GNU tail stops
# once the script has exited and its last lines are out), so a long one is
# seen to progress (each prints a line at least every minute); a program's
# at its end. Never a pipe from the test itself: a process it left behind
# would hold the pipe, and run.sh, open.
run() {
    name=$1 limit=$2; shift 2
    out="$log/$name.out"
    case $name in
    t_*.sh)
        : >"$out"
        setsid timeout -s KILL "$limit" "$@" >"$out" 2>&1 &
        tpid=$!
        if tail -s 0.2 -n +1 -f --pid=$tpid "$out" 2>/dev/null; then
            wait $tpid
            rc=$?
        else    # a tail without --pid: the lines at the end
            wait $tpid
            rc=$?
            cat "$out"
        fi ;;
    *)
        setsid timeout -s KILL "$limit" "$@" >"$out" 2>&1
        rc=$?
        cat "$out" ;;
    esac
    if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
        # It died without reporting a failing case: count that as a failure.
        why="exited with status $rc"
        [ $rc -eq 137 ] && why="killed by the ${limit}s watchdog"
        echo "FAIL $name $why" | tee -a "$out"
    fi
}

for t in "$PSR_TESTBIN"/$tests*; do
    [ -x "$t" ] || continue
    run "$(basename "$t")" 300 "$t"
done
# The fuzz targets run as deterministic mutation drivers: more rounds in full.
rounds=20000; [ "$tier" = full ] && rounds=200000
for t in "$PSR_TESTBIN"/$fuzz*; do
    [ -x "$t" ] || continue
    run "$(basename "$t")" 600 "$t" "$rounds"
done
for s in "$here"/$scripts*.sh; do
    [ -f "$s" ] || continue
    if [ "$tier" = quick ] && grep -q '^# tier: full' "$s"; then continue; fi
    run "$(basename "$s")" 900 sh "$s"
done

# The count. An id on two ok/FAIL lines of this run (in two programs, or
# printed twice by one: a loop) is one more failure, "FAIL ids-2 ...":
# tests/t_ids.sh checks the ids written in the sources, this the ids
# printed. Skip lines may repeat (one group skipped on several paths).
awk '
    FNR == 1 { prog = FILENAME; sub(/.*\//, "", prog); sub(/\.out$/, "", prog) }
    /^ok   / { p++ } /^FAIL / { f++ } /^skip / { s++ }
    /^(ok   |FAIL )/ {
        if ($2 in from) {
            f++
            printf "FAIL ids-2 id %s printed twice: by %s and by %s\n", $2, from[$2], prog
        } else from[$2] = prog
    }
    END { printf "%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; printf "\n"; exit (f > 0) }' \
    "$log"/*.out
