#!/usr/bin/env bash
# launch.sh -- run one local psring job on 127.0.0.1 and merge its records.
#
#   experiments/launch.sh ps|ring K [common flags] [--servers S]
#       [--colocated-servers [--even-split]]
#       [--server-args "..."] [--worker-args "..."] [--out DIR]
#       [--csv-out FILE] [--json-out FILE] [--time-limit SECONDS] [--wrap "CMD"]
#
# ps:   S parameter servers (bin/ps_server --listen 127.0.0.1:0 --port-file
#       DIR/port.I --workers K [--shard I/S when S > 1]), then, once every
#       port file is there, K workers (bin/ps_worker --rank r --world K
#       --server 127.0.0.1:P0,127.0.0.1:P1,...).
# PLACEMENTS (ps; common/measure/model.h, PLACEMENTS). The EMULATED link belongs to
#       a host: processes on one host share its budget (common/wire/link.h,
#       HOST LINKS).
#       --servers S alone: S servers on hosts of their own ("separate").
#       --colocated-servers: one server shard on each worker's host as well
#       ("colocated"), and --servers k (default 0) extra server hosts:
#       BytePS's mix. The byte split is Theorem 1's, asked of bin/model
#       --split and printed; worker r and shard r share DIR/host.r
#       (--link-host; --local-worker r / --local-server r: their own bytes
#       never cross the NIC). The servers are, in --server order, the K
#       colocated shards, then the k extra ones. An equal split goes out as
#       --shard I/S; an uneven one (0 < k < K) as ps_server --range
#       FIRST:COUNT over the --params N elements (synthetic workload), which
#       needs a ps_server with --range (issue 15, the WELCOME carries the
#       range). --even-split gives every one of the K + k servers 1/(K+k)
#       (--shard I/S) instead ("colocated-even"). With k >= K Theorem 1
#       gives the colocated shards nothing: the job is the separate PS with
#       S = k, and says so. The CSV's servers and placement columns come
#       from psr_merge --placement.
# ring: rank 0 (bin/ring_worker --rank 0 --world K --coordinator 127.0.0.1:0
#       --port-file DIR/coord.port) serves the rendezvous; once it wrote its
#       port, ranks 1..K-1 get --coordinator 127.0.0.1:PORT.
#       LOCAL_WORLD_SIZE (unless set) is the ranks on one host: K, or under
#       --wrap those sharing an address (--algo hring's default G).
#
# Every other argument is a common flag (docs/design.md) and goes, in order, to
# every process; --server-args / --worker-args (split at blanks, no
# quoting inside) go to the servers / the workers or ring ranks only. Each
# process gets --csv DIR/rec.ROLE.RANK; on success bin/psr_merge turns the
# records into one CSV row: appended to --csv-out FILE (with the header if
# the file is new), else printed on stdout with the header. A ring --bench
# sweep over several sizes gives one row per size (its records are
# rec.rank.RANK.SIZE), smallest size first. --json-out FILE appends the
# same rows as JSON Lines (docs/design.md, JSON LINES): before each row a
# manifest line with the launcher's command, the git commit, the CPU and
# the ranks' binding (DIR/manifest.txt, handed to psr_merge --manifest).
#
# Each process's stdout and stderr come out on this script's stderr, every
# line prefixed with its role and rank ("server0| ...", "worker3| ...",
# "rank1| ..."). Each process runs in a process group of its own (bash job
# control); when one exits non-zero, or the --time-limit (default 600 s)
# passes, or this script gets SIGINT/SIGTERM, every group still running gets
# SIGTERM, then SIGKILL 5 s later, and the script names what happened.
#
# --wrap "CMD" (split at blanks) runs the job on other hosts, e.g. the
# network namespaces of experiments/netns_cluster.sh. Before it starts
# anything, the launcher asks `CMD addr ROLE INDEX` (ROLE server, worker or
# rank; INDEX the server's shard or the rank) for the one address each
# listener binds and is reached at, in place of 127.0.0.1: server I gets
# --listen ADDR:0; ring rank 0 --coordinator ADDR0:0, the others
# --coordinator ADDR0:PORT, and every rank --advertise its own ADDR. Then it
# starts each process as `CMD exec ROLE INDEX -- PROGRAM ARGS...`, which
# must exec PROGRAM (same pid, so the process groups and signals work as
# without it). Port files and records still go through the one file system.
# With --colocated-servers the shard on worker R's host is asked for and
# started as ROLE worker, INDEX R (it listens on the worker's address, and
# the worker reaches it there without crossing the host's link); the extra
# servers are server 0 .. k-1. The host link files (--link-host) are in
# the launcher's folder, on that one file system too.
#
# Exit status: 0 when every process exited 0 and the records merged; 1 when
# a process failed (64 if that process exited 64: bad flags), naming the
# one that failed first; 64 for this script's own usage errors; 124 when
# the time limit stopped the job; 130 when interrupted.
#
# Binaries come from $PSR_BIN, default bin/ of the repository this script
# is in. Needs bash >= 5.1.
set -u

