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
# MPI_Allgather, MPI_Bcast, MPI_Reduce, MPI_Alltoall) under mpirun.openmpi
# --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo, in two
# configurations of Open MPI: ompi_default (its own choice of algorithm)
# and the one lib.sh's ompi_forced names for the collective (the
# algorithm locked with --mca coll_tuned_use_dynamic_rules 1 --mca
# coll_tuned_<coll>_algorithm N): ompi_ring for reduce_scatter (then
# MPI_Reduce_scatter with K equal counts: Open MPI's ring is there) and
# all_gather, ompi_pipeline (256 KiB segments) for broadcast and reduce,
# ompi_pairwise for alltoall. The three run interleaved (psring,
# ompi_default, forced, psring, ...) in the same script run, so all see
# the same machine; each run covers every size. Per collective, K and
# size: the median over BENCH_REPS repetitions (default 3) with the spread
# (min-max) of each, ompi_best (the Open MPI configuration with the
# smaller median) and psring/ompi_best, the ratio of the medians (<= 1:
# psring as fast as Open MPI at its best, or faster); under each K a
# '# summary' line (the range of the ratio, which configuration won how
# often). All measure the same way (the slowest rank's loop of -n calls
# after a barrier; common/coll/bench.h) and check their results (#wrong;
# a run with wrong elements is reported). The Open MPI half is skipped,
# saying so, without mpicc.openmpi/mpirun.openmpi.
#
# Environment: PSR_BIN (default bin/), PSR_RESULTS, BENCH_QUICK=1 (1 MiB
# and 4 MiB only, K = 2 and 4, 3 repetitions), BENCH_REPS, BENCH_KSET,
# BENCH_COLLS, BENCH_ITERS (calls per run, both sides; default 50: with
# 10, a 1 MiB run lasted about 2 ms and alltoall K = 2 at 1 MiB read 1.40
# in one run, 1.07 in another; with 50, 1.08), BENCH_BMIN and BENCH_EMAX
# (the smallest and largest size, default 256K and 16M). Needs bash >= 5.1
# for experiments/launch.sh.
. "$(dirname "$0")/bench_lib.sh"
reps=${BENCH_REPS:-3}
iters=50 warm=3 bmin=256K emax=16M
[ "${BENCH_QUICK:-0}" = 1 ] && iters=5 warm=1 bmin=1M emax=4M
iters=${BENCH_ITERS:-$iters}
bmin=${BENCH_BMIN:-$bmin} emax=${BENCH_EMAX:-$emax}
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

# mpi_times CONFIG COLL K: the MPI harness under mpirun.openmpi, TCP over
# loopback only, in CONFIG: ompi_default or $forced (ompi_forced COLL's).
mpi_times() {
    local mca= flags=
    [ "$1" = ompi_default ] || mca=$forced_mca flags=$forced_flags
    mpi_tcp "$3" $mca "$peers/mpi_coll" -c "$2" $flags -b $bmin -e $emax -f 4 -n $iters -w $warm \
        >"$tmp/mpi.out" 2>"$tmp/mpi.err" ||
        echo "$prog: mpi_coll -c $2 ($1) K=$3 failed: $(tail -n 1 "$tmp/mpi.err")" >&2
    ompi_ran_as "$1" "$tmp/mpi.out" || return 0
    awk '/^ +[0-9]/ { if ($7 != 0) print "WRONG: " $0 > "/dev/stderr"; print $1, $4 }' "$tmp/mpi.out"
}

mpi=1
mpi_peer_ready "$peers" "$tmp" || mpi=0
# One format for the header and the rows, so that the columns line up.
row_fmt='%-16s %-2s %10s  %9s  %-17s  %15s  %-19s  %-13s %9s  %-19s  %-13s %s\n'
{
    echo "# ring_worker --bench --coll NAME vs Open MPI (pml ob1, btl tcp,self, lo) as"
    echo "# ompi_default (its own algorithm choice) and as ompi_forced, the configuration named"
    echo "# in that column (lib.sh's ompi_forced; its --mca below), float32, unpaced loopback,"
    echo "# interleaved psring/ompi_default/ompi_forced, median of $reps runs of $iters calls each"
    echo "# (spread: min-max over the runs); time per call in us; ompi_best: the Open MPI"
    echo "# configuration with the smaller median; psring/ompi_best: ratio of the medians."
    echo "# root 0 (broadcast, reduce); alltoall balanced. size: per rank (nccl-tests' size)."
    for c in $colls; do
        ompi_forced $c && echo "# $c: $forced = $forced_mca${forced_flags:+ (mpi_coll $forced_flags)}"
    done
    echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
    printf "$row_fmt" '# coll' K size_bytes psring_us psring_spread ompi_default_us ompi_default_spread \
        ompi_forced forced_us forced_spread ompi_best psring/ompi_best
} | tee "$out/coll_vs_mpi.dat"
for c in $colls; do
    ompi_forced $c || continue
    for k in $kset; do
        : >"$tmp/p"; : >"$tmp/m0"; : >"$tmp/m1"; : >"$tmp/sum"
        i=0
        while [ $i -lt "$reps" ]; do
            psr_times $c $k >>"$tmp/p"
            if [ $mpi = 1 ]; then
                mpi_times ompi_default $c $k >>"$tmp/m0"
                mpi_times "$forced" $c $k >>"$tmp/m1"
            fi
            i=$((i + 1))
        done
        for bytes in $(awk '{ print $1 }' "$tmp/p" | sort -un); do
            set -- $(run_stats "$tmp/p" $bytes) $(run_stats "$tmp/m0" $bytes) $(run_stats "$tmp/m1" $bytes)
            set -- "$@" $(ompi_best "$3" "$5")
            awk -v c=$c -v k=$k -v b=$bytes -v p="$1" -v ps="$2" -v m0="$3" -v m0s="$4" -v m1="$5" \
                -v m1s="$6" -v mb="$7" -v mc="$8" -v f="$forced" -v sum="$tmp/sum" -v fmt="$row_fmt" 'BEGIN {
                ratio = (mb > 0 && p + 0 > 0) ? sprintf("%.2f", p / mb) : "nan"
                printf fmt, c, k, b, p, ps, m0, m0s, f, m1, m1s, mc, ratio
                printf "K=%d %d %s %s\n", k, b, ratio, mc >> sum }' |
                tee -a "$out/coll_vs_mpi.dat"
        done
        ompi_summary "$tmp/sum" $c | tee -a "$out/coll_vs_mpi.dat"
    done
done
exit 0
