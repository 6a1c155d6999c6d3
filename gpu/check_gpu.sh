#!/bin/sh
# gpu/check_gpu.sh -- what `make check-gpu` runs: the tests that need a GPU.
#
# tests/test_gpu, then any tests/t_gpu*.sh (the GPU paths of ring_worker and
# ps_worker), each in its own session under a watchdog, with
# PSR_REQUIRE_GPU=1 so that a missing GPU (or NCCL) is a failure here, not a
# skip. The last line is tests/run.sh's: N passed, N failed[, N skipped].
# Environment: PSR_BIN, PSR_TESTBIN (the Makefile sets them).
here=$(cd "$(dirname "$0")/.." && pwd)
: "${PSR_BIN:?set PSR_BIN}" "${PSR_TESTBIN:?set PSR_TESTBIN}"
export PSR_BIN PSR_TESTBIN PSR_TESTS="$here/tests" PSR_REQUIRE_GPU=1
log=$(mktemp -d "${TMPDIR:-/tmp}/psring-gpu.XXXXXX") || exit 1
trap 'rm -rf "$log"' EXIT INT TERM

# run NAME LIMIT_S CMD...: as tests/run.sh's.
run() {
    name=$1 limit=$2; shift 2
    out="$log/$name.out"
    setsid timeout -s KILL "$limit" "$@" >"$out" 2>&1
    rc=$?
    cat "$out"
    if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
        why="exited with status $rc"
        [ $rc -eq 137 ] && why="killed by the ${limit}s watchdog"
        echo "FAIL $name $why" | tee -a "$out"
    fi
}

run test_gpu 300 "$PSR_TESTBIN/test_gpu"
for s in "$here"/tests/t_gpu*.sh; do
    [ -f "$s" ] || continue
    run "$(basename "$s")" 600 sh "$s"
done

cat "$log"/*.out | awk '
    /^ok   / { p++ } /^FAIL / { f++ } /^skip / { s++ }
    END { printf "%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; printf "\n"; exit (f > 0) }'
