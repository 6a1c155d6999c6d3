#!/bin/sh
# experiments/bench_ring.sh -- the ring all-reduce's figures (issue 4).
#
# Figures, never pass/fail. Two tables, each printed and kept under
# $PSR_RESULTS/bench (default results/bench):
#
# 1. ring_vs_mpi.dat: unpaced loopback, float32, sizes 4 KiB to 64 MiB
#    (x4), K = 2, 4 and 8: the time per all-reduce of `ring_worker --bench`
#    with --algo ring, --algo rd and --algo rabenseifner against Open MPI's
#    MPI_Allreduce forced onto TCP (experiments/peers/mpi_coll under
#    mpirun.openmpi --mca pml ob1 --mca btl tcp,self --mca
#    btl_tcp_if_include lo) in two configurations: ompi_default (Open MPI's
#    own choice of algorithm) and ompi_ring (the ring forced: --mca
#    coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4;
#    lib.sh's ompi_forced). The runs are interleaved (ring, rd,
#    rabenseifner, ompi_default, ompi_ring, MPICH's below, ring, ...) so
#    that all see the same machine; each run covers every size. Per size
#    and K: the median over BENCH_REPS interleaved repetitions (default 5)
#    with the spread (min-max) of each; ompi_best, the Open MPI
#    configuration with the smaller median; and best/ompi_best: the faster
#    psring algorithm's median time over that configuration's (below 1:
#    psring is faster than Open MPI at its best). Under each K, a
#    '# summary' line: the range of best/ompi_best and how many sizes each
#    configuration won. All print the same columns, measured the same way
#    (the slowest rank's loop of -n iterations after a barrier; bench.h).
#    The Open MPI half is skipped, saying so, without
#    mpicc.openmpi/mpirun.openmpi.
#    ring_vs_mpich.dat: the same psring runs against MPICH's
#    MPI_Allreduce (experiments/peers/mpi_coll.mpich, built with
#    mpicc.mpich, under mpirun.mpich; lib.sh's mpich_tcp: TCP over
#    loopback, no shared memory, the switches in the table's header) as
#    mpich_default (its own rules), mpich_rd (recursive doubling forced)
#    and mpich_rsag (reduce-scatter + all-gather, Rabenseifner's, forced):
#    per size psring's better algorithm and which, MPICH's better
#    configuration and the ratio, and rd/mpich_rd, rabenseifner/mpich_rsag
#    (each algorithm against MPICH's own). MPICH busy-polls, so it runs
#    only where K <= BENCH_MPICH_KMAX (default: the CPUs), each run under
#    BENCH_MPICH_LIMIT seconds (default 120); skipped, saying so, without
#    mpicc.mpich/mpirun.mpich.
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
# BENCH_ITERS (iterations per run, every side; default 10), BENCH_BMIN and
# BENCH_EMAX (table 1's smallest and largest size, default 4K and 64M),
# BENCH_MPICH_KMAX, BENCH_MPICH_LIMIT (above).
# Needs bash >= 5.1 for experiments/launch.sh.
. "$(dirname "$0")/bench_lib.sh"
quick=${BENCH_QUICK:-0}
reps=${BENCH_REPS:-5}
kmax=${BENCH_KMAX:-16}
iters=10 warm=3
bmin=4K emax=64M kset="2 4 8"
if [ "$quick" = 1 ]; then
    reps=${BENCH_REPS:-3} kmax=${BENCH_KMAX:-8} iters=4 warm=1 emax=1M kset="2 8"
fi
kset=${BENCH_KSET:-$kset}
iters=${BENCH_ITERS:-$iters}
bmin=${BENCH_BMIN:-$bmin} emax=${BENCH_EMAX:-$emax}
part=${BENCH_PART:-all}
mpich_kmax=${BENCH_MPICH_KMAX:-$(nproc)} mpich_limit=${BENCH_MPICH_LIMIT:-120}
mpich_timeout=$mpich_limit   # lib.sh mpich_tcp: each MPICH run under it

bench_need ring_worker

# psr_times ALGO K: one launch.sh run over every size; "bytes time_us"
# lines from rank 0's table.
psr_times() {
    bash "$launch" ring "$2" --algo "$1" --bench -b "$bmin" -e "$emax" -f 4 -n $iters -w $warm \
        --timeout 60 >/dev/null 2>"$tmp/psr.err"
    awk '/^rank0\| +[0-9]/ { print $2, $5 }' "$tmp/psr.err"
}

# mpi_times CONFIG K: the MPI harness under mpirun.openmpi, TCP over
# loopback only, in CONFIG: ompi_default or $forced (ompi_forced's).
mpi_times() {
    local mca= flags=
    [ "$1" = ompi_default ] || mca=$forced_mca flags=$forced_flags
    mpi_tcp "$2" $mca "$peers/mpi_coll" -c all_reduce $flags -b "$bmin" -e "$emax" -f 4 -n $iters \
        -w $warm >"$tmp/mpi.out" 2>"$tmp/mpi.err" ||
        echo "$prog: mpi_coll ($1) K=$2 failed: $(tail -n 1 "$tmp/mpi.err")" >&2
    ompi_ran_as "$1" "$tmp/mpi.out" || return 0
    awk '/^ +[0-9]/ { print $1, $4 }' "$tmp/mpi.out"
}

