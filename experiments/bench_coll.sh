#!/bin/sh
# experiments/bench_coll.sh -- the standalone collectives against Open MPI
# over TCP (issue 18).
#
# Figures, never pass/fail. One table, printed and kept as
# $PSR_RESULTS/bench/coll_vs_mpi.dat (default results/bench): unpaced
# loopback, float32, sizes 256 KiB to 16 MiB (x4), K = 2 and 4
# (BENCH_KSET), for reduce_scatter, all_gather, broadcast, reduce and
# alltoall (BENCH_COLLS; the all-reduce is bench_ring.sh's): the time per
# call of `ring_worker --bench --coll NAME` (root 0, alltoall balanced)
# against experiments/peers/mpi_coll -c NAME (MPI_Reduce_scatter_block,
# MPI_Allgather, MPI_Bcast, MPI_Reduce, MPI_Alltoall) under mpirun --mca
# pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo. The two run
# interleaved (psring, MPI, psring, MPI, ...) in the same script run, so
# both see the same machine; each run covers every size. Per collective,
# K and size: the median over BENCH_REPS repetitions (default 3) with the
# spread (min-max), and psring/mpi, the ratio of the medians (<= 1:
# psring as fast or faster). Both measure the same way (the slowest
# rank's loop of -n calls after a barrier; common/coll/bench.h) and check
# their results (#wrong; a run with wrong elements is reported). The MPI
# half is skipped, saying so, without mpicc/mpirun.
#
# Environment: PSR_BIN (default bin/), PSR_RESULTS, BENCH_QUICK=1 (1 MiB
# and 4 MiB only, K = 2 and 4, 3 repetitions), BENCH_REPS, BENCH_KSET,
# BENCH_COLLS, BENCH_ITERS (calls per run, both sides; default 50: with
# 10, a 1 MiB run lasted about 2 ms and alltoall K = 2 at 1 MiB read 1.40
# in one run, 1.07 in another; with 50, 1.08). Needs bash >= 5.1 for
# experiments/launch.sh.
. "$(dirname "$0")/bench_lib.sh"
reps=${BENCH_REPS:-3}
iters=50 warm=3 bmin=256K emax=16M
[ "${BENCH_QUICK:-0}" = 1 ] && iters=5 warm=1 bmin=1M emax=4M
iters=${BENCH_ITERS:-$iters}
kset=${BENCH_KSET:-2 4}
colls=${BENCH_COLLS:-reduce_scatter all_gather broadcast reduce alltoall}

bench_need ring_worker

# psr_times COLL K: one launch.sh run over every size; "bytes time_us"
# lines from rank 0's table (a row with #wrong > 0 is reported on stderr).
psr_times() {
    bash "$launch" ring "$2" --bench --coll "$1" -b $bmin -e $emax -f 4 -n $iters -w $warm \
        --timeout 60 >/dev/null 2>"$tmp/psr.err" || echo "$prog: ring_worker --coll $1 K=$2 failed: $(tail -n 1 "$tmp/psr.err")" >&2
    awk '/^rank0\| +[0-9]/ { if ($NF != 0) print "WRONG: " $0 > "/dev/stderr"; print $2, $5 }' "$tmp/psr.err"
}

# mpi_times COLL K: the MPI harness under mpirun, TCP over loopback only.
mpi_times() {
    mpi_tcp "$2" "$peers/mpi_coll" -c "$1" -b $bmin -e $emax -f 4 -n $iters -w $warm \
        >"$tmp/mpi.out" 2>"$tmp/mpi.err" || echo "$prog: mpi_coll -c $1 K=$2 failed: $(tail -n 1 "$tmp/mpi.err")" >&2
    awk '/^ +[0-9]/ { if ($7 != 0) print "WRONG: " $0 > "/dev/stderr"; print $1, $4 }' "$tmp/mpi.out"
}

mpi=1
mpi_peer_ready "$peers" "$tmp" || mpi=0
{
    echo "# ring_worker --bench --coll NAME vs Open MPI (pml ob1, btl tcp,self, lo), float32,"
    echo "# unpaced loopback, interleaved psring/MPI, median of $reps runs of $iters calls each"
    echo "# (spread: min-max over the runs); time per call in us; psring/mpi: ratio of medians."
    echo "# root 0 (broadcast, reduce); alltoall balanced. size: per rank (nccl-tests' size)."
    echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "# coll            K size_bytes  psring_us  psring_spread      mpi_us  mpi_spread         psring/mpi"
} | tee "$out/coll_vs_mpi.dat"
for c in $colls; do
    for k in $kset; do
        : >"$tmp/p"; : >"$tmp/m"
        i=0
        while [ $i -lt "$reps" ]; do
            psr_times $c $k >>"$tmp/p"
            [ $mpi = 1 ] && mpi_times $c $k >>"$tmp/m"
            i=$((i + 1))
        done
        for bytes in $(awk '{ print $1 }' "$tmp/p" | sort -un); do
            set -- $(run_stats "$tmp/p" $bytes) $(run_stats "$tmp/m" $bytes)
            awk -v c=$c -v k=$k -v b=$bytes -v p="$1" -v ps="$2" -v m="$3" -v ms="$4" 'BEGIN {
                ratio = (m + 0 > 0 && p + 0 > 0) ? sprintf("%.2f", p / m) : "nan"
                printf "%-16s %-2d %10d  %9s  %-17s %9s  %-17s  %s\n", c, k, b, p, ps, m, ms, ratio }' |
                tee -a "$out/coll_vs_mpi.dat"
        done
    done
done
exit 0
