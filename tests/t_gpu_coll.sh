# t_gpu_coll.sh -- ring_worker --transport nccl --bench --coll NAME: NCCL's
# reduce-scatter, all-gather, broadcast, reduce and grouped send/recv
# all-to-all (gpu_nccl_collective, gpu_nccl_alltoall), each result checked
# by the benchmark (#wrong 0): one rank on one GPU, and through launch.sh
# one rank per GPU where the machine has two or more (K = min(GPUs, 4)).
#
# Without a usable GPU (this includes a build without CUDA or NCCL) one
# case checks that --transport nccl --bench --coll fails with one line,
# exit 1, and the rest is skipped with one line; under `make check-gpu`
# (PSR_REQUIRE_GPU=1) a missing GPU is a failure instead.
# tier: full
. "$PSR_TESTS/lib.sh"

t_need gpu-coll "NCCL's collectives" ring_worker bench_gpu
if ! t_gpu_usable gpu-coll-0; then
    t_case gpu-coll-0.1 "without a GPU, --transport nccl --bench --coll fails with one line, exit 1"
    t_gpu_refused ring_worker --transport nccl --bench --coll reduce_scatter -b 4K -e 4K
    t_gpu_refused ring_worker --transport nccl --bench --coll alltoall -b 4K -e 4K
    t_end
    t_skip gpu-coll "NCCL's collectives" "$t_gpu_why"
    t_exit
fi

launch="$PSR_TESTS/../experiments/launch.sh"
W=120                           # watchdog, never a timing claim
colls="reduce_scatter all_gather broadcast reduce alltoall"

t_case gpu-coll-1.1 "one rank, every --coll, f32 and f64, 4 B .. 4 MiB: #wrong 0"
for c in $colls; do
    for dt in f32 f64; do
        job $W "$PSR_BIN/ring_worker" --transport nccl --bench --coll $c -b 4 -e 4M -f 16 -n 3 -w 1 \
            --dtype $dt --timeout 20
        expect_rc 0
        grep -q '# out of bounds values : 0 OK' "$T_TMP/out" || t_fail "$c $dt: $(tail -3 "$T_TMP/out" "$T_TMP/err")"
    done
done
t_end

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "${gpus:-0}" -lt 2 ]; then
    t_skip gpu-coll-1.2 "one rank per GPU" "$gpus GPU(s) here: NCCL needs one per rank"
    t_exit
fi
k=$((gpus < 4 ? gpus : 4))
t_case gpu-coll-1.2 "K = $k ranks, one per GPU, every --coll (root K-1, alltoall --imbalance 2): #wrong 0, the coll column"
for c in $colls; do
    extra=
    case $c in broadcast|reduce) extra="--root $((k - 1))" ;; alltoall) extra="--root 0 --imbalance 2" ;; esac
    rm -f "$T_TMP/g.csv"
    job $W "$launch" ring $k --worker-args "--transport nccl --coll $c $extra" --bench -b 1M -e 1M -n 3 \
        -w 1 --timeout 20 --csv-out "$T_TMP/g.csv"
    expect_rc 0
    expect_grep err 'rank0| # out of bounds values : 0 OK'
    [ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["coll"] }' "$T_TMP/g.csv")" = $c ] ||
        t_fail "$c: the row: $(sed -n 2p "$T_TMP/g.csv")"
done
t_end
t_exit
