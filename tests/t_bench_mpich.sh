# t_bench_mpich.sh -- MPICH as the benches' second peer (issue 29, item 4):
# experiments/peers/build.sh builds the harness with mpicc.mpich
# (mpi_coll.mpich, beside Open MPI's mpi_coll); under mpirun.mpich with
# lib.sh's switches (TCP over loopback, no shared memory) its all-reduce is
# right, its header names MPICH and every switch and forced algorithm it
# was given, an algorithm MPICH does not know is refused (so a forced one
# is not silently ignored), and the sockets carry the payload; bench_ring.sh
# prints its MPICH table. Tiny sizes, K = 2: the shape and the labels,
# never a time. Skipped, saying why, without MPICH (mpirun.mpich,
# mpicc.mpich: apt-get install mpich libmpich-dev).
# tier: full
. "$PSR_TESTS/lib.sh"
ex="$PSR_TESTS/../experiments"

t_need bench-mpich "MPICH as a peer" ring_worker
if ! command -v mpirun.mpich >/dev/null 2>&1 || ! command -v mpicc.mpich >/dev/null 2>&1; then
    t_skip bench-mpich "MPICH as a peer" "mpirun.mpich or mpicc.mpich not installed (apt-get install mpich libmpich-dev)"
    t_exit
fi
# The peers are built here, not in build/peers, so that nothing is shared.
sh "$ex/peers/build.sh" "$T_TMP/peers" >"$T_TMP/build.log" 2>&1
if [ ! -x "$T_TMP/peers/mpi_coll.mpich" ]; then
    t_skip bench-mpich "MPICH as a peer" "the MPICH peer did not build: $(tail -n 1 "$T_TMP/build.log")"
    t_exit
fi
# lib.sh's helpers in a subshell of their own: it has a job() of its own.
lib() { (prog=t_bench_mpich here=$ex; . "$ex/lib.sh"; mpich_timeout=50; "$@"); }
# mpich SETTING ARGS...: lib.sh's mpich_tcp 2 SETTING ARGS... as a job.
# (its stdout, which mpich_tcp writes to a file, then in $T_TMP/out).
mpich() {
    _set=$1
    shift
    job 60 sh -c 'prog=t_bench_mpich here=$1; shift; . "$here/lib.sh"; mpich_timeout=50; mpich_tcp 2 "$@"' \
        sh "$ex" "$_set" "$T_TMP/mout" "$@"
    mv "$T_TMP/mout" "$T_TMP/out"
}

# rightness OUT: one row per size, each with #wrong 0, and the OK line.
rightness() {
    awk '/^ +[0-9]/ { n++; if ($7 != 0) bad = 1 } /^# out of bounds values : 0 OK$/ { ok = 1 }
         END { exit !(n == 2 && ok && !bad) }' "$1"
}

t_case bench-mpich-1.1 "mpi_coll.mpich under mpich_tcp: right sums; the header names MPICH, the TCP switches and the forced algorithm"
mpich defaults "$T_TMP/peers/mpi_coll.mpich" -c all_reduce -b 4K -e 16K -f 4 -n 2 -w 1
expect_rc 0
expect_grep out '^# mpi_coll: all_reduce over K=2 ranks (MPICH)$'
for w in MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp UCX_NET_DEVICES=lo defaults; do
    grep '^# mpich:' "$T_TMP/out" | grep -q " $w\\( \\|\$\\)" || t_fail "no $w in: $(grep '^# mpich' "$T_TMP/out")"
done
rightness "$T_TMP/out" || t_fail "MPICH's all-reduce was not checked right: $(cat "$T_TMP/out")"
for c in $(lib eval 'mpich_forced all_reduce && echo $mpich_configs'); do
    mpich "${c#*=}" "$T_TMP/peers/mpi_coll.mpich" -c all_reduce -b 4K -e 16K -f 4 -n 2 -w 1
    expect_rc 0
    lib mpich_ran_as "${c#*=}" "$T_TMP/out" 2>"$T_TMP/why" || t_fail "${c%%=*}: $(cat "$T_TMP/why")"
    lib mpich_ran_as defaults "$T_TMP/out" 2>/dev/null && t_fail "${c%%=*}: the header says defaults"
    rightness "$T_TMP/out" || t_fail "${c%%=*}: not right: $(cat "$T_TMP/out")"
