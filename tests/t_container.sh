# t_container.sh -- the two things the container needs from
# experiments/lib.sh, without a container (the container itself: make
# check-container, tests/container.sh): PSR_HOST_RESULTS in the messages
# and PSR_GIT in the manifest where there is no .git.
. "$PSR_TESTS/lib.sh"
ex=$(cd "$PSR_TESTS/../experiments" && pwd)
# a root without .git, as in the image: lib.sh sets root from $here/..
fake=$T_TMP/psring
mkdir -p "$fake/experiments" "$fake/out"
cp "$ex/lib.sh" "$fake/experiments/"

# lib CMDS: bash with a copy of lib.sh sourced from a root with no .git
# (GIT_CEILING_DIRECTORIES: no repository above T_TMP counts either).
lib() {
    GIT_CEILING_DIRECTORIES=$T_TMP F=$fake bash -c 'here=$F/experiments; . "$here/lib.sh"; prog=lib; eval "$1"' lib "$1" 2>&1
}

t_case container-1 "messages: \$root/results written as PSR_HOST_RESULTS when set, unchanged when not"
got=$(PSR_HOST_RESULTS='/home/a&b/results' lib 'done_line "[5/5] plots: $root/results/r1/x.png"; say "logs in $root/results/r1/logs"')
want="[5/5] plots: /home/a&b/results/r1/x.png
lib: logs in /home/a&b/results/r1/logs"
[ "$got" = "$want" ] || t_fail "got: $got"
got=$(unset PSR_HOST_RESULTS; lib 'host_msg "results: $root/results/r1"')
[ "$got" = "results: $fake/results/r1" ] || t_fail "unset: $got"
got=$(PSR_HOST_RESULTS=/h lib 'host_msg "out: /elsewhere/results/r1"')
[ "$got" = "out: /elsewhere/results/r1" ] || t_fail "a path outside \$root/results changed: $got"
t_end

t_case container-2 "manifest without .git: git is PSR_GIT when given, unknown when not"
PSR_GIT='abc1234 (modified)' lib 'echo "x: 1" | manifest "$F/out" "" cmd' >/dev/null
grep -qx 'git: abc1234 (modified)' "$fake/out/manifest.txt" || t_fail "PSR_GIT: $(grep '^git' "$fake/out/manifest.txt")"
(unset PSR_GIT; lib 'echo "x: 1" | manifest "$F/out" "" cmd') >/dev/null
grep -qx 'git: unknown' "$fake/out/manifest.txt" || t_fail "no PSR_GIT: $(grep '^git' "$fake/out/manifest.txt")"
t_end
t_exit
