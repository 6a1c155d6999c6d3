# gpu/device_env.sh -- sourced by gpu/device_check.sh and gpu/device_ring.sh
# (the scripts run on a GPU machine): their output folder and job count,
# and where NCCL is.
#
# Sets out (the first argument, else $OUT, else results/gpu; created),
# jobs (the CPU count), loader (libnccl.so.2 on the dynamic loader's path,
# or empty) and pip (the Python environment's nvidia-nccl-cu13 libnccl.so.2,
# or empty). NCCL is then PSRING_NCCL_LIB if set; else the loader's; else
# pip's, exported as PSRING_NCCL_LIB for gpu_nccl.c to dlopen.
out=${1:-${OUT:-results/gpu}}
mkdir -p "$out" || exit 1
jobs=$(nproc 2>/dev/null || echo 4)

loader=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{ print $NF; exit }')
sp=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)
pip=$(find $sp -name 'libnccl.so.2' 2>/dev/null | head -n 1)
if [ -z "$PSRING_NCCL_LIB" ] && [ -z "$loader" ] && [ -n "$pip" ]; then
    PSRING_NCCL_LIB=$pip
    export PSRING_NCCL_LIB
fi
