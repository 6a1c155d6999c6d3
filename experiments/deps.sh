#!/bin/sh
# deps.sh TARGET... -- the Debian packages each make target needs, and only
# those: `make deps` (every target), `make lab` (lab), `make check` (check),
# `make bench` (bench), `make sim` (sim) call it.
#
#   build  what `make all` compiles with: a C compiler, make, pkg-config,
#          libuv and libsodium (headers)
#   lab    build + gnuplot (experiments/lab.sh runs no mpirun.openmpi, mpicc.openmpi or tc:
#          its --netns option needs iproute2 and says so itself)
#   check  build + what the tests use: gnuplot, procps (pgrep, ps), iproute2
#          (tc, ip: t_netns), Open MPI (t_ps_mpirun, t_ring_train), SimGrid
#          (bin/psring_sim, t_sim), and chromium (t_html), slurm-wlm and
#          munge (t_slurm: experiments/slurm_local.sh) and MPICH (mpich,
#          libmpich-dev: t_bench_mpich), which are OPTIONAL: where they
#          cannot be installed their tests skip and say why
#   bench  build + gnuplot, procps and Open MPI (bench_ring.sh runs mpirun.openmpi);
#          MPICH, the second peer, OPTIONAL (without it bench_ring.sh says so)
#   sim    build + gnuplot, SimGrid and GNU time (the large-K sweep's peak
#          memory; check needs it too, for t_sim's run of sim_all.sh)
#
# Each package is PROBED by what the code uses (a command on PATH, a
# pkg-config module, a header), not by dpkg, so a program installed another
# way counts. Nothing missing: silent, exit 0. Something missing, as root
# with apt-get: one apt-get install of the missing required packages (then
# the optional ones, whose failure is only reported). Otherwise: one line
# per target naming exactly the Debian packages to install, exit 1.
#
# For tests (tests/t_deps.sh): the commands come from PATH (id, apt-get,
# pkg-config), and header probes look under $PSR_DEPS_SYSROOT (default /).
prog="make deps"
sysroot=${PSR_DEPS_SYSROOT:-}

usage() { echo "usage: experiments/deps.sh [build|lab|check|bench|sim]..."; }

# pkgs TARGET: the target's packages; a trailing ? marks an optional one.
pkgs() {
    b="gcc make libc6-dev pkg-config libuv1-dev libsodium-dev"
    case $1 in
    build) echo "$b" ;;
    lab) echo "$b gnuplot-nox" ;;
    check) echo "$b gnuplot-nox procps iproute2 openmpi-bin libopenmpi-dev libsimgrid-dev time chromium? slurm-wlm? munge? mpich? libmpich-dev?" ;;
    bench) echo "$b gnuplot-nox procps openmpi-bin libopenmpi-dev mpich? libmpich-dev?" ;;
    sim) echo "$b gnuplot-nox libsimgrid-dev time" ;;
    *) return 1 ;;
    esac
}

have() { command -v "$1" >/dev/null 2>&1; }
pc() { have pkg-config && pkg-config --exists "$1" 2>/dev/null; }

# present PACKAGE: whether what psring uses from PACKAGE is here.
present() {
    case $1 in
    gcc) have cc ;;
    make) have make ;;
    libc6-dev) [ -f "$sysroot/usr/include/stdio.h" ] ;;
    pkg-config) have pkg-config ;;
    libuv1-dev) pc libuv ;;
    libsodium-dev) pc libsodium ;;
    gnuplot-nox) have gnuplot ;;
    procps) have pgrep && have ps ;;
    iproute2) have tc && have ip ;;
    openmpi-bin) have mpirun.openmpi ;;
    libopenmpi-dev) pc ompi-c ;;    # mpi.h; mpicc.openmpi itself comes with openmpi-bin
    libsimgrid-dev) pc simgrid || [ -f "$sysroot/usr/include/simgrid/engine.h" ] ;;
    time) [ -x "$sysroot/usr/bin/time" ] ;;
    chromium) have chromium ;;
    slurm-wlm) have slurmctld && have slurmd && have srun ;;
    munge) have munged ;;
    mpich) have mpirun.mpich && have mpicc.mpich ;;
    libmpich-dev) pc mpich ;;       # MPICH's mpi.h
    *) return 1 ;;
    esac
}

# missing TARGET [opt]: the target's missing required packages (with opt:
# its missing optional ones), space separated.
missing() {
    m=
    for p in $(pkgs "$1"); do
        case $p in
        *\?) [ "${2-}" = opt ] || continue; p=${p%\?} ;;
        *) [ "${2-}" = opt ] && continue ;;
        esac
        present "$p" || m="$m $p"
    done
    echo "${m# }"
}

# union WORDS...: each word once, in first-seen order.
union() {
    u=
    for w in "$@"; do
        case " $u " in *" $w "*) ;; *) u="$u $w" ;; esac
    done
    echo "${u# }"
}

[ $# -gt 0 ] || set -- build lab check bench sim
for t in "$@"; do
    case $t in
    -h|--help) usage; exit 0 ;;
    esac
    pkgs "$t" >/dev/null || { echo "deps.sh: unknown target '$t' (build, lab, check, bench, sim)" >&2; exit 64; }
done

need= opt=
for t in "$@"; do
    need="$need $(missing "$t")"
    opt="$opt $(missing "$t" opt)"
done
need=$(union $need)
opt=$(union $opt)
[ -z "$need" ] && [ -z "$opt" ] && exit 0

if [ "$(id -u 2>/dev/null)" = 0 ] && have apt-get; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null 2>&1 || echo "$prog: apt-get update failed; trying the install anyway" >&2
    if [ -n "$need" ]; then
        echo "$prog: installing Debian packages: $need"
        apt-get install -y -qq --no-install-recommends $need >/dev/null ||
            { echo "$prog: apt-get install failed; run: apt-get install -y $need" >&2; exit 1; }
    fi
    for p in $opt; do
        echo "$prog: installing the optional Debian package $p"
        apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
            echo "$prog: could not install $p (optional: the tests that need it skip)" >&2
    done
    exit 0
fi

why="not root"
[ "$(id -u 2>/dev/null)" = 0 ] && why="no apt-get"
[ -n "$need" ] && echo "$prog: missing Debian packages ($why); install them, as root:" >&2
for t in "$@"; do
    m=$(missing "$t")
    [ -n "$m" ] && printf '  %-6s apt-get install -y %s\n' "$t:" "$m" >&2
done
for t in "$@"; do
    m=$(missing "$t" opt)
    [ -n "$m" ] && printf '  %-6s optional, the tests that need it skip without it: apt-get install -y %s\n' "$t:" "$m" >&2
done
[ -n "$need" ] && exit 1
exit 0
