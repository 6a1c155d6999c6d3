#!/usr/bin/env bash
# netns_cluster.sh -- run a psring job across network namespaces: one
# "host" per process, joined by a bridge, every host link rate-limited by
# the kernel (tc tbf). The same job as experiments/launch.sh, on a real
# (virtual) network instead of the EMULATED in-process link.
#
#   experiments/netns_cluster.sh ps|ring K [--rate RATE] [--delay TIME]
#       [--burst SIZE] [--queue TIME] [common flags] [launch.sh options]
#   experiments/netns_cluster.sh --cleanup
#
# The parameter server's placements (common/measure/model.h, PLACEMENTS) are
# launch.sh's: --servers S, S server hosts of their own; --colocated-servers
# [--servers k] [--even-split], a shard on each worker's host (in the
# worker's namespace: the two share its veth and its tbf, and the worker
# reaches its own shard without crossing it) plus k extra server hosts.
#
# The picture (ps, K workers; the ring has K hosts, rank r on host r; with
# --colocated-servers S is the extra servers, default 0, and shard r is on
# worker r's host):
#
#     host 0 (10.77.0.1)  server 0      host S (10.77.0.S+1)  worker 0  ...
#       eth0  [tbf: the host's egress]     eth0  [tbf]
#        |                                  |
#   - - -|- - - - - the switch: a namespace of its own - -|- - - - - - -
#     STEMv0 [tbf: the host's ingress]   STEMvS [tbf]
#        +-------------- bridge STEMb ------+----- ...
#
# A tbf shapes what LEAVES an interface, never what arrives. So each host
# link has two: one on the host's eth0 (its sending side) and one on the
# bridge's end of the veth pair (what the bridge sends the host: its
# receiving side). A host thus sends at most RATE and receives at most RATE,
# like a full-duplex NIC: the server's K pushes share one RATE in, its K
# weight copies one RATE out. The rate counts Ethernet, IP and TCP headers:
# with the MTU of 1500, TCP payload gets 1448 of every 1514 bytes (95.6%).
#
# netem (latency) is not in every kernel ("Specified qdisc kind is
# unknown"). It is detected: where it is missing only the bandwidth is
# emulated, the latency is the kernel's own (veth + bridge, tens of
# microseconds), and the output says so; --delay is then not applied.
# Where netem is there, --delay D puts netem (delay D) on each host's eth0,
# with the tbf under it: one-way latency D between any two hosts.
#
# Namespaces are processes, not /run/netns names: each host is a small
# holder process made by `unshare -n`, and a process joins it by `nsenter
# -t PID -n`. The bridge and the bridge's ends of the veth pairs live in
# one more such namespace, the switch (`nsenter -t SWITCH_PID -n tc -s
# qdisc` shows its queues; the set-up line gives the pid): nothing of a run
# is ever made in the namespace the script runs in. Without root the script
# re-runs itself inside `unshare -rn` (a user and network namespace of its
# own) and does the same there: one code path.
#
# Process management is launch.sh's: this script builds the hosts, then
# runs `launch.sh MODE K --wrap "THIS wrap STATE" ...`; launch.sh asks
# `THIS wrap STATE addr ROLE I` for each listener's address and starts
# each process as `THIS wrap STATE exec ROLE I -- PROGRAM ARGS`, which
# execs nsenter into host I. In-process pacing stays off (--link-bw and
# --link-latency are refused), so the row has link_bw 0 and no model_s;
# the row is followed by a "# netns ..." comment line giving the tc
# rate (tc_rate_bps, bits/s), burst, queue and latency that were used.
#
# The end, once launch.sh has returned, whatever it returned (a failure, a
# time limit, SIGINT/SIGTERM): the "tbf queues" line, then the note (only
# after a success: the row is there only then), then the teardown. Signals
# that arrive meanwhile are noted and the end is finished first. Teardown
# (also the EXIT trap, for every other way out; it runs once, whatever
# calls it): the holders are ended and reaped, and with them go their
# namespaces, so the veths, the bridge and the queues; then the state folder.
# The holders also exit by themselves when this script dies, even by
# SIGKILL: each reads a FIFO whose only writer is this script, and so the
# network goes with it: only the state folder can be left. Every run first
# removes the holders and folders named psrn<PID>... whose PID is no longer
# a netns_cluster.sh (so does --cleanup), and links so named in this
# namespace (left by versions that put the bridge here).
#
# Exit status: launch.sh's (0 ok, 1 a process failed, 64 usage, 124 time
# limit, 130 interrupted); 1 when setting up or tearing down the network
# failed; 69 when namespaces cannot be made here (one line says what is
# needed). Needs bash >= 5.1, iproute2 (ip, tc), util-linux (unshare,
# nsenter), and root or unprivileged user namespaces.
set -u

