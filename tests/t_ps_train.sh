# t_ps_train.sh -- the parameter server trains: server(s) + 4 workers on
# 127.0.0.1 (port 0, through experiments/launch.sh) end with the weights of
# the single-process big-batch run (bin/reference): within 1e-12 relative
# for linreg f64 (seed 000, section 4: rounding only), exactly for the
# synthetic workload (its sums are exact in any order), with one server or
# two shards, equal or unequal batch shards, with or without micro-batches.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need ps-train "parameter server training" ps_server ps_worker

# workers_match K PREFIX REF TOL: every worker wrote PREFIX.r, all four
# files are byte-identical (they pulled the same weights), and worker 0's
# are within TOL of REF (TOL 0: byte-identical to it).
workers_match() {
    k=$1 w=$2 ref=$3 tol=$4
    r=0
    while [ $r -lt "$k" ]; do
        [ -s "$w.$r" ] || t_fail "worker $r wrote no weights ($w.$r)"
        [ -s "$w.$r" ] && ! cmp -s "$w.0" "$w.$r" && t_fail "worker $r's weights differ from worker 0's"
        r=$((r + 1))
    done
    if [ "$tol" = 0 ]; then
        cmp -s "$w.0" "$ref" || t_fail "weights are not exactly the reference's: $(diff "$w.0" "$ref" | head -4 | tr '\n' ' ')"
    else
        why=$(t_close "$w.0" "$ref" "$tol") || t_fail "weights not within $tol of the reference: $why"
    fi
}

t_case ps-train-1.1 "linreg f64, 1 server + 4 workers, 20 steps == big batch within 1e-12"
t_reference lin --steps 20
job 120 "$launch" ps 4 --steps 20 --timeout 10 --weights-out "$T_TMP/lin.w" --out "$T_TMP/job1" \
    --csv-out "$T_TMP/row.csv"
expect_rc 0
workers_match 4 "$T_TMP/lin.w" "$T_TMP/lin.ref.0" 1e-12
# The loss goes down: the reference's (the same run, to 1e-12), first step
# against last.
awk '!/^#/ { if (first == "") first = $2; last = $2 }
     END { exit !(first != "" && last + 0 < first / 2) }' "$T_TMP/lin.loss" \
    || t_fail "reference loss did not halve: $(grep -v '^#' "$T_TMP/lin.loss" | sed -n '1p;$p' | tr '\n' ' ')"
# ... and the server's log says so: its loss of step 0 is the reference's
# (it logs 6 digits), and the last one it logs is below half of it.
awk -v ref="$(awk '!/^#/ { printf "%.6g", $2; exit }' "$T_TMP/lin.loss")" '
    /^server0\| .* step [0-9]+ loss / { for (i = 1; i < NF; i++) if ($i == "loss") v = $(i + 1)
                                       if (first == "") first = v; last = v }
    END { if (first != ref) { printf "server step-0 loss %s, reference %s\n", first, ref; exit 1 }
          exit !(last + 0 < first / 2) }' "$T_TMP/err" \
    || t_fail "server loss log: $(grep ' loss ' "$T_TMP/err" | sed -n '1p;$p' | tr '\n' ' ')"
# One merged row: the parameter server, K = 4, 18 timed steps (warm-up 2).
[ "$(wc -l <"$T_TMP/row.csv")" = 2 ] || t_fail "row.csv: want header + 1 row, got $(wc -l <"$T_TMP/row.csv") lines"
awk -F, 'NR == 2 { exit !($1 == "ps" && $4 == 4 && $5 == 96 && $6 == 18) }' "$T_TMP/row.csv" \
    || t_fail "row: $(sed -n 2p "$T_TMP/row.csv")"
for f in rec.server.0 rec.worker.0 rec.worker.3; do
    [ -s "$T_TMP/job1/$f" ] || t_fail "no record $f"
done
expect_grep err 'worker2| ps_worker\[2\]: done, 20 steps'
t_end

t_case ps-train-1.2 "linreg f64 on 2 sharded servers: the same weights within 1e-12"
job 120 "$launch" ps 4 --servers 2 --steps 20 --timeout 10 --weights-out "$T_TMP/sh.w"
expect_rc 0
workers_match 4 "$T_TMP/sh.w" "$T_TMP/lin.ref.0" 1e-12
expect_grep err '^server1| '
t_end

t_case ps-train-1.3 "synthetic f32, unequal shards 5,1,1,3: exactly the reference"
t_reference syn --workload synthetic --params 1000 --dtype f32 --batch 1000 --steps 6 --lr 0.25
job 120 "$launch" ps 4 --workload synthetic --params 1000 --dtype f32 --batch 1000 --steps 6 \
    --lr 0.25 --shard-weights 5,1,1,3 --timeout 10 --weights-out "$T_TMP/syn.w"
expect_rc 0
workers_match 4 "$T_TMP/syn.w" "$T_TMP/syn.ref.0" 0
# The reference really moved: a run that pushed nothing would not match.
awk '$1 != 0 { moved = 1 } END { exit !moved }' "$T_TMP/syn.ref.0" || t_fail "reference weights all 0"
t_end

t_case ps-train-1.4 "--micro 4 accumulates locally: linreg within 1e-12, synthetic on 3 shards exact"
job 120 "$launch" ps 4 --micro 4 --steps 20 --timeout 10 --weights-out "$T_TMP/mi.w"
expect_rc 0
workers_match 4 "$T_TMP/mi.w" "$T_TMP/lin.ref.0" 1e-12
job 120 "$launch" ps 4 --servers 3 --micro 3 --workload synthetic --params 1000 --dtype f32 \
    --batch 1000 --steps 6 --lr 0.25 --shard-weights 5,1,1,3 --timeout 10 --weights-out "$T_TMP/ms.w"
expect_rc 0
workers_match 4 "$T_TMP/ms.w" "$T_TMP/syn.ref.0" 0
t_end

t_case ps-train-1.5 "K = 1: one worker, one server, still the big batch"
job 60 "$launch" ps 1 --steps 20 --timeout 10 --weights-out "$T_TMP/k1.w"
expect_rc 0
workers_match 1 "$T_TMP/k1.w" "$T_TMP/lin.ref.0" 1e-12
t_end
# The launcher's other mode, on the same data: the ring must land on the
# same weights (its own tests are the ring's; this one is the launcher's).
if [ -x "$PSR_BIN/ring_worker" ]; then
    t_case ps-train-1.6 "launch.sh ring 4: rank 0 first, the rest on its port; same weights, one row"
    job 120 "$launch" ring 4 --steps 20 --timeout 10 --weights-out "$T_TMP/ring.w"
    expect_rc 0
    workers_match 4 "$T_TMP/ring.w" "$T_TMP/lin.ref.0" 1e-12
    expect_grep err '^rank3| '
    awk -F, 'NR == 2 { exit !($1 == "ring" && $4 == 4) }' "$T_TMP/out" || t_fail "row: $(cat "$T_TMP/out")"
    t_end
else
    t_skip ps-train-1.6 "launch.sh ring mode" "no ring_worker in $PSR_BIN"
fi
t_exit
