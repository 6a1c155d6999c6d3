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

# t_launched KIND NAME K LIMIT ARGS...: experiments/launch.sh KIND K ARGS
# --timeout 10 --weights-out $T_TMP/NAME under a watchdog of LIMIT s: it
# must exit 0 with every rank's (or worker's) weights, $T_TMP/NAME.r, the
# same; its stderr is kept in $T_TMP/NAME.err.
t_launched() {
    _kind=$1 _name=$2 _k=$3 _lim=$4; shift 4
    job "$_lim" "$PSR_TESTS/../experiments/launch.sh" "$_kind" "$_k" "$@" --timeout 10 \
        --weights-out "$T_TMP/$_name"
    cp "$T_TMP/err" "$T_TMP/$_name.err"
    [ "$rc" = 0 ] || t_fail "$_kind $_name K=$_k $*: exit $rc: $(tail -c 400 "$T_TMP/err")"
    t_ranks_same "$_k" "$T_TMP/$_name"
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

# ------------------------------------------------------- ranks by hand
# For the scripts that start ring_worker ranks one by one (t_rd.sh,
# t_ring_faults.sh): each rank is the leader of a session of its own, its
# pid (= its process group) in $T_TMP/pid.R, its exit status in rc.R, its
# end time in t.R, its output in out.R and err.R. $K is the number of
# ranks, $WD the watchdog of the waits in seconds, $T the --timeout.
now() { date +%s.%N; }

# rank_start R ARGS...: ring_worker --rank R ARGS, in the background.
rank_start() {
    _rs=$1; shift
    (
        sh -c 'echo $$ >"$1"; shift; exec setsid "$@"' sh "$T_TMP/pid.$_rs" \
            "$PSR_BIN/ring_worker" --rank "$_rs" "$@" >"$T_TMP/out.$_rs" 2>"$T_TMP/err.$_rs" </dev/null
        echo $? >"$T_TMP/rc.$_rs"
        now >"$T_TMP/t.$_rs"
    ) &
}

# ranks_reset: the files of the last job's ranks gone.
ranks_reset() {
    rm -f "$T_TMP"/pid.* "$T_TMP"/rc.* "$T_TMP"/t.* "$T_TMP"/err.* "$T_TMP/port"
}

# rank0_port: waits (up to 10 s) for rank 0's port file; the port in $port.
rank0_port() {
    _i=0
    while [ $_i -lt 200 ] && [ ! -s "$T_TMP/port" ]; do sleep 0.05; _i=$((_i + 1)); done
    port=$(cat "$T_TMP/port" 2>/dev/null)
}

# ranks_up ARGS...: rank 0 on port 0 with a port file, then ranks 1..K-1,
# all with ARGS; returns once all K have started.
ranks_up() {
    ranks_reset
    rank_start 0 --coordinator 127.0.0.1:0 --port-file "$T_TMP/port" "$@"
    rank0_port
    [ -n "$port" ] || t_fail "rank 0 wrote no port file: $(head -c 300 "$T_TMP/err.0")"
    _r=1
    while [ $_r -lt "$K" ]; do
        rank_start $_r --coordinator "127.0.0.1:$port" "$@"
        _r=$((_r + 1))
    done
    _i=0
    while [ $_i -lt 100 ]; do
        [ "$(ls "$T_TMP"/pid.* 2>/dev/null | wc -l)" = "$K" ] && break
        sleep 0.05; _i=$((_i + 1))
    done
}

# ranks_kill: every rank's process group killed.
ranks_kill() {
    for _f in "$T_TMP"/pid.*; do
        [ -s "$_f" ] && kill -KILL "-$(cat "$_f")" 2>/dev/null
    done
}

# ranks_wait SKIP T0: every rank but SKIP exits within the watchdog from T0
# (the ones still running are killed then, status 137; returns 1).
ranks_wait() {
    _skip=$1 _t0=$2
    while :; do
        _left=0 _r=0
        while [ $_r -lt "$K" ]; do
            [ $_r != "$_skip" ] && [ ! -s "$T_TMP/rc.$_r" ] && _left=$((_left + 1))
            _r=$((_r + 1))
        done
        [ $_left = 0 ] && return 0
        if awk -v a="$(now)" -v b="$_t0" -v w="$WD" 'BEGIN { exit !(a - b > w) }'; then
            ranks_kill
            sleep 0.5
            return 1
        fi
        sleep 0.05
    done
}

# survivors_named LOST T0 [any]: each other rank exited 1, in time, with
# one line naming LOST and its address; with `any`, naming a lost rank
# (LOST, or one that waited on it: see t_tree.sh's dbtree case). Prints
# the exit times and whom each named.
survivors_named() {
    _lost=$1 _t0=$2 _want=$1 _r=0 _times="" _named=""
    [ "${3-}" = any ] && _want='[0-9]*'
    while [ $_r -lt "$K" ]; do
        if [ $_r != "$_lost" ]; then
            _st=$(cat "$T_TMP/rc.$_r" 2>/dev/null)
            _dt=$(awk -v a="$(cat "$T_TMP/t.$_r" 2>/dev/null || echo 0)" -v b="$_t0" 'BEGIN { printf "%.2f", a - b }')
            _times="$_times rank$_r=${_dt}s"
            [ "$_st" = 1 ] || t_fail "rank $_r: exit status ${_st:-none}, want 1: $(tail -c 300 "$T_TMP/err.$_r")"
            awk -v d="$_dt" -v w="$WD" 'BEGIN { exit !(d <= w) }' || t_fail "rank $_r took ${_dt}s (watchdog ${WD}s)"
            grep -q "lost rank $_want (127\.0\.0\.1:[0-9][0-9]*)" "$T_TMP/err.$_r" \
                || t_fail "rank $_r does not name rank ${3:-$_lost} and its address: $(tail -c 300 "$T_TMP/err.$_r")"
            [ "$(grep -c 'lost rank' "$T_TMP/err.$_r")" = 1 ] || t_fail "rank $_r: want one line naming the loss"
            _named="$_named rank$_r:$(sed -n 's/.*lost rank \([0-9]*\) .*/\1/p' "$T_TMP/err.$_r" | head -n 1)"
        fi
        _r=$((_r + 1))
    done
    echo "     exit times after the fault (T = ${T}s, 2T = $((2 * T))s):$_times; named:$_named"
}

# ranks_fault VICTIM SIGNAL ARGS...: K ranks training with ARGS; 2 s in,
# once rank 0 has logged a step, rank VICTIM gets SIGNAL: every other rank
# must exit 1 in time naming it (survivors_named). The job is killed then.
ranks_fault() {
    _v=$1 _sig=$2; shift 2
    ranks_up "$@"
    sleep 2
    grep -q 'step' "$T_TMP/err.0" || t_fail "the job did not get to training: $(tail -c 300 "$T_TMP/err.0")"
    _t0=$(now)
    kill "-$_sig" "$(cat "$T_TMP/pid.$_v")"
    ranks_wait "$_v" "$_t0" || t_fail "the watchdog had to kill ranks"
    survivors_named "$_v" "$_t0" ${FAULT_NAMED-}
    ranks_kill
}

# ------------------------------------------------- processes in groups
# bg_start NAME LIMIT CMD...: CMD in a session (process group) of its own
# under a KILL watchdog of LIMIT s, output in $T_TMP/NAME.out and .err;
# $pid is the group, also added to $t_groups. When it ends, its exit
# status goes to NAME.rc and the time to NAME.t.
t_groups=""
bg_start() {
    _bn=$1 _bl=$2; shift 2
    rm -f "$T_TMP/$_bn.pid" "$T_TMP/$_bn.rc" "$T_TMP/$_bn.t"
    (
        sh -c 'echo $$ >"$1"; shift; exec setsid "$@"' sh "$T_TMP/$_bn.pid" \
            timeout -s KILL "$_bl" "$@" >"$T_TMP/$_bn.out" 2>"$T_TMP/$_bn.err" </dev/null
        echo $? >"$T_TMP/$_bn.rc"
        now >"$T_TMP/$_bn.t"
    ) &
    _i=0
    while [ $_i -lt 400 ] && [ ! -s "$T_TMP/$_bn.pid" ]; do sleep 0.01; _i=$((_i + 1)); done
    pid=$(cat "$T_TMP/$_bn.pid" 2>/dev/null)
    t_groups="$t_groups $pid"
}

# bg_kill_all: every group bg_start made, still there or not, killed
# (SIGCONT first, so that a stopped one can die), and waited for.
bg_kill_all() {
    for _g in $t_groups; do
        kill -CONT "-$_g" 2>/dev/null
        kill -KILL "-$_g" 2>/dev/null
    done
    wait 2>/dev/null
    t_groups=""
}