prog=netns_cluster.sh
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
. "$here/lib.sh"
PREFIX=psrn             # psrn<PID>: b bridge, v<I> veths, h<I> and sw holders
NET=10.77.0             # host I is $NET.(I+1)/24
MAX_HOSTS=250

die() { echo "$prog: $*" >&2; exit 1; }

usage() {
    cat <<'EOF'
usage: experiments/netns_cluster.sh ps|ring K [options] [common flags] [launch.sh options]
       experiments/netns_cluster.sh --cleanup

Run the parameter server (S servers + K workers) or the ring (K ranks)
through experiments/launch.sh, each process in a network namespace of its
own ("host" I, address 10.77.0.I+1), the hosts joined by a bridge, each
host link shaped by the kernel: tc tbf at RATE on the host's sending side
and on the bridge's side (its receiving side). No in-process pacing: the
row's link_bw is 0; a "# netns ..." line after it gives the tc rate.

options:
  --rate RATE       every host's link, each way: N[.N]bit|kbit|mbit|gbit
                    (10^3/10^6/10^9 bits/s; default 500mbit)
  --delay TIME      one-way latency added by netem (us, ms, s); netem is
                    missing on some kernels: then it is not applied and the
                    output says so (default: none, the kernel's own)
  --burst SIZE      tbf bucket size in bytes (K/KiB = 1024; default 32K):
                    this much goes at memory speed after an idle pause
  --queue TIME      tbf queue: how long a packet may wait (default 100ms)
  --gso SIZE        largest packet TCP hands a host's eth0 (gso_max_size;
                    default burst/2, at most 64K); one bigger than the burst
                    is cut into MTU frames by tbf, which costs CPU
  --cleanup         delete what runs killed by SIGKILL left (links, holder
                    processes, state folders named psrn<PID>...), then exit
  --help, --version

Everything else goes to experiments/launch.sh (see its --help): common flags
(--steps, --workload, --params, ...) and --servers, --colocated-servers,
--even-split, --server-args, --worker-args, --out, --csv-out, --json-out,
--time-limit.
With --colocated-servers a shard runs in each worker's namespace (they
share its link) and --servers k (default 0) adds k server hosts.
--link-bw/--link-latency are refused: the link here is the kernel's.

Exit status: launch.sh's (0, 1, 64, 124, 130); 1 network set-up failed;
69 namespaces cannot be made here (needs root, or `unshare -rn`).
EOF
}

orig_args=("$@")

