# t_coll.sh -- ring_worker --bench --coll as real processes on 127.0.0.1:
# every collective through experiments/launch.sh (K = 3, f32 and f64, a
# root that is not 0, an imbalanced all-to-all at K = 4), each element of
# the result checked by the benchmark itself (#wrong 0), and the merged CSV
# row carrying the coll column, busbw = algbw x nccl-tests' factor and the
# bytes of rank 0's link; then the bad flags (exit 64, one line) and ranks
# that disagree on --coll alltoall (stopped at the rendezvous, naming it);
# the busy-poll override PSR_NET_BUSY (docs/link.md, Busy-poll); last the
# staging piece's rule (coll_piece_rule), the same on every rank.
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

if [ ! -x "$PSR_BIN/ring_worker" ]; then
    t_skip coll-proc "collectives" "no ring_worker in $PSR_BIN"
    t_exit
fi

# row COLUMN: the value of COLUMN (by name) in the merged row of $T_TMP/c.csv.
row() { awk -F, -v col="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c[col] }' "$T_TMP/c.csv"; }

t_case coll-proc-1.1 "every --coll via launch.sh, K = 3: #wrong 0, the coll column, busbw = algbw x factor"
# name factor dtype extra bytes_in: rank 0's, n = 12288 B, one header of 40 B
# per step (all_reduce 4 steps of n/3; reduce_scatter, all_gather, alltoall
# 2 steps of n/3; broadcast from 2 and reduce to 2, 2 steps: rank 0 is the
# chain's second rank, receiving n, resp. its head, receiving nothing)
for spec in "all_reduce 1.33333 f32 - 16544" "reduce_scatter 0.666667 f64 - 8272" \
            "all_gather 0.666667 f32 - 8272" "broadcast 1 f64 --root=2 12368" \
            "reduce 1 f32 --root=2 80" "alltoall 0.666667 f64 - 8272"; do
    set -- $spec
    extra=$4
    [ "$extra" = - ] && extra=
    rm -f "$T_TMP/c.csv"
    job 120 "$launch" ring 3 --worker-args "--coll $1 $extra" --bench -b 12K -e 12K -n 2 -w 1 \
        --dtype $3 --timeout 10 --csv-out "$T_TMP/c.csv"
    expect_rc 0
    awk '/^rank0\| +[0-9]/ { rows++; if ($NF != 0 || !($(NF - 1) > 0)) bad++ } END { exit !(rows == 1 && !bad) }' "$T_TMP/err" \
        || t_fail "$1: bench table: $(grep '^rank0|' "$T_TMP/err" | tail -3 | tr '\n' ' ')"
    expect_grep err 'rank0| # out of bounds values : 0 OK'
    [ "$(row coll)" = "$1" ] || t_fail "$1: coll column '$(row coll)'"
    awk -v a="$(row algbw)" -v b="$(row busbw)" -v f=$2 'BEGIN { exit !(a > 0 && (b / a - f) ^ 2 < 1e-8) }' \
        || t_fail "$1: busbw/algbw = $(row busbw)/$(row algbw), want $2"
    [ "$(row bytes_in)" = "$5" ] || t_fail "$1: rank 0 bytes_in $(row bytes_in), want $5"
done
t_end

t_case coll-proc-1.2 "alltoall --imbalance 3 --root 2 at K = 4, odd sizes: #wrong 0, the skew announced"
job 120 "$launch" ring 4 --worker-args "--coll alltoall --imbalance 3 --root 2" --bench -b 1000 -e 64000 \
    -f 4 -n 2 -w 1 --timeout 10
expect_rc 0
expect_grep err 'rank0| # out of bounds values : 0 OK'
expect_grep err 'rank0| # imbalance 3: rank 2 gets 3 x the average share'
t_end

t_case coll-proc-1.3 "bad --coll, --root, --imbalance: exit 64 with one line naming the flag"
for bad in "--coll allreduce" "--coll broadcast --root 4" "--coll broadcast --root -1" \
           "--coll alltoall --imbalance 0.5" "--coll alltoall --imbalance 4.5" \
           "--coll alltoall --imbalance abc" "--coll reduce --imbalance 2" \
           "--coll all_gather --root 1" "--coll broadcast --algo rd" \
           "--coll reduce_scatter --device cuda"; do
    job 10 "$PSR_BIN/ring_worker" --bench --world 4 --rank 1 --coordinator 127.0.0.1:9 $bad
    [ "$rc" = 64 ] || t_fail "$bad: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$bad: not one line: $(cat "$T_TMP/err")"
    flag=$(echo "$bad" | awk '{ print $NF ~ /^-/ ? $NF : $(NF - 1) }')
    case $bad in *"--algo rd"*|*--device*) flag=--coll ;; esac
    grep -q -- "$flag" "$T_TMP/err" || t_fail "$bad: does not name $flag: $(cat "$T_TMP/err")"