# mpich_times LABEL SETTING K: the harness built with MPICH under
# mpirun.mpich (lib.sh's mpich_tcp: TCP over loopback, no shared memory),
# with SETTING (defaults, or a forced algorithm's VAR=VALUE).
mpich_times() {
    mpich_tcp "$3" "$2" "$tmp/mpi.out" "$peers/mpi_coll.mpich" -c all_reduce -b "$bmin" -e "$emax" -f 4 \
        -n $iters -w $warm 2>"$tmp/mpi.err" ||
        echo "$prog: mpi_coll.mpich ($1) K=$3 failed or passed ${mpich_limit}s: $(tail -n 1 "$tmp/mpi.err")" >&2
    mpich_ran_as "$2" "$tmp/mpi.out" || return 0
    awk '/^ +[0-9]/ { print $1, $4 }' "$tmp/mpi.out"
}

# best_of FILE...: per size, psring's better algorithm over the given
# "bytes time" files (one per algorithm, named $tmp/psr.ALGO): "bytes
# median ALGO" lines, the smallest median.
best_of() {
    for f in "$@"; do
        for bytes in $(awk '{ print $1 }' "$f" | sort -un); do
            echo "$bytes $(run_stats "$f" $bytes | cut -d' ' -f1) ${f##*psr.}"
        done
    done | awk '$2 != "nan" && (!($1 in t) || $2 + 0 < t[$1]) { t[$1] = $2 + 0; a[$1] = $3 }
               END { for (b in t) print b, t[b], a[b] }' | sort -n
}

