#!/usr/bin/env bash
# slurm_local.sh -- a one-machine Slurm, started from Debian's packages
# (munge, slurmctld, slurmd), that runs psring's two jobs through srun and
# checks their weights against the big-batch reference, then is torn down.
#
#   experiments/slurm_local.sh [--K K] [--servers S] [--only ring|ps]
#                              [--batch] [--keep] [--time-limit SECONDS]
#                              [COMMON FLAGS]
#
# What it starts, all in a temporary folder of its own ($TMPDIR/psr-slurm.*,
# the HOST's /etc/slurm, /etc/munge and /run are neither read nor written):
#   munged      its own key (1024 random bytes) and socket in the folder
#   slurmctld   -D, a slurm.conf in the folder (SLURM_CONF points there,
#               for srun, sinfo, scontrol and scancel as well)
#   slurmd      -D, one node on 127.0.0.1 with CPUs = max(8, K + S) (the
#               packaged Slurm has no multiple-slurmd: one node holds every
#               task), no cgroups: ProctrackType=proctrack/linuxproc,
#               TaskPlugin=task/none, SlurmdParameters=config_overrides
# on ports it finds free (a block of 48 that nothing uses).
#
# Then, with the job's secret (32 random bytes, hex, a 0600 file: the
# --secret-file of every process, docs/security.md):
#   ring  srun -n K bin/ring_worker COMMON --weights-out DIR/ring.w: each
#         rank takes its rank and world from SLURM_PROCID/SLURM_NTASKS; rank
#         0 is the coordinator, listening on MASTER_ADDR:MASTER_PORT, which
#         srun hands to every task in the environment it exports (here
#         127.0.0.1 and a free port; on a cluster the allocation's first
#         node, docs/cluster.md)
#   ps    srun -n K+S --multi-prog DIR/ps.conf: tasks 0..S-1 are the
#         servers (ps_server --listen 127.0.0.1:PORT_I --shard I/S), tasks
#         S..S+K-1 the workers (ps_worker --rank %o --world K: %o is the
#         task's offset in its line, so worker ranks are 0..K-1 whatever
#         SLURM_PROCID says)
# and compares every rank's and worker's weights with rank 0's (byte for
# byte) and with bin/reference COMMON's (within 1e-12 relative; exact with
# the synthetic workload). With --batch, the cluster recipes of
# docs/cluster.md as well: sbatch experiments/slurm/ring.sbatch and
# ps.sbatch (MASTER_ADDR from the allocation's node list, data ports on
# 0.0.0.0), their weights checked the same way.
#
# Teardown, on success, failure, ^C or SIGTERM alike: srun is stopped, the
# controller's jobs cancelled, then slurmd, slurmctld and munged (by the
# PIDs it started, SIGTERM, SIGKILL after 3 s), and the folder removed
# (kept with --keep). Exit status: 0 both jobs ran and matched; 1 a job
# failed or its weights did not match; 2 Slurm or munge is not installed
# or did not start; 64 usage; 124 the time limit; 130 interrupted.
set -u
here=$(cd "$(dirname "$0")" && pwd)
prog=slurm_local.sh
. "$here/lib.sh"

usage() {
    cat <<'EOF'
usage: experiments/slurm_local.sh [options] [COMMON FLAGS...]

Start a one-machine Slurm (munged, slurmctld, slurmd on 127.0.0.1, config
and state in a temporary folder), run the ring (srun -n K ring_worker) and
the parameter server (srun --multi-prog: S servers, K workers) through srun,
check every rank's weights against bin/reference's, and tear it all down.
COMMON FLAGS (default --steps 20) go to every program and to bin/reference.

options:
  --K K                  ranks / workers (default 4)
  --servers S            parameter servers (default 2)
  --only ring|ps         run one of the two jobs
  --batch                also run them as batch jobs: sbatch
                         experiments/slurm/ring.sbatch and ps.sbatch (the
                         recipes of docs/cluster.md)
  --keep                 keep the folder (logs, slurm.conf, weights); say where
  --time-limit SECONDS   stop everything after this long (default 120)
  --help                 print this help

Needs: Debian's slurm-wlm (or slurmctld slurmd slurm-client) and munge;
root (slurmd starts the tasks). Exit status: 0 both jobs matched the
reference; 1 a job failed or its weights did not; 2 Slurm/munge missing or
not started; 64 usage; 124 time limit; 130 interrupted.
EOF
}

