# t_mlp.sh -- the mlp workload (a real forward and backward pass) trains on
# both systems as real processes on 127.0.0.1 through experiments/launch.sh:
# the parameter server and the ring, K = 2, with micro-batches and unequal
# shards, end with the weights of the single-process big-batch run
# (bin/reference) within 1e-12 relative in f64 (rounding only: the partial
# sums are added in another order), every worker with the same bytes; the
# loss goes down; a worker whose workload differs from the server's is
# refused at the hello; flags that make no sense for the mlp exit 64. And
# the synthetic workload's EMULATED --backward-time, end to end, once the
# workers hand it to the workload (skipped, saying so, until then).
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need mlp "mlp training" reference ps_server ps_worker ring_worker

# first_loss NAME DIGITS: the reference's step-0 loss, to DIGITS digits.
first_loss() {
    awk -v d="$2" '!/^#/ { printf "%.*g", d, $2; exit }' "$T_TMP/$1.loss"
}

MLP="--workload mlp --steps 30 --timeout 10"

# trained KIND NAME REF TOL ARGS...: a launch.sh KIND job of K = 2 on the
# mlp with ARGS, weights in $T_TMP/NAME.w.r: it exits 0, both weights the
# same and within TOL relative of bin/reference's REF.
trained() {
    _kind=$1 _n=$2 _ref=$3 _tol=$4; shift 4
    job 120 "$launch" "$_kind" 2 $MLP "$@" --weights-out "$T_TMP/$_n.w"
    expect_rc 0
    t_ranks_same 2 "$T_TMP/$_n.w"
    why=$(t_close "$T_TMP/$_n.w.0" "$T_TMP/$_ref.ref.0" "$_tol") \
        || t_fail "$_kind $_n vs reference: $why"
}

# loss_falls WHO PATTERN REF: the loss WHO logs on the lines of the last
# job's stderr matching PATTERN starts at REF and ends under half of it.
loss_falls() {
    awk -v who="$1" -v pat="$2" -v ref="$3" '
        $0 ~ pat { for (i = 1; i < NF; i++) if ($i == "loss") v = $(i + 1)
                   if (first == "") first = v; last = v }
        END { if (first != ref) { printf "%s step-0 loss %s, reference %s\n", who, first, ref; exit 1 }
              exit !(last + 0 < first / 2) }' "$T_TMP/err" \
        || t_fail "$1 loss log: $(grep ' loss ' "$T_TMP/err" | sed -n '1p;$p' | tr '\n' ' ')"
}

t_case mlp-1.1 "bin/reference --workload mlp: 6337 parameters, the loss falls 4x in 30 steps"
t_reference mlp $MLP
grep -q '^# reference: mlp n=6337 f64, batch 256, lr 0.05' "$T_TMP/mlp.loss" \
    || t_fail "header: $(head -1 "$T_TMP/mlp.loss")"
awk '!/^#/ { if (first == "") first = $2; last = $2; n++ }
     END { exit !(n == 30 && first > 0.3 && last + 0 < first / 4) }' "$T_TMP/mlp.loss" \
    || t_fail "loss: $(grep -v '^#' "$T_TMP/mlp.loss" | sed -n '1p;$p' | tr '\n' ' ')"
# The weights start seeded, not at 0: every one moved or was non-zero.
[ "$(wc -l <"$T_TMP/mlp.ref.0")" = 6337 ] || t_fail "$(wc -l <"$T_TMP/mlp.ref.0") weights, want 6337"
awk '$1 == 0 { z++ } END { exit z > 0 }' "$T_TMP/mlp.ref.0" || t_fail "zero weights after training"
t_end

t_case mlp-1.2 "parameter server, K = 2, shards 3,1, --micro 2: == big batch within 1e-12"
trained ps ps mlp 1e-12 --shard-weights 3,1 --micro 2
# The server logs the global loss: step 0's is the reference's (6 digits),
# and the last one it logs is lower.
loss_falls server '^server0[|] .* step [0-9]+ loss ' "$(first_loss mlp 6)"
t_end