prog=launch.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
PORT_WAIT_S=30          # a server or rank 0 must write its port file by then
GRACE_S=5               # SIGTERM -> SIGKILL

usage() {
    cat <<'EOF'
usage: experiments/launch.sh ps|ring K [common flags] [options]

Run one local job on 127.0.0.1: the parameter server (S servers + K workers)
or the ring (K ranks). Common flags (--steps, --lr, --link-bw, ...) go to
every process; each process's output comes out on stderr prefixed with its
role and rank; the per-process records are merged into one CSV row.

options:
  --servers S            ps: number of sharded servers on hosts of their own
                         (default 1; with --colocated-servers the extra
                         servers, default 0)
  --colocated-servers    ps: one shard on each worker's host too (the
                         worker and its shard share the host's EMULATED
                         link); with --servers k: BytePS's mix, the byte
                         split of its Theorem 1 (bin/model --split), printed
  --even-split           with --colocated-servers: equal shards over K + k
                         servers instead of Theorem 1's split
  --server-args "..."    extra flags for every server (split at blanks)
  --worker-args "..."    extra flags for every worker / ring rank
  --out DIR              keep port files and records in DIR (default: a
                         temporary folder, removed at the end)
  --csv-out FILE         append the merged row to FILE (header if new);
                         default: print header and row on stdout
  --json-out FILE        append a manifest line and the row to FILE as
                         JSON Lines (also with --csv-out or stdout)
  --time-limit SECONDS   stop the whole job after this long (default 600)
  --bind-cores           ring: rank r runs on the r-th CPU the launcher may
                         use (taskset), as mpirun binds ranks to cores;
                         refused above one rank a CPU and with --wrap. The
                         default for an unpaced ring (no --link-bw, or 0),
                         K from 2 to the CPUs it may use, no --wrap; a
                         paced ring and ps run free (docs/link.md,
                         "Unpaced loopback"; the manifest's "bind:" line)
  --no-bind-cores        ring: leave the ranks free (the scheduler places
                         them), also where the default binds
  --wrap "CMD"           run each process on another host: `CMD addr ROLE I`
                         prints the address it listens on / advertises
                         (instead of 127.0.0.1), `CMD exec ROLE I -- PROG
                         ARGS...` execs it there (ROLE server|worker|rank;
                         a colocated shard is worker I's: on its host;
                         see experiments/netns_cluster.sh)
  --help                 print this help

Exit status: 0 all processes exited 0; 1 a process failed (64 if it was a
usage error), named on stderr; 64 usage; 124 time limit; 130 interrupted.
Binaries from $PSR_BIN (default: bin/ of this repository).
EOF
}

need_bash51
help_or_version "$@"

# ------------------------------------------------------------ arguments
(($# >= 2)) || die_usage "expected MODE and K (ps|ring K)"
launch_cmd="experiments/launch.sh$(printf ' %q' "$@")"
mode=$1 K=$2
shift 2
[[ $mode == ps || $mode == ring ]] || die_usage "MODE $(shown_value "$mode"): not ps or ring"
if ! [[ $K =~ ^[1-9][0-9]{0,4}$ ]] || ((K > 65536)); then
    die_usage "K $(shown_value "$K"): not a worker count 1..65536"
fi

S=1 S_given=0 out_dir="" csv_out="" json_out="" time_limit=600 colocated=0 even=0 bind=-1 bw_next=0
server_args="" worker_args="" wrap=""
common=()
while (($# > 0)); do
    arg=$1
    name=${arg%%=*}
    case $name in
    --servers | --server-args | --worker-args | --out | --csv-out | --json-out | --time-limit | --wrap)
        opt_value "$@"
        shift "$extra"
        case $name in
        --servers) S=$val S_given=1 ;;
        --server-args) server_args=$val ;;
        --worker-args) worker_args=$val ;;
        --out) out_dir=$val ;;
        --csv-out) csv_out=$val ;;
        --json-out) json_out=$val ;;
        --time-limit) time_limit=$val ;;
        --wrap) wrap=$val ;;
        esac
        ;;
    --colocated-servers) colocated=1 ;;
    --even-split) even=1 ;;
    --bind-cores) bind=1 ;;
    --no-bind-cores) bind=0 ;;
    --csv) die_usage "--csv: the launcher gives each process its own record; use --csv-out FILE" ;;
    --json) die_usage "--json: the launcher gives each process its own record; use --json-out FILE" ;;
    --rank | --world) die_usage "$name: the launcher sets rank and world itself (K = $K)" ;;
    --coordinator | --server | --listen | --port-file | --workers | --shard | --range | --link-host | \
        --local-worker | --local-server)
        die_usage "$name: the launcher sets it; give role flags with --server-args/--worker-args" ;;
    *) common+=("$arg") ;;
    esac
    shift