need_bash51
help_or_version "$@"

K=4 S=2 only="" keep=0 batch=0 time_limit=120
common=()
while (($# > 0)); do
    case ${1%%=*} in
    --K | --servers | --only | --time-limit)
        opt_value "$@"
        case $name in
        --K) K=$val ;;
        --servers) S=$val ;;
        --only) only=$val ;;
        --time-limit) time_limit=$val ;;
        esac
        shift $((1 + extra))
        ;;
    --keep) keep=1; shift ;;
    --batch) batch=1; shift ;;
    *) common+=("$1"); shift ;;
    esac
done
[[ $K =~ ^[1-9][0-9]{0,2}$ ]] && ((K <= 256)) || usage_error --K "$K" "not a rank count 1..256"
[[ $S =~ ^[1-9][0-9]{0,1}$ ]] && ((S <= 16)) || usage_error --servers "$S" "not a server count 1..16"
[[ -z $only || $only == ring || $only == ps ]] || usage_error --only "$only" "not ring or ps"
[[ $time_limit =~ ^[1-9][0-9]{0,4}$ ]] || usage_error --time-limit "$time_limit" "not whole seconds 1..99999"
((${#common[@]})) || common=(--steps 20)
for a in "${common[@]}"; do
    case ${a%%=*} in
    --rank | --world | --coordinator | --server | --listen | --port-file | --workers | --shard | \
        --weights-out | --secret-file)
        die_usage "$a: set by slurm_local.sh itself" ;;
    esac
done

need_programs reference ring_worker ps_server ps_worker
flags_check ring_worker "${common[@]}"
for c in munged slurmctld slurmd srun sbatch sinfo scontrol scancel squeue; do
    command -v "$c" >/dev/null 2>&1 ||
        { say "no '$c' on PATH: install Debian's slurm-wlm and munge (apt-get install slurm-wlm munge)"; exit 2; }
done
# (Tried as root only: slurmd starts each task as its user, which needs root.)
[[ $(id -u) == 0 ]] || { say "slurmd must run as root (it starts the tasks as their user): run as root"; exit 2; }
# slurmd (22.05) initializes its cgroup plugin whatever ProctrackType says,
# and fails without a cgroup filesystem at /sys/fs/cgroup (a chroot whose
# /sys was bind-mounted without its submounts, some containers).
awk '$2 ~ /^\/sys\/fs\/cgroup(\/|$)/ && $3 ~ /^cgroup/ { found = 1 } END { exit !found }' /proc/mounts ||
    { say "slurmd needs a cgroup filesystem at /sys/fs/cgroup and there is none here (a chroot or a container?): run on the host, or mount one (mount -t cgroup2 none /sys/fs/cgroup)"; exit 2; }

# ------------------------------------------------------------ teardown
tmp="" interrupted=0 job_pid=""
declare -a daemons=()           # "NAME PID", in the order started
# stop_pid PID: SIGTERM, then SIGKILL after 3 s; reaped.
stop_pid() {
    local i
    kill -TERM "$1" 2>/dev/null || { wait "$1" 2>/dev/null; return 0; }
    for ((i = 0; i < 60; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    return 0
}
teardown() {
    local i d
    trap '' INT TERM
    [[ -n $job_pid ]] && stop_pid "$job_pid"
    # The controller's own jobs (SLURM_CONF is ours: no other cluster's),
    # cancelled while slurmd still runs to end their tasks.
    if ((${#daemons[@]} >= 2)) && kill -0 "${daemons[1]#* }" 2>/dev/null &&
        [[ -n $(squeue -h -o %i 2>/dev/null) ]]; then
        scancel --quiet $(squeue -h -o %i 2>/dev/null) 2>/dev/null
        for ((i = 0; i < 60; i++)); do
            [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
            sleep 0.05
        done
    fi
    for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
        d=${daemons[i]}
        stop_pid "${d#* }"
    done
    daemons=()
    if [[ -n $tmp ]]; then
        if ((keep)); then say "kept $tmp"; else rm -rf "$tmp"; fi
    fi
}
trap teardown EXIT
trap 'interrupted=1; say "interrupted; tearing Slurm down"; exit 130' INT TERM

tmp=$(mktemp -d "${TMPDIR:-/tmp}/psr-slurm.XXXXXX") || { say "cannot make a temporary folder"; exit 2; }
# munged wants every folder above its socket searchable by all; where one
# above is not (a private TMPDIR), --force makes that a warning: the
# clients here (srun, slurmctld, slurmd) run as this user.
chmod 755 "$tmp"
mkdir -p "$tmp/state" "$tmp/spool" || exit 2

# ------------------------------------------------------------ free ports
# free_block: the first port of a block of 48 in 20000..58399 where no
# local TCP socket is (any state, /proc/net/tcp and tcp6), tried at random;
# 0 if none.
free_block() {
    # Below the kernel's ephemeral range, where no outgoing connection
    # (srun's, slurmd's) can take a port of the block after it was chosen.
    local low=32768
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
    awk -v seed="$SRANDOM" -v low="$low" '
        function hex(s,   i, n) {
            n = 0
            for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789ABCDEF", substr(s, i, 1)) - 1
            return n
        }
        FNR > 1 { split($2, a, ":"); used[hex(a[2])] = 1 }
        END {
            srand(seed)
            for (t = 0; t < 200; t++) {
                b = 10000 + int(rand() * int((low - 10000) / 48 - 1)) * 48
                for (p = b; p < b + 48 && !(p in used); p++) ;
                if (p == b + 48) { print b; exit }
            }
            print 0
        }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
base=$(free_block)
((base)) || { say "no block of 48 free TCP ports found"; exit 2; }
# srun's jobs: MASTER_PORT base+2, servers base+16..; sbatch's: base+3, base+32..
ctld_port=$base slurmd_port=$((base + 1)) master_port=$((base + 2)) srv_port0=$((base + 16))

# ------------------------------------------------------------ munge
(umask 077 && head -c 1024 /dev/urandom >"$tmp/munge.key") || exit 2
(umask 077 && od -An -vtx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/secret" && echo >>"$tmp/secret") || exit 2
sock=$tmp/munge.sock
# start_daemon NAME CMD...: CMD in a session of its own (a terminal's ^C
# reaches this script, which stops it), stdout/stderr to NAME.out.
start_daemon() {
    local name=$1
    shift
    setsid "$@" </dev/null >"$tmp/$name.out" 2>&1 &
    daemons+=("$name $!")
}
# alive NAME: the daemon still runs? else says so with its last lines.
alive() {
    local d
    for d in "${daemons[@]}"; do
        [[ ${d% *} == "$1" ]] || continue
        kill -0 "${d#* }" 2>/dev/null && return 0
    done
    say "$1 exited: $(tail -n 3 "$tmp/$1.out" "$tmp/$1.log" 2>/dev/null | tr '\n' ' ')"
    return 1
}
start_daemon munged munged --foreground --force --socket="$sock" --key-file="$tmp/munge.key" \
    --log-file="$tmp/munged.log" --pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed"
for ((i = 0; i < 100; i++)); do
    [[ -S $sock ]] && break
    alive munged || exit 2
    sleep 0.05
done
[[ -S $sock ]] || { say "munged made no socket within 5 s: $(tail -n 3 "$tmp/munged.out")"; exit 2; }

# ------------------------------------------------------------ slurm
host=$(hostname -s)
cpus=$((K + S > 8 ? K + S : 8))
cat >"$tmp/slurm.conf" <<EOF
# psring's one-machine Slurm (experiments/slurm_local.sh): everything in $tmp
ClusterName=psring
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
PlugStackConfig=$tmp/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=psring Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
: >"$tmp/plugstack.conf"
export SLURM_CONF=$tmp/slurm.conf
t0=$EPOCHREALTIME
start_daemon slurmctld slurmctld -D -i -f "$SLURM_CONF"
start_daemon slurmd slurmd -D -f "$SLURM_CONF" -N "$host"
state=""
for ((i = 0; i < 300; i++)); do
    alive slurmctld && alive slurmd || exit 2
    state=$(sinfo -h -n "$host" -o %t 2>/dev/null)
    [[ $state == idle ]] && break
    sleep 0.05
done
[[ $state == idle ]] || { say "node $host not idle within 15 s (sinfo: '$state'); see --keep's slurmctld.log, slurmd.log"; exit 2; }
say "Slurm up in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s: node $host, CPUs=$cpus, slurmctld :$ctld_port, slurmd :$slurmd_port, SLURM_CONF=$SLURM_CONF"

# ------------------------------------------------------------ the jobs
deadline=$((SECONDS + time_limit))
# run_job NAME CMD...: CMD (an srun, the reference) under the time limit
# left, output in NAME.out; its status. In the background, so that a
# signal's trap runs at once (bash runs none while a foreground command
# runs).
run_job() {
    local name=$1 left=$((deadline - SECONDS))
    shift
    ((left > 0)) || return 124
    timeout -k 3 "$left" "$@" </dev/null >"$tmp/$name.out" 2>&1 &
    job_pid=$!
    wait "$job_pid"
    local st=$?
    job_pid=""
    return $st
}

# run_batch NAME SBATCH-ARGS...: sbatch a job (output in NAME.job, run in
# the folder) and wait for its end, polling every 50 ms: sbatch --wait polls
# at 2 s, 4 s, ... (seconds of nothing here). Its status: the job's exit
# code, 124 at the time limit.
run_batch() {
    local name=$1 id info st
    shift
    id=$(sbatch --parsable --chdir="$tmp" --output="$tmp/$name.job" "$@" 2>"$tmp/$name.out") ||
        { cat "$tmp/$name.out" >&2; return 1; }
    id=${id%%;*}
    while :; do
        info=$(scontrol -o show job "$id" 2>/dev/null)
        [[ $info =~ JobState=(PENDING|CONFIGURING|RUNNING|COMPLETING) ]] || break
        ((SECONDS < deadline)) || { scancel "$id" 2>/dev/null; return 124; }
        sleep 0.05
    done
    [[ $info =~ JobState=COMPLETED ]] && return 0
    st=1
    [[ $info =~ ExitCode=([0-9]+): ]] && ((BASH_REMATCH[1] != 0)) && st=${BASH_REMATCH[1]}
    echo "job $id: ${info//*JobState=/JobState=}" | cut -c1-200 >>"$tmp/$name.out"
    return "$st"
}

# reference: bin/reference's weights in ref.0 (run once, when first needed:
# after the first job, so that a long job is under srun at once).
reference() {
    [[ -s $tmp/ref.0 ]] && return 0
    run_job ref "$PSR_BIN/reference" "${common[@]}" --weights-out "$tmp/ref"
    case $? in
    0) ;;
    124) say "bin/reference: stopped at the time limit (--time-limit $time_limit)"; exit 124 ;;
    *) say "bin/reference ${common[*]}: $(tail -n 2 "$tmp/ref.out")"; exit 1 ;;
    esac
}

# check_weights NAME PREFIX N: PREFIX.0 .. PREFIX.N-1 all the same bytes,
# and within 1e-12 relative of the reference's; says which.
check_weights() {
    local name=$1 pre=$2 n=$3 r how
    for ((r = 0; r < n; r++)); do
        [[ -s $pre.$r ]] || { say "$name: rank $r wrote no weights ($pre.$r)"; return 1; }
        cmp -s "$pre.0" "$pre.$r" || { say "$name: rank $r's weights differ from rank 0's"; return 1; }
    done
    if cmp -s "$pre.0" "$tmp/ref.0"; then
        how="exactly the reference's"
    elif awk 'NR == FNR { ref[FNR] = $1; n = FNR; next }
              { m = FNR; d = $1 - ref[FNR]; if (d < 0) d = -d; b = ref[FNR]; if (b < 0) b = -b
                if (b < 1e-300) b = 1e-300; if (d > 1e-12 * b) bad++ }
              END { exit !(m == n && n > 0 && !bad) }' "$tmp/ref.0" "$pre.0"; then
        how="the reference's within 1e-12 relative"
    else
        say "$name: weights not within 1e-12 of bin/reference's: $(paste "$pre.0" "$tmp/ref.0" | head -n 2 | tr '\n\t' '  ')"
        return 1
    fi
    echo "$how"
}
# job_done LABEL NAME STATUS T0 N: a line saying how job NAME (output in
# NAME.out, weights NAME.w.R for N ranks) went; returns, or exits.
job_done() {
    local label=$1 name=$2 st=$3 dt
    dt=$(awk -v a="$4" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    if ((st == 124)); then
        say "$label: stopped at the time limit (--time-limit $time_limit)"; exit 124
    elif ((st != 0)); then
        say "$label: exit status $st after $dt s:"
        tail -n 8 "$tmp/$name.out" ${tmp:+$(ls "$tmp/$name.job" 2>/dev/null)} >&2
        exit 1
    fi
    reference
    how=$(check_weights "$label" "$tmp/$name.w" "$5") || exit 1
    say "$label: ok in $dt s, every rank's weights $how"
}

# Rank discovery takes torchrun's, Open MPI's and MPICH's variables before
# Slurm's (docs/design.md): none may leak in from the caller through srun.
unset RANK WORLD_SIZE LOCAL_RANK OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE \
    OMPI_COMM_WORLD_LOCAL_RANK PMI_RANK PMI_SIZE MPI_LOCALRANKID PSRING_SECRET
if [[ $only != ps ]]; then
    # The coordinator's address reaches every task through srun's exported
    # environment (--export=ALL, srun's default).
    export MASTER_ADDR=127.0.0.1 MASTER_PORT=$master_port
    t1=$EPOCHREALTIME
    run_job ring srun -n "$K" --kill-on-bad-exit=1 "$PSR_BIN/ring_worker" "${common[@]}" \
        --timeout 20 --secret-file "$tmp/secret" --weights-out "$tmp/ring.w"
    job_done "ring K=$K (srun -n $K ring_worker)" ring $? "$t1" "$K"
    grep -q "rank 0 of $K (rank from slurm)" "$tmp/ring.out" ||
        { say "ring: rank 0 did not take its rank from Slurm: $(head -n 3 "$tmp/ring.out")"; exit 1; }
    unset MASTER_ADDR MASTER_PORT
fi
if [[ $only != ring ]]; then
    servers=""
    for ((i = 0; i < S; i++)); do servers+="${servers:+,}127.0.0.1:$((srv_port0 + i))"; done
    q=$(printf ' %q' "${common[@]}")
    {
        echo "# slurm_local.sh: $S servers (tasks 0-$((S - 1))), $K workers (tasks $S-$((S + K - 1)))"
        for ((i = 0; i < S; i++)); do
            echo "$i $PSR_BIN/ps_server --listen 127.0.0.1:$((srv_port0 + i)) --workers $K --shard $i/$S$q --timeout 20 --secret-file $tmp/secret"
        done
        echo "$S-$((S + K - 1)) $PSR_BIN/ps_worker --rank %o --world $K --server $servers$q --timeout 20 --secret-file $tmp/secret --weights-out $tmp/ps.w"
    } >"$tmp/ps.conf"
    t1=$EPOCHREALTIME
    run_job ps srun -n $((S + K)) --kill-on-bad-exit=1 --multi-prog "$tmp/ps.conf"
    job_done "ps K=$K S=$S (srun -n $((S + K)) --multi-prog)" ps $? "$t1" "$K"
fi
if ((batch)); then
    # The recipes of docs/cluster.md as written, the environment they read
    # exported (sbatch passes the caller's on), run in the folder.
    export PSR_BIN PSR_SECRET_FILE=$tmp/secret
    if [[ $only != ps ]]; then
        t1=$EPOCHREALTIME
        MASTER_PORT=$((base + 3)) run_batch bring --ntasks="$K" "$root/experiments/slurm/ring.sbatch" \
            "${common[@]}" --timeout 20 --weights-out "$tmp/bring.w"
        job_done "ring K=$K (sbatch experiments/slurm/ring.sbatch)" bring $? "$t1" "$K"
    fi
    if [[ $only != ring ]]; then
        t1=$EPOCHREALTIME
        PSR_SERVERS=$S PSR_PORT=$((base + 32)) run_batch bps --ntasks=$((S + K)) "$root/experiments/slurm/ps.sbatch" \
            "${common[@]}" --timeout 20 --weights-out "$tmp/bps.w"
        job_done "ps K=$K S=$S (sbatch experiments/slurm/ps.sbatch)" bps $? "$t1" "$K"
    fi
fi
exit 0
