#!/bin/sh
# gpu/device_check.sh [--debs DIR] [OUTDIR] -- every GPU check and
# measurement, in one go.
#
# For a machine with a GPU (the H100/H200 device machine): unpacks the
# Debian packages the machine lacks (--debs DIR: libuv and libsodium as
# .deb files, gpu/device_env.sh, THE PACKAGES), finds NCCL, builds every
# program check-gpu's tests call there (for that machine's nvcc and driver,
# -j its CPU count), runs `make check-gpu`, the benchmark in f32 and f64,
# the staged ring's and NCCL's measurements (gpu/device_ring.sh, REPS runs
# of each point; REPS=0 none), the GPU tests again under
# AddressSanitizer+UBSan, under compute-sanitizer's memcheck, and with the
# pip package's NCCL. Without a GPU it stops at once, in one line, exit 2.
# Logs and figures go to OUTDIR (default $OUT, else results/gpu):
#   env.txt            GPU, driver, nvcc, cc, where NCCL was found, SASS facts
#   check-gpu.log      make check-gpu (ends "N passed, N failed")
#   bench_f32.dat      bin/bench_gpu --dtype f32 (columns under '#')
#   bench_f64.dat      bin/bench_gpu --dtype f64
#   check-gpu-san.log  make check-gpu SANITIZER=address,undefined
#   memcheck.log       compute-sanitizer memcheck of test_gpu (memory errors)
#   ring.dat, ring.txt, nccl.txt   gpu/device_ring.sh's measurements
#   nccl-pip.log       test_gpu with PSRING_NCCL_LIB = pip's libnccl.so.2
# Exit status: 0 when every check passed.
#
# NCCL: PSRING_NCCL_LIB if set; else libnccl.so.2 on the dynamic loader's
# path; else the Python environment's nvidia-nccl-cu13 package (its
# libnccl.so.2 found under site-packages): gpu/device_env.sh finds it.
. "$(dirname "$0")/device_env.sh"        # out, jobs, loader, pip, mk; PSRING_NCCL_LIB
need_gpu

{
    echo "== date: $(date -u)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
    nvcc --version | tail -n 2
    cc --version | head -n 1
    echo "libnccl.so.2 on the loader's path: ${loader:-none}"
    echo "libnccl.so.2 of pip (nvidia-nccl-cu13): ${pip:-none}"
    echo "PSRING_NCCL_LIB=${PSRING_NCCL_LIB:-(unset)}"
    echo "packages: ${PSR_DEPS_PREFIX:-the system's (no --debs)}"
} >"$out/env.txt" 2>&1

status=0
mk BUILD=build/gpu BIN=build/gpu/bin -j"$jobs" check-gpu >"$out/check-gpu.log" 2>&1 || status=1
grep -v '^/\|^ar \|^cc \|^gcc ' "$out/check-gpu.log" | tail -n 30

# SASS facts: 16-byte loads in the reduction; FMA only inside the IEEE
# double division of sgd_kernel (its correctly rounded refinement), none in
# the reduction or the gradients.
{
    echo "== SASS: LDG.E.128 (16-byte loads) and FFMA/DFMA per kernel"
    for f in build/gpu/gpu/gpu_vec.o build/gpu/gpu/gpu_workload.o; do
        cuobjdump -sass "$f" 2>/dev/null | awk -v f="$f" '
            /Function :/ { fn = $3 }
            /LDG\.E\.128/ { l[fn]++ } /[^A-Z][DF]FMA[ .]/ { m[fn]++ } { seen[fn] = 1 }
            END { for (k in seen) if (k != "") printf "%s %s: LDG.E.128 %d, FMA %d\n", f, k, l[k], m[k] }'
    done
} >>"$out/env.txt" 2>&1

for dt in f32 f64; do
    timeout 150 build/gpu/bin/bench_gpu --dtype $dt >"$out/bench_$dt.dat" 2>&1 || status=1
    cat "$out/bench_$dt.dat"
done

# The staged ring against the CPU ring, NCCL's bench (device_ring.sh,
# which reuses this build and the prefix, and skips its own checks).
RING_ONLY=1 sh "$(dirname "$0")/device_ring.sh" "$out" || status=1

mk BUILD=build/gpu-san BIN=build/gpu-san/bin SANITIZER=address,undefined -j"$jobs" check-gpu \
    >"$out/check-gpu-san.log" 2>&1 || status=1
echo "== sanitizer: $(tail -n 2 "$out/check-gpu-san.log" | head -n 1)"

# Memory errors only: NCCL's own probes of kernels it has no sm_90 image
# for show up as API errors (cudaErrorNoKernelImageForDevice) and are not
# psring's; psring's own API errors are CUDA_CHECKed anyway.
timeout 240 compute-sanitizer --tool memcheck --report-api-errors no --leak-check full \
    build/gpu/tests/test_gpu >"$out/memcheck.log" 2>&1 || status=1
echo "== memcheck: $(grep 'ERROR SUMMARY' "$out/memcheck.log")"

if [ -n "$pip" ]; then
    PSRING_NCCL_LIB=$pip PSR_REQUIRE_GPU=1 timeout 120 build/gpu/tests/test_gpu \
        >"$out/nccl-pip.log" 2>&1 || status=1
    echo "== pip NCCL ($pip): $(grep -c '^ok ' "$out/nccl-pip.log") ok, $(grep -c '^FAIL' "$out/nccl-pip.log") FAIL; $(grep '     NCCL' "$out/nccl-pip.log")"
fi
exit $status
