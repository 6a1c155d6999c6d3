# t_device_env.sh -- gpu/device_env.sh's parts that need no GPU (the
# device scripts, gpu/device_check.sh and gpu/device_ring.sh, run on a GPU
# machine): the Debian packages carried as .deb files (--debs DIR) are
# unpacked into build/deps-prefix of the folder it runs in, a folder that
# lacks one of them is named, and a machine without a GPU stops in one
# line, exit 2, before anything is built. The .debs here are fakes built
# with dpkg-deb (empty headers and libraries); nvidia-smi a fake that
# finds no GPU, first on PATH.
. "$PSR_TESTS/lib.sh"
command -v dpkg-deb >/dev/null || { t_skip device-env "gpu/device_env.sh --debs" "no dpkg-deb (Debian's dpkg)"; exit 0; }
g=$PSR_TESTS/../gpu
w=$T_TMP/w
mkdir -p "$w" "$T_TMP/bin"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >"$T_TMP/bin/nvidia-smi"
chmod +x "$T_TMP/bin/nvidia-smi"
# deb NAME FILE...: a fake package NAME holding the FILEs (paths under /).
deb() {
    _n=$1; shift
    rm -rf "$T_TMP/pkg"; mkdir -p "$T_TMP/pkg/DEBIAN"
    printf 'Package: %s\nVersion: 1\nArchitecture: all\nMaintainer: t\nDescription: fake\n' "$_n" >"$T_TMP/pkg/DEBIAN/control"
    for _f; do mkdir -p "$T_TMP/pkg${_f%/*}"; : >"$T_TMP/pkg$_f"; done
    dpkg-deb --build "$T_TMP/pkg" "$T_TMP/debs/$_n.deb" >/dev/null 2>&1 || t_fail "dpkg-deb --build $_n failed"
}
mkdir -p "$T_TMP/debs"
L=/usr/lib/x86_64-linux-gnu
deb libuv1-dev /usr/include/uv.h /usr/include/uv/unix.h $L/libuv.so
deb libsodium-dev /usr/include/sodium.h $L/libsodium.so
# run SCRIPT ARGS...: the device script in $w, its output in $T_TMP/out.
run() { _s=$1; shift; (cd "$w" && PATH=$T_TMP/bin:$PATH sh "$g/$_s" "$@" >"$T_TMP/out" 2>&1); }

t_case device-env-1.1 "device_check.sh --debs DIR: the packages unpacked into build/deps-prefix, then 'no GPU here' in one line, exit 2, nothing built"
run device_check.sh --debs "$T_TMP/debs" "$T_TMP/res"; rc=$?
[ $rc = 2 ] || t_fail "exit $rc, want 2: $(cat "$T_TMP/out")"
for f in usr/include/uv.h usr/include/uv/unix.h usr/include/sodium.h ${L#/}/libuv.so ${L#/}/libsodium.so; do
    [ -f "$w/build/deps-prefix/$f" ] || t_fail "not unpacked: build/deps-prefix/$f"
done
grep -q "^device_check.sh: libuv and libsodium from $w/build/deps-prefix (include $w/build/deps-prefix/usr/include, libraries $w/build/deps-prefix$L)\$" "$T_TMP/out" ||
    t_fail "no prefix line: $(cat "$T_TMP/out")"
grep -q '^device_check.sh: no GPU here (nvidia-smi -L: No devices were found): every check-gpu case would fail; run this on a GPU machine$' "$T_TMP/out" ||
    t_fail "no 'no GPU' line: $(cat "$T_TMP/out")"
[ "$(wc -l <"$T_TMP/out")" = 2 ] || t_fail "more than the two lines: $(cat "$T_TMP/out")"
[ -e "$w/build/gpu" ] && t_fail "it built without a GPU: $(ls "$w/build")"
t_end

t_case device-env-1.2 "device_ring.sh --debs: a folder that lacks a package says which; no folder, no .deb: one line each, exit 2"
rm "$T_TMP/debs/libsodium-dev.deb"
run device_ring.sh --debs "$T_TMP/debs" "$T_TMP/res"; rc=$?
[ $rc = 2 ] || t_fail "exit $rc, want 2"
grep -q '^device_ring.sh: the packages in .* lack: sodium.h (libsodium-dev) libsodium.so (libsodium23, libsodium-dev)$' "$T_TMP/out" ||
    t_fail "lacking libsodium: $(cat "$T_TMP/out")"
run device_check.sh --debs "$T_TMP/nosuch"; rc=$?
[ $rc = 2 ] && grep -q '^device_check.sh: --debs .*/nosuch: no such folder$' "$T_TMP/out" || t_fail "no folder: exit $rc: $(cat "$T_TMP/out")"
mkdir -p "$T_TMP/empty"
run device_check.sh --debs "$T_TMP/empty"; rc=$?
[ $rc = 2 ] && grep -q '^device_check.sh: --debs .*/empty: no .deb files there (apt-get download libuv1 libuv1-dev libsodium23 libsodium-dev)$' "$T_TMP/out" ||
    t_fail "no .deb: exit $rc: $(cat "$T_TMP/out")"
t_end
t_exit
