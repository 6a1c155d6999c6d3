# t_netns.sh -- the same jobs across network namespaces
# (experiments/netns_cluster.sh): a 4-worker parameter server and a 4-rank
# ring, every process on a host of its own (10.77.0.x) behind a kernel rate
# limit (tc tbf, 200mbit), end with the single-process big batch's weights
# (bin/reference, linreg f64, within 1e-12) and one merged row with its
# "# netns" note. Every run's end is checked piece by piece, and a failure
# names the piece that is missing: the script's own exit (not the
# watchdog's), the "tbf queues" line, the note (after a success only), the
# teardown (no holder, process or state folder left, no link in this
# namespace), after success, failure, a time limit and SIGTERM; a run
# killed with SIGKILL leaves no network (its namespaces go with its
# holders) and --cleanup removes its state folder. Also
# launch.sh's --wrap hook alone (no namespaces needed), and the one-line
# refusal where namespaces cannot be made. Skips, with one line, where
# namespaces cannot be made here (not root and no unprivileged user
# namespaces, or no ip/tc/unshare/nsenter, or no /sys/class/net).
# tier: full
. "$PSR_TESTS/lib.sh"
root=$PSR_TESTS/..
ns=$root/experiments/netns_cluster.sh
launch=$root/experiments/launch.sh
prog=netns_cluster.sh

t_need netns "jobs across network namespaces" ps_server ps_worker ring_worker reference psr_merge

# all_match K PREFIX REF: PREFIX.0 .. PREFIX.K-1 byte-identical, and
# within 1e-12 of REF.
all_match() {
    t_ranks_same "$1" "$2"
    why=$(t_close "$2.0" "$3" 1e-12) || t_fail "weights vs reference: $why"
}

# running PATTERN: pids of processes whose command line holds PATTERN
# (grep reads it from a file, so that grep itself does not match).
running() {
    printf '%s\n' "$1" >"$T_TMP/pat"
    grep -l -a -F -f "$T_TMP/pat" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 | tr '\n' ' '
}

# nsjob LIMIT ARGS...: netns_cluster.sh ARGS as a job (lib.sh) with its
# state folder under $T_TMP/st; $secs is how long it ran.
nsjob() {
    lim=$1
    shift
    mkdir -p "$T_TMP/st"
    s0=$(date +%s)
    job "$lim" env TMPDIR="$T_TMP/st" bash "$ns" "$@"
    secs=$(($(date +%s) - s0))
}

# the_end NOTE_FILE: after the last nsjob, the script's end ran: it was not
# killed by the watchdog, it said what the tbf queues did, and NOTE_FILE
# (out, or the --csv-out file) has the "# netns" note, or, with NOTE_FILE
# "-" (a failed job: no row, so no note), out has none.
the_end() {
    [ "$rc" = 137 ] && t_fail "missing: the end (stats, note, teardown): killed by the ${limit} s watchdog after ${secs} s, so the script, or launch.sh under it, never returned; stderr ends: $(tail -n 2 "$T_TMP/err" | tr '\n' ' ' | tail -c 300)"
    grep -q "^$prog: tbf queues: [0-9]* packets" "$T_TMP/err" || t_fail "missing: the 'tbf queues' line"
    if [ "$1" = - ]; then
        ! grep -q '^# netns' "$T_TMP/out" || t_fail "a '# netns' note after a failed job"
    else
        grep -q '^# netns mode=' "$1" || t_fail "missing: the '# netns' note in $1: $(cat "$1")"
    fi
}

