# gpu/device_env.sh -- sourced by gpu/device_check.sh and gpu/device_ring.sh
# (the scripts run on a GPU machine): their arguments, output folder and
# job count, the Debian packages the machine lacks, where NCCL is, and
# whether there is a GPU at all.
#
# Arguments: [--debs DIR] [OUTDIR]. Sets out (OUTDIR, else $OUT, else
# results/gpu; created), jobs (the CPU count), loader (libnccl.so.2 on the
# dynamic loader's path, or empty) and pip (the Python environment's
# nvidia-nccl-cu13 libnccl.so.2, or empty). NCCL is then PSRING_NCCL_LIB
# if set; else the loader's; else pip's, exported as PSRING_NCCL_LIB for
# gpu_nccl.c to dlopen.
#
# THE PACKAGES. The GPU machine has no libuv and no libsodium (ps_server
# needs both, every program libsodium). --debs DIR (or PSR_DEBS=DIR): a
# folder of Debian .deb files carried along, made on a Debian machine with
#     apt-get download libuv1 libuv1-dev libsodium23 libsodium-dev
# Each is unpacked (dpkg-deb -x; ar and tar where dpkg-deb is missing)
# into one prefix folder, build/deps-prefix, and the build and the loader
# are pointed at it: mk (use it for make) passes UV_CFLAGS, UV_LIBS,
# SODIUM_CFLAGS and SODIUM_LIBS naming the prefix's include and library
# folders (with an rpath, so the programs find the libraries however they
# are started), and LD_LIBRARY_PATH names the library folder too. A folder
# that lacks one of the four packages' files stops here, saying which.
# Exported as PSR_DEPS_PREFIX, so that a script the first one runs reuses
# the prefix rather than unpacking again.
#
# need_gpu: exit 2, in one line, where nvidia-smi lists no GPU (every
# check-gpu case would fail; this is the wrong machine).
me=${0##*/}
debs=${PSR_DEBS-}
case ${1-} in
--debs) [ $# -ge 2 ] || { echo "$me: --debs: missing value; see gpu/device_env.sh" >&2; exit 64; }
        debs=$2; shift 2 ;;
--debs=*) debs=${1#--debs=}; shift ;;
esac
out=${1:-${OUT:-results/gpu}}
mkdir -p "$out" || exit 1
jobs=$(nproc 2>/dev/null || echo 4)

# deps_unpack DIR PREFIX: every DIR/*.deb's files under PREFIX.
deps_unpack() {
    rm -rf "$2" && mkdir -p "$2" || return 1
    for d in "$1"/*.deb; do
        [ -f "$d" ] || { echo "$me: --debs $1: no .deb files there (apt-get download libuv1 libuv1-dev libsodium23 libsodium-dev)" >&2; return 2; }
        if command -v dpkg-deb >/dev/null 2>&1; then
            dpkg-deb -x "$d" "$2" || { echo "$me: dpkg-deb -x $d failed" >&2; return 2; }
        else
            t=$(mktemp -d) && (cd "$t" && ar x "$(cd "$(dirname "$d")" && pwd)/${d##*/}") &&
                tar -xf "$t"/data.tar.* -C "$2" || { echo "$me: cannot unpack $d (ar, tar)" >&2; rm -rf "$t"; return 2; }
            rm -rf "$t"
        fi
    done
}

if [ -n "${PSR_DEPS_PREFIX-}" ]; then
    prefix=$PSR_DEPS_PREFIX
elif [ -n "$debs" ]; then
    [ -d "$debs" ] || { echo "$me: --debs $debs: no such folder" >&2; exit 2; }
    prefix=$(pwd)/build/deps-prefix
    deps_unpack "$debs" "$prefix" || exit 2
else
    prefix=
fi
if [ -n "$prefix" ]; then
    inc=$prefix/usr/include
    libdir=$(find "$prefix" -name 'libsodium.so' -o -name 'libuv.so' 2>/dev/null | head -n 1)
    libdir=${libdir%/*}
    miss=""
    [ -f "$inc/uv.h" ] || miss="$miss uv.h (libuv1-dev)"
    [ -f "$inc/sodium.h" ] || miss="$miss sodium.h (libsodium-dev)"
    [ -n "$libdir" ] && [ -e "$libdir/libuv.so" ] || miss="$miss libuv.so (libuv1, libuv1-dev)"
    [ -n "$libdir" ] && [ -e "$libdir/libsodium.so" ] || miss="$miss libsodium.so (libsodium23, libsodium-dev)"
    [ -z "$miss" ] || { echo "$me: the packages in ${debs:-$prefix} lack:$miss" >&2; exit 2; }
    PSR_DEPS_PREFIX=$prefix
    LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PSR_DEPS_PREFIX LD_LIBRARY_PATH
    echo "$me: libuv and libsodium from $prefix (include $inc, libraries $libdir)"
fi
# mk ARGS...: make, pointed at the prefix's packages where there is one
# (MK_PRE: a command before make, e.g. "timeout 240").
mk() {
    if [ -n "$prefix" ]; then
        ${MK_PRE-} make "UV_CFLAGS=-isystem $inc" "UV_LIBS=-L$libdir -Wl,-rpath,$libdir -luv" \
             "SODIUM_CFLAGS=-isystem $inc" "SODIUM_LIBS=-L$libdir -Wl,-rpath,$libdir -lsodium" "$@"
    else
        ${MK_PRE-} make "$@"
    fi
}

need_gpu() {
    g=$(command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>&1 || echo "no nvidia-smi")
    case $g in
    GPU\ *) ;;
    *) echo "$me: no GPU here (nvidia-smi -L: $(echo "$g" | head -n 1)): every check-gpu case would fail; run this on a GPU machine" >&2
       exit 2 ;;
    esac
}

loader=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{ print $NF; exit }')
sp=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)
pip=$([ -n "$sp" ] && find $sp -name 'libnccl.so.2' 2>/dev/null | head -n 1)
if [ -z "$PSRING_NCCL_LIB" ] && [ -z "$loader" ] && [ -n "$pip" ]; then
    PSRING_NCCL_LIB=$pip
    export PSRING_NCCL_LIB
fi
