#!/bin/sh
# experiments/bench.sh -- psring's benchmarks, what `make bench` runs.
#
# Figures, never pass/fail: each benchmark prints columns under '#'
# headers (gnuplot blocks) to the terminal and to results/bench/NAME.dat.
# It exits non-zero only when a benchmark could not run at all.
#
# Environment: PSR_BIN (the programs; the Makefile sets it), PSR_RESULTS
# (default: results), BENCH_QUICK=1 for the short versions (well under a
# minute each).
: "${PSR_BIN:?set PSR_BIN (make bench sets it)}"
out=${PSR_RESULTS:-results}/bench
mkdir -p "$out" || exit 1
quick=
[ "${BENCH_QUICK:-0}" = 1 ] && quick=--quick
status=0

# bench NAME ARGS...: run $PSR_BIN/NAME, keep its output in $out/NAME.dat.
bench() {
    name=$1; shift
    echo "== $name${*:+ $*} (output: $out/$name.dat)"
    rcfile=$(mktemp "${TMPDIR:-/tmp}/psring-bench.XXXXXX") || exit 1
    { "$PSR_BIN/$name" "$@"; echo $? >"$rcfile"; } | tee "$out/$name.dat"
    rc=$(cat "$rcfile"); rm -f "$rcfile"
    if [ "$rc" != 0 ]; then
        echo "bench.sh: $name failed (exit status $rc)" >&2
        status=1
    fi
}

# The emulated link: loopback rate, rate accuracy, latency floor.
bench bench_link $quick

# The parameter server: RSS against K, the emulated link against the
# model, unpaced ingress against iperf3.
echo "== bench_ps.sh (output: $out/bench_ps.dat)"
bash "$(dirname "$0")/bench_ps.sh" $quick | tee "$out/bench_ps.dat" || status=1

# The ring against Open MPI's MPI_Allreduce over TCP, and on the emulated link.
# (BENCH_QUICK is read from the environment; it writes ring_vs_mpi.dat and
# ring_model.dat itself.)
echo "== bench_ring.sh (output: $out/ring_vs_mpi.dat, $out/ring_model.dat)"
sh "$(dirname "$0")/bench_ring.sh" || status=1

# The standalone collectives against Open MPI's over TCP (coll_vs_mpi.dat).
echo "== bench_coll.sh (output: $out/coll_vs_mpi.dat)"
sh "$(dirname "$0")/bench_coll.sh" || status=1

# Recursive doubling against the ring across message sizes (the crossover).
echo "== bench_rd.sh"
bash "$(dirname "$0")/bench_rd.sh" || status=1

# Buckets and overlap on the ring: bucket-size and backward-time sweeps.
echo "== bench_overlap.sh (output: $out/overlap/)"
bash "$(dirname "$0")/bench_overlap.sh" $quick "$out/overlap" || status=1

# The GPU kernels against a device-to-device copy, and NCCL with one rank:
# only where a CUDA device answers (docs/gpu.md).
if [ -x "$PSR_BIN/bench_gpu" ] && "$PSR_BIN/bench_gpu" --probe >/dev/null 2>&1; then
    bench bench_gpu $quick
else
    echo "== bench_gpu: skipped (no CUDA device here; see docs/gpu.md)"
fi

exit $status
