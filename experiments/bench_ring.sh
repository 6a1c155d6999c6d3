#!/bin/sh
# experiments/bench_ring.sh -- the ring all-reduce's figures (issue 4).
#
# Figures, never pass/fail. Two tables, each printed and kept under
# $PSR_RESULTS/bench (default results/bench):
#
# 1. ring_vs_mpi.dat: unpaced loopback, float32, 16 MiB and 64 MiB, K = 2
#    and 4: busbw of `ring_worker --bench` against Open MPI's MPI_Allreduce
#    forced onto TCP (experiments/peers/mpi_allreduce under mpirun --mca
#    pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo), the two runs
#    interleaved (ring, MPI, ring, MPI, ...) so that both see the same
#    machine; the medians over BENCH_REPS repetitions (default 5) and their
#    ratio. Both print the same columns, measured the same way (the
#    slowest rank's loop of -n iterations after a barrier; bench.h). The
#    MPI half is skipped, saying so, without mpicc/mpirun.
# 2. ring_model.dat: the EMULATED link, --link-bw 500Mbit --link-latency
#    200us, n = 4 MiB float32, K = 2..16 (BENCH_KMAX): the measured time
#    (psr_merge's time_s: per iteration the slowest rank, median over
#    iterations) against the alpha-beta model 2(K-1)a + 2(K-1)/K n/B
#    (common/model.h model_ring), their ratio, the share of the machine's
#    CPUs the K ranks used during the timed loop (as psr_merge computes
#    it), psr_merge's host_bound flag (the machine's load, not the model:
#    common/hostload.h), and a verdict: "link" where the CPUs had room
#    (<= 80%), "host" where they did not, so that the pace may be the host's.
#
# Environment: PSR_BIN (default bin/), PSR_RESULTS, BENCH_QUICK=1 (fewer
# and shorter runs), BENCH_REPS, BENCH_KMAX, BENCH_PART=1|2 (one table).
# Needs bash >= 5.1 for experiments/launch.sh.
prog=bench_ring.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=${PSR_RESULTS:-results}/bench
launch="$here/launch.sh"
peers=${PSR_PEERS:-$here/../build/peers}
mkdir -p "$out" || exit 1
quick=${BENCH_QUICK:-0}
reps=${BENCH_REPS:-5}
kmax=${BENCH_KMAX:-16}
iters=10 warm=3
if [ "$quick" = 1 ]; then
    reps=${BENCH_REPS:-3} kmax=${BENCH_KMAX:-8} iters=4 warm=1
fi
part=${BENCH_PART:-all}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/psring-bench-ring.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

[ -x "$PSR_BIN/ring_worker" ] || { echo "bench_ring.sh: no ring_worker in $PSR_BIN (run make)" >&2; exit 1; }

# ring_busbw K SIZE: one launch.sh run; rank 0's busbw column.
ring_busbw() {
    bash "$launch" ring "$1" --bench -b "$2" -e "$2" -n $iters -w $warm --timeout 60 \
        >/dev/null 2>"$tmp/ring.err"
    awk '/^rank0\| +[0-9]/ { v = $7 } END { print (v == "" ? "nan" : v) }' "$tmp/ring.err"
}

# mpi_busbw K SIZE: the MPI harness under mpirun, TCP over loopback only.
mpi_busbw() {
    asroot=""
    [ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
    mpirun $asroot --oversubscribe --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
        -np "$1" "$peers/mpi_allreduce" -b "$2" -e "$2" -n $iters -w $warm \
        >"$tmp/mpi.out" 2>"$tmp/mpi.err"
    awk '/^ +[0-9]/ { v = $6 } END { print (v == "" ? "nan" : v) }' "$tmp/mpi.out"
}

# ------------------------------------------------------------ 1: vs MPI
if [ "$part" = all ] || [ "$part" = 1 ]; then
    mpi=1
    if ! command -v mpirun >/dev/null 2>&1; then
        echo "# bench_ring.sh: mpirun not found: ring only (apt-get install openmpi-bin libopenmpi-dev)"
        mpi=0
    elif [ ! -x "$peers/mpi_allreduce" ]; then
        sh "$here/peers/build.sh" "$peers" >"$tmp/build.log" 2>&1
        [ -x "$peers/mpi_allreduce" ] || { echo "# bench_ring.sh: the MPI peer did not build:"; cat "$tmp/build.log"; mpi=0; }
    fi
    {
        echo "# ring_worker --bench vs MPI_Allreduce (Open MPI, pml ob1, btl tcp,self, lo), float32,"
        echo "# unpaced loopback, interleaved, median of $reps runs of $iters iterations each;"
        echo "# busbw in GB/s = size/time * 2(K-1)/K; ratio = ring / MPI. $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
        echo "# K   size_bytes  ring_busbw  mpi_busbw  ratio"
    } | tee "$out/ring_vs_mpi.dat"
    for k in 2 4; do
        for size in 16M 64M; do
            : >"$tmp/r" ; : >"$tmp/m"
            i=0
            while [ $i -lt "$reps" ]; do
                ring_busbw $k $size >>"$tmp/r"
                [ $mpi = 1 ] && mpi_busbw $k $size >>"$tmp/m"
                i=$((i + 1))
            done
            r=$(median <"$tmp/r")
            m=nan
            [ $mpi = 1 ] && m=$(median <"$tmp/m")
            bytes=$(size_bytes "$size")
            awk -v k=$k -v b=$bytes -v r="$r" -v m="$m" 'BEGIN {
                ratio = (m + 0 > 0) ? sprintf("%.2f", r / m) : "nan"
                printf "%-3d %11d  %10s  %9s  %5s\n", k, b, r, m, ratio }' | tee -a "$out/ring_vs_mpi.dat"
        done
    done
fi

# ------------------------------------------------------------ 2: model
if [ "$part" = all ] || [ "$part" = 2 ]; then
    {
        echo "# ring_worker --bench on the EMULATED link: 500Mbit (62.5 MB/s) per direction,"
        echo "# 200us one-way latency, n = 4 MiB float32, $iters iterations; time_s: per iteration"
        echo "# the slowest rank, median (psr_merge); model_s = 2(K-1)a + 2(K-1)/K n/B;"
        echo "# host_bound 1: the CPUs, not the link, set the pace. $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
        echo "# K  time_s     model_s    time/model  cpu_busy  host_bound  verdict"
    } | tee "$out/ring_model.dat"
    k=2
    while [ $k -le "$kmax" ]; do
        rm -rf "$tmp/row.csv" "$tmp/recs"
        bash "$launch" ring $k --bench -b 4M -e 4M -n $iters -w 1 --link-bw 500Mbit \
            --link-latency 200us --timeout 60 --csv-out "$tmp/row.csv" --out "$tmp/recs" \
            >/dev/null 2>"$tmp/model.err"
        if [ -s "$tmp/row.csv" ]; then
            busy=$(cpu_busy "$tmp"/recs/rec.rank.*)
            csv_awk -v k=$k -v busy="$busy" 'FNR == 2 {
                t = $c["time_s"]; m = $c["model_s"]
                printf "%-3d %-10.6f %-10.6f %-11.3f %-9s %-11s %s\n", k, t, m, t / m, busy, $c["host_bound"],
                       (busy + 0 > 0.80) ? "host" : "link" }' "$tmp/row.csv" | tee -a "$out/ring_model.dat"
        else
            echo "# K=$k failed: $(tail -c 200 "$tmp/model.err" | tr '\n' ' ')" | tee -a "$out/ring_model.dat"
        fi
        k=$((k + 1))
    done
fi
exit 0