# ------------------------------------------------------------ wrap mode
# netns_cluster.sh wrap STATE addr ROLE I
# netns_cluster.sh wrap STATE exec ROLE I -- PROGRAM ARGS...
# STATE/hosts has "ROLE I PID ADDR" per host: the holder's pid and the
# host's address.
if [[ ${1-} == wrap ]]; then
    (($# >= 5)) || die_usage "wrap: expected STATE addr|exec ROLE INDEX"
    st=$2 what=$3 role=$4 idx=$5
    shift 5
    line=$(awk -v r="$role" -v i="$idx" '$1 == r && $2 == i { print; exit }' "$st/hosts" 2>/dev/null)
    [[ -n $line ]] || die "wrap: no host for $role $idx in $st/hosts"
    read -r _ _ pid addr <<<"$line"
    case $what in
    addr) echo "$addr" ;;
    exec)
        [[ ${1-} == -- ]] && shift
        (($# > 0)) || die_usage "wrap exec: no program"
        exec nsenter -t "$pid" -n -- "$@"
        ;;
    *) die_usage "wrap: '$what' is not addr or exec" ;;
    esac
    exit 0
fi

need_bash51
help_or_version "$@"

# ------------------------------------------------------------ leftovers
# owner_alive PID: PID is a running netns_cluster.sh (a run to leave alone).
# (mapfile, not tr: no process per /proc entry on a busy machine.)
owner_alive() {
    local -a argv
    mapfile -d '' -t argv 2>/dev/null <"/proc/$1/cmdline" || return 1
    [[ ${argv[*]} == *netns_cluster* ]]
}

# cleanup_leftovers: holders "psrn<PID>h<I>" and "psrn<PID>sw", state
# folders $TMPDIR/psrn<PID>.XXXXXX and links psrn<PID>{b,v<I>} in this
# namespace, whose run is gone. Deleting a bridge-side veth deletes its pair.
cleanup_leftovers() {
    local name n=0 p
    local -a argv
    while read -r name; do
        [[ $name =~ ^$PREFIX([0-9]+)(b|v[0-9]+)$ ]] || continue
        owner_alive "${BASH_REMATCH[1]}" && continue
        ip link del "$name" 2>/dev/null && n=$((n + 1))
    done < <(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }')
    for p in /proc/[0-9]*; do
        mapfile -d '' -t argv 2>/dev/null <"$p/cmdline" || continue
        ((${#argv[@]} > 0)) || continue
        [[ ${argv[-1]} =~ ^$PREFIX([0-9]+)(h[0-9]+|sw)$ ]] || continue
        owner_alive "${BASH_REMATCH[1]}" && continue
        kill -KILL "${p#/proc/}" 2>/dev/null && n=$((n + 1))
    done
    for p in "${TMPDIR:-/tmp}/$PREFIX"[0-9]*.??????; do
        [[ -d $p && ${p##*/} =~ ^$PREFIX([0-9]+)\. ]] || continue
        owner_alive "${BASH_REMATCH[1]}" && continue
        rm -rf "$p" && n=$((n + 1))
    done
    ((n > 0)) && say "removed $n leftover(s) of earlier runs (holders, state folders or links named $PREFIX<PID>...)"
    return 0
}

# ------------------------------------------------------------ arguments
rate=500mbit delay="" burst=32K queue=100ms gso="" only_cleanup=0
if [[ ${1-} == --cleanup ]]; then
    only_cleanup=1
    (($# == 1)) || die_usage "--cleanup takes nothing else"
else
    (($# >= 2)) || die_usage "expected MODE and K"
    mode=$1 K=$2
    shift 2
    [[ $mode == ps || $mode == ring ]] || die_usage "MODE $(shown_value "$mode"): not ps or ring"
    [[ $K =~ ^[1-9][0-9]{0,3}$ ]] || die_usage "K $(shown_value "$K"): not a worker count 1..$MAX_HOSTS"
fi

S=1 S_given=0 colocated=0 csv_out=""
pass=()
while (($# > 0)); do
    arg=$1
    name=${arg%%=*}
    case $name in
    --rate | --delay | --burst | --queue | --gso)
        opt_value "$@"
        shift "$extra"
        case $name in
        --rate) rate=$val ;;
        --delay) delay=$val ;;
        --burst) burst=$val ;;
        --queue) queue=$val ;;
        --gso) gso=$val ;;
        esac
        ;;
    --servers | --csv-out | --json-out | --server-args | --worker-args | --out | --time-limit | \
        --steps | --workload | --params | --batch | --shard-weights | --micro | --warmup | \
        --lr | --seed | --dtype | --timeout | --weights-out)
        # Passed on as they are; --servers and --csv-out are read here too.
        opt_value "$@"
        pass+=("${@:1:extra + 1}")
        shift "$extra"
        [[ $name == --servers ]] && S=$val S_given=1
        [[ $name == --csv-out ]] && csv_out=$val
        ;;
    --link-bw | --link-latency)
        die_usage "$name: the link here is the kernel's (tc); use --rate/--delay (in-process pacing stays off)" ;;
    --wrap) die_usage "--wrap: this script sets it" ;;
    --colocated-servers) colocated=1; pass+=("$arg") ;;
    *) pass+=("$arg") ;;
    esac
    shift
done

# rate: bits/s, an integer.
if [[ ${rate,,} =~ ^([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit)$ ]]; then
    case ${BASH_REMATCH[3]} in bit) m=1 ;; kbit) m=1000 ;; mbit) m=1000000 ;; gbit) m=1000000000 ;; esac
    rate_bps=$(awk -v x="${BASH_REMATCH[1]}" -v m="$m" 'BEGIN { printf "%.0f", x * m }')
