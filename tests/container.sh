#!/bin/bash
# container.sh -- `make check-container`: the Dockerfile built and run the
# way the README says, with podman, and what comes back checked.
#
#   tests/container.sh [--quick]
#
# Root on Linux (Debian/Ubuntu: it installs podman, runc and debootstrap
# with apt-get when they are missing). In order:
#
#   1. the base: localhost/debian:12, a minbase debootstrap root of bookworm
#      from the mirror /etc/apt/sources.list(.d) names, imported with
#      `tar -C ROOT -c . | podman import - localhost/debian:12`; made once,
#      kept (later runs reuse it: delete it with `podman rmi
#      localhost/debian:12`);
#   2. the image: `podman build --build-arg BASE=localhost/debian:12
#      --build-arg PSR_GIT=<commit> -t localhost/psring:check .` (the image
#      is kept for the layer cache; the one it replaces is removed);
#   3. `make lab` in it as --user 1234:1234, results/container (created,
#      owned by 1234:1234) mounted as /psring/results and
#      PSR_HOST_RESULTS=$PWD/results/container: the run's folder must land
#      there with index.html, manifest.txt and k_sweep.csv, every file owned
#      by 1234:1234, the manifest saying `git: <commit>`, and the messages
#      naming the host's folder, never /psring/results;
#   4. `make check` in it as root (it installs `make deps-check` first, so
#      the container needs the network apt uses); --quick: `make test-quick`.
#
# Flags these hosts need: --runtime runc (crun: "cgroups in hybrid mode not
# supported") and --ulimit nofile=20000:20000 --ulimit nproc=4096:4096
# (crun: "setrlimit RLIMIT_NOFILE: Operation not permitted"), on the build
# and on every run. Containers are named psring-check-<pid>-<step> and
# removed on the way out, failed or not (the base and the image stay).
# Logs: build/container/*.log. Exit 0 when every check passed, 1
# when one failed, 2 when it could not run, 64 on a bad flag.
#
# Not in `make check` nor .ci/run: it takes about 15 minutes (the image
# build, the lab, the whole suite inside). Figures and the hosts it ran on: README.md, "In a container".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
prog=container.sh
quick=0
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "$prog: $a: unknown option; see $prog --help" >&2; exit 64 ;;
    esac
done

say() { echo "$prog: $*" >&2; }
cannot() { say "$*"; exit 2; }
now() { date +%s; }

[ "$(uname -s)" = Linux ] || cannot "needs Linux (podman with runc), this is $(uname -s)"
[ "$(id -u)" = 0 ] || cannot "needs root (it installs podman and imports a base image): sudo make check-container"

base=localhost/debian:12
image=localhost/psring:check
uid=1234
flags=(--runtime runc --ulimit nofile=20000:20000 --ulimit nproc=4096:4096)
logs=$root/build/container
mkdir -p "$logs" || cannot "cannot create $logs"

containers=()
cleanup() {
    local c
    [ -n "${build_pid-}" ] && kill "$build_pid" 2>/dev/null && wait "$build_pid"
    # -t 1: make as a container's PID 1 ignores SIGTERM; SIGKILL after 1 s
    for c in "${containers[@]}"; do
        podman rm -f -t 1 --ignore "$c" >/dev/null 2>&1
    done
    [ -n "${tmp_root-}" ] && rm -rf "$tmp_root"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# ctr NAME ARGS...: podman run --rm --name NAME ARGS..., its exit status.
# In the background and waited for, so that ^C or SIGTERM to this script
# runs the traps at once (bash runs none while a foreground command runs),
# and cleanup removes the container.
ctr() {
    local name=$1 pid
    shift
    containers+=("$name")
    podman run --rm --name "$name" "${flags[@]}" "$@" &
    pid=$!
    wait "$pid"
}

# ------------------------------------------------------------ 0. the tools
need=""
command -v podman >/dev/null || need="$need podman"
command -v runc >/dev/null || need="$need runc"
command -v debootstrap >/dev/null || need="$need debootstrap"
if [ -n "$need" ]; then
    command -v apt-get >/dev/null || cannot "missing:$need, and no apt-get to install them"
    say "installing$need"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
        install -y -q --no-install-recommends $need; } > "$logs/apt.log" 2>&1 ||
        cannot "apt-get install$need failed; see $logs/apt.log"
fi
engine="$(podman --version), $(runc --version | head -n 1)"

# ------------------------------------------------------------ 1. the base
# The mirror: the first http(s) URI for Debian proper (not -security) in
# the one-line or the deb822 sources.
mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '$1 == "deb" && $2 ~ /^https?:/ && $2 !~ /security/ { print $2; exit }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '$1 == "URIs:" && $2 ~ /^https?:/ && $2 !~ /security/ { print $2; exit }' "$f"
    done
}
t0=$(now)
if podman image exists "$base"; then
    say "base: $base (cached; podman rmi $base to make it again)"