# ------------------------------------------------------------ 1: vs MPI
if [ "$part" = all ] || [ "$part" = 1 ]; then
    mpi=1 mpich=1
    mpi_peer_ready "$peers" "$tmp" || mpi=0
    mpich_peer_ready "$peers" "$tmp" | tee "$tmp/mpich.note" | grep -q . && mpich=0
    ompi_forced all_reduce
    mpich_forced all_reduce
    # One format for the header and the rows, so that the columns line up.
    row_fmt='%-2s %10s  %9s %-17s  %9s %-17s  %9s %-17s  %15s %-19s  %15s %-19s  %-13s %s\n'
    {
        echo "# ring_worker --bench (--algo ring, rd, rabenseifner) vs MPI_Allreduce (Open MPI, pml ob1,"
        echo "# btl tcp,self, lo) as ompi_default (its own algorithm choice) and as $forced"
        echo "# ($forced_mca),"
        echo "# float32, unpaced loopback, interleaved ring/rd/rabenseifner/ompi_default/$forced/MPICH's,"
        echo "# median of $reps runs of $iters iterations each (spread: min-max over the runs); time per"
        echo "# all-reduce in us; ompi_best: the Open MPI configuration with the smaller median;"
        echo "# best/ompi_best = min(ring, rd, rabenseifner) / ompi_best's (<= 1: psring as fast or faster)."
        echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
        printf "$row_fmt" '#K' size_bytes ring_us ring_spread rd_us rd_spread rabenseifner_us \
            rabenseifner_spread ompi_default_us ompi_default_spread "${forced}_us" "${forced}_spread" \
            ompi_best best/ompi_best
    } | tee "$out/ring_vs_mpi.dat"
    # The MPICH table (ring_vs_mpich.dat): the same psring runs.
    mrow_fmt='%-2s %10s  %9s %-13s  %15s %-19s  %9s %-17s  %10s %-17s  %-14s %-15s %-9s %-9s\n'
    {
        echo "# the same psring runs vs MPI_Allreduce of MPICH $(mpichversion 2>/dev/null |
            sed -n 's/^MPICH Version:[[:space:]]*//p') (mpirun.mpich; experiments/peers/mpi_coll.mpich)"
        echo "# on TCP over loopback, no shared memory: $mpich_switches;"
        echo "# mpich_default: its own rules; mpich_rd: MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling;"
        echo "# mpich_rsag: ...=reduce_scatter_allgather (Rabenseifner's); same runs, sizes and medians as"
        echo "# above. best: psring's better algorithm's median (which one: best_algo); mpich_best: the"
        echo "# MPICH configuration with the smaller median; rd/mpich_rd, rab/mpich_rsag: each algorithm"
        echo "# against MPICH's own, forced (<= 1: psring as fast or faster)."
        echo "# MPICH (ch4:ucx) busy-polls its progress: with more ranks than CPUs it measures the"
        echo "# scheduler (a K = 8 sweep on 2 CPUs ran 5 minutes), so it runs where K <= $mpich_kmax"
        echo "# (BENCH_MPICH_KMAX; default: the CPUs), each run under ${mpich_limit}s."
        cat "$tmp/mpich.note"
        printf "$mrow_fmt" '#K' size_bytes best_us best_algo mpich_default_us mpich_default_spread \
            mpich_rd_us mpich_rd_spread mpich_rsag_us mpich_rsag_spread mpich_best best/mpich_best \
            rd/mpich_rd rab/mpich_rsag
    } >"$tmp/mpich.head"
    cp "$tmp/mpich.head" "$out/ring_vs_mpich.dat"
    for k in $kset; do
        : >"$tmp/psr.ring"; : >"$tmp/psr.rd"; : >"$tmp/psr.rabenseifner"; : >"$tmp/m0"; : >"$tmp/m1"
        : >"$tmp/sum"; : >"$tmp/msum"; : >"$tmp/c.mpich_default"
        for c in $mpich_configs; do : >"$tmp/c.${c%%=*}"; done
        runmpich=$mpich
        [ "$k" -le "$mpich_kmax" ] || runmpich=0
        i=0
        while [ $i -lt "$reps" ]; do
            for a in ring rd rabenseifner; do
                psr_times $a $k >>"$tmp/psr.$a"
            done
            if [ $mpi = 1 ]; then
                mpi_times ompi_default $k >>"$tmp/m0"
                mpi_times "$forced" $k >>"$tmp/m1"
            fi
            if [ $runmpich = 1 ]; then
                mpich_times mpich_default defaults $k >>"$tmp/c.mpich_default"
                for c in $mpich_configs; do
                    mpich_times "${c%%=*}" "${c#*=}" $k >>"$tmp/c.${c%%=*}"
                done
            fi
            i=$((i + 1))
        done
        best_of "$tmp/psr.ring" "$tmp/psr.rd" "$tmp/psr.rabenseifner" >"$tmp/best"
        for bytes in $(awk '{ print $1 }' "$tmp/best"); do
            set -- $(run_stats "$tmp/psr.ring" $bytes) $(run_stats "$tmp/psr.rd" $bytes) \
                $(run_stats "$tmp/psr.rabenseifner" $bytes) \
                $(run_stats "$tmp/m0" $bytes) $(run_stats "$tmp/m1" $bytes)
            set -- "$@" $(ompi_best "$7" "$9") $(awk -v b=$bytes '$1 == b { print $2, $3 }' "$tmp/best")
            awk -v k=$k -v b=$bytes -v r="$1" -v rs="$2" -v d="$3" -v ds="$4" -v a="$5" -v as="$6" \
                -v m0="$7" -v m0s="$8" -v m1="$9" -v m1s="${10}" -v mb="${11}" -v mc="${12}" \
                -v best="${13}" -v sum="$tmp/sum" -v fmt="$row_fmt" 'BEGIN {
                ratio = (mb > 0 && best + 0 > 0) ? sprintf("%.2f", best / mb) : "nan"
                printf fmt, k, b, r, rs, d, ds, a, as, m0, m0s, m1, m1s, mc, ratio
                printf "K=%d %d %s %s\n", k, b, ratio, mc >> sum }' |
                tee -a "$out/ring_vs_mpi.dat"
            [ $runmpich = 1 ] || continue
            set -- ${13} ${14} $3 $5 $(run_stats "$tmp/c.mpich_default" $bytes) \
                $(run_stats "$tmp/c.mpich_rd" $bytes) $(run_stats "$tmp/c.mpich_rsag" $bytes)
            awk -v k=$k -v b=$bytes -v best="$1" -v algo="$2" -v d="$3" -v a="$4" -v m0="$5" \
                -v m0s="$6" -v m1="$7" -v m1s="$8" -v m2="$9" -v m2s="${10}" -v sum="$tmp/msum" \
                -v fmt="$mrow_fmt" '
                function r(x, y) { return (x + 0 > 0 && y + 0 > 0) ? sprintf("%.2f", x / y) : "nan" }
                BEGIN {
                    mb = 0; mc = "-"
                    if (m0 + 0 > 0) { mb = m0; mc = "mpich_default" }
                    if (m1 + 0 > 0 && (mb == 0 || m1 + 0 < mb + 0)) { mb = m1; mc = "mpich_rd" }
                    if (m2 + 0 > 0 && (mb == 0 || m2 + 0 < mb + 0)) { mb = m2; mc = "mpich_rsag" }
                    printf fmt, k, b, best, algo, m0, m0s, m1, m1s, m2, m2s, mc, r(best, mb),
                           r(d, m1), r(a, m2)
                    printf "K=%d %d %s %s\n", k, b, r(best, mb), mc >> sum }' >>"$tmp/mpich.rows"
        done
        ompi_summary "$tmp/sum" all_reduce | tee -a "$out/ring_vs_mpi.dat"
        if [ $runmpich = 1 ]; then
            ompi_summary "$tmp/msum" all_reduce mpich MPICH >>"$tmp/mpich.rows"
        else
            echo "# K=$k: no MPICH figures ($([ $mpich = 1 ] && echo "K > $mpich_kmax" || echo "no MPICH peer"))" \
                >>"$tmp/mpich.rows"
        fi
    done
    touch "$tmp/mpich.rows"
    cat "$tmp/mpich.head" "$tmp/mpich.rows" >"$out/ring_vs_mpich.dat"
    echo
    cat "$out/ring_vs_mpich.dat"
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
