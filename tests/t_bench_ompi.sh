# t_bench_ompi.sh -- bench_ring.sh and bench_coll.sh run Open MPI in both
# configurations (issue 27, item 6): ompi_default (its decision rules) and
# the algorithm forced (lib.sh's ompi_forced: ompi_ring for the all-reduce
# and the reduce-scatter, ompi_pipeline for the broadcast, ...); every row
# says which configuration was the better one and gives psring's ratio
# against that one; a summary line per K; and mpi_coll's own header names
# the coll_tuned settings it was given. Tiny sizes, K = 2, one repetition:
# this checks the tables' shape and labels, never a time.
# Skipped, saying why, without Open MPI (mpirun.openmpi, mpicc.openmpi).
# tier: full
. "$PSR_TESTS/lib.sh"
ex="$PSR_TESTS/../experiments"

t_need bench-ompi "Open MPI's two configurations in the benches" ring_worker
if ! command -v mpirun.openmpi >/dev/null 2>&1; then
    t_skip bench-ompi "Open MPI's two configurations in the benches" \
        "mpirun.openmpi not installed (apt-get install openmpi-bin libopenmpi-dev)"
    t_exit
fi
# The peer is built here, not in build/peers, so that nothing is shared.
sh "$ex/peers/build.sh" "$T_TMP/peers" >"$T_TMP/build.log" 2>&1
if [ ! -x "$T_TMP/peers/mpi_coll" ]; then
    t_skip bench-ompi "Open MPI's two configurations in the benches" \
        "the MPI peer did not build: $(tail -n 1 "$T_TMP/build.log")"
    t_exit
fi
export PSR_PEERS="$T_TMP/peers" PSR_RESULTS="$T_TMP/res" BENCH_KSET=2 BENCH_REPS=1 BENCH_ITERS=2

# rows FILE FORCED_COL BEST_COL RATIO_COL CONFIGS: every data row of FILE
# (not '#') has RATIO_COL columns, names a configuration of CONFIGS in column
# FORCED_COL (0: none) and BEST_COL, and a ratio (a number) in RATIO_COL;
# prints the count of rows.
rows() {
    awk -v fc="$2" -v bc="$3" -v rc="$4" -v configs=" $5 " '
        /^#/ { next }
        NF != rc { print "     a row of " NF " columns: " $0 > "/dev/stderr"; bad = 1; next }
        fc > 0 && index(configs, " " $fc " ") == 0 { print "     forced column: " $0 > "/dev/stderr"; bad = 1 }
        index(configs, " " $bc " ") == 0 { print "     ompi_best column: " $0 > "/dev/stderr"; bad = 1 }
        $rc !~ /^[0-9]+\.[0-9][0-9]$/ { print "     no ratio: " $0 > "/dev/stderr"; bad = 1 }
        { n++ }
        END { print n + 0; exit bad }' "$1"
}

t_case bench-ompi-1.1 "bench_ring.sh: ompi_default and ompi_ring per row, ompi_best named, ratio against it, a summary"
BENCH_PART=1 BENCH_BMIN=4K BENCH_EMAX=16K BENCH_MPICH_KMAX=0 job 120 sh "$ex/bench_ring.sh"
expect_rc 0
grep -q '^#K .* ompi_default_us .* ompi_ring_us .* ompi_best  *best/ompi_best$' "$T_TMP/out" ||
    t_fail "no header naming both configurations: $(grep '^#K' "$T_TMP/out")"
expect_grep out 'coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4'
n=$(awk '/^$/ { exit } { print }' "$T_TMP/out" | rows - 0 13 14 "ompi_default ompi_ring" 2>"$T_TMP/why") ||
    t_fail "$(cat "$T_TMP/why")"