# torn_down PATTERN: the last nsjob's run left nothing: no holder
# (psrn<PID>h<I>, psrn<PID>sw) and no process whose command line has its
# state folder or PATTERN (polled for 5 s), no state folder, and no link
# named after it in this namespace (its bridge and veths live in
# namespaces of its own, gone with the holders). The stem psrn<PID> comes
# from the set-up line.
torn_down() {
    stem=$(sed -n 's/.* on bridge \(psrn[0-9]*\)b .*/\1/p' "$T_TMP/err" | head -1)
    [ -n "$stem" ] || { t_fail "no set-up line naming the bridge: $(head -c 300 "$T_TMP/err")"; return; }
    i=0
    while :; do
        procs=$(running "${stem}h")$(running "${stem}sw")$(running "$stem.") procs2=$(running "$1")
        [ -z "$procs$procs2" ] && break
        [ $i -ge 50 ] && break
        sleep 0.1; i=$((i + 1))
    done
    [ -z "$procs$procs2" ] || t_fail "missing: teardown: processes left: $procs $procs2: $(for p in $procs $procs2; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done | head -c 400)"
    left=$(ls -d "$T_TMP/st/$stem".* 2>/dev/null | tr '\n' ' ')
    [ -z "$left" ] || t_fail "missing: teardown: state folder left: $left"
    links=$(ip -o link show | grep -o "${stem}[bv][0-9]*" | tr '\n' ' ')
    [ -z "$links" ] || t_fail "links of the run in this namespace: $links"
}

# ---------------------------------------------------------------- no namespaces needed
t_case netns-1.0 "launch.sh --wrap: addresses from 'CMD addr', every process started by 'CMD exec'"
t_loopback_wrap
"$PSR_BIN/reference" --steps 20 --weights-out "$T_TMP/lin.ref" >/dev/null 2>"$T_TMP/referr" \
    || t_fail "bin/reference: $(cat "$T_TMP/referr")"
job 120 "$launch" ring 3 --wrap "$T_TMP/wrap.sh" --steps 20 --timeout 10 --weights-out "$T_TMP/wr.w"
expect_rc 0
all_match 3 "$T_TMP/wr.w" "$T_TMP/lin.ref.0"
for r in 0 1 2; do
    grep -q "^addr rank $r\$" "$T_TMP/wrap.log" || t_fail "no 'addr rank $r' asked: $(head -c 300 "$T_TMP/wrap.log")"
    grep -q "^exec rank $r -- .*/ring_worker --rank $r .*--advertise 127.0.0.1" "$T_TMP/wrap.log" \
        || t_fail "rank $r not started through 'exec rank $r --' with --advertise"
done
rm -f "$T_TMP/wrap.log"
job 120 "$launch" ps 2 --wrap "$T_TMP/wrap.sh" --steps 20 --timeout 10 --weights-out "$T_TMP/wp.w"
expect_rc 0
all_match 2 "$T_TMP/wp.w" "$T_TMP/lin.ref.0"
grep -q '^exec server 0 -- .*/ps_server --listen 127.0.0.1:0 ' "$T_TMP/wrap.log" || t_fail "server not started through exec"
grep -q '^exec worker 1 -- .*/ps_worker --rank 1 ' "$T_TMP/wrap.log" || t_fail "worker 1 not started through exec"
# A wrap command that gives no address: one line, nothing started.
job 30 "$launch" ps 2 --wrap /bin/false --steps 2
expect_rc 1
expect_grep err "gave no address"
job 30 "$launch" ring 2 --wrap "$T_TMP/wrap.sh" --advertise 127.0.0.1
expect_rc 64
t_end

t_case netns-1.1 "netns_cluster.sh: usage; in-process pacing refused; no namespaces: exit 69, one line"
job 10 bash "$ns" --help
expect_rc 0
expect_grep out '^usage: '
job 10 bash "$ns" ps 4 --link-bw 500Mbit
expect_rc 64
expect_grep err 'the link here is the kernel'
job 10 bash "$ns" ring 4 --rate 500MB
expect_rc 64
job 10 bash "$ns" ring 4 --burst 100
expect_rc 64
# unshare that always fails (no namespaces allowed, root or not).
mkdir -p "$T_TMP/nobin"
printf '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n' >"$T_TMP/nobin/unshare"
chmod +x "$T_TMP/nobin/unshare"
job 10 env PATH="$T_TMP/nobin:$PATH" bash "$ns" ps 2 --steps 2
expect_rc 69
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "want one line on stderr: $(cat "$T_TMP/err")"
expect_grep err 'cannot make network namespaces here'
t_end

