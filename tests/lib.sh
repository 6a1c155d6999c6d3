# tests/lib.sh -- sourced by the shell tests (tests/t_*.sh).
#
# Same output as check.h: each case prints "ok   ID NAME" or "FAIL ID NAME"
# with the evidence above it; ID begins with the script's name
# (t_ps_ckpt.sh: ps-ckpt-1; tests/ids.awk has the rule). Jobs run in their
# own session under a watchdog (job), so nothing outlives the test.
: "${PSR_BIN:?set PSR_BIN}"
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/psring-t.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT
t_failed=0

t_case() { t_id=$1; t_name=$2; t_bad=0; }
t_fail() { echo "     $t_id: $*"; t_bad=1; }
t_end() {
    if [ "$t_bad" = 0 ]; then echo "ok   $t_id $t_name"
    else echo "FAIL $t_id $t_name"; t_failed=1; fi
}
t_skip() { echo "skip $1 $2: $3"; }

# t_need ID NAME PROGRAM...: unless every PROGRAM is in $PSR_BIN, the whole
# script is one skip (ID NAME: no PROGRAM in $PSR_BIN) and ends here.
t_need() {
    _id=$1 _name=$2; shift 2
    for _p in "$@"; do
        [ -x "$PSR_BIN/$_p" ] || { t_skip "$_id" "$_name" "no $_p in $PSR_BIN"; exit 0; }
    done
}

# t_gpu_usable ID: whether bin/bench_gpu --probe finds a usable GPU (status
# 0). Where it does not, $t_gpu_why holds its one-line reason and the
# status is 1; under `make check-gpu` (PSR_REQUIRE_GPU=1) a missing GPU is
# instead case ID, failed, and the script ends here.
t_gpu_usable() {
    t_gpu_why=$("$PSR_BIN/bench_gpu" --probe 2>&1) && return 0
    t_gpu_why=$(echo "$t_gpu_why" | sed 's/^bench_gpu: probe: //' | head -n 1)
    if [ "${PSR_REQUIRE_GPU:-0}" = 1 ]; then
        t_case "$1" "a usable GPU (make check-gpu)"
        t_fail "$t_gpu_why"
        t_end
        t_exit
    fi
    return 1
}

# t_gpu_refused PROGRAM FLAG VALUE [ARGS...]: without a usable GPU,
# PROGRAM FLAG VALUE ARGS exits 1 with one line "PROGRAM[0]: FLAG VALUE:
# REASON", the reason being no device or a build without CUDA.
t_gpu_refused() {
    _p=$1 _f=$2 _v=$3; shift 3
    job 30 "$PSR_BIN/$_p" "$_f" "$_v" "$@" --steps 2 --timeout 3
    expect_rc 1
    [ "$(grep -c "^$_p\[0\]: $_f $_v: " "$T_TMP/err")" = 1 ] ||
        t_fail "$_f $_v $*: want one line naming $_f $_v: $(cat "$T_TMP/err")"
    grep -q 'no CUDA device\|built without CUDA' "$T_TMP/err" ||
        t_fail "$_f $_v $*: the reason is not said: $(cat "$T_TMP/err")"
}

# job LIMIT_S CMD...: run CMD in its own session, killed with its whole
# process group after LIMIT_S; stdout to $T_TMP/out, stderr to $T_TMP/err;
# sets $rc (137 when the watchdog fired).
job() {
    limit=$1; shift
    setsid timeout -s KILL "$limit" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
    rc=$?
}

# expect_rc WANT: the last job's status.
expect_rc() {
    [ "$rc" = "$1" ] || t_fail "exit status $rc, want $1; stderr begins: $(head -c 300 "$T_TMP/err")
     ... and ends: $(tail -c 900 "$T_TMP/err")"
}
# expect_grep FILE PATTERN: FILE (out or err of the last job) matches.
expect_grep() {
    grep -q -e "$2" "$T_TMP/$1" || t_fail "$1 lacks /$2/: $(head -c 300 "$T_TMP/$1")"
}
t_exit() { exit $t_failed; }

