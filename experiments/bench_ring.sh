#!/bin/sh
# experiments/bench_ring.sh -- the ring all-reduce's figures (issue 4).
#
# Figures, never pass/fail. Two tables, each printed and kept under
# $PSR_RESULTS/bench (default results/bench):
#
# 1. ring_vs_mpi.dat: unpaced loopback, float32, sizes 4 KiB to 64 MiB
#    (x4), K = 2, 4 and 8: the time per all-reduce of `ring_worker --bench`
#    with --algo ring and with --algo rd against Open MPI's MPI_Allreduce
#    forced onto TCP (experiments/peers/mpi_coll under mpirun --mca
#    pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo). The three
#    runs are interleaved (ring, rd, MPI, ring, rd, MPI, ...) so that all
#    see the same machine; each run covers every size. Per size and K: the
#    median over BENCH_REPS interleaved repetitions (default 5) with the
#    spread (min-max) of each, and best/MPI: the faster psring algorithm's
#    median time over MPI's (below 1: psring is faster). All three print
#    the same columns, measured the same way (the slowest rank's loop of
#    -n iterations after a barrier; bench.h). The MPI half is skipped,
#    saying so, without mpicc/mpirun.
# 2. ring_model.dat: the EMULATED link, --link-bw 500Mbit --link-latency
#    200us, n = 4 MiB float32, K = 2..16 (BENCH_KMAX): the measured time
#    (psr_merge's time_s: per iteration the slowest rank, median over
#    iterations) against the alpha-beta model 2(K-1)a + 2(K-1)/K n/B
#    (common/measure/model.h model_ring), their ratio, the share of the machine's
#    CPUs the K ranks used during the timed loop (as psr_merge computes
#    it), psr_merge's host_bound flag (the machine's load, not the model:
#    common/measure/hostload.h), and a verdict: "link" where the CPUs had room
#    (<= 80%), "host" where they did not, so that the pace may be the host's.
#
# Environment: PSR_BIN (default bin/), PSR_RESULTS, BENCH_QUICK=1 (fewer
# and shorter runs: 3 repetitions, 4 KiB-1 MiB, K = 2 and 8), BENCH_REPS,
# BENCH_KSET (table 1's K values), BENCH_KMAX, BENCH_PART=1|2 (one table),
# BENCH_ITERS (iterations per run, every side; default 10).
# Needs bash >= 5.1 for experiments/launch.sh.
. "$(dirname "$0")/bench_lib.sh"
quick=${BENCH_QUICK:-0}
reps=${BENCH_REPS:-5}
kmax=${BENCH_KMAX:-16}
iters=10 warm=3
emax=64M kset="2 4 8"
if [ "$quick" = 1 ]; then
    reps=${BENCH_REPS:-3} kmax=${BENCH_KMAX:-8} iters=4 warm=1 emax=1M kset="2 8"
fi
kset=${BENCH_KSET:-$kset}
iters=${BENCH_ITERS:-$iters}
part=${BENCH_PART:-all}

bench_need ring_worker

# psr_times ALGO K: one launch.sh run over every size; "bytes time_us"
# lines from rank 0's table.
psr_times() {
    bash "$launch" ring "$2" --algo "$1" --bench -b 4K -e "$emax" -f 4 -n $iters -w $warm \
        --timeout 60 >/dev/null 2>"$tmp/psr.err"
    awk '/^rank0\| +[0-9]/ { print $2, $5 }' "$tmp/psr.err"
}

# mpi_times K: the MPI harness under mpirun, TCP over loopback only.
mpi_times() {
    mpi_tcp "$1" "$peers/mpi_coll" -c all_reduce -b 4K -e "$emax" -f 4 -n $iters -w $warm \
        >"$tmp/mpi.out" 2>"$tmp/mpi.err"
    awk '/^ +[0-9]/ { print $1, $4 }' "$tmp/mpi.out"
}

# ------------------------------------------------------------ 1: vs MPI
if [ "$part" = all ] || [ "$part" = 1 ]; then
    mpi=1
    mpi_peer_ready "$peers" "$tmp" || mpi=0
    {
        echo "# ring_worker --bench (--algo ring, --algo rd) vs MPI_Allreduce (Open MPI, pml ob1,"
        echo "# btl tcp,self, lo), float32, unpaced loopback, interleaved ring/rd/MPI, median of $reps"
        echo "# runs of $iters iterations each (spread: min-max over the runs); time per all-reduce"
        echo "# in us; best/mpi = min(ring, rd) / MPI (<= 1: psring as fast or faster)."
        echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
        echo "# K size_bytes   ring_us   ring_spread        rd_us     rd_spread          mpi_us    mpi_spread         best/mpi"
    } | tee "$out/ring_vs_mpi.dat"
    for k in $kset; do
        : >"$tmp/r"; : >"$tmp/d"; : >"$tmp/m"
        i=0
        while [ $i -lt "$reps" ]; do
            psr_times ring $k >>"$tmp/r"
            psr_times rd $k >>"$tmp/d"
            [ $mpi = 1 ] && mpi_times $k >>"$tmp/m"
            i=$((i + 1))
        done
        for bytes in $(awk '{ print $1 }' "$tmp/r" "$tmp/d" | sort -un); do
            set -- $(run_stats "$tmp/r" $bytes) $(run_stats "$tmp/d" $bytes) $(run_stats "$tmp/m" $bytes)
            awk -v k=$k -v b=$bytes -v r="$1" -v rs="$2" -v d="$3" -v ds="$4" -v m="$5" -v ms="$6" 'BEGIN {
                best = (d + 0 > 0 && (d + 0 < r + 0 || !(r + 0 > 0))) ? d : r
                ratio = (m + 0 > 0 && best + 0 > 0) ? sprintf("%.2f", best / m) : "nan"
                printf "%-2d %10d  %9s %-17s  %9s %-17s  %9s %-17s  %s\n", k, b, r, rs, d, ds, m, ms, ratio }' |
                tee -a "$out/ring_vs_mpi.dat"
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
