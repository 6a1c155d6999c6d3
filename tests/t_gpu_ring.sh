# t_gpu_ring.sh -- ring_worker's GPU paths as real processes on 127.0.0.1:
# --device cuda (weights and gradients on the GPU) over the CUDA-staged TCP
# ring with 1, 2 and 4 ranks sharing one GPU, against the CPU ring with the
# same flags (bit-identical weights: synthetic and linreg); its --bench
# (#wrong 0, sizes down to fewer elements than ranks); NCCL with the one
# rank a one-GPU machine allows, training (== the CPU run) and --bench; and
# the refusal of two NCCL ranks on one GPU (a clear error, no hang).
#
# Without a usable GPU (this includes a build without CUDA) one case checks
# that --device cuda and --transport nccl fail with one line, and the rest
# is skipped with one line; under `make check-gpu` (PSR_REQUIRE_GPU=1) a
# missing GPU is a failure instead.
# tier: full
. "$PSR_TESTS/lib.sh"

t_need gpu-ring "ring_worker on the GPU" ring_worker bench_gpu
if ! t_gpu_usable gpu-ring-0; then
    t_case gpu-ring-0.1 "without a GPU, --device cuda and --transport nccl fail with one line, exit 1"
    t_gpu_refused ring_worker --device cuda
    t_gpu_refused ring_worker --transport nccl
    t_gpu_refused ring_worker --device cuda --bench -b 4K -e 4K
    t_end
    t_skip gpu-ring "ring_worker on the GPU" "$t_gpu_why"
    t_exit
fi

launch="$PSR_TESTS/../experiments/launch.sh"
W=60                            # watchdog: 3 x 10 s timeout + 30 s, never a timing claim

# maxrel A B: the largest |a - b| / max(|b|, 1e-300) over the lines.
maxrel() {
    awk 'NR == FNR { ref[FNR] = $1; next }
         { d = $1 - ref[FNR]; if (d < 0) d = -d; b = ref[FNR]; if (b < 0) b = -b
           if (b < 1e-300) b = 1e-300; if (d / b > m) m = d / b }
         END { printf "%.3g", m + 0 }' "$2" "$1"
}

# versus NAME K FLAGS...: the ring of K ranks on the CPU, then with
# --device cuda (the staged TCP ring), same flags; the GPU run's weights
# must equal the CPU run's bit for bit, on every rank. CSV rows in
# $T_TMP/NAME.cpu.csv and NAME.gpu.csv.
versus() {
    name=$1 k=$2; shift 2
    job $W "$launch" ring "$k" "$@" --timeout 10 --weights-out "$T_TMP/$name.cpu" \
        --csv-out "$T_TMP/$name.cpu.csv"
    expect_rc 0
    job $W "$launch" ring "$k" "$@" --device cuda --timeout 10 --weights-out "$T_TMP/$name.gpu" \
        --csv-out "$T_TMP/$name.gpu.csv"
    expect_rc 0
    cp "$T_TMP/err" "$T_TMP/$name.gpu.err"
    t_ranks_same "$k" "$T_TMP/$name.gpu"
    if [ -s "$T_TMP/$name.gpu.0" ] && ! cmp -s "$T_TMP/$name.cpu.0" "$T_TMP/$name.gpu.0"; then
        t_fail "GPU weights differ from the CPU ring's (max relative difference $(maxrel \
            "$T_TMP/$name.gpu.0" "$T_TMP/$name.cpu.0")): $(diff "$T_TMP/$name.cpu.0" \
            "$T_TMP/$name.gpu.0" | head -3 | tr '\n' ' ')"
    fi
}

t_case gpu-ring-1.1 "staged TCP ring, 2 ranks on one GPU, synthetic f32, shards 3,1, --micro 2: == CPU ring, bitwise"
versus syn2 2 --workload synthetic --params 100003 --dtype f32 --batch 777 --shard-weights 3,1 \
    --micro 2 --steps 5 --piece 64K
awk -F, 'NR == 2 { exit !($1 == "ring" && $3 == "tcp-cuda" && $4 == 2) }' "$T_TMP/syn2.gpu.csv" ||
    t_fail "CSV row: $(sed -n 2p "$T_TMP/syn2.gpu.csv")"
grep -q 'rank1| .*GPU 0: ' "$T_TMP/syn2.gpu.err" || t_fail "rank 1 does not name its GPU"
t_end

t_case gpu-ring-1.2 "staged TCP ring, 4 ranks on one GPU, synthetic f64, odd n, small pieces: == CPU ring, bitwise"
versus syn4 4 --workload synthetic --params 65537 --dtype f64 --steps 4 --piece 4K
t_end

t_case gpu-ring-1.3 "staged TCP ring, linreg f64 (the seeds' problem), 2 and 4 ranks, 20 steps: == CPU ring, bitwise"
versus lin2 2 --steps 20
versus lin4 4 --steps 20 --micro 3
# The loss log of rank 0 is the CPU run's, digit for digit.
grep -q 'rank0| .*step 19: loss' "$T_TMP/lin4.gpu.err" || t_fail "no loss line for step 19"
t_end