# ---------------------------------------------------------------- namespaces
why=$(t_netns_why)
if [ -n "$why" ]; then
    t_skip netns-2 "jobs across network namespaces" "namespaces cannot be made here: $why"
    t_exit
fi

t_case netns-2.1 "ps: 1 server + 4 workers on 5 hosts, tbf 200mbit: weights == big batch within 1e-12, a row and its note"
nsjob 120 ps 4 --rate 200mbit --steps 20 --timeout 10 --weights-out "$T_TMP/ps.w" --csv-out "$T_TMP/ps.csv"
expect_rc 0
the_end "$T_TMP/ps.csv"
all_match 4 "$T_TMP/ps.w" "$T_TMP/lin.ref.0"
# Header, the row (ps, K 4, 96 bytes, 18 timed steps, link_bw 0: no
# in-process pacing), then the note with the tc rate.
[ "$(grep -vc '^#' "$T_TMP/ps.csv")" = 2 ] || t_fail "ps.csv: $(cat "$T_TMP/ps.csv")"
awk -F, '!/^#/ && ++n == 2 { ok = ($1 == "ps" && $4 == 4 && $5 == 96 && $6 == 18 && $16 + 0 == 0) }
         END { exit !ok }' "$T_TMP/ps.csv" || t_fail "row: $(sed -n 2p "$T_TMP/ps.csv")"
grep -q '^# netns' "$T_TMP/ps.csv" && ! grep -q '^# netns mode=ps K=4 hosts=5 tc_rate=200mbit tc_rate_bps=200000000 ' \
    "$T_TMP/ps.csv" && t_fail "note: $(grep '^# netns' "$T_TMP/ps.csv")"
# The workers came from their own hosts, and the bytes went through tbf.
expect_grep err 'server0| .*listening on 10\.77\.0\.1:'
expect_grep err 'worker 3 joined from 10\.77\.0\.5:'
expect_grep err 'tc tbf 200mbit each way'
expect_grep err 'netem \(missing\|present\)'
grep -q 'tbf queues: ' "$T_TMP/err" && ! awk '/tbf queues: / { for (i = 1; i < NF; i++) if ($(i + 1) == "packets,") n = $i }
    END { exit !(n > 100) }' "$T_TMP/err" && t_fail "no packets through tbf: $(grep 'tbf queues' "$T_TMP/err")"
torn_down "$T_TMP/ps.w"
t_end

t_case netns-2.2 "ring: 4 ranks on 4 hosts, tbf 200mbit: bit-identical, == big batch within 1e-12, a row"
nsjob 120 ring 4 --rate 200mbit --steps 20 --timeout 10 --weights-out "$T_TMP/ring.w"
expect_rc 0
the_end "$T_TMP/out"
all_match 4 "$T_TMP/ring.w" "$T_TMP/lin.ref.0"
awk -F, 'NR == 2 { exit !($1 == "ring" && $4 == 4 && $5 == 96 && $6 == 18) }' "$T_TMP/out" \
    || t_fail "row: $(cat "$T_TMP/out")"
grep -q '^# netns' "$T_TMP/out" && ! grep -q '^# netns mode=ring K=4 hosts=4 .*tc_rate_bps=200000000' "$T_TMP/out" \
    && t_fail "note: $(grep '^# netns' "$T_TMP/out")"
expect_grep err 'rank0| .*coordinator at 10\.77\.0\.1:'
torn_down "$T_TMP/ring.w"
t_end

t_case netns-2.3 "a failing job, a time limit, SIGTERM: exit status passed on, the queues' line, no note, everything torn down"
# (A bad flag is refused before any namespace is made, by the programs'
# parser: a value only the started worker refuses fails the job here.)
nsjob 60 ps 2 --steps 5 --timeout 10 --worker-args "--device x" --weights-out "$T_TMP/bad.w"
expect_rc 64
the_end -
expect_grep err '^ps_worker: --device x: not cpu or cuda; see ps_worker --help$'
torn_down "$T_TMP/bad.w"
# 1mbit and 256 KiB pushes: about 4 s a step; the 2 s limit stops it.
nsjob 60 ps 2 --rate 1mbit --workload synthetic --params 64K --dtype f32 --steps 50 \
    --timeout 10 --time-limit 2 --weights-out "$T_TMP/slow.w"