[ "$n" = 2 ] || t_fail "$n rows, want 2 (4 KiB, 16 KiB)"
# best/ompi_best is min(ring, rd, rabenseifner) over the median of the
# configuration named.
awk '/^$/ { exit } !/^#/ { b = $3 < $5 ? $3 : $5; b = b < $7 ? b : $7; m = $13 == "ompi_default" ? $9 : $11
             other = $13 == "ompi_default" ? $11 : $9
             if (m > other || (b / m - $14) ^ 2 > 0.01 ^ 2) print "     " $0 }' "$T_TMP/out" >"$T_TMP/why"
[ -s "$T_TMP/why" ] && t_fail "ompi_best is not the faster, or the ratio is not against it: $(cat "$T_TMP/why")"
grep -q '^# summary all_reduce K=2: psring/ompi_best [0-9.]*-[0-9.]* .*the better Open MPI: ompi_' "$T_TMP/out" ||
    t_fail "no summary line for K=2"
awk '/^$/ { exit } { print }' "$T_TMP/out" | cmp -s - "$T_TMP/res/bench/ring_vs_mpi.dat" ||
    t_fail "ring_vs_mpi.dat differs from what was printed"
grep -q 'dropped\|failed' "$T_TMP/err" && t_fail "stderr: $(cat "$T_TMP/err")"
t_end

t_case bench-ompi-1.2 "bench_coll.sh: reduce_scatter beside ompi_ring, broadcast beside ompi_pipeline, ompi_best named, summaries"
BENCH_COLLS="reduce_scatter broadcast" BENCH_BMIN=16K BENCH_EMAX=64K job 120 sh "$ex/bench_coll.sh"
expect_rc 0
expect_grep out '^# reduce_scatter: ompi_ring = .*coll_tuned_reduce_scatter_algorithm 3 (mpi_coll -v)$'
expect_grep out '^# broadcast: ompi_pipeline = .*coll_tuned_bcast_algorithm 3 '
expect_grep out '^# coll .* ompi_default_us .* ompi_forced .* ompi_best  *psring/ompi_best$'
n=$(rows "$T_TMP/out" 8 11 12 "ompi_default ompi_ring ompi_pipeline" 2>"$T_TMP/why") || t_fail "$(cat "$T_TMP/why")"
[ "$n" = 4 ] || t_fail "$n rows, want 4"
awk '$1 == "reduce_scatter" && $8 != "ompi_ring" || $1 == "broadcast" && $8 != "ompi_pipeline"' \
    "$T_TMP/out" | grep -q . && t_fail "a row labelled with another collective's configuration"
for c in reduce_scatter broadcast; do
    grep -q "^# summary $c K=2: psring/ompi_best " "$T_TMP/out" || t_fail "no summary line for $c"
done
grep -q 'dropped\|failed\|WRONG' "$T_TMP/err" && t_fail "stderr: $(cat "$T_TMP/err")"
t_end

t_case bench-ompi-1.3 "mpi_coll's header names its coll_tuned settings: defaults, or the locked algorithm"
asroot=
[ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
mpi() { job 60 mpirun.openmpi $asroot --oversubscribe --mca pml ob1 --mca btl tcp,self \
            --mca btl_tcp_if_include lo -np 2 "$@"; }
mpi "$T_TMP/peers/mpi_coll" -c all_reduce -b 4K -e 4K -n 1 -w 0
expect_rc 0
expect_grep out '^# coll_tuned: defaults'
mpi --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_reduce_scatter_algorithm 3 \
    "$T_TMP/peers/mpi_coll" -c reduce_scatter -v -b 4K -e 4K -n 1 -w 0
expect_rc 0
expect_grep out '^# mpi_coll: reduce_scatter over K=2 ranks (Open MPI), MPI_Reduce_scatter (-v)$'
grep '^# coll_tuned:' "$T_TMP/out" | grep -q ' reduce_scatter_algorithm=3' ||
    t_fail "header: $(grep '^# coll_tuned' "$T_TMP/out")"
awk '/^ +[0-9]/ { if ($7 != 0) bad = 1; n++ } END { exit !(n == 1 && !bad) }' "$T_TMP/out" ||
    t_fail "MPI_Reduce_scatter's result was not checked right: $(cat "$T_TMP/out")"
t_end
t_exit
