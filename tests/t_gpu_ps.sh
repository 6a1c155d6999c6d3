# t_gpu_ps.sh -- ps_worker --device cuda as real processes on 127.0.0.1:
# the gradient computed on the GPU and staged through pinned memory for
# push and pull, one server and K workers through experiments/launch.sh;
# the weights every worker ends with must equal, bit for bit, those of the
# same job with CPU workers (linreg f64 and synthetic f32 with unequal
# shards and micro-batches).
#
# Without a usable GPU one case checks that --device cuda fails with one
# line, and the rest is skipped with one line; under `make check-gpu`
# (PSR_REQUIRE_GPU=1) a missing GPU is a failure. The server needs libuv:
# where there is no ps_server (a GPU machine without libuv) the training
# cases are skipped, saying so.
# tier: full
. "$PSR_TESTS/lib.sh"

t_need gpu-ps "ps_worker on the GPU" ps_worker bench_gpu
if ! t_gpu_usable gpu-ps-0; then
    t_case gpu-ps-0.1 "without a GPU, ps_worker --device cuda fails with one line, exit 1"
    t_gpu_refused ps_worker --device cuda --server 127.0.0.1:9
    t_end
    t_skip gpu-ps "ps_worker on the GPU" "$t_gpu_why"
    t_exit
fi

launch="$PSR_TESTS/../experiments/launch.sh"
W=60                            # watchdog: 3 x 10 s timeout + 30 s, never a timing claim

if [ ! -x "$PSR_BIN/ps_server" ]; then
    t_skip gpu-ps "ps_worker --device cuda against a server" "no ps_server in $PSR_BIN (it needs libuv)"
    t_exit
fi

# versus NAME K FLAGS...: the job with CPU workers, then with --device cuda
# workers; every GPU worker's weights must be the CPU job's, bit for bit.
versus() {
    name=$1 k=$2; shift 2
    job $W "$launch" ps "$k" "$@" --timeout 10 --weights-out "$T_TMP/$name.cpu"
    expect_rc 0
    job $W "$launch" ps "$k" "$@" --timeout 10 --weights-out "$T_TMP/$name.gpu" \
        --worker-args "--device cuda" --csv-out "$T_TMP/$name.csv"
    expect_rc 0
    r=0
    while [ $r -lt "$k" ]; do
        if [ ! -s "$T_TMP/$name.gpu.$r" ]; then t_fail "worker $r wrote no weights"
        elif ! cmp -s "$T_TMP/$name.cpu.0" "$T_TMP/$name.gpu.$r"; then
            t_fail "GPU worker $r's weights differ from the CPU job's: $(diff "$T_TMP/$name.cpu.0" \
                "$T_TMP/$name.gpu.$r" | head -3 | tr '\n' ' ')"
        fi
        r=$((r + 1))
    done
    grep -q 'worker0| .*GPU 0: ' "$T_TMP/err" || t_fail "worker 0 does not name its GPU"
}

t_case gpu-ps-1.1 "linreg f64, 1 server + 2 GPU workers, 20 steps: == CPU workers, bitwise"
versus lin 2 --steps 20
awk -F, 'NR == 2 { exit !($1 == "ps" && $4 == 2 && $6 == 18) }' "$T_TMP/lin.csv" ||
    t_fail "row: $(sed -n 2p "$T_TMP/lin.csv")"
t_end

t_case gpu-ps-1.2 "synthetic f32, 3 GPU workers on one GPU, shards 1,2,4, --micro 3: == CPU workers, bitwise"
versus syn 3 --workload synthetic --params 50001 --dtype f32 --batch 500 --shard-weights 1,2,4 \
    --micro 3 --steps 4
t_end

t_exit