else
    m=$(mirror | head -n 1)
    [ -n "$m" ] || cannot "no Debian mirror in /etc/apt/sources.list(.d)"
    tmp_root=$(mktemp -d /var/tmp/psring-debootstrap.XXXXXX) || cannot "mktemp failed"
    say "base: debootstrap --variant=minbase bookworm from $m (log: $logs/debootstrap.log)"
    debootstrap --variant=minbase bookworm "$tmp_root/root" "$m" > "$logs/debootstrap.log" 2>&1 ||
        cannot "debootstrap failed; see $logs/debootstrap.log"
    tar -C "$tmp_root/root" -c . | podman import - "$base" > "$logs/import.log" 2>&1 ||
        cannot "podman import failed; see $logs/import.log"
    rm -rf "$tmp_root"; tmp_root=
fi
t_base=$(( $(now) - t0 ))

# ------------------------------------------------------------ 2. the image
git=unknown
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    git="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' (modified)')"
fi
old=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null)
say "image: podman build ${flags[*]} --build-arg BASE=$base --build-arg PSR_GIT='$git' -t $image (log: $logs/build.log)"
t0=$(now)
podman build "${flags[@]}" --force-rm --build-arg BASE="$base" --build-arg PSR_GIT="$git" \
    -t "$image" "$root" > "$logs/build.log" 2>&1 &
build_pid=$!
wait "$build_pid" || cannot "podman build failed; see $logs/build.log"
build_pid=
t_build=$(( $(now) - t0 ))
new=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null)
[ -n "$old" ] && [ "$old" != "$new" ] && podman rmi "$old" >/dev/null 2>&1

failed=0
fail() { say "FAIL: $*"; failed=$((failed + 1)); }

# ------------------------------------------------------------ 3. make lab, as a user
res=$root/results/container
mkdir -p "$res" && chown "$uid:$uid" "$res" || cannot "cannot create $res for user $uid"
before=$(ls -1 "$res")
name=psring-check-$$-lab
say "make lab: podman run --user $uid:$uid -v $res:/psring/results -e PSR_HOST_RESULTS=$res $image (log: $logs/lab.log)"
t0=$(now)
ctr "$name" --user "$uid:$uid" -v "$res:/psring/results" -e PSR_HOST_RESULTS="$res" \
    "$image" > "$logs/lab.log" 2>&1
rc=$?
rc_lab=$rc
t_lab=$(( $(now) - t0 ))
[ "$rc" = 0 ] || fail "make lab in the container exited $rc; see $logs/lab.log"
run=$(comm -13 <(printf '%s\n' "$before") <(ls -1 "$res") | tail -n 1)
if [ -z "$run" ] || [ ! -d "$res/$run" ]; then
    fail "no new run folder in $res"
else
    for f in index.html manifest.txt k_sweep.csv; do
        [ -s "$res/$run/$f" ] || fail "$res/$run/$f is missing or empty"
    done
    grep -qxF "git: $git" "$res/$run/manifest.txt" ||
        fail "manifest says '$(grep '^git:' "$res/$run/manifest.txt")', not 'git: $git'"
    n=$(find "$res/$run" \( ! -user "$uid" -o ! -group "$uid" \) | wc -l)
    [ "$n" = 0 ] || fail "$n file(s) under $res/$run not owned by $uid:$uid, e.g. $(find "$res/$run" \( ! -user "$uid" -o ! -group "$uid" \) -printf '%p %u:%g' -quit)"
    grep -qF "results: $res/$run " "$logs/lab.log" || fail "no 'results: $res/$run' line in $logs/lab.log"
    ! grep -n '/psring/results' "$logs/lab.log" >&2 || fail "the lab's messages name /psring/results (lines above)"
fi

# ------------------------------------------------------------ 4. make check, as root
target=check; [ "$quick" = 1 ] && target=test-quick
name=psring-check-$$-check
say "make $target: podman run $image make $target (log: $logs/check.log)"
t0=$(now)
ctr "$name" "$image" make "$target" > "$logs/check.log" 2>&1
rc=$?
t_check=$(( $(now) - t0 ))
counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/check.log" | tail -n 1)
[ "$rc" = 0 ] || fail "make $target in the container exited $rc; see $logs/check.log (${counts:-no count})"
grep '^FAIL ' "$logs/check.log" >&2

echo "engine: $engine, as root, $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r), $(nproc) CPUs"
echo "base: $base ${t_base}s; image build: ${t_build}s"
echo "make lab (inside, --user $uid:$uid): ${t_lab}s, exit $rc_lab, results: $res/${run:-(none)}"
echo "make $target (inside): ${t_check}s, ${counts:-no count}"
if [ "$failed" -gt 0 ]; then
    say "$failed check(s) failed"
    exit 1
fi
echo "container check: passed"