t_case gpu-ring-1.4 "K = 1 on the GPU: linreg f64 and synthetic f32 == the CPU run, bitwise"
job $W "$PSR_BIN/ring_worker" --steps 20 --weights-out "$T_TMP/one.cpu"
expect_rc 0
job $W "$PSR_BIN/ring_worker" --steps 20 --device cuda --weights-out "$T_TMP/one.gpu"
expect_rc 0
cmp -s "$T_TMP/one.cpu.0" "$T_TMP/one.gpu.0" || t_fail "linreg: GPU weights differ (max rel $(maxrel "$T_TMP/one.gpu.0" "$T_TMP/one.cpu.0"))"
job $W "$PSR_BIN/ring_worker" --workload synthetic --params 3001 --dtype f32 --steps 3 --weights-out "$T_TMP/one.scpu"
expect_rc 0
job $W "$PSR_BIN/ring_worker" --workload synthetic --params 3001 --dtype f32 --steps 3 --device cuda --weights-out "$T_TMP/one.sgpu"
expect_rc 0
cmp -s "$T_TMP/one.scpu.0" "$T_TMP/one.sgpu.0" || t_fail "synthetic: GPU weights differ"
t_end

# bench_ok FILE ROWS: a table of ROWS sizes, #wrong 0 on every row.
bench_ok() {
    awk -v want="$2" '/^(rank0\| )? *[0-9]+ +[0-9]+ +(float|double)/ { rows++; if ($NF != 0) bad++ }
         END { exit !(rows == want && !bad) }' "$1" ||
        t_fail "bench table (want $2 rows, #wrong 0): $(grep -v '^#' "$1" | tail -6 | tr '\n' ' ')"
}

# by_hand K FLAGS...: K ranks started here (a size sweep writes a record
# per size, which launch.sh does not merge): rank 0's stdout in
# $T_TMP/hand.out, every rank's status in $T_TMP/hand.rc.R.
by_hand() {
    k=$1; shift
    rm -f "$T_TMP/port" "$T_TMP"/hand.*
    (setsid timeout -s KILL $W "$PSR_BIN/ring_worker" --rank 0 --world "$k" \
        --coordinator 127.0.0.1:0 --port-file "$T_TMP/port" "$@" </dev/null \
        >"$T_TMP/hand.out" 2>"$T_TMP/hand.err0"; echo $? >"$T_TMP/hand.rc.0") &
    i=0
    while [ $i -lt 200 ] && [ ! -s "$T_TMP/port" ]; do sleep 0.05; i=$((i + 1)); done
    port=$(cat "$T_TMP/port" 2>/dev/null)
    r=1
    while [ $r -lt "$k" ]; do
        (setsid timeout -s KILL $W "$PSR_BIN/ring_worker" --rank $r --world "$k" \
            --coordinator "127.0.0.1:$port" "$@" </dev/null >/dev/null 2>"$T_TMP/hand.err$r"
         echo $? >"$T_TMP/hand.rc.$r") &
        r=$((r + 1))
    done
    wait
    r=0
    while [ $r -lt "$k" ]; do
        [ "$(cat "$T_TMP/hand.rc.$r" 2>/dev/null)" = 0 ] ||
            t_fail "rank $r: status $(cat "$T_TMP/hand.rc.$r" 2>/dev/null): $(head -c 300 "$T_TMP/hand.err$r")"
        r=$((r + 1))
    done
}

t_case gpu-ring-1.5 "staged TCP ring --bench, 4 ranks: 4 B to 4 MiB (fewer elements than ranks too), #wrong 0"
by_hand 4 --device cuda --bench -b 4 -e 4M -f 16 -n 2 -w 1 --timeout 10
bench_ok "$T_TMP/hand.out" 6
grep -q 'transport tcp-cuda' "$T_TMP/hand.out" || t_fail "no 'transport tcp-cuda' in the header"
t_end

t_case gpu-ring-1.6 "staged TCP ring --bench, 2 ranks, f64, one size: #wrong 0 and a tcp-cuda CSV row"
job $W "$launch" ring 2 --device cuda --bench -b 1M -e 1M -n 3 -w 1 --dtype f64 --timeout 10 \
    --csv-out "$T_TMP/b2.csv"
expect_rc 0
bench_ok "$T_TMP/err" 1
awk -F, 'NR == 2 { exit !($3 == "tcp-cuda" && $4 == 2 && $5 == 1048576 && $13 > 0) }' "$T_TMP/b2.csv" ||
    t_fail "bench row: $(sed -n 2p "$T_TMP/b2.csv")"
t_end

t_case gpu-ring-2.1 "NCCL, one rank: linreg f64 and synthetic f32 training == the CPU run, bitwise"
job $W "$PSR_BIN/ring_worker" --transport nccl --steps 20 --timeout 20 --weights-out "$T_TMP/nccl.lin" \
    --csv "$T_TMP/nccl.rec"