done
((colocated && !S_given)) && S=0
if ! [[ $S =~ ^[0-9]{1,3}$ ]] || ((S > 256 || (S < 1 && !colocated))); then
    usage_error --servers "$S" "not 1..256 (0..256 extra servers with --colocated-servers)"
fi
[[ $mode == ring ]] && ((S_given)) && die_usage "--servers: the ring has no servers"
[[ $mode == ring ]] && ((colocated)) && die_usage "--colocated-servers: the ring has no servers"
((even && !colocated)) && die_usage "--even-split: only with --colocated-servers"
[[ $mode == ring && -n $server_args ]] && die_usage "--server-args: the ring has no servers"
# Binding (docs/link.md, "Unpaced loopback"): ring rank r runs on the
# r-th CPU this launcher may use (taskset). --bind-cores asks for it;
# without either flag an unpaced ring of at most one rank a CPU is bound,
# as Open MPI's mpirun binds ranks to cores when they fit (left free, two
# unpaced ranks start on one CPU and take turns through sched_yield); a
# paced ring (--link-bw other than 0), ps and --wrap stay free.
cpus=()
read_cpus() {
    local list part a b c
    list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status 2>/dev/null)
    IFS=, read -ra part <<<"$list"
    for a in "${part[@]}"; do
        if [[ $a =~ ^([0-9]+)-([0-9]+)$ ]]; then
            for ((c = BASH_REMATCH[1]; c <= BASH_REMATCH[2]; c++)); do cpus+=("$c"); done
        elif [[ $a =~ ^[0-9]+$ ]]; then
            cpus+=("$a")
        fi
    done
}
read_cpus
paced=0
for a in "${common[@]}" "${wrk_extra[@]}" ""; do
    if ((bw_next)); then [[ $a =~ ^0+(\.0+)?$ ]] || paced=1; fi
    bw_next=0
    case $a in
    --link-bw) bw_next=1 ;;
    --link-bw=*) [[ ${a#*=} =~ ^0+(\.0+)?$ ]] || paced=1 ;;
    esac
done
if ((bind == 1)); then
    [[ $mode == ring ]] || die_usage "--bind-cores: ring only"
    [[ -z $wrap ]] || die_usage "--bind-cores: not with --wrap (the hosts are the wrapper's)"
    ((K <= ${#cpus[@]})) || die_usage "--bind-cores: $K ranks on ${#cpus[@]} CPUs (one rank a CPU at most)"
    command -v taskset >/dev/null || die_usage "--bind-cores: no taskset on this host"
    bind_why="--bind-cores"
elif ((bind == 0)); then
    bind_why="--no-bind-cores"
elif [[ $mode != ring ]]; then
    bind=0 bind_why="ps"
elif [[ -n $wrap ]]; then
    bind=0 bind_why="--wrap"
elif ((K == 1)); then
    bind=0 bind_why="one rank"
elif ((paced)); then
    bind=0 bind_why="paced (--link-bw)"
elif ((K > ${#cpus[@]})); then
    bind=0 bind_why="$K ranks on ${#cpus[@]} CPUs"
elif ! command -v taskset >/dev/null; then
    bind=0 bind_why="no taskset"
else
    bind=1 bind_why="unpaced, $K ranks on ${#cpus[@]} CPUs"
fi
if ((bind)); then bind_str="CPUs ${cpus[*]:0:K} ($bind_why)"; else bind_str="none ($bind_why)"; fi
if ! [[ $time_limit =~ ^[0-9]+(\.[0-9]+)?$ ]] || [[ $time_limit =~ ^0+(\.0+)?$ ]]; then
    usage_error --time-limit "$time_limit" "not a positive number of seconds"
fi
read -ra srv_extra <<<"$server_args"
read -ra wrk_extra <<<"$worker_args"
read -ra wrap_cmd <<<"$wrap"
if [[ -n $wrap ]]; then
    ((${#wrap_cmd[@]} > 0)) || die_usage "--wrap: empty command"
    for a in "${common[@]}" "${wrk_extra[@]}"; do
        [[ ${a%%=*} == --advertise ]] && die_usage "--advertise: with --wrap the launcher sets it"
    done
fi

for o in --csv-out --json-out; do
    [[ $o == --csv-out ]] && f=$csv_out || f=$json_out
    [[ -n $f ]] || continue
    d=$(dirname "$f")
    [[ -d $d && -w $d ]] || usage_error "$o" "$f" "folder $(shown_value "$d") does not exist or is not writable"
done
if [[ $mode == ps ]]; then need=(ps_server ps_worker psr_merge model); else need=(ring_worker psr_merge); fi
for b in "${need[@]}"; do
    [[ -x $PSR_BIN/$b ]] || { say "no $b in $PSR_BIN (run make, or set PSR_BIN)"; exit 1; }
done
# The flags the programs take, checked by their own parser before anything
# starts (lib.sh, flags_check).
if [[ $mode == ps ]]; then
    flags_check ps_server "${common[@]}" "${srv_extra[@]}"
    flags_check ps_worker "${common[@]}" "${wrk_extra[@]}"
else
    flags_check ring_worker "${common[@]}" "${wrk_extra[@]}"
fi

# ------------------------------------------------------------ placement
# nsrv servers; server I gets srv_part[I] (its shard flags: --shard I/S,
# --range FIRST:COUNT, or nothing) and shares worker srv_host[I]'s host
# (-1: a host of its own). PLACEMENTS above. Under --wrap a colocated
# shard is on its worker's host ("worker R"), the others are "server J",
# J counted over the servers with a host of their own (srv_on below).
placement=separate nsrv=$S ncoloc=0
declare -a srv_part=() srv_host=()
if [[ $mode == ps ]] && ((colocated)); then
    params=""
    for ((i = 0; i < ${#common[@]}; i++)); do
        case ${common[i]} in
        --params=*) params=${common[i]#--params=} ;;
        --params) params=${common[i + 1]-} ;;
        esac
    done
    elems=1000000       # only the fractions matter unless the split is uneven
    if [[ -n $params ]]; then
        elems=$(size_bytes "$params") || usage_error --params "$params" "not a size"
    fi
    split_cmd=("$PSR_BIN/model" --split --K "$K" --servers "$S" --elements "$elems")
    ((even)) && split_cmd+=(--even-split)
    split=$("${split_cmd[@]}") || { say "${split_cmd[*]} failed"; exit 1; }
    nsrv=0 uneven=0 frac0=""
    while read -r role idx first count frac; do
        [[ $role == colocated || $role == extra ]] || continue
        if [[ $role == colocated ]]; then srv_host[nsrv]=$idx ncoloc=$((ncoloc + 1)); else srv_host[nsrv]=-1; fi
        srv_part[nsrv]="--range $first:$count"
        [[ -z $frac0 ]] && frac0=$frac
        [[ $frac == "$frac0" ]] || uneven=1
        nsrv=$((nsrv + 1))
    done <<<"$split"
    ((nsrv > 0)) || { say "${split_cmd[*]} gave no servers"; exit 1; }
    if ((ncoloc == 0)); then
        placement=separate
        say "placement: $S extra servers for K = $K workers: Theorem 1 gives the colocated shards nothing; this is the separate PS with S = $S"
    elif ((even)); then
        placement=colocated-even
    else
        placement=colocated
    fi
    if ((uneven)); then
        [[ -n $params ]] || die_usage "--colocated-servers --servers $S: Theorem 1's split is uneven and goes by element ranges: give --params N (synthetic workload), or --even-split"
        "$PSR_BIN/ps_server" --help 2>/dev/null | grep -q -- '--range' ||
            die_usage "--colocated-servers --servers $S: Theorem 1's split is uneven, and this ps_server has no --range FIRST:COUNT yet (issue 15: the WELCOME carries the range); use --even-split"
    else
        for ((i = 0; i < nsrv; i++)); do
            srv_part[i]=""
            ((nsrv > 1)) && srv_part[i]="--shard $i/$nsrv"
        done
    fi
    say "placement $placement: K = $K workers, $S extra servers, $nsrv servers; the split (${split_cmd[*]#"$PSR_BIN/"}):"
    while read -r l; do say "  $l"; done <<<"$split"
else
    for ((i = 0; i < S; i++)); do
        srv_host[i]=-1 srv_part[i]=""
        ((S > 1)) && srv_part[i]="--shard $i/$S"
    done
fi

# Addresses: 127.0.0.1 for every listener, or what --wrap's `addr` says.
# ps: srv_addr[I] for server I; ring: rank_addr[R] for rank R (its
# --advertise; rank 0's is the coordinator's too). IPv6 goes in brackets.
declare -a srv_addr=() rank_addr=() srv_on=()
host_addr() {
    local a
    if [[ -z $wrap ]]; then
        echo 127.0.0.1
        return 0
    fi
    if ! a=$("${wrap_cmd[@]}" addr "$1" "$2" </dev/null) || [[ -z $a || $a =~ [[:space:]] ]]; then
        say "--wrap: '$wrap addr $1 $2' gave no address${a:+ ('$a')}"
        return 1
    fi
    echo "$a"
}
if [[ $mode == ps ]]; then
    own=0
    for ((i = 0; i < nsrv; i++)); do
        if ((srv_host[i] >= 0)); then
            srv_on[i]="worker ${srv_host[i]}"
        else
            srv_on[i]="server $own"
            own=$((own + 1))
        fi
        srv_addr[i]=$(host_addr ${srv_on[i]}) || exit 1
    done
elif [[ -n $wrap ]]; then
    for ((r = 0; r < K; r++)); do
        rank_addr[r]=$(host_addr rank "$r") || exit 1
    done
else
    rank_addr[0]=127.0.0.1
fi
# LOCAL_WORLD_SIZE (ring): the ranks on one host, as torchrun exports it,
# for --algo hring's default G (common/coll/hring.h, GROUPS): K on
# 127.0.0.1, or under --wrap the ranks that share an address when every
# address has as many and its ranks are consecutive (netns_cluster.sh: 1).
# Left alone when the caller set it, and otherwise when the hosts differ.
if [[ $mode == ring && -z ${LOCAL_WORLD_SIZE:-} ]]; then
    if [[ -z $wrap ]]; then
        export LOCAL_WORLD_SIZE=$K
    else
        declare -A on_addr=()
        for ((r = 0; r < K; r++)); do on_addr[${rank_addr[r]}]=$((${on_addr[${rank_addr[r]}]:-0} + 1)); done
        g=${on_addr[${rank_addr[0]}]}
        for ((r = 0; r < K; r++)); do
            if ((${on_addr[${rank_addr[r]}]} != g)) || [[ ${rank_addr[r]} != "${rank_addr[r - r % g]}" ]]; then
                g=0
                break
            fi
        done
        ((g > 0)) && export LOCAL_WORLD_SIZE=$g
    fi
fi
hostport() {
    if [[ $1 == *:* ]]; then echo "[$1]:$2"; else echo "$1:$2"; fi
}
# wrap_prefix ROLE INDEX: sets the array pre to the command prefix that
# runs that process on its host (empty without --wrap).
wrap_prefix() {
    pre=()
    if [[ -n $wrap ]]; then pre=("${wrap_cmd[@]}" exec "$1" "$2" --); fi
    if ((bind)); then pre=(taskset -c "${cpus[$2]}"); fi
}

if [[ -n $out_dir ]]; then
    mkdir -p "$out_dir" || { say "--out: cannot create '$out_dir'"; exit 64; }
    dir=$(cd "$out_dir" && pwd)
    rm -f "$dir"/rec.* "$dir"/port.* "$dir"/usage.* "$dir"/coord.port "$dir"/st.* "$dir"/secret "$dir"/host.*
    keep=1
else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/psring-launch.XXXXXX") || { say "mktemp failed"; exit 1; }
    keep=0
fi

# The job's secret (common/wire/auth.h, docs/security.md): 32 random bytes as
# hex in a 0600 file, given to every process with --secret-file, unless
# the caller brought one (PSRING_SECRET, or --secret-file among the flags).
has_secret=0
[[ -n ${PSRING_SECRET-} ]] && has_secret=1
for a in "${common[@]}"; do [[ ${a%%=*} == --secret-file ]] && has_secret=1; done
if ((!has_secret)); then
    (umask 077 && od -An -vtx1 -N32 /dev/urandom | tr -d ' \n' >"$dir/secret" && echo >>"$dir/secret") \
        || { say "cannot make the job's secret in $dir"; exit 1; }
    common+=(--secret-file "$dir/secret")
fi

# ------------------------------------------------------------ processes
set -m                  # every background job in a process group of its own
declare -A alive=()     # pid (= pgid) -> tag, for jobs not yet reaped
stopping=0 interrupted=0
# The time limit and the grace period are deadlines on the clock, in
# microseconds since the epoch (0: none), looked at by the reaping loop.
limit_at=0 grace_at=0
now_us() { now=${EPOCHREALTIME//[!0-9]/}; }
# usec SECONDS: SECONDS (digits, an optional fraction) in microseconds.
usec() {
    local i=${1%%.*} f=""
    [[ $1 == *.* ]] && f=${1#*.}
    f=${f}000000
    echo $((10#$i * 1000000 + 10#${f:0:6}))
}

cleanup() {
    # The timers die of SIGTERM, which job control would announce: all
    # there was to say is said by now.
    exec 2>/dev/null
    ((keep)) || rm -rf "$dir"
}
trap cleanup EXIT

# start TAG CMD...: run CMD as a job, its output prefixed with "TAG| ".
# sed ignores SIGTERM, so it drains what the process wrote before dying.
# Once the job is stopping (^C, the time limit, a failure) nothing more
# starts: start returns 1. A stop that lands between that check and the
# fork (bash runs a trap between any two commands) would miss the new
# job, so a job that starts while stopping gets its SIGTERM at once.
start() {
    local tag=$1
    shift
    ((stopping)) && return 1
    (
        trap 'exit 143' TERM
        me=$BASHPID
        # end.PID: the status and the time the process itself ended, before
        # sed has drained its output: for exit_status, should bash lose the
        # job, and for note_failure, which names the first to end.
        # A usage line (THE USAGE LINE, lib.sh) goes to usage.TAG instead:
        # note_failure says it, alone, when the process exits 64.
        { "$@" </dev/null; s=$?; echo "$s $EPOCHREALTIME" >"$dir/end.$me"; exit "$s"; } 2>&1 |
            (trap '' TERM; exec sed -u -e "/^[a-z_]*: .*; see [a-z_]* --help\$/{w $dir/usage.$tag" -e 'd;}' \
                -e "s/^/$tag| /") >&2
        exit "${PIPESTATUS[0]}"
    ) &
    alive[$!]=$tag
    ((stopping)) && kill -TERM -- "-$!" 2>/dev/null
    return 0
}

# exit_status PID ST: the exit status of job PID, given what wait said
# (ST). wait answers 127 when bash has already reaped the job and dropped
# it from its table (with job control on it can, when the job ends while
# the script runs something else); the job's end file (start) says then
# how it ended, and only a job that left none (killed before it could
# write it) counts as killed.
exit_status() {
    local s t
    if (($2 == 127)); then
        if [[ -s $dir/end.$1 ]] && read -r s t <"$dir/end.$1" && [[ $s =~ ^[0-9]+$ ]]; then
            echo "$s"
        else
            echo 137
        fi
    else
        echo "$2"
    fi
}

# stop_all: SIGTERM every job still running; SIGKILL after GRACE_S.
stop_all() {
    ((stopping)) && return
    stopping=1
    for p in "${!alive[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
    now_us
    grace_at=$((now + GRACE_S * 1000000))
}

on_signal() {
    interrupted=1
    say "interrupted; stopping the job"
    stop_all
}
trap on_signal INT TERM


# note_failure TAG STATUS: the first process to fail is the one named.
# Bash may reap a consequence before its cause (the server that exits
# because a worker died, reaped before that worker), so the failure named
# is, among those whose end.PID file (start) is there a moment later, one
# killed by a signal before one that exited, then the first to end; TAG
# when none has a file.
fail_tag="" fail_st=0 usage_said=0
note_failure() {
    local why p t s best=""
    ((stopping)) || [[ -n $fail_tag ]] && return
    fail_tag=$1 fail_st=$2
    sleep 0.3
    for p in "${!alive[@]}" "${3-}"; do
        [[ -n $p && -s $dir/end.$p ]] && read -r s t <"$dir/end.$p" || continue
        [[ $s =~ ^[0-9]+$ ]] && ((s != 0)) || continue
        # A process killed by a signal is a cause; one that exits non-zero
        # may be reacting to it (and, on a loaded machine, stamp its end
        # first): signals rank before exits, then the earlier end.
        t="$((s > 128 ? 0 : 1)) $t"
        if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { split(a, x, " "); split(b, y, " ");
                exit !(x[1] < y[1] || (x[1] == y[1] && x[2] < y[2])) }'; then
            best=$t fail_st=$s fail_tag=${alive[$p]:-$1}
        fi
    done
    why="exit status $fail_st"
    ((fail_st > 128)) && why="killed by SIG$(kill -l $((fail_st - 128)) 2>/dev/null || echo $((fail_st - 128)))"
    # A usage error of a program is its one line, as if typed to it.
    if ((fail_st == 64)) && [[ -s $dir/usage.$fail_tag ]]; then
        head -n 1 "$dir/usage.$fail_tag" >&2
        usage_said=1
    else
        say "$fail_tag failed first ($why); stopping the job"
    fi
    stop_all
}

# wait_port FILE PID TAG: sets port to the port a listener wrote to FILE.
# Returns 1 when the process exited first (reaped and named here; exiting
# 0 without a port counts as a failure too) or PORT_WAIT_S passed.
wait_port() {
    local file=$1 pid=$2 tag=$3 t0=$SECONDS st
    while :; do
        if [[ -s $file ]] && read -r port <"$file" && [[ $port =~ ^[0-9]+$ ]]; then
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid"
            st=$(exit_status "$pid" $?)
            unset "alive[$pid]"
            ((st == 0)) && say "$tag exited without writing its port file ($file)"
            note_failure "$tag" $((st == 0 ? 1 : st)) "$pid"
            return 1
        fi
        ((interrupted)) && return 1
        now_us
        ((now >= limit_at)) && return 1    # the time limit: the loop below says so
        if ((SECONDS - t0 >= PORT_WAIT_S)); then
            note_failure "$tag" 1
            say "($tag wrote no port file $file within $PORT_WAIT_S s)"
            return 1
        fi
        sleep 0.02
    done
}

now_us
limit_at=$((now + $(usec "$time_limit")))

started=1
if [[ $mode == ps ]]; then
    declare -a srv_pids=()
    for ((i = 0; i < nsrv; i++)); do
        read -ra shard <<<"${srv_part[i]}"
        onhost=()
        ((srv_host[i] >= 0)) && onhost=(--link-host "$dir/host.${srv_host[i]}" --local-worker "${srv_host[i]}")
        wrap_prefix ${srv_on[i]}
        start "server$i" "${pre[@]}" "$PSR_BIN/ps_server" --listen "$(hostport "${srv_addr[i]}" 0)" \
            --port-file "$dir/port.$i" --workers "$K" "${shard[@]}" "${onhost[@]}" "${common[@]}" \
            "${srv_extra[@]}" --csv "$dir/rec.server.$i" || { started=0; break; }
        srv_pids+=($!)
    done
    list=""
    for ((i = 0; started && i < nsrv; i++)); do
        if ! wait_port "$dir/port.$i" "${srv_pids[$i]}" "server$i"; then
            started=0
            break
        fi
        list+="${list:+,}$(hostport "${srv_addr[i]}" "$port")"
    done
    if ((started)); then
        for ((r = 0; r < K; r++)); do
            onhost=()
            ((ncoloc)) && onhost=(--link-host "$dir/host.$r" --local-server "$r")
            wrap_prefix worker "$r"
            start "worker$r" "${pre[@]}" "$PSR_BIN/ps_worker" --rank "$r" --world "$K" --server "$list" \
                "${onhost[@]}" "${common[@]}" "${wrk_extra[@]}" --csv "$dir/rec.worker.$r" || break
        done
    fi
else
    # adv: --advertise for a wrapped rank; unwrapped ranks keep the default.
    adv=()
    [[ -n $wrap ]] && adv=(--advertise "${rank_addr[0]}")
    wrap_prefix rank 0
    start rank0 "${pre[@]}" "$PSR_BIN/ring_worker" --rank 0 --world "$K" \
        --coordinator "$(hostport "${rank_addr[0]}" 0)" "${adv[@]}" \
        --port-file "$dir/coord.port" "${common[@]}" "${wrk_extra[@]}" --csv "$dir/rec.rank.0" || started=0
    r0=$!
    # A ring of one opens no coordinator (nothing to meet), so it writes
    # no port file: there is nobody else to start.
    if ((!started || K == 1)); then
        :
    elif wait_port "$dir/coord.port" "$r0" rank0; then
        coord=$(hostport "${rank_addr[0]}" "$port")
        for ((r = 1; r < K; r++)); do
            [[ -n $wrap ]] && adv=(--advertise "${rank_addr[r]}")
            wrap_prefix rank "$r"
            start "rank$r" "${pre[@]}" "$PSR_BIN/ring_worker" --rank "$r" --world "$K" \
                --coordinator "$coord" "${adv[@]}" "${common[@]}" "${wrk_extra[@]}" \
                --csv "$dir/rec.rank.$r" || break
        done
    else
        started=0
    fi
fi
# (A start that failed has stopped the job already, or the time limit has
# passed and the loop below says so.)

# ------------------------------------------------------------ reaping
# gone_jobs: reap the jobs whose process is gone (bash may have dropped
# them from its table: then only their status file tells how they ended,
# exit_status).
gone_jobs() {
    local p st
    for p in "${!alive[@]}"; do
        kill -0 "$p" 2>/dev/null && continue
        wait "$p" 2>/dev/null
        st=$(exit_status "$p" $?)
        ((st != 0)) && note_failure "${alive[$p]}" "$st" "$p"
        unset "alive[$p]"
    done
}

# THE REAPING LOOP polls: every 50 ms (a read with a timeout on a FIFO
# nobody writes, so nothing is forked) it reaps the jobs whose process is
# gone (gone_jobs) and looks at the time limit and the grace period. It
# does not sleep in `wait -n`: with job control on, bash may drop a job
# that ended from its table before `wait -n` asks for it (timer jobs
# included), and `wait -n` then slept until the time limit; a ^C at that
# moment left the job's script waiting minutes for nothing.
timed_out=0
rm -f "$dir/poll"
mkfifo "$dir/poll" && exec {pollfd}<>"$dir/poll" || { say "cannot make $dir/poll"; exit 1; }
while ((${#alive[@]} > 0)); do
    read -r -t 0.05 -u "$pollfd" _     # (no redirection here: a trap that runs
                                        # during the read would write through it)
    gone_jobs
    now_us
    if ((!stopping && now >= limit_at)); then
        timed_out=1
        say "time limit of $time_limit s reached; stopping the job"
        stop_all
    fi
    if ((grace_at && now >= grace_at && ${#alive[@]} > 0)); then
        grace_at=0
        for p in "${!alive[@]}"; do
            say "${alive[$p]} still running ${GRACE_S} s after SIGTERM; SIGKILL"
            kill -KILL -- "-$p" 2>/dev/null
        done
        wait "${!alive[@]}" 2>/dev/null     # their statuses no longer matter
        alive=()
    fi
done
exec {pollfd}<&-

if ((interrupted)); then exit 130; fi
if ((timed_out)); then exit 124; fi
if [[ -n $fail_tag ]]; then
    ((fail_st == 64)) && exit 64
    exit 1
fi
if ((!started)); then
    exit 1
fi

# One row per message size: a ring bench sweep writes one record per size
# and rank (rec.rank.R.SIZE, common/coll/bench.c), every other job one
# record per process (rec.ROLE.I). Each size is merged on its own, the
# sizes in increasing order; stdout gets the header once.
if [[ $mode == ps ]]; then recs=("$dir"/rec.server.* "$dir"/rec.worker.*); else recs=("$dir"/rec.rank.*); fi
sizes=()
for f in "${recs[@]}"; do
    [[ ${f##*/} =~ ^rec\.rank\.[0-9]+\.([0-9]+)$ ]] && sizes+=("${BASH_REMATCH[1]}")
done
merge_out=()
[[ -n $csv_out ]] && merge_out=(--out "$csv_out")
if [[ -n $json_out ]]; then
    {
        echo "command: $launch_cmd"
        echo "git: $(git_rev)"
        echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) online"
        echo "mode: $mode"
        echo "K: $K"
        echo "bind: $bind_str"
    } >"$dir/manifest.txt"
    merge_out+=(--json-out "$json_out" --manifest "$dir/manifest.txt")
fi
[[ $mode == ps ]] && merge_out+=(--placement "$placement")
if ((${#sizes[@]} == 0)); then
    "$PSR_BIN/psr_merge" "${merge_out[@]}" "${recs[@]}" || { say "merging the records failed"; exit 1; }
    exit 0
fi
# The CSV row and rank 0's table (common/coll/bench.c) measure two things:
# say which is which, next to the table.
say "--bench: each CSV row's time_s (algbw, busbw) is the median over the timed calls of the slowest rank's call; rank0's table above is the slowest rank's loop / calls, a mean"
first=1
for n in $(printf '%s\n' "${sizes[@]}" | sort -nu); do
    group=("$dir"/rec.rank.*."$n")
    if ((${#group[@]} != K)); then
        say "size $n: ${#group[@]} records, want one per rank ($K)"
        exit 1
    fi
    row=$("$PSR_BIN/psr_merge" "${merge_out[@]}" "${group[@]}") ||
        { say "merging the records of size $n failed"; exit 1; }
    if [[ -z $csv_out ]]; then
        if ((first)); then printf '%s\n' "$row"; else printf '%s\n' "$row" | tail -n +2; fi
    fi
    first=0
done
exit 0
