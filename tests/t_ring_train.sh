# t_ring_train.sh -- the ring trains and benchmarks as real processes on
# 127.0.0.1: 4 ranks through experiments/launch.sh (port 0 + port file),
# and 4 ranks under Open MPI's mpirun.openmpi (rank and world from the
# environment, the coordinator from MASTER_ADDR/MASTER_PORT). Every rank
# ends with bit-identical weights, within 1e-12 relative of the
# single-process big-batch run (bin/reference) for linreg f64, exactly for
# the synthetic workload (its sums are exact in any order); the benchmark
# checks every element of its result (#wrong 0).
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

if [ ! -x "$PSR_BIN/ring_worker" ]; then
    t_skip ring-train "ring training" "no ring_worker in $PSR_BIN"
    t_exit
fi

t_case ring-train-1.1 "linreg f64, 4 ranks via launch.sh, 20 steps: bit-identical, == big batch within 1e-12"
t_reference lin --steps 20
job 120 "$launch" ring 4 --steps 20 --timeout 10 --weights-out "$T_TMP/lin.w" --out "$T_TMP/job1" \
    --csv-out "$T_TMP/row.csv"
expect_rc 0
t_ranks_same 4 "$T_TMP/lin.w"
why=$(t_close "$T_TMP/lin.w.0" "$T_TMP/lin.ref.0" 1e-12) || t_fail "weights vs reference: $why"
# Rank 0 logs the loss of step 0 (the reference's, to its 9 digits) and of
# the last step, lower.
awk -v ref="$(awk '!/^#/ { printf "%.9g", $2; exit }' "$T_TMP/lin.loss")" '
    /^rank0\| .* step [0-9]+: loss / { for (i = 1; i < NF; i++) if ($i == "loss") v = $(i + 1)
                                      if (first == "") first = v; last = v }
    END { if (first != ref) { printf "rank 0 step-0 loss %s, reference %s\n", first, ref; exit 1 }
          exit !(last + 0 < first / 2) }' "$T_TMP/err" \
    || t_fail "loss log: $(grep ' loss ' "$T_TMP/err" | sed -n '1p;$p' | tr '\n' ' ')"
# One merged row: the ring, K 4, 96 bytes (12 f64), 18 timed steps.
[ "$(wc -l <"$T_TMP/row.csv")" = 2 ] || t_fail "row.csv: want header + 1 row, got $(wc -l <"$T_TMP/row.csv") lines"
awk -F, 'NR == 2 { exit !($1 == "ring" && $2 == "ring" && $3 == "tcp" && $4 == 4 && $5 == 96 && $6 == 18) }' \
    "$T_TMP/row.csv" || t_fail "row: $(sed -n 2p "$T_TMP/row.csv")"
t_end

t_case ring-train-1.2 "synthetic f32, 3 ranks, unequal shards, --micro 3: exactly the big batch"
t_reference syn --workload synthetic --params 10007 --dtype f32 --steps 6 --batch 999
job 120 "$launch" ring 3 --workload synthetic --params 10007 --dtype f32 --steps 6 --batch 999 \
    --shard-weights 5,1,2 --micro 3 --timeout 10 --weights-out "$T_TMP/syn.w"
expect_rc 0
t_ranks_same 3 "$T_TMP/syn.w"
cmp -s "$T_TMP/syn.w.0" "$T_TMP/syn.ref.0" || t_fail "not exactly the reference: $(diff "$T_TMP/syn.w.0" "$T_TMP/syn.ref.0" | head -3 | tr '\n' ' ')"
t_end

t_case ring-train-1.3 "K = 1 opens no socket and is the big batch itself, bit for bit"
job 60 "$PSR_BIN/ring_worker" --steps 20 --weights-out "$T_TMP/one.w"
expect_rc 0
cmp -s "$T_TMP/one.w.0" "$T_TMP/lin.ref.0" || t_fail "K=1 weights differ from the reference's"
expect_grep err 'rank 0 of 1 (rank from default)'
# Through the launcher too: a ring of one writes no coordinator port.
job 60 bash "$launch" ring 1 --steps 20 --weights-out "$T_TMP/one.l"
expect_rc 0
cmp -s "$T_TMP/one.l.0" "$T_TMP/lin.ref.0" || t_fail "launch.sh ring 1: weights differ from the reference's"
awk -F, 'NR == 2 && $1 == "ring" && $4 == 1 { ok = 1 } END { exit !ok }' "$T_TMP/out" ||
    t_fail "launch.sh ring 1: no CSV row with K = 1: $(head -c 300 "$T_TMP/out")"
t_end

