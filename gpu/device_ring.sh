#!/bin/sh
# gpu/device_ring.sh [--debs DIR] [OUTDIR] -- phase 2 on a GPU machine, in one go: the
# GPU paths of ring_worker and ps_worker tested (make check-gpu: test_gpu
# and tests/t_gpu_*.sh), then measured: the CUDA-staged TCP ring against
# the CPU ring with 2 and 4 ranks on one GPU at 16 and 64 MiB, and NCCL's
# all-reduce with one rank, checked. Logs and figures go to OUTDIR
# (default $OUT, else results/gpu):
#   env.txt         GPU, driver, nvcc, cc, NCCL, and the build's log tail
#   check-gpu.log   make check-gpu (ends "N passed, N failed")
#   ring.dat        one line per run: K size device piece rep time_us algbw busbw wrong
#   ring.txt        medians per (K, size, device, piece), and the GPU/CPU ratio
#   nccl.txt        ring_worker --transport nccl --bench, f32 and f64
#   check-gpu-san.log  make check-gpu SANITIZER=address,undefined
# Exit status: 0 when every check passed.
#
# The GPU machine has no libuv: --debs DIR brings it (gpu/device_env.sh,
# THE PACKAGES), and ps_server is built there; else PS_SERVER_BIN may name
# one built elsewhere (x86-64, glibc no
# newer than the machine's, libuv linked statically), which is copied into
# the build's bin/ so that tests/t_gpu_ps.sh runs; without it those cases
# are skipped, saying so. REPS (default 5) runs of each measured point,
# interleaved CPU / GPU so that drifts hit both alike. RING_ONLY=1 (as
# gpu/device_check.sh runs it, after its own build and checks): the
# measurements alone.
. "$(dirname "$0")/device_env.sh"        # out, jobs, loader, pip, mk; PSRING_NCCL_LIB
need_gpu
reps=${REPS:-5}
B=build/gpu
BIN=$B/bin

status=0
if [ -z "${RING_ONLY-}" ]; then
{
    echo "== date: $(date -u)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    nvcc --version | tail -n 2
    cc --version | head -n 1
    echo "cpus: $jobs"
    echo "libnccl.so.2 on the loader's path: ${loader:-none}; pip's: ${pip:-none}"
    echo "PSRING_NCCL_LIB=${PSRING_NCCL_LIB:-(unset)}"
    echo "packages: ${PSR_DEPS_PREFIX:-the system's (no --debs)}"
    mk BUILD=$B BIN=$BIN -j"$jobs" $BIN/ring_worker $BIN/ps_worker $BIN/psr_merge \
        $BIN/reference $BIN/bench_gpu $B/tests/test_gpu 2>&1 | tail -n 3
} >"$out/env.txt" 2>&1
if [ -n "$PS_SERVER_BIN" ]; then
    cp "$PS_SERVER_BIN" $BIN/ps_server && chmod +x $BIN/ps_server
fi

mk BUILD=$B BIN=$BIN -j"$jobs" check-gpu >"$out/check-gpu.log" 2>&1 || status=1
grep '^FAIL\|^skip\|passed,' "$out/check-gpu.log"
fi

# ring.dat: the staged TCP ring (cuda) against the CPU ring (cpu), one
# size per job through the launcher; 10 timed iterations after 2 warm-up.
: >"$out/ring.dat"
point() {       # K SIZE DEVICE PIECE REP
    PSR_BIN=$BIN timeout 120 experiments/launch.sh ring "$1" --bench -b "$2" -e "$2" -n 10 -w 2 \
        --device "$3" --piece "$4" --timeout 30 2>&1 |
        awk -v k="$1" -v s="$2" -v d="$3" -v p="$4" -v r="$5" \
            '/^rank0\| +[0-9]+ +[0-9]+ +float/ { print k, s, d, p, r, $5, $6, $7, $8; n++ }
             END { if (!n) print k, s, d, p, r, "failed" }' >>"$out/ring.dat"
}
rep=1
while [ $rep -le "$reps" ]; do
    for k in 2 4; do
        for size in 16M 64M; do
            point $k $size cpu 1M $rep
            point $k $size cuda 1M $rep
        done
    done
    for piece in 256K 4M; do
        point 2 64M cuda $piece $rep
        point 4 64M cuda $piece $rep
    done
    rep=$((rep + 1))
done
grep -q failed "$out/ring.dat" && status=1
# Medians of busbw (column 8) per point; the GPU/CPU ratio at piece 1M.
sort -k1,1n -k2,2 -k3,3 -k4,4 -k8,8g "$out/ring.dat" | awk '
    $6 == "failed" { next }
    { key = $1 " " $2 " " $3 " " $4; v[key, ++n[key]] = $8; t[key, n[key]] = $6
      if (!(key in seen)) { seen[key] = 1; order[++m] = key } }
    END {
        printf "# K size device piece  runs  busbw_median(GB/s)  min  max  time_median(us)\n"
        for (i = 1; i <= m; i++) {
            key = order[i]; c = n[key]
            med = c % 2 ? v[key, (c + 1) / 2] : (v[key, c / 2] + v[key, c / 2 + 1]) / 2
            tm = c % 2 ? t[key, (c + 1) / 2] : (t[key, c / 2] + t[key, c / 2 + 1]) / 2
            printf "%s  %d  %.3f  %.3f  %.3f  %.1f\n", key, c, med, v[key, 1], v[key, c], tm
            split(key, f, " "); if (f[4] == "1M") b[f[1] " " f[2] " " f[3]] = med
        }
        printf "# GPU (tcp-cuda) / CPU (tcp) busbw, piece 1M\n"
        for (x in b) { split(x, f, " "); if (f[3] == "cuda" && b[f[1] " " f[2] " cpu"] > 0)
            printf "K=%s %s: %.3f\n", f[1], f[2], b[x] / b[f[1] " " f[2] " cpu"] }
    }' >"$out/ring.txt"
cat "$out/ring.txt"

{
    for dt in f32 f64; do
        timeout 120 $BIN/ring_worker --transport nccl --bench -b 16M -e 256M -f 4 -n 20 -w 5 \
            --dtype $dt --timeout 30 2>&1 || echo "FAILED: nccl bench $dt"
    done
} >"$out/nccl.txt"
grep -q FAILED "$out/nccl.txt" && status=1
grep -v '^ring_worker' "$out/nccl.txt"

[ -n "${RING_ONLY-}" ] && exit $status
if [ -n "$PS_SERVER_BIN" ]; then
    mkdir -p build/gpu-san/bin
    cp "$PS_SERVER_BIN" build/gpu-san/bin/ps_server
fi
MK_PRE="timeout 240" mk BUILD=build/gpu-san BIN=build/gpu-san/bin SANITIZER=address,undefined \
    -j"$jobs" check-gpu >"$out/check-gpu-san.log" 2>&1 || status=1
echo "== sanitizer: $(grep 'passed,' "$out/check-gpu-san.log" || tail -n 3 "$out/check-gpu-san.log")"
exit $status
