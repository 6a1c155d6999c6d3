# t_hostile_flags.sh -- bad values given to the scripts and the programs
# (issue 28, "Why" 6 and 8): each is refused before any work, as THE USAGE
# LINE (common/base/cli.h, experiments/lib.sh),
#     PROG: --flag VALUE: why; see PROG --help
# one line on stderr, exit 64, and nothing written: every run is in an
# empty folder of its own with --out inside it, and the folder must stay
# empty. A run that started its work (the lab's calibration, a job's
# processes) would write there, or take longer than the watchdog's 20 s.
#
#   hostile-flags-1.N  lab.sh: each bad value
#   hostile-flags-2.N  launch.sh: its own flags' empty values, the common
#                      flags' bad values (the programs' parser, before any
#                      process starts)
#   hostile-flags-3.N  the words of "Why" 8: ps_server --listen, ring_worker
#                      --world 1's addresses, THE USAGE LINE in the programs
#   hostile-flags-4.N  the other refusals of lab.sh, and the other scripts
#   hostile-flags-5.N  launch.sh: a refusal by a program it started (after
#                      the parser), said as that program's one line alone
. "$PSR_TESTS/lib.sh"

lab="$PSR_TESTS/../experiments/lab.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

# refused PROG ARGS...: in an empty folder, exit 64, one line of PROG's
# usage shape on stderr, nothing on stdout, the folder still empty (unless
# started=1: a program the launcher started refused it, and the launcher's
# --out folder holds its work files). ARGS may say @OUT for a path inside
# the folder.
n_dir=0 started=0
refused() {
    _p=$1; shift
    n_dir=$((n_dir + 1))
    _d="$T_TMP/run$n_dir"
    mkdir "$_d"
    _args=""
    for _a in "$@"; do
        [ "$_a" = @OUT ] && _a="$_d/out"
        _args="$_args '$(printf '%s' "$_a" | sed "s/'/'\\\\''/g")'"
    done
    eval "set -- $_args"
    ( cd "$_d" && setsid timeout -s KILL 20 "$@" >"$T_TMP/out" 2>"$T_TMP/err" )
    rc=$?
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] ||
        t_fail "$*: $(wc -l <"$T_TMP/err") lines on stderr, want 1: $(head -c 400 "$T_TMP/err")"
    grep -q "^$_p: .*: .*; see $_p --help\$" "$T_TMP/err" ||
        t_fail "$*: not '$_p: --flag VALUE: why; see $_p --help': $(head -c 300 "$T_TMP/err")"
    [ -s "$T_TMP/out" ] && t_fail "$*: wrote on stdout: $(head -c 200 "$T_TMP/out")"
    _made=$(cd "$_d" && find . -mindepth 1 | head -n 5 | tr '\n' ' ')
    [ -z "$_made" ] || [ "$started" = 1 ] || t_fail "$*: files written: $_made"
}

# ------------------------------------------------------------ 1. lab.sh
i=0
while IFS='|' read -r flag value; do
    i=$((i + 1))
    t_case "hostile-flags-1.$i" "lab.sh $flag '$value': one line, exit 64, no file, no calibration"
    refused lab.sh bash "$lab" --out @OUT "$flag" "$value"
    grep -q -e "^lab.sh: $flag " "$T_TMP/err" || t_fail "$flag is not named first: $(cat "$T_TMP/err")"
    t_end
done <<'EOF'
--ks|0
--ks|a
--ks|1 -2
--ks|
--steps|0
--steps|x
--steps|-1
--warmup|-1
--warmup|x
--sizes|0
--size-k|0
--size-k|x
--size-k|-1
--rate|x
--rate|-1
--only|
--link-bw|x
--link-latency|5parsecs
--bytes|0
--repeat|0
--spread|x
--budget|0
--warmup|6
--sizes|
--out|
EOF
t_case hostile-flags-4.1 "lab.sh: --only '' first, --only x, an unknown flag"
refused lab.sh bash "$lab" --only ""
refused lab.sh bash "$lab" --only x --out @OUT
refused lab.sh bash "$lab" --out @OUT --no-such-flag
t_end

# ------------------------------------------------------------ 2. launch.sh
i=0
while IFS='|' read -r who mode flag value; do
    i=$((i + 1))
    t_case "hostile-flags-2.$i" "launch.sh $mode $flag '$value': $who's one line, exit 64, nothing started"
    refused "$who" bash "$launch" "$mode" 2 --out @OUT --time-limit 15 "$flag" "$value"
    t_end