done
t_end

t_case bench-mpich-1.2 "an allreduce algorithm MPICH does not know is refused, not ignored"
mpich MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=bogus "$T_TMP/peers/mpi_coll.mpich" -b 4K -e 4K -n 1 -w 0
[ "$rc" != 0 ] || t_fail "MPICH ran with an unknown algorithm: $(cat "$T_TMP/out")"
t_end

t_case bench-mpich-1.3 "with the switches, TCP sockets carry the payload (strace: bytes written >= the all-reduce's)"
if ! command -v strace >/dev/null 2>&1; then
    t_skip bench-mpich-1.3 "TCP carries the payload" "no strace"
else
    rm -f "$T_TMP/st".*
    mpich defaults strace -f -ff -qq -e trace=sendmsg,sendto,writev,write -o "$T_TMP/st" \
        "$T_TMP/peers/mpi_coll.mpich" -c all_reduce -b 4M -e 4M -n 2 -w 1
    expect_rc 0
    # 3 all-reduces of 4 MiB (1 warm-up, 2 timed): at least 4 MiB a rank
    # each, sent through a socket; shared memory would write next to none.
    b=$(awk '/(sendmsg|sendto|writev|write)\(/ && / = [0-9]+$/ { s += $NF } END { print s + 0 }' "$T_TMP"/st.*)
    [ "$b" -ge $((2 * 3 * 4194304)) ] || t_fail "$b bytes written through sockets, want >= $((2 * 3 * 4194304))"
    t_end
fi

t_case bench-mpich-1.4 "bench_ring.sh: the MPICH table, its switches in the header, each row's best configuration and ratios"
PSR_PEERS="$T_TMP/peers" PSR_RESULTS="$T_TMP/res" BENCH_PART=1 BENCH_KSET=2 BENCH_REPS=1 BENCH_ITERS=2 \
    BENCH_BMIN=4K BENCH_EMAX=16K BENCH_MPICH_KMAX=2 job 180 sh "$ex/bench_ring.sh"
expect_rc 0
f="$T_TMP/res/bench/ring_vs_mpich.dat"
[ -s "$f" ] || t_fail "no ring_vs_mpich.dat"
grep -q "^# on TCP over loopback, no shared memory: MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp UCX_NET_DEVICES=lo;" "$f" ||
    t_fail "no switches in the header: $(head -n 3 "$f")"
grep -q '^#K .* mpich_default_us .* mpich_rd_us .* mpich_rsag_us .* mpich_best  *best/mpich_best  *rd/mpich_rd  *rab/mpich_rsag$' "$f" ||
    t_fail "header: $(grep '^#K' "$f")"
awk '!/^#/ { n++
             if (NF != 14 || $4 !~ /^(ring|rd|rabenseifner)$/ || $11 !~ /^mpich_(default|rd|rsag)$/ ||
                 $12 !~ /^[0-9]+\.[0-9][0-9]$/) { print "     " $0; next }
             m = $11 == "mpich_default" ? $5 : $11 == "mpich_rd" ? $7 : $9
             if ($5 + 0 < m || $7 + 0 < m || $9 + 0 < m || ($3 / m - $12) ^ 2 > 0.01 ^ 2) print "     " $0 }
     END { if (n != 2) print "     " n + 0 " rows, want 2" }' "$f" >"$T_TMP/why"
[ -s "$T_TMP/why" ] && t_fail "rows: $(cat "$T_TMP/why")"
grep -q '^# summary all_reduce K=2: psring/mpich_best [0-9.]*-[0-9.]* .*the better MPICH: mpich_' "$f" ||
    t_fail "no MPICH summary line for K=2"
grep -q 'dropped\|failed' "$T_TMP/err" && t_fail "stderr: $(cat "$T_TMP/err")"
t_end
t_exit