else
    usage_error --rate "$rate" "not a rate like 500mbit (bit, kbit, mbit, gbit)"
fi
((rate_bps >= 8000 && rate_bps <= 100000000000)) || usage_error --rate "$rate" "not between 8kbit and 100gbit"
burst_b=$(size_bytes "$burst") || usage_error --burst "$burst" "not a size like 32K (bytes, K/KiB, M/MiB)"
((burst_b >= 1600 && burst_b <= 268435456)) || die_usage "--burst: $burst_b bytes is not 1600..256M (it must hold a 1514-byte frame)"
if [[ -n $gso ]]; then
    gso_b=$(size_bytes "$gso") || usage_error --gso "$gso" "not a size like 16K"
    ((gso_b >= 1514 && gso_b <= 65536)) || die_usage "--gso: $gso_b bytes is not 1514..64K"
else
    gso_b=$((burst_b / 2 > 65536 ? 65536 : burst_b / 2))
fi
time_ok() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] && ! [[ $1 =~ ^0+(\.0+)?[a-z]+$ ]]; }
[[ -z $delay ]] || time_ok "$delay" || usage_error --delay "$delay" "not a time like 200us, 1ms"
time_ok "$queue" || usage_error --queue "$queue" "not a time like 100ms"
if ((!only_cleanup)); then
    # (--colocated-servers: S is the extra server hosts, 0 unless given)
    [[ $mode == ring ]] && ((colocated)) && die_usage "--colocated-servers: the ring has no servers"
    ((colocated && !S_given)) && S=0
    [[ $S =~ ^(0|[1-9][0-9]{0,2})$ ]] && ((S <= 256 && (S >= 1 || colocated))) ||
        usage_error --servers "$S" "not 1..256 (0..256 extra servers with --colocated-servers)"
    if [[ $mode == ps ]]; then nhosts=$((S + K)); else nhosts=$K; fi
    ((nhosts <= MAX_HOSTS)) || die_usage "$nhosts hosts: at most $MAX_HOSTS (one /24)"
    if [[ -n $csv_out ]]; then
        d=$(dirname "$csv_out")
        [[ -d $d && -w $d ]] || usage_error --csv-out "$csv_out" "folder $(shown_value "$d") does not exist or is not writable"
    fi
    # The programs' flags, by their own parser, before any namespace is
    # made (lib.sh, flags_check; launch.sh checks them again).
    chk_common=() chk_srv=() chk_wrk=()
    for ((i = 0; i < ${#pass[@]}; i++)); do
        case ${pass[i]} in
        --servers | --csv-out | --json-out | --out | --time-limit) ((i++)) ;;
        --servers=* | --csv-out=* | --json-out=* | --out=* | --time-limit=* | --colocated-servers | --even-split) ;;
        --server-args) read -ra chk_srv <<<"${pass[i + 1]-}"; ((i++)) ;;
        --worker-args) read -ra chk_wrk <<<"${pass[i + 1]-}"; ((i++)) ;;
        --server-args=*) read -ra chk_srv <<<"${pass[i]#*=}" ;;
        --worker-args=*) read -ra chk_wrk <<<"${pass[i]#*=}" ;;
        *) chk_common+=("${pass[i]}") ;;
        esac
    done
    if [[ $mode == ps ]]; then
        flags_check ps_server "${chk_common[@]}" "${chk_srv[@]}"
        flags_check ps_worker "${chk_common[@]}" "${chk_wrk[@]}"
    else
        flags_check ring_worker "${chk_common[@]}" "${chk_wrk[@]}"
    fi