t_case mlp-1.3 "ring, K = 2, --micro 3: ranks bit-identical, == big batch within 1e-12"
trained ring ring mlp 1e-12 --micro 3
loss_falls "rank 0" '^rank0[|] .* step [0-9]+: loss ' "$(first_loss mlp 9)"
t_end

t_case mlp-1.4 "f32 on both systems: the loss goes down; both end within 1e-4 of the f32 reference"
t_reference m32 $MLP --dtype f32
trained ring r32 m32 1e-4 --dtype f32
trained ps p32 m32 1e-4 --dtype f32
awk '!/^#/ { if (first == "") first = $2; last = $2 } END { exit !(last + 0 < first / 4) }' \
    "$T_TMP/m32.loss" || t_fail "f32 loss: $(grep -v '^#' "$T_TMP/m32.loss" | sed -n '1p;$p' | tr '\n' ' ')"
t_end

t_case mlp-1.5 "a worker with the mlp against a synthetic server of the same n and B: refused"
job 60 "$launch" ps 1 --batch 256 --steps 2 --timeout 3 \
    --server-args "--workload synthetic --params 6337" --worker-args "--workload mlp"
[ "$rc" != 0 ] && [ "$rc" != 137 ] || t_fail "exit status $rc, want a failure (not the watchdog)"
expect_grep err 'workload mlp, this server has synthetic'
t_end

t_case mlp-1.6 "mlp flags that make no sense exit 64 with one line"
for args in "--params 100" "--batch 65537" "--jitter 0.1"; do
    # shellcheck disable=SC2086
    "$PSR_BIN/reference" --workload mlp $args >"$T_TMP/o" 2>"$T_TMP/e"
    st=$?
    [ "$st" = 64 ] || t_fail "reference --workload mlp $args: exit $st, want 64"
    [ "$(wc -l <"$T_TMP/e")" = 1 ] || t_fail "reference --workload mlp $args: stderr $(wc -l <"$T_TMP/e") lines"
    flag=${args%% *}
    grep -q -e "$flag" "$T_TMP/e" || t_fail "reference --workload mlp $args: does not name $flag: $(cat "$T_TMP/e")"
done
t_end

# --backward-time end to end: synthetic, 3 steps of T = 200 ms on 2 ranks.
# Each rank logs the EMULATED line, the run takes at least 0.9 * 3 T (a
# lower bound only), and the weights are exactly those without it (the
# synthetic sums are exact). Skipped while the workers do not pass the
# flag to the workload (cli_workload_cfg).
SYN="--workload synthetic --params 1000 --dtype f32 --batch 64 --steps 3 --warmup 1 --timeout 10"
t0=$(date +%s.%N)
job 120 "$launch" ring 2 $SYN --backward-time 200ms --weights-out "$T_TMP/bt.w"
t1=$(date +%s.%N)
if [ "$rc" = 0 ] && ! grep -q 'EMULATED backward time' "$T_TMP/err"; then
    t_skip mlp-2.1 "--backward-time end to end" "ring_worker does not hand --backward-time to its workload yet"
else
    t_case mlp-2.1 "--backward-time 200ms, ring K = 2: EMULATED on each rank, >= 0.9 * 3 T, same weights"
    expect_rc 0
    expect_grep err '^rank0| .*EMULATED backward time'
    expect_grep err '^rank1| .*EMULATED backward time'
    awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 0.9 * 3 * 0.2) }' \
        || t_fail "the run took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s, under 0.9 * 3 * 0.2 s"
    t_reference bt $SYN
    cmp -s "$T_TMP/bt.w.0" "$T_TMP/bt.ref.0" || t_fail "weights differ from the reference's without the sleep"
    t_ranks_same 2 "$T_TMP/bt.w"
    t_end
fi
t_exit