# t_close GOT REF TOL: the same number of values, at least one (the last
# column of every line that is not a # comment, so weights files and
# "STEP LOSS" files both work), each within TOL relative of REF's:
# |a - b| <= TOL * max(|b|, 1e-300) (a NaN or Inf never is). Prints the first
# three that are not, and returns 1 then.
t_close() {
    awk -v tol="$3" '
        /^#/ { next }
        NR == FNR { ref[++n] = $NF; next }
        { m++; d = $NF - ref[m]; if (d < 0) d = -d
          b = ref[m]; if (b < 0) b = -b; if (b < 1e-300) b = 1e-300
          if (!(d <= tol * b) || tolower($NF) ~ /nan|inf/) {
              if (++bad <= 3) printf "value %d: %s vs reference %s; ", m, $NF, ref[m] } }
        END { if (m != n || n == 0) { printf "%d values, reference has %d", m, n; exit 1 }
              exit bad > 0 }' "$2" "$1"
}

# t_ranks_same K PREFIX: every rank (or worker) 0..K-1 wrote PREFIX.r, each
# byte-identical to rank 0's.
t_ranks_same() {
    _r=0
    while [ $_r -lt "$1" ]; do
        if [ ! -s "$2.$_r" ]; then t_fail "rank $_r wrote no weights ($2.$_r)"
        elif ! cmp -s "$2.0" "$2.$_r"; then t_fail "rank $_r's weights differ from rank 0's"; fi
        _r=$((_r + 1))
    done
}

# t_reference NAME FLAGS...: bin/reference (the single-process big batch)
# with FLAGS; its weights in $T_TMP/NAME.ref.0, its loss per step in
# $T_TMP/NAME.loss.
t_reference() {
    _name=$1; shift
    "$PSR_BIN/reference" "$@" --weights-out "$T_TMP/$_name.ref" >"$T_TMP/$_name.loss" \
        2>"$T_TMP/$_name.referr" || t_fail "bin/reference $*: $(cat "$T_TMP/$_name.referr")"
}

# t_ranks_exact K PREFIX REF: every rank (or worker) 0..K-1 wrote PREFIX.r,
# each byte-identical to REF (bin/reference's weights, say).
t_ranks_exact() {
    _r=0
    while [ $_r -lt "$1" ]; do
        cmp -s "$2.$_r" "$3" || t_fail "rank $_r's weights ($2.$_r) are not exactly $3's"
        _r=$((_r + 1))
    done
}

# t_netns_why: prints why network namespaces cannot be made here
# (experiments/netns_cluster.sh's needs: ip, tc, unshare, nsenter, bash,
# /sys/class/net, and root with CAP_NET_ADMIN or unprivileged user
# namespaces); prints nothing where they can.
t_netns_why() {
    for _t in ip tc unshare nsenter bash; do
        command -v $_t >/dev/null || { echo "no '$_t' on PATH"; return; }
    done
    [ -d /sys/class/net ] || { echo "no /sys/class/net"; return; }
    [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null && ip link add "psrt$$b" type bridge 2>/dev/null \
        && ip link del "psrt$$b" && return
    unshare -rn true 2>/dev/null && return
    echo "neither root with CAP_NET_ADMIN nor unprivileged user namespaces (unshare -rn)"
}

# t_loopback_wrap: writes $T_TMP/wrap.sh, a launch.sh --wrap command that
# runs every process here: `addr` answers 127.0.0.1, `exec` execs the
# program; each call is logged, one line, in $T_TMP/wrap.log.
t_loopback_wrap() {
    cat >"$T_TMP/wrap.sh" <<EOW
#!/bin/sh
echo "\$*" >>"$T_TMP/wrap.log"
case \$1 in
addr) echo 127.0.0.1 ;;
exec) shift 3; [ "\$1" = -- ] && shift; exec "\$@" ;;
esac
EOW
    chmod +x "$T_TMP/wrap.sh"
}