done
job 10 "$PSR_BIN/ring_worker" --world 2 --rank 1 --coordinator 127.0.0.1:9 --coll reduce
[ "$rc" = 64 ] || t_fail "--coll without --bench: exit $rc, want 64"
job 10 "$PSR_BIN/ring_worker" --bench --world 34 --rank 1 --coordinator 127.0.0.1:9 --coll alltoall
[ "$rc" = 64 ] || t_fail "--coll alltoall at K = 34: exit $rc, want 64"
expect_grep err 'at most 33 ranks'
job 10 "$PSR_BIN/ring_worker" --bench --world 4 --rank 1 --coordinator 127.0.0.1:9 --coll alltoall --imbalance 4 --timeout 1
[ "$rc" != 64 ] || t_fail "--imbalance K refused: $(cat "$T_TMP/err")"
t_end

t_case coll-proc-1.4 "ranks that disagree on --coll alltoall (its mesh): stopped at the rendezvous, naming it"
# Rank 0 alone runs the mesh: started by hand, the other rank with the ring.
rm -f "$T_TMP/port"
"$PSR_BIN/ring_worker" --bench -b 4K -e 4K -n 1 --world 2 --rank 0 --coordinator 127.0.0.1:0 \
    --port-file "$T_TMP/port" --coll alltoall --timeout 5 >/dev/null 2>"$T_TMP/err.0" &
pid0=$!
i=0
while [ $i -lt 200 ] && [ ! -s "$T_TMP/port" ]; do sleep 0.05; i=$((i + 1)); done
job 30 "$PSR_BIN/ring_worker" --bench -b 4K -e 4K -n 1 --world 2 --rank 1 \
    --coordinator "127.0.0.1:$(cat "$T_TMP/port" 2>/dev/null)" --coll broadcast --timeout 5
[ "$rc" = 1 ] || t_fail "rank 1: exit $rc, want 1"
expect_grep err "rank 0 runs --coll alltoall, this rank --algo ring: every rank must run the same one"
wait $pid0
rc0=$?
[ "$rc0" = 1 ] || t_fail "rank 0: exit $rc0, want 1 ($(tail -c 200 "$T_TMP/err.0"))"
t_end

t_case coll-proc-1.5 "PSR_NET_BUSY: a bad value refused at start-up (exit 64, naming it); 0 sleeps at once (no spins)"
for bad in 12x -1 1000001 ' '; do
    job 30 env PSR_NET_BUSY="$bad" "$launch" ring 2 --bench -b 4K -e 4K -n 2 -w 1 --timeout 5
    [ "$rc" = 64 ] || t_fail "PSR_NET_BUSY='$bad': exit $rc, want 64"
    expect_grep err 'PSR_NET_BUSY: .* (from the environment)'
done
job 30 env PSR_NET_BUSY=0 PSR_NET_STATS=1 "$launch" ring 2 --bench -b 4K -e 64K -n 4 -w 1 --timeout 5
expect_rc 0
[ "$(grep -c 'net_stats pid .* spins 0 ' "$T_TMP/err")" = 2 ] ||
    t_fail "PSR_NET_BUSY=0: spins at some rank: $(grep -o 'spins [0-9]*' "$T_TMP/err" | tr '\n' ' ')"
t_end

t_case coll-proc-1.6 "the piece rule (coll.h): K = 3, the ring and rabenseifner all-reduce; every rank says 128 KiB iff K > the CPUs, all alike (--algo auto too: after rank 0's choice); not with --piece, not for reduce_scatter"
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
# auto: bandwidth-bound by this file, so rank 0 picks the ring (K = 3: Rabenseifner folds)
printf 'latency_s 1e-6\nbw_Bps 1e8\ngamma_s_per_byte 0\n' > "$T_TMP/cal.txt"
for spec in "ring 1" "rabenseifner 1" "auto 1 --calibration=$T_TMP/cal.txt" "ring 0 --piece=256K" \
            "ring 0 --coll=reduce_scatter"; do
    set -- $spec
    want=0
    [ "$2" = 1 ] && [ "$cpus" -lt 3 ] && want=3
    job 60 "$launch" ring 3 --algo "$1" ${3:+--worker-args "$3"} --bench -b 12K -e 300K -f 25 -n 2 -w 1 --timeout 10
    expect_rc 0
    expect_grep err 'rank0| # out of bounds values : 0 OK'
    got=$(grep -c "ring_worker\[[0-2]\]: piece 128 KiB: 3 ranks on $cpus CPUs, unpaced (coll_piece_rule)\$" "$T_TMP/err")
    [ "$1" = auto ] && ! grep -q 'rank0| .*--algo auto: ring (' "$T_TMP/err" &&
        t_fail "auto: rank 0 did not choose the ring: $(grep auto "$T_TMP/err" | head -3)"
    [ "$got" = "$want" ] || t_fail "$spec, $cpus CPUs: $got ranks said the 128 KiB piece, want $want"
done
t_end
t_exit