t_case ring-train-1.4 "4-rank --bench via launch.sh: every element checked, #wrong 0, a CSV row"
job 120 "$launch" ring 4 --bench -b 256K -e 256K -n 4 -w 1 --timeout 10 --csv-out "$T_TMP/bench.csv"
expect_rc 0
# rank 0's table comes out on the launcher's stderr, prefixed "rank0| ".
awk '/^rank0\| +[0-9]/ { rows++; if ($NF != 0 || !($(NF - 1) > 0)) bad++; if ($2 != 262144 || $3 != 65536 || $4 != "float") odd++ }
     END { exit !(rows == 1 && !bad && !odd) }' "$T_TMP/err" \
    || t_fail "bench table: $(grep '^rank0|' "$T_TMP/err" | tail -4 | tr '\n' ' ')"
expect_grep err 'rank0| # out of bounds values : 0 OK'
awk -F, 'NR == 2 { exit !($1 == "ring" && $4 == 4 && $5 == 262144 && $6 == 4 && $13 > 0) }' \
    "$T_TMP/bench.csv" || t_fail "bench row: $(sed -n 2p "$T_TMP/bench.csv")"
t_end

t_case ring-train-1.5 "--bench sweep, K = 3, f64: a row per size, #wrong 0 everywhere"
rm -f "$T_TMP/port"
setsid "$PSR_BIN/ring_worker" --rank 0 --world 3 --coordinator 127.0.0.1:0 --port-file "$T_TMP/port" \
    --bench -b 1K -e 1M -f 4 -n 2 -w 1 --dtype f64 --timeout 10 --csv "$T_TMP/sweep" \
    >"$T_TMP/sweep.out" 2>"$T_TMP/sweep.err" </dev/null &
p0=$!
i=0
while [ $i -lt 200 ] && [ ! -s "$T_TMP/port" ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$T_TMP/port" 2>/dev/null)
for r in 1 2; do
    setsid "$PSR_BIN/ring_worker" --rank $r --world 3 --coordinator "127.0.0.1:$port" \
        --bench -b1K -e1M -f4 -n2 -w1 --dtype f64 --timeout 10 --csv "$T_TMP/sweep.r$r" \
        >/dev/null 2>"$T_TMP/sweep.err$r" </dev/null &
done
wait
awk '/^ +[0-9]/ { rows++; if ($NF != 0 || !($(NF - 1) > 0)) bad++; if ($3 != "double") odd++ }
     END { exit !(rows == 6 && !bad && !odd) }' "$T_TMP/sweep.out" \
    || t_fail "sweep table: $(cat "$T_TMP/sweep.out" "$T_TMP/sweep.err" | head -c 600)"
for s in 1024 4096 16384 65536 262144 1048576; do
    [ -s "$T_TMP/sweep.$s" ] || t_fail "no record for size $s ($T_TMP/sweep.$s)"
done
"$PSR_BIN/psr_merge" "$T_TMP/sweep.65536" "$T_TMP/sweep.r1.65536" "$T_TMP/sweep.r2.65536" \
    >"$T_TMP/sweep.csv" 2>&1 || t_fail "psr_merge of one size: $(cat "$T_TMP/sweep.csv")"
t_end

if ! command -v mpirun.openmpi >/dev/null; then
    t_skip ring-train-1.6 "ring under mpirun" "mpirun.openmpi not installed (apt-get install openmpi-bin)"
else
    t_case ring-train-1.6 "mpirun.openmpi -np 4: ranks from Open MPI, coordinator from MASTER_ADDR/PORT, == launch.sh's weights"
    asroot=""
    [ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
    # mpirun starts every rank at once, so rank 0 cannot pick port 0: take
    # a port below the kernel's ephemeral range, another one if it is taken.
    export MASTER_ADDR=127.0.0.1 MASTER_PORT
    export PSRING_SECRET=ring-mpirun-secret-0123456789abcdef    # travels with -x
    tries=0
    while :; do
        MASTER_PORT=$(( 20000 + ($$ * 7 + tries * 1237) % 10000 ))
        job 120 mpirun.openmpi $asroot --oversubscribe -np 4 -x MASTER_ADDR -x MASTER_PORT -x PSRING_SECRET \
            "$PSR_BIN/ring_worker" --steps 20 --timeout 10 --weights-out "$T_TMP/mpi.w"
        tries=$((tries + 1))
        grep -q 'Address already in use' "$T_TMP/err" && [ $tries -lt 4 ] || break
    done
    unset MASTER_ADDR MASTER_PORT PSRING_SECRET
    expect_rc 0
    for r in 0 1 2 3; do
        grep -q "ring_worker\[$r\]: rank $r of 4 (rank from openmpi)" "$T_TMP/err" \
            || t_fail "rank $r does not say it took rank $r of 4 from openmpi: $(head -c 400 "$T_TMP/err")"
    done
    t_ranks_same 4 "$T_TMP/mpi.w"
    # The same K, the same ring order: the same bits as the launch.sh run.
    cmp -s "$T_TMP/mpi.w.0" "$T_TMP/lin.w.0" || t_fail "mpirun.openmpi weights differ from launch.sh's"
    t_end
fi

t_exit