fi

# ------------------------------------------------------------ privileges
for t in ip tc unshare nsenter mkfifo; do
    command -v "$t" >/dev/null || {
        echo "$prog: cannot make network namespaces here: no '$t' on PATH (needs iproute2 and util-linux)" >&2
        exit 69
    }
done
userns=${PSR_NETNS_USERNS:-0}
if ((only_cleanup)); then
    cleanup_leftovers
    exit 0
fi
# can_here: network namespaces can be made, and a bridge in one (a
# throwaway namespace: it goes when `ip` exits).
can_here() {
    unshare -n -- ip link add "${PREFIX}probe" type bridge 2>/dev/null
}
if ! can_here; then
    # Not here: make a network namespace of our own inside a user namespace
    # (once), and run this script again in it.
    if ((userns == 0)) && unshare -rn true 2>/dev/null; then
        PSR_NETNS_USERNS=1 exec unshare -rn -- bash "$self" "${orig_args[@]}"
    fi
    echo "$prog: cannot make network namespaces here: needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) or unprivileged user namespaces for unshare -rn (sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone = 1)" >&2
    exit 69
fi

# ------------------------------------------------------------ teardown
# phase: setup (a signal ends the script at once), job (a signal stops
# launch.sh's job, then the end runs), end (a signal waits for the end).
stem=$PREFIX$$ st="" hold="" sw_pid="" launch_pid="" torn=0 interrupted=0 phase=setup
declare -a holders=() host_pid=()