expect_rc 0
cmp -s "$T_TMP/one.cpu.0" "$T_TMP/nccl.lin.0" || t_fail "linreg: NCCL weights differ (max rel $(maxrel "$T_TMP/nccl.lin.0" "$T_TMP/one.cpu.0")): $(tail -3 "$T_TMP/err")"
grep -q '^transport nccl' "$T_TMP/nccl.rec" || t_fail "record: $(head -5 "$T_TMP/nccl.rec" | tr '\n' ' ')"
job $W "$PSR_BIN/ring_worker" --transport nccl --workload synthetic --params 3001 --dtype f32 --steps 3 \
    --timeout 20 --weights-out "$T_TMP/nccl.syn"
expect_rc 0
cmp -s "$T_TMP/one.scpu.0" "$T_TMP/nccl.syn.0" || t_fail "synthetic: NCCL weights differ"
t_end

t_case gpu-ring-2.2 "NCCL, one rank: --bench 4 B to 4 MiB, #wrong 0"
job $W "$PSR_BIN/ring_worker" --transport nccl --bench -b 4 -e 4M -f 16 -n 3 -w 1 --timeout 20
expect_rc 0
bench_ok "$T_TMP/out" 6
expect_grep out 'transport nccl'
expect_grep out '# out of bounds values : 0 OK'
t_end

t_case gpu-ring-2.3 "two NCCL ranks on one GPU: both refuse at once with a clear error (exit 64), no hang"
job $W env CUDA_VISIBLE_DEVICES=0 "$launch" ring 2 --transport nccl --steps 2 --timeout 5
[ "$rc" = 137 ] && t_fail "hung: killed by the ${W}s watchdog"
[ "$rc" = 0 ] && t_fail "two NCCL ranks on one GPU ran"
expect_grep err '2 local ranks on this host but 1 GPU'
expect_grep err 'use --transport tcp --device cuda'
grep -q 'NCCL WARN\|Duplicate GPU' "$T_TMP/err" && t_fail "NCCL started: $(grep -m1 'NCCL' "$T_TMP/err")"
t_end

# start R FLAGS...: rank R as the leader of its own session: its pid (its
# process group) in pid.R, its exit status in rc.R.
start() {
    r=$1; shift
    (
        sh -c 'echo $$ >"$1"; shift; exec setsid "$@"' sh "$T_TMP/pid.$r" \
            timeout -s KILL $W "$PSR_BIN/ring_worker" --rank "$r" "$@" \
            >"$T_TMP/out.$r" 2>"$T_TMP/err.$r" </dev/null
        echo $? >"$T_TMP/rc.$r"
    ) &
}
kill_all() {
    for f in "$T_TMP"/pid.*; do
        [ -s "$f" ] && kill -KILL "-$(cat "$f")" 2>/dev/null
    done
}
trap 'kill_all; rm -rf "$T_TMP"' EXIT

t_case gpu-ring-3.1 "staged TCP ring: a rank SIGKILLed mid-all-reduce, the others exit 1 naming it, no hang"
# Synthetic f32, 1M elements on a 20 MB/s EMULATED link: an all-reduce
# takes about 0.2 s, so a rank is nearly always inside one.
rm -f "$T_TMP"/pid.* "$T_TMP"/rc.* "$T_TMP/port"
job3="--world 3 --device cuda --workload synthetic --params 1M --dtype f32 --link-bw 20MB \
      --steps 100000 --timeout 2"
start 0 --coordinator 127.0.0.1:0 --port-file "$T_TMP/port" $job3
i=0
while [ $i -lt 200 ] && [ ! -s "$T_TMP/port" ]; do sleep 0.05; i=$((i + 1)); done
start 1 --coordinator "127.0.0.1:$(cat "$T_TMP/port" 2>/dev/null)" $job3
start 2 --coordinator "127.0.0.1:$(cat "$T_TMP/port" 2>/dev/null)" $job3
i=0
while [ $i -lt 300 ] && ! grep -q 'step 0:' "$T_TMP/err.0" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
sleep 1
kill -KILL "-$(cat "$T_TMP/pid.1" 2>/dev/null)" 2>/dev/null || t_fail "rank 1 was not running"
for r in 0 2; do
    i=0
    while [ $i -lt 320 ] && [ ! -s "$T_TMP/rc.$r" ]; do sleep 0.05; i=$((i + 1)); done
    st=$(cat "$T_TMP/rc.$r" 2>/dev/null)
    [ "$st" = 1 ] || t_fail "rank $r: exit status ${st:-none (still running after 16 s)}, want 1: $(tail -c 300 "$T_TMP/err.$r")"
    grep -q 'lost rank 1 (127\.0\.0\.1:[0-9]*)' "$T_TMP/err.$r" ||
        t_fail "rank $r does not name rank 1: $(tail -c 300 "$T_TMP/err.$r")"
    echo "     $(tail -n 1 "$T_TMP/err.$r")"
done
kill_all
t_end

t_exit