done <<'EOF'
launch.sh|ps|--out|
launch.sh|ps|--csv-out|
launch.sh|ps|--wrap|
launch.sh|ps|--time-limit|
launch.sh|ps|--servers|
launch.sh|ps|--servers|x
ps_server|ps|--steps|0
ps_server|ps|--lr|x
ps_server|ps|--link-bw|x
ps_server|ps|--timeout|0
ring_worker|ring|--dtype|x
ring_worker|ring|--workload|x
ps_server|ps|--batch|0
ps_server|ps|--warmup|-1
ps_worker|ps|--worker-args|--no-such-flag
EOF
# Refused by a program's checks after its parser: the launcher has started
# it, and says its one line alone.
started=1 i=0
while IFS='|' read -r who mode flag value; do
    i=$((i + 1))
    t_case "hostile-flags-5.$i" "launch.sh $mode $flag '$value': refused by the started $who, its one line alone"
    # shellcheck disable=SC2086
    refused "$who" bash "$launch" "$mode" 2 --out @OUT --time-limit 15 --timeout 5 $flag "$value"
    t_end
done <<'EOF'
ps_server|ps|--server-args|--mode x
ring_worker|ring|--worker-args|--algo x
ps_server|ps|--steps 3 --warmup|5
EOF
started=0

# ------------------------------------------------------------ 3. the words
printf '%064d\n' 7 >"$T_TMP/secret"
chmod 600 "$T_TMP/secret"
t_case hostile-flags-3.1 "ps_server --listen 999.1.1.1:0: one usage line naming the address, exit 64, nothing said before it"
for s in "" "--secret-file $T_TMP/secret"; do
    # shellcheck disable=SC2086
    refused ps_server "$PSR_BIN/ps_server" --workers 1 --listen 999.1.1.1:0 $s
    grep -q '^ps_server: --listen 999\.1\.1\.1:0: 999\.1\.1\.1 is not an IPv4 address' "$T_TMP/err" ||
        t_fail "${s:-no secret}: $(cat "$T_TMP/err")"
done
t_end

t_case hostile-flags-3.2 "ring_worker --world 1: a malformed --coordinator, --listen, --advertise, MASTER_PORT is refused (exit 64)"
refused ring_worker "$PSR_BIN/ring_worker" --world 1 --coordinator nohostport
grep -q '^ring_worker: --coordinator nohostport: not HOST:PORT' "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
refused ring_worker "$PSR_BIN/ring_worker" --world 1 --coordinator 127.0.0.1:70000
refused ring_worker "$PSR_BIN/ring_worker" --world 1 --listen "a b"
grep -q "^ring_worker: --listen 'a b': " "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
refused ring_worker "$PSR_BIN/ring_worker" --world 1 --advertise "a b"
grep -q "^ring_worker: --advertise 'a b': " "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
refused ring_worker env MASTER_ADDR=127.0.0.1 MASTER_PORT=x "$PSR_BIN/ring_worker" --world 1
grep -q "^ring_worker: MASTER_PORT=x: " "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
# ... and a well-formed one is still fine at --world 1 (no socket opened).
job 20 env MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 "$PSR_BIN/ring_worker" --world 1 --steps 2 --listen 127.0.0.1
expect_rc 0
t_end

t_case hostile-flags-3.3 "every program: a bad value is THE USAGE LINE, value shown after the flag (quoted when it must be)"
for b in ps_server ps_worker ring_worker; do
    refused "$b" "$PSR_BIN/$b" --steps 0
    grep -q "^$b: --steps 0: too small (at least 1); see $b --help\$" "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
    refused "$b" "$PSR_BIN/$b" --dtype "f 16"
    grep -q "^$b: --dtype 'f 16': not a dtype" "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
    refused "$b" "$PSR_BIN/$b" --no-such-flag
    grep -q "^$b: --no-such-flag: unknown option; see $b --help\$" "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
done
t_end

t_case hostile-flags-4.2 "the scripts: an unknown flag is THE USAGE LINE of the script"
for f in bench_ps.sh grade.sh lab_loss.sh sim_all.sh; do
    refused "$f" bash "$PSR_TESTS/../experiments/$f" --no-such-flag
done
refused lab.sh bash "$PSR_TESTS/../experiments/lab.sh" --only zero --no-such-flag
t_end
t_exit
