# t_netns.sh -- the same jobs across network namespaces
# (experiments/netns_cluster.sh): a 4-worker parameter server and a 4-rank
# ring, every process on a host of its own (10.77.0.x) behind a kernel rate
# limit (tc tbf, 200mbit), end with the single-process big batch's weights
# (bin/reference, linreg f64, within 1e-12) and one merged row with its
# "# netns" note; the network is torn down after success, failure, a time
# limit, and (through --cleanup) after a run killed with SIGKILL. Also
# launch.sh's --wrap hook alone (no namespaces needed), and the one-line
# refusal where namespaces cannot be made. Skips, with one line, where
# namespaces cannot be made here (not root and no unprivileged user
# namespaces, or no ip/tc/unshare/nsenter, or no /sys/class/net).
# tier: full
. "$PSR_TESTS/lib.sh"
root=$PSR_TESTS/..
ns=$root/experiments/netns_cluster.sh
launch=$root/experiments/launch.sh

for b in ps_server ps_worker ring_worker reference psr_merge; do
    if [ ! -x "$PSR_BIN/$b" ]; then
        t_skip netns "jobs across network namespaces" "no $b in $PSR_BIN"
        t_exit
    fi
done

# close FILE REF TOL: same number of lines, every value within TOL
# relative of the reference's.
close() {
    awk -v tol="$3" '
        NR == FNR { ref[FNR] = $1; n = FNR; next }
        { m = FNR; d = $1 - ref[FNR]; if (d < 0) d = -d
          b = ref[FNR]; if (b < 0) b = -b; if (b < 1e-300) b = 1e-300
          if (d > tol * b) { if (++bad <= 3) printf "line %d: %s vs reference %s\n", FNR, $1, ref[FNR] } }
        END { if (m != n || n == 0) { printf "%d values, reference has %d\n", m, n; exit 1 }
              exit bad > 0 }' "$2" "$1"
}

# all_match K PREFIX REF: PREFIX.0 .. PREFIX.K-1 byte-identical, and
# within 1e-12 of REF.
all_match() {
    r=0
    while [ $r -lt "$1" ]; do
        if [ ! -s "$2.$r" ]; then t_fail "process $r wrote no weights ($2.$r)"
        elif ! cmp -s "$2.0" "$2.$r"; then t_fail "$2.$r differs from $2.0"; fi
        r=$((r + 1))
    done
    why=$(close "$2.0" "$3" 1e-12) || t_fail "weights vs reference: $why"
}

# running PATTERN: pids of processes whose command line holds PATTERN
# (grep reads it from a file, so that grep itself does not match).
running() {
    printf '%s\n' "$1" >"$T_TMP/pat"
    grep -l -a -F -f "$T_TMP/pat" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 | tr '\n' ' '
}

# torn_down: after the last job, its links (bridge psrn<PID>b, veths
# psrn<PID>v<I>) and its processes (holders, launch.sh, the programs) are
# gone; polls for 5 s. The stem comes from the set-up line on stderr. Inside
# unshare -rn the links live in a namespace of their own, invisible here:
# then only the processes are checked.
torn_down() {
    stem=$(sed -n 's/.* on bridge \(psrn[0-9]*\)b .*/\1/p' "$T_TMP/err" | head -1)
    [ -n "$stem" ] || { t_fail "no set-up line naming the bridge: $(head -c 300 "$T_TMP/err")"; return; }
    i=0
    while :; do
        links=""
        grep -q 'inside unshare -rn' "$T_TMP/err" || links=$(ip -o link show | grep -o "${stem}[bv][0-9]*" | tr '\n' ' ')
        procs=$(running "$stem.")$(running "${stem}h") procs2=$(running "$1")
        [ -z "$links$procs$procs2" ] && return
        [ $i -ge 50 ] && break
        sleep 0.1; i=$((i + 1))
    done
    [ -n "$links" ] && t_fail "links left: $links"
    [ -n "$procs$procs2" ] && t_fail "processes left: $procs $procs2: $(for p in $procs $procs2; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done | head -c 400)"
}

# ---------------------------------------------------------------- no namespaces needed
t_case netns-1.0 "launch.sh --wrap: addresses from 'CMD addr', every process started by 'CMD exec'"
cat >"$T_TMP/wrap.sh" <<EOF
#!/bin/sh
echo "\$*" >>"$T_TMP/wrap.log"
case \$1 in
addr) echo 127.0.0.1 ;;
exec) shift 3; [ "\$1" = -- ] && shift; exec "\$@" ;;
esac
EOF
chmod +x "$T_TMP/wrap.sh"
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
why=""
for t in ip tc unshare nsenter bash; do
    command -v $t >/dev/null || why="no '$t' on PATH"