# teardown: the holders are killed and reaped (their namespaces, and with
# them every veth, the bridge and the queues, go), then the state folder.
# It runs once, to its end: signals are held off meanwhile, and a second
# call (the EXIT trap after the end) does nothing. Returns 1 when a holder
# is still there afterwards.
teardown() {
    local p left=""
    ((torn)) && return 0
    trap '' INT TERM
    if [[ -n $hold ]]; then
        exec {hold}>&-
        hold=""
    fi
    for p in "${holders[@]}"; do kill -KILL "$p" 2>/dev/null; done
    ((${#holders[@]} > 0)) && wait "${holders[@]}" 2>/dev/null
    for p in "${holders[@]}"; do kill -0 "$p" 2>/dev/null && left+=" $p"; done
    [[ -n $st ]] && rm -rf "$st"
    torn=1
    if [[ -n $left ]]; then
        say "teardown: holder(s) still running:$left"
        return 1
    fi
    return 0
}
trap 'teardown' EXIT
on_signal() {
    interrupted=1
    case $phase in
    setup)
        say "interrupted while setting up; tearing down"
        exit 130
        ;;
    job) [[ -n $launch_pid ]] && kill -TERM "$launch_pid" 2>/dev/null ;;  # launch.sh stops its job
    esac
}
trap on_signal INT TERM

# ------------------------------------------------------------ the hosts
cleanup_leftovers
st=$(mktemp -d "${TMPDIR:-/tmp}/$stem.XXXXXX") || die "mktemp failed"
[[ $self$st =~ [[:space:]] ]] && die "a blank in '$self' or '$st': launch.sh --wrap splits at blanks"
mkfifo "$st/hold" || die "mkfifo $st/hold failed"
exec {hold}<>"$st/hold"

# quiet CMD...: run CMD; on failure name it with its stderr and fail.
quiet() {
    local out
    out=$("$@" 2>&1) && return 0
    die "set-up failed: $* : ${out//$'\n'/ }"
}

# Holders: the switch and one per host, each in a network namespace of its
# own, reading the FIFO until this script closes it (or dies).
my_ns=$(readlink "/proc/$$/ns/net")
unshare -n -- sh -c 'read -r _; exit 0' "${stem}sw" <"$st/hold" {hold}>&- &
sw_pid=$!
holders+=("$sw_pid")
for ((i = 0; i < nhosts; i++)); do
    unshare -n -- sh -c 'read -r _; exit 0' "${stem}h$i" <"$st/hold" {hold}>&- &
    host_pid+=($!)
    holders+=($!)
done
for p in "${holders[@]}"; do
    for ((t = 0; t < 500; t++)); do
        ns=$(readlink "/proc/$p/ns/net" 2>/dev/null) || die "unshare -n exited at once (holder pid $p)"
        [[ $ns != "$my_ns" ]] && break
        sleep 0.01
    done
    [[ $ns != "$my_ns" ]] && continue
    die "holder $p not in a namespace of its own after 5 s"
done
# sw CMD...: CMD in the switch's namespace.
sw() { nsenter -t "$sw_pid" -n -- "$@"; }

bridge=${stem}b
if ! sw ip link add "$bridge" type bridge nf_call_iptables 0 2>/dev/null; then
    # (No per-bridge netfilter switch on this kernel: plain bridge.)
    quiet sw ip link add "$bridge" type bridge
fi
quiet sw ip link set "$bridge" up

# netem there? (a kernel without sch_netem answers "Specified qdisc kind
# is unknown")
if sw tc qdisc add dev "$bridge" root netem delay 1ms 2>/dev/null; then
    netem=present
    sw tc qdisc del dev "$bridge" root 2>/dev/null
else
    netem=missing
fi

# tbf ARGS: rate, bucket and queue, the same at both ends of each link.
# TCP hands a veth packets of up to 64 KiB (GSO); tbf cuts a packet bigger
# than its bucket into MTU frames, and on a small machine the CPU then
# becomes the bottleneck (measured: the ring 2x slower than the link). So
# each host's eth0 gets gso_max_size = burst / 2 (64 KiB at most; --gso
# overrides it): every packet fits in the bucket whole.
tbf=(tbf rate "${rate_bps}bit" burst "$burst_b" latency "$queue")
use_delay=0
[[ -n $delay && $netem == present ]] && use_delay=1
: >"$st/hosts"
# The switch's side, all hosts in one `ip -batch` and one `tc -batch`:
# a veth pair per host (its other end is the host's eth0), on the bridge,
# with the host's receiving tbf.
links="" qdiscs=""
for ((i = 0; i < nhosts; i++)); do
    v=${stem}v$i
    links+="link add $v type veth peer name eth0 netns ${host_pid[i]}"$'\n'
    links+="link set $v master $bridge up"$'\n'
    qdiscs+="qdisc add dev $v root ${tbf[*]}"$'\n'
done
quiet sw ip -batch - <<<"$links"
quiet sw tc -batch - <<<"$qdiscs"
for ((i = 0; i < nhosts; i++)); do
    p=${host_pid[i]} addr=$NET.$((i + 1))
    quiet nsenter -t "$p" -n ip -batch - <<<"link set lo up
addr add $addr/24 dev eth0
link set eth0 gso_max_size $gso_b
link set eth0 up"
    if ((use_delay)); then
        quiet nsenter -t "$p" -n tc -batch - <<<"qdisc add dev eth0 root handle 1: netem delay $delay limit 100000
qdisc add dev eth0 parent 1:1 handle 10: ${tbf[*]}"
    else
        quiet nsenter -t "$p" -n tc qdisc add dev eth0 root "${tbf[@]}"
    fi
    if [[ $mode == ps ]]; then
        if ((i < S)); then echo "server $i $p $addr"; else echo "worker $((i - S)) $p $addr"; fi
    else
        echo "rank $i $p $addr"
    fi >>"$st/hosts"
done

where="in a namespace of its own: nsenter -t $sw_pid -n"
((userns)) && where+="; all inside unshare -rn, without root"
lat="latency not emulated (netem missing on this kernel): the kernel's own, veth + bridge"
if ((use_delay)); then
    lat="netem delay $delay on each host's sending side"
elif [[ -n $delay ]]; then
    lat="--delay $delay NOT applied: netem is missing on this kernel, only the bandwidth is emulated; latency is the kernel's own"
elif [[ $netem == present ]]; then
    lat="no added latency (netem present, --delay not given)"
fi
say "$nhosts hosts $NET.1-$NET.$nhosts on bridge $bridge ($where); tc tbf $rate each way on every host link (burst $burst_b B, GSO $gso_b B, queue $queue); $lat"

# ------------------------------------------------------------ the job
# cpu_ticks: busy and total jiffies of the whole machine (all CPUs, every
# user): how busy the host was while the job ran, for the note.
cpu_ticks() {
    local _c u n s i w q sq st
    read -r _c u n s i w q sq st _ </proc/stat
    echo "$((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st))"
}
read -r busy0 total0 < <(cpu_ticks)
phase=job
"$here/launch.sh" "$mode" "$K" --wrap "$self wrap $st" "${pass[@]}" {hold}>&- &
launch_pid=$!
((interrupted)) && kill -TERM "$launch_pid" 2>/dev/null     # (a signal before $! was known)
while :; do
    wait "$launch_pid"
    rc=$?
    kill -0 "$launch_pid" 2>/dev/null || break     # (a trapped signal: wait again)
done

# ------------------------------------------------------------ the end
# Whatever launch.sh returned: the queues' line, the note after a success,
# the teardown. A signal now is noted (exit 130 after a failure) and waits.
phase=end
read -r busy1 total1 < <(cpu_ticks)
cpu_busy=$(awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.2f", (t > 0 ? b / t : 0) }')

# What the tbf queues did, both ends of every link: packets sent and
# dropped (a drop costs TCP a retransmission), and how often a packet had
# to wait for tokens (overlimits).
tc_stats() {
    local i p
    for ((i = 0; i < nhosts; i++)); do
        p=${host_pid[i]}
        sw tc -s qdisc show dev "${stem}v$i" 2>/dev/null
        nsenter -t "$p" -n tc -s qdisc show dev eth0 2>/dev/null
    done | awk '/^qdisc tbf/ { tbf = 1; next } /^qdisc/ { tbf = 0 }
        tbf && /Sent/ { for (i = 1; i < NF; i++) {
                if ($(i + 1) == "pkt") pk += $i
                if ($i == "(dropped") { v = $(i + 1); sub(/,/, "", v); dr += v }
                if ($i == "overlimits") ol += $(i + 1) } }
        END { printf "%d %d %d\n", pk, dr, ol }'
}
read -r tc_pkts tc_drops tc_over < <(tc_stats)
say "tbf queues: $tc_pkts packets, $tc_drops dropped, $tc_over waited for tokens (all hosts, both ways); the machine's CPUs were $cpu_busy busy (all users)"
# PSR_NETNS_DEBUG=1: each link's tbf counters in full, and the TCP state
# of each host's connections (ss -tin: cwnd, rtt, retransmissions).
if [[ -n ${PSR_NETNS_DEBUG-} ]]; then
    for ((i = 0; i < nhosts; i++)); do
        echo "== host $i ($NET.$((i + 1))): bridge side ${stem}v$i, then eth0"
        sw tc -s qdisc show dev "${stem}v$i"
        nsenter -t "${host_pid[i]}" -n tc -s qdisc show dev eth0
        nsenter -t "${host_pid[i]}" -n ss -tin 2>/dev/null
    done >&2
fi

if ((rc == 0)); then
    d=none
    ((use_delay)) && d=$delay
    note="# netns mode=$mode K=$K hosts=$nhosts tc_rate=$rate tc_rate_bps=$rate_bps burst_B=$burst_b gso_B=$gso_b queue=$queue"
    note+=" netem=$netem delay=$d mtu=1500 userns=$userns tbf_drops=$tc_drops cpu_busy=$cpu_busy:"
    note+=" kernel shaping (tbf both ways per host link), no in-process pacing (link_bw 0)"
    if [[ -n $csv_out ]]; then echo "$note" >>"$csv_out"; else echo "$note"; fi
fi
teardown || { ((rc == 0)) && rc=1; }
((interrupted && rc != 0)) && rc=130
exit "$rc"
