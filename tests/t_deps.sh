# t_deps.sh -- experiments/deps.sh (make deps, make deps-TARGET) on a fake
# machine: PATH holds only fake commands (id, apt-get, pkg-config and the
# probed programs) and PSR_DEPS_SYSROOT a fake /usr/include, so that what
# is "installed" is chosen per case. Nothing is installed or removed.
. "$PSR_TESTS/lib.sh"
d="$PSR_TESTS/../experiments/deps.sh"
f=$T_TMP/fake
mkdir -p "$f/bin" "$f/root/usr/include/simgrid"

# machine UID CMDS PCMODS HEADERS: a fake machine. CMDS are commands on the
# fake PATH (pkg-config always the fake one below), PCMODS the modules the fake pkg-config knows, HEADERS files
# under the fake sysroot's usr/include (a name starting with / is that path
# under the sysroot, executable: /usr/bin/time). apt-get logs its arguments
# to $f/apt.log.
machine() {
    rm -rf "$f/bin" "$f/root" "$f/apt.log"; mkdir -p "$f/bin" "$f/root/usr/include/simgrid"
    printf '#!/bin/sh\n[ "$1" = -u ] && echo %s\n' "$1" > "$f/bin/id"
    printf '#!/bin/sh\necho "$*" >> %s/apt.log\n' "$f" > "$f/bin/apt-get"
    printf '#!/bin/sh\n[ "$1" = --exists ] || exit 1\ncase " %s " in *" $2 "*) exit 0 ;; esac\nexit 1\n' "$3" > "$f/bin/pkg-config"
    for c in $2; do [ "$c" = pkg-config ] || printf '#!/bin/sh\nexit 0\n' > "$f/bin/$c"; done
    for h in $4; do
        case $h in
        /*) mkdir -p "$(dirname "$f/root$h")"; printf '#!/bin/sh\nexit 0\n' > "$f/root$h"; chmod +x "$f/root$h" ;;
        *) : > "$f/root/usr/include/$h" ;;
        esac
    done
    chmod +x "$f/bin/"*
}
# deps TARGET...: deps.sh on the fake machine; stdout+stderr to $f/out.
deps() { PATH=$f/bin PSR_DEPS_SYSROOT=$f/root /bin/sh "$d" "$@" > "$f/out" 2>&1; }

build_cmds="cc make pkg-config"
build_pc="libuv libsodium"
all_cmds="$build_cmds gnuplot pgrep ps tc ip mpirun.openmpi mpicc.openmpi chromium slurmctld slurmd srun munged mpirun.mpich mpicc.mpich"
all_pc="$build_pc ompi-c simgrid mpich"    # ompi-c: libopenmpi-dev (mpi.h); mpich: libmpich-dev

t_case deps-1.1 "non-root, everything present: make deps and each target exit 0, silent"
machine 1000 "$all_cmds" "$all_pc" "stdio.h /usr/bin/time"
for t in "" lab check bench sim build; do
    deps $t; rc=$?
    [ $rc = 0 ] || t_fail "deps.sh $t: exit $rc, want 0"
    [ -s "$f/out" ] && t_fail "deps.sh $t printed: $(cat "$f/out")"
done
[ -e "$f/apt.log" ] && t_fail "apt-get ran: $(cat "$f/apt.log")"
t_end

t_case deps-1.2 "non-root, only the lab's packages: lab passes without mpirun.openmpi, mpicc.openmpi, tc, pgrep, chromium, SimGrid"
machine 1000 "$build_cmds gnuplot" "$build_pc" stdio.h
deps lab; rc=$?
[ $rc = 0 ] || t_fail "deps.sh lab: exit $rc, want 0: $(cat "$f/out")"
deps build; rc=$?
[ $rc = 0 ] || t_fail "deps.sh build: exit $rc, want 0"
t_end

t_case deps-1.3 "non-root, MPI, tc, procps, SimGrid, GNU time missing: one line per target, exactly its packages, exit 1"
deps; rc=$?
[ $rc = 1 ] || t_fail "deps.sh: exit $rc, want 1"
cat "$f/out"
grep -q '^  check: apt-get install -y procps iproute2 openmpi-bin libopenmpi-dev libsimgrid-dev time$' "$f/out" ||
    t_fail "no exact check line"
grep -q '^  bench: apt-get install -y procps openmpi-bin libopenmpi-dev$' "$f/out" || t_fail "no exact bench line"
grep -q '^  sim:   apt-get install -y libsimgrid-dev time$' "$f/out" || t_fail "no exact sim line"
grep -q 'lab:' "$f/out" && t_fail "a lab line, though the lab has all it needs"
grep -q '^  check: optional.*apt-get install -y chromium slurm-wlm munge mpich libmpich-dev$' "$f/out" || t_fail "no optional chromium, slurm-wlm, munge, mpich line for check"
grep -q '^  bench: optional.*apt-get install -y mpich libmpich-dev$' "$f/out" || t_fail "no optional mpich line for bench"
[ "$(grep -c 'apt-get install' "$f/out")" = 5 ] || t_fail "want 5 install lines (check, bench, sim, check's and bench's optional ones)"
[ -e "$f/apt.log" ] && t_fail "apt-get ran as non-root"
t_end

t_case deps-1.4 "non-root, no gnuplot and no libuv: the lab's line names gnuplot-nox and libuv1-dev; make lab stops"
machine 1000 "$build_cmds" "libsodium" stdio.h
deps lab; rc=$?
cat "$f/out"
[ $rc = 1 ] || t_fail "deps.sh lab: exit $rc, want 1"
grep -q '^  lab:   apt-get install -y libuv1-dev gnuplot-nox$' "$f/out" || t_fail "no exact lab line"
[ "$(grep -c 'apt-get install' "$f/out")" = 1 ] || t_fail "want exactly one install line"
t_end

t_case deps-1.5 "root with apt-get: installs exactly the target's missing packages, then the optional one"
machine 0 "$build_cmds" "libsodium" stdio.h
deps lab; rc=$?
[ $rc = 0 ] || t_fail "deps.sh lab as root: exit $rc: $(cat "$f/out")"
grep -q '^install -y -qq --no-install-recommends libuv1-dev gnuplot-nox$' "$f/apt.log" ||
    t_fail "apt-get log: $(cat "$f/apt.log")"
machine 0 "$build_cmds gnuplot pgrep ps tc ip mpirun.openmpi mpicc.openmpi" "$build_pc ompi-c" stdio.h
deps check; rc=$?
[ $rc = 0 ] || t_fail "deps.sh check as root: exit $rc: $(cat "$f/out")"
cat "$f/apt.log"
grep -q '^install -y -qq --no-install-recommends libsimgrid-dev time$' "$f/apt.log" || t_fail "no libsimgrid-dev time install"
grep -q '^install -y -qq --no-install-recommends chromium$' "$f/apt.log" || t_fail "no optional chromium install"
grep -q '^install -y -qq --no-install-recommends slurm-wlm$' "$f/apt.log" && grep -q '^install -y -qq --no-install-recommends munge$' "$f/apt.log" ||
    t_fail "no optional slurm-wlm and munge installs"
t_end

t_case deps-1.6 "root, a failing apt-get: exit 1 with the command to run; a failing optional install is only reported"
machine 0 "$build_cmds gnuplot" "libsodium" stdio.h
printf '#!/bin/sh\n[ "$1" = update ] && exit 0\nexit 100\n' > "$f/bin/apt-get"
deps lab; rc=$?
[ $rc = 1 ] || t_fail "exit $rc, want 1"
grep -q 'run: apt-get install -y libuv1-dev$' "$f/out" || t_fail "output: $(cat "$f/out")"
machine 0 "$all_cmds" "$all_pc" "stdio.h /usr/bin/time"
rm "$f/bin/chromium"
printf '#!/bin/sh\n[ "$1" = update ] && exit 0\nexit 100\n' > "$f/bin/apt-get"
deps check; rc=$?
[ $rc = 0 ] || t_fail "optional chromium failed to install: exit $rc, want 0"
grep -q 'could not install chromium' "$f/out" || t_fail "no message for chromium: $(cat "$f/out")"
t_end

t_case deps-1.7 "an unknown target exits 64 with one line"
deps lab nosuch; rc=$?
[ $rc = 64 ] || t_fail "exit $rc, want 64"
[ "$(wc -l < "$f/out")" = 1 ] || t_fail "want one line: $(cat "$f/out")"
t_end

# The Makefile's own words (the repository root: $PSR_TESTS/..), as a top-level
# make (its notes are said at MAKELEVEL 0, and make check is one level up); make -C
# with a folder of this test's own, so nothing of the build is touched.
m() { env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS make --no-print-directory -C "$PSR_TESTS/.." BUILD="$T_TMP/b" BIN="$T_TMP/b/bin" "$@" > "$f/out" 2>&1; }
t_case deps-2.1 "make without libsodium's or libuv's headers: one line naming make deps and the package, not a compiler error"
m SODIUM_CFLAGS=-nostdinc "$T_TMP/b/.have-sodium"; rc=$?
[ $rc != 0 ] || t_fail "make went on without sodium.h"
grep -q "^psring: sodium.h not found: run 'make deps' (as root; it installs libsodium-dev), or apt-get install libsodium-dev\$" "$f/out" ||
    t_fail "no make deps line: $(cat "$f/out")"
grep -q 'fatal error' "$f/out" && t_fail "a compiler error: $(cat "$f/out")"
m UV_CFLAGS=-nostdinc "$T_TMP/b/.have-uv"; rc=$?
[ $rc != 0 ] && grep -q "^psring: uv.h not found: run 'make deps'.*libuv1-dev\$" "$f/out" ||
    t_fail "uv.h: exit $rc: $(cat "$f/out")"
t_end

t_case deps-2.2 "the SimGrid note only where SimGrid is asked for (make sim), not for every build"
m -n SG_FOUND= all
grep -q SimGrid "$f/out" && t_fail "make all speaks of SimGrid: $(grep SimGrid "$f/out")"
m -n SG_FOUND= SIM_ARGS=--quick sim
grep -q '^psring: SimGrid not found.*make deps-sim installs it' "$f/out" || t_fail "make sim: no SimGrid note: $(head -n 3 "$f/out")"
t_end
t_case deps-2.3 "make check-gpu builds every program its tests call (launch.sh's model and psr_merge too: gpu-ps-1.x failed on a GPU machine for want of model)"
m -n check-gpu
for p in bin/ring_worker bin/ps_worker bin/psr_merge bin/model bin/bench_gpu tests/test_gpu; do
    grep -q -- "-o $T_TMP/b/$p\$" "$f/out" || t_fail "make check-gpu does not build $p: $(grep -c . "$f/out") lines"
done
if pkg-config --exists libuv 2>/dev/null; then
    grep -q -- "-o $T_TMP/b/bin/ps_server\$" "$f/out" || t_fail "libuv is here, but make check-gpu does not build ps_server"
fi
t_end
t_exit