done
[ -z "$why" ] && [ ! -d /sys/class/net ] && why="no /sys/class/net"
# here_ok: root, namespaces and links allowed here (the script's own probe).
here_ok() {
    [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null && ip link add "psrn$$b" type bridge 2>/dev/null \
        && ip link del "psrn$$b"
}
if [ -z "$why" ] && ! here_ok && ! unshare -rn true 2>/dev/null; then
    why="neither root with CAP_NET_ADMIN nor unprivileged user namespaces (unshare -rn)"
fi
if [ -n "$why" ]; then
    t_skip netns-2 "jobs across network namespaces" "namespaces cannot be made here: $why"
    t_exit
fi

t_case netns-2.1 "ps: 1 server + 4 workers on 5 hosts, tbf 200mbit: weights == big batch within 1e-12, a row and its note"
job 120 bash "$ns" ps 4 --rate 200mbit --steps 20 --timeout 10 --weights-out "$T_TMP/ps.w" \
    --csv-out "$T_TMP/ps.csv"
expect_rc 0
all_match 4 "$T_TMP/ps.w" "$T_TMP/lin.ref.0"
# Header, the row (ps, K 4, 96 bytes, 18 timed steps, link_bw 0: no
# in-process pacing), then the note with the tc rate.
[ "$(grep -vc '^#' "$T_TMP/ps.csv")" = 2 ] || t_fail "ps.csv: $(cat "$T_TMP/ps.csv")"
awk -F, '!/^#/ && ++n == 2 { ok = ($1 == "ps" && $4 == 4 && $5 == 96 && $6 == 18 && $16 + 0 == 0) }
         END { exit !ok }' "$T_TMP/ps.csv" || t_fail "row: $(sed -n 2p "$T_TMP/ps.csv")"
grep -q '^# netns mode=ps K=4 hosts=5 tc_rate=200mbit tc_rate_bps=200000000 ' "$T_TMP/ps.csv" \
    || t_fail "no '# netns' note: $(cat "$T_TMP/ps.csv")"
# The workers came from their own hosts, and the bytes went through tbf.
expect_grep err 'server0| .*listening on 10\.77\.0\.1:'
expect_grep err 'worker 3 joined from 10\.77\.0\.5:'
expect_grep err 'tc tbf 200mbit each way'
expect_grep err 'netem \(missing\|present\)'
awk '/tbf queues: / { for (i = 1; i < NF; i++) if ($(i + 1) == "packets,") n = $i } END { exit !(n > 100) }' \
    "$T_TMP/err" || t_fail "no packets through tbf: $(grep 'tbf queues' "$T_TMP/err")"
torn_down "$T_TMP/ps.w"
t_end

t_case netns-2.2 "ring: 4 ranks on 4 hosts, tbf 200mbit: bit-identical, == big batch within 1e-12, a row"
job 120 bash "$ns" ring 4 --rate 200mbit --steps 20 --timeout 10 --weights-out "$T_TMP/ring.w"
expect_rc 0
all_match 4 "$T_TMP/ring.w" "$T_TMP/lin.ref.0"
awk -F, 'NR == 2 { exit !($1 == "ring" && $4 == 4 && $5 == 96 && $6 == 18) }' "$T_TMP/out" \
    || t_fail "row: $(cat "$T_TMP/out")"
expect_grep out '^# netns mode=ring K=4 hosts=4 .*tc_rate_bps=200000000'
expect_grep err 'rank0| .*coordinator at 10\.77\.0\.1:'
torn_down "$T_TMP/ring.w"
t_end

t_case netns-2.3 "a failing job and a time limit: exit status passed on, everything torn down"
job 60 bash "$ns" ps 2 --steps 5 --timeout 10 --worker-args "--no-such-flag" --weights-out "$T_TMP/bad.w"
expect_rc 64
expect_grep err 'worker[01] failed first'
torn_down "$T_TMP/bad.w"
# 1mbit and 256 KiB pushes: about 4 s a step; the 2 s limit stops it.
job 60 bash "$ns" ps 2 --rate 1mbit --workload synthetic --params 64K --dtype f32 --steps 50 \
    --timeout 10 --time-limit 2 --weights-out "$T_TMP/slow.w"
expect_rc 124
expect_grep err 'time limit of 2 s reached'
torn_down "$T_TMP/slow.w"
t_end

t_case netns-2.4 "a run killed with SIGKILL: its holders exit by themselves, --cleanup removes its links and folder"
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
    # launch.sh lives on until its 3 s limit stops the workers.
    i=0
    while [ $i -lt 200 ] && [ -n "$(running "$T_TMP/kill.w")$(running "psrn${kpid}h")" ]; do
        sleep 0.1; i=$((i + 1))
    done
    left=$(running "$T_TMP/kill.w")$(running "psrn${kpid}h")
    [ -z "$left" ] || t_fail "still running 20 s after the kill: $left"
    ls -d "$T_TMP/kt/psrn$kpid".* >/dev/null 2>&1 || t_fail "the killed run's state folder is gone already?"
    # Inside unshare -rn its links died with its own namespace; as root its
    # bridge is still there (unless a run started meanwhile removed it:
    # every run does, so only the folder, kept in a TMPDIR of our own, is
    # sure to be there for --cleanup).
    job 30 env TMPDIR="$T_TMP/kt" bash "$ns" --cleanup
    expect_rc 0
    expect_grep err 'removed [0-9]* leftover'
    if ! grep -q 'inside unshare -rn' "$T_TMP/k.err"; then
        left=$(ip -o link show | grep -o "psrn${kpid}[bv][0-9]*" | tr '\n' ' ')
        [ -z "$left" ] || t_fail "links left after --cleanup: $left"
    fi
    ! ls -d "$T_TMP/kt/psrn$kpid".* >/dev/null 2>&1 || t_fail "state folder left after --cleanup"
fi
wait
t_end
t_exit