expect_rc 124
the_end -
expect_grep err 'time limit of 2 s reached'
torn_down "$T_TMP/slow.w"
# SIGTERM to the script while its job runs: the job is stopped, the end
# still runs, exit 130. (The job in a session of its own under the same
# watchdog as job's, its output where job puts it; err emptied first, so
# that the last job's lines are not taken for this one's.)
: >"$T_TMP/err"
setsid timeout -s KILL 60 env TMPDIR="$T_TMP/st" bash "$ns" ps 2 --rate 1mbit --workload synthetic \
    --params 64K --dtype f32 --steps 50 --timeout 10 --weights-out "$T_TMP/term.w" \
    >"$T_TMP/out" 2>"$T_TMP/err" </dev/null &
tpid=$!
i=0
while [ $i -lt 300 ] && ! grep -q 'worker1| ' "$T_TMP/err" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
spid=$(sed -n 's/.* on bridge psrn\([0-9]*\)b .*/\1/p' "$T_TMP/err" | head -1)
if [ -z "$spid" ]; then
    t_fail "the run did not start: $(head -c 300 "$T_TMP/err")"
    kill -KILL "-$tpid" 2>/dev/null
fi
[ -n "$spid" ] && kill -TERM "$spid"
s0=$(date +%s)
wait "$tpid"
rc=$? secs=$(($(date +%s) - s0)) limit=60
expect_rc 130
the_end -
expect_grep err 'interrupted; stopping the job'
torn_down "$T_TMP/term.w"
t_end

t_case netns-2.4 "a run killed with SIGKILL: its holders exit by themselves, no network left, --cleanup removes its folder"
mkdir -p "$T_TMP/kt"
setsid env TMPDIR="$T_TMP/kt" bash "$ns" ps 2 --rate 1mbit --workload synthetic --params 64K --dtype f32 \
    --steps 50 --timeout 10 --time-limit 3 --weights-out "$T_TMP/kill.w" >/dev/null 2>"$T_TMP/k.err" </dev/null &
i=0
while [ $i -lt 300 ] && ! grep -q 'worker1| ' "$T_TMP/k.err" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
kpid=$(sed -n 's/.* on bridge psrn\([0-9]*\)b .*/\1/p' "$T_TMP/k.err" | head -1)
if [ -z "$kpid" ]; then
    t_fail "the run did not start: $(head -c 300 "$T_TMP/k.err")"
else
    kill -KILL "$kpid"
    # No trap runs: the holders (hosts and switch) end by themselves, and
    # launch.sh lives on until its 3 s limit stops the workers.
    i=0
    while [ $i -lt 200 ] && [ -n "$(running "$T_TMP/kill.w")$(running "psrn${kpid}h")$(running "psrn${kpid}sw")" ]; do
        sleep 0.1; i=$((i + 1))
    done
    left=$(running "$T_TMP/kill.w")$(running "psrn${kpid}h")$(running "psrn${kpid}sw")
    [ -z "$left" ] || t_fail "still running 20 s after the kill: $left"
    # Its bridge and veths were in its own namespaces, gone with the holders.
    left=$(ip -o link show | grep -o "psrn${kpid}[bv][0-9]*" | tr '\n' ' ')
    [ -z "$left" ] || t_fail "links of the killed run in this namespace: $left"
    ls -d "$T_TMP/kt/psrn$kpid".* >/dev/null 2>&1 || t_fail "the killed run's state folder is gone already?"
    job 30 env TMPDIR="$T_TMP/kt" bash "$ns" --cleanup
    expect_rc 0
    expect_grep err 'removed [0-9]* leftover'
    ! ls -d "$T_TMP/kt/psrn$kpid".* >/dev/null 2>&1 || t_fail "state folder left after --cleanup"
fi
wait
t_end
t_exit
