# experiments/lib.sh -- the shell helpers the experiment scripts share.
#
# Sourced, never run: every script finds it next to itself,
#     here=$(cd "$(dirname "$0")" && pwd); . "$here/lib.sh"
# which also sets root (the repository) and PSR_BIN (the programs, default
# root/bin), exported for the scripts and launchers it runs.
# POSIX sh (bench_ring.sh runs under sh), plus `local`, which dash and bash
# both have. Messages start with "$prog: " where the script sets prog
# (its file name otherwise).
#
#   say MSG...                MSG on stderr, after "$prog: "
#   die_usage MSG...          "MSG; see PROG --help" on stderr, exit 64
#   usage_error FLAG VALUE WHY  THE USAGE LINE (below) for FLAG VALUE, exit 64
#   flags_check PROG ARGS...  bin/PROG's parser over ARGS; a bad one is its
#                             usage line, exit 64
#   median                    the median of the numbers on stdin; nan if none
#   run_stats FILE SIZE       "median min-max" of the "bytes time" lines of
#                             FILE for SIZE; "nan -" if none (the benches)
#   mpi_peer_ready PEERS TMP  mpirun.openmpi and PEERS/mpi_coll there (built if not)?
#                             else status 1 and a '#' line saying why
#   mpi_tcp NP ARGS...        mpirun.openmpi -np NP ARGS, Open MPI on TCP over lo
#   ompi_forced COLL          the Open MPI configuration the benches run
#                             beside its default for COLL: sets forced (its
#                             label: ompi_ring, ...), forced_mca (mpirun's
#                             --mca arguments), forced_flags (mpi_coll's)
#   ompi_ran_as CONFIG OUT    mpi_coll's output OUT shows CONFIG's settings
#                             (ompi_default or ompi_forced's)? else a line
#                             on stderr and status 1
#   ompi_summary FILE LABEL [PEER NAME]
#                             '#' lines summing up a bench table's rows:
#                             per group, the ratio against the peer's (Open
#                             MPI's, or PEER's: mpich) better configuration
#                             and which one it was
#   mpich_peer_ready PEERS TMP  mpirun.mpich and PEERS/mpi_coll.mpich there
#                             (built if not)? else status 1 and a '#' line
#   mpich_tcp NP SETTING OUT ARGS...
#                             mpirun.mpich -np NP ARGS > OUT, MPICH on TCP
#                             over lo ($mpich_switches), SETTING (VAR=VALUE
#                             or defaults) in the environment
#   mpich_forced COLL         MPICH's forced configurations for COLL: sets
#                             mpich_configs ("label=MPIR_CVAR_...=value" words)
#   mpich_ran_as CONFIG OUT   mpi_coll.mpich's output OUT shows CONFIG's setting?
#   size_bytes SIZE           4096, 4K, 4KiB, 16M, 1G -> bytes (powers of
#                             1024); fails, printing nothing, on anything else
#   job WHAT OUT ERR CMD...   run CMD, stdout to OUT, stderr to ERR; when it
#                             fails, say so with ERR's last 3 lines; its status.
#                             WHAT goes into jobs_done (finished, failed or
#                             not) and is job_now while it runs
#   csv_awk [-v V=X]... PROG FILE...
#                             awk -F, over CSV files that start with a header:
#                             c["name"] is the column of that name (read from
#                             each file's first line), so PROG says
#                             $c["time_s"], never $7; the header line itself
#                             reaches PROG too (FNR == 1)
#   csv_col CSV NAME          column NAME of the first row under the header
#   cpu_busy RECORD...        the share of the machine's CPUs the processes
#                             of a job used in its timed steps (the records'
#                             cpu_s, wall_s, ncpu; see common/measure/metrics.h)
#   opt_value ARG...          for a flag that takes a value ("--f V" or
#                             "--f=V"): name (--f), val (V) and extra (how
#                             many more arguments it used: 0 or 1, to shift);
#                             exit 64 when no value follows or it is empty
#                             (but --server-args/--worker-args "": none)
#   need_bash51               exit 64 unless this is bash 5.1 or newer
#   help_or_version ARG...    --help/-h: usage, exit 0; --version: exit 0
#   csv_table CSV             the CSV as aligned columns
#   progress MSG              on a terminal, MSG on stderr in place of the
#                             last progress line (nothing otherwise)
#   done_line MSG             MSG on stderr, a line of its own (clearing a
#                             progress line on a terminal)
#   elapsed                   the seconds since $t_start, as "12s"
#   stop_on_interrupt [TITLE CMDLINE]
#                             ^C (SIGINT) or SIGTERM: every process this
#                             script started gets SIGTERM at once (SIGKILL
#                             what is left 1 s later), then, given TITLE,
#                             $out/manifest.txt says "interrupted" and the
#                             jobs that had finished; exit 130
#   need_programs NAME...     exit 2, saying so, unless $PSR_BIN/NAME is
#                             there for every NAME (gnuplot: on the PATH)
#   make_out SUB...           out, default results/<date-time>, with the
#                             folders out/SUB; exit 2 when it cannot
#   manifest DIR TITLE COMMAND [CPU-NOTE] < BODY
#                             DIR/manifest.txt: "# psring lab manifest"
#                             TITLE, the command line, the date, the git
#                             revision, the CPU (CPU-NOTE appended), BODY's
#                             lines, then every job's command line
#                             (DIR/commands.txt); then json_beside DIR
#   git_rev                   the commit ("c0e4fc0", " (modified)" added
#                             when the tree differs; without .git, PSR_GIT
#                             or "unknown")
#   json_beside DIR           NAME.json beside every NAME.csv under DIR
#                             (bin/psr_json: JSON Lines, the nearest
#                             manifest.txt at or above the CSV's folder,
#                             within DIR, as the manifest line); 1, saying
#                             which, when one could not be written
#   note_command TAG CMD...   "TAG: CMD", shell-quoted, appended to
#                             $out/commands.txt (what manifest lists)

say() {
    host_msg "${prog:-${0##*/}}: $*" >&2
}

# host_msg TEXT: TEXT on one line, with $root/results written as
# PSR_HOST_RESULTS when that is set. In a container (Dockerfile) the results
# folder is the host's through a volume; the messages then name the folder
# the user can open, not /psring/results. Files (manifest, commands.txt)
# keep the paths the jobs really ran with.
host_msg() {
    local s=$1
    [ -n "${PSR_HOST_RESULTS-}" ] && s=${s//"$root/results"/"$PSR_HOST_RESULTS"}
    printf '%s\n' "$s"
}

root=$(cd "$here/.." && pwd)
: "${PSR_BIN:=$root/bin}"
export PSR_BIN

# THE USAGE LINE (common/base/cli.h, the programs' too): one line, exit 64,
#     PROG: --flag VALUE: why; see PROG --help
# usage_error FLAG VALUE WHY says it (VALUE bare when it is a plain word,
# else in single quotes); die_usage MSG, "MSG; see PROG --help", for the
# errors without one value (a missing value, an unknown option, a clash).
die_usage() {
    local p=${prog:-${0##*/}}
    echo "$p: $*; see $p --help" >&2
    exit 64
}

shown_value() {
    case $1 in
    '' | *[!A-Za-z0-9._:/,+@%=^~-]*) printf "'%s'" "$(printf '%.40s' "$1" | tr -c '[:print:]' '?')" ;;
    *) printf '%.40s' "$1" ;;
    esac
}

usage_error() {
    die_usage "$1 $(shown_value "$2"): $3"
}

# flags_check PROG ARGS...: bin/PROG's own parser over ARGS, before any
# work: PROG given them with --help after them parses them all (cli.c
# stops at --help only once those before it passed); a bad one is PROG's
# usage line (its one line, exit 64).
flags_check() {
    local why p=$1
    shift
    why=$("$PSR_BIN/$p" "$@" --help 2>&1 >/dev/null) && return 0
    printf '%s\n' "$why" | head -n 1 >&2
    exit 64
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                                        else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# run_stats FILE SIZE: "median min-max" of the times recorded for SIZE in
# FILE ("bytes time" lines, one per repetition); "nan -" when there are none.
run_stats() {
    awk -v b="$2" '$1 == b { print $2 }' "$1" | sort -g | awk '
        { v[NR] = $1 }
        END {
            if (NR == 0) { print "nan -"; exit }
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.1f %.1f-%.1f\n", m, v[1], v[NR]
        }'
}

# mpi_peer_ready PEERS TMP: 0 when mpirun.openmpi and PEERS/mpi_coll are there
# (built by experiments/peers/build.sh if need be: missing or older than
# its source); else 1, having said why
# on stdout as a '#' line.
mpi_peer_ready() {
    if ! command -v mpirun.openmpi >/dev/null 2>&1; then
        echo "# ${prog:-${0##*/}}: mpirun.openmpi not found: psring only (apt-get install openmpi-bin libopenmpi-dev)"
        return 1
    fi
    # Rebuilt when its source is newer (a stale one may lack a flag).
    local src="$root/experiments/peers/mpi_coll.c"
    [ -x "$1/mpi_coll" ] && ! [ "$src" -nt "$1/mpi_coll" ] && return 0
    sh "$root/experiments/peers/build.sh" "$1" >"$2/build.log" 2>&1
    [ -x "$1/mpi_coll" ] && ! [ "$src" -nt "$1/mpi_coll" ] && return 0
    echo "# ${prog:-${0##*/}}: the MPI peer did not build:"
    cat "$2/build.log"
    return 1
}

# mpi_tcp NP ARGS...: mpirun of NP processes with Open MPI forced onto TCP
# over loopback (pml ob1, btl tcp,self, lo), as root where need be. Open
# MPI's launcher by its own name, mpirun.openmpi: a plain mpirun may be
# another MPI's (MPICH's, installed beside it, takes the alternative).
mpi_tcp() {
    local np=$1 asroot=
    shift
    [ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
    mpirun.openmpi $asroot --oversubscribe --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
        -np "$np" "$@"
}

# ompi_forced COLL: the configuration of Open MPI that bench_ring.sh and
# bench_coll.sh run beside its default (ompi_default: Open MPI's own
# decision rules, coll_tuned's fixed table), so that psring is compared
# with Open MPI at its best as well as as shipped. Sets forced (the label
# every table row and summary line carries), forced_mca (mpirun's --mca
# arguments: dynamic rules on, the algorithm locked) and forced_flags
# (mpi_coll's own). Chosen among what `ompi_info --param coll tuned
# --level 9` lists (Open MPI 4.1), measured at 1 and 16 MiB, K = 2 and 4,
# on 2 cores (ring_worker/README.md, "Open MPI's two configurations"):
#   all_reduce      ompi_ring: allreduce algorithm 4 (ring), psring's
#                   own algorithm
#   reduce_scatter  ompi_ring: MPI_Reduce_scatter with K equal counts
#                   (mpi_coll -v), reduce_scatter algorithm 3 (ring). No
#                   algorithm of MPI_Reduce_scatter_block (linear,
#                   recursive doubling/halving, butterfly) came near it
#   all_gather      ompi_ring: allgather algorithm 4 (ring), psring's
#   broadcast       ompi_pipeline: bcast algorithm 3, 256 KiB segments:
#                   a chain of fanout 1, as psring's chain.c; unsegmented
#                   (Open MPI's default segment size when an algorithm is
#                   forced) it was the slowest
#   reduce          ompi_pipeline: reduce algorithm 3, 256 KiB segments
#   alltoall        ompi_pairwise: alltoall algorithm 2, psring's; it,
#                   linear-with-sync and the default were level
ompi_forced() {
    local d="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_"
    forced_flags=
    case $1 in
    all_reduce) forced=ompi_ring forced_mca="${d}allreduce_algorithm 4" ;;
    reduce_scatter) forced=ompi_ring forced_mca="${d}reduce_scatter_algorithm 3" forced_flags=-v ;;
    all_gather) forced=ompi_ring forced_mca="${d}allgather_algorithm 4" ;;
    broadcast) forced=ompi_pipeline
        forced_mca="${d}bcast_algorithm 3 --mca coll_tuned_bcast_algorithm_segmentsize 262144" ;;
    reduce) forced=ompi_pipeline
        forced_mca="${d}reduce_algorithm 3 --mca coll_tuned_reduce_algorithm_segmentsize 262144" ;;
    alltoall) forced=ompi_pairwise forced_mca="${d}alltoall_algorithm 2" ;;
    *) say "ompi_forced: no configuration for '$1'"; return 1 ;;
    esac
}

# ompi_ran_as CONFIG OUT: whether mpi_coll, whose output is OUT, ran in
# CONFIG: its '# coll_tuned:' header line (what the ranks were given) says
# "defaults" for ompi_default and holds ompi_forced's locked algorithm
# (NAME_algorithm=N) for $forced. Else one line on stderr, status 1: the
# benches then drop the run rather than label its numbers wrongly.
ompi_ran_as() {
    local got want
    got=$(sed -n 's/^# coll_tuned: //p' "$2")
    if [ "$1" = ompi_default ]; then
        want=defaults
    else
        want=$(echo "$forced_mca" | sed -n 's/.*--mca coll_tuned_\([a-z_]*_algorithm\) \([0-9]*\).*/\1=\2/p')
    fi
    case " $got " in
    *" $want "*) return 0 ;;
    esac
    say "Open MPI ran with coll_tuned '${got:-?}', not $1's ${want:-?}: its figures dropped"
    return 1
}

# ompi_best DEFAULT FORCED: the faster of Open MPI's two medians (us; 0,
# nan or empty where that configuration did not run) and its label:
# "TIME ompi_default", "TIME $forced" (ompi_forced's), or "0 -" when
# neither ran. A tie goes to the default.
ompi_best() {
    awk -v m0="$1" -v m1="$2" -v f="$forced" 'BEGIN {
        if (m0 + 0 > 0 && (m0 + 0 <= m1 + 0 || !(m1 + 0 > 0))) print m0, "ompi_default"
        else if (m1 + 0 > 0) print m1, f
        else print 0, "-" }'
}

# MPICH, the second peer (issue 29, item 4): Debian's mpich 4.0 (device
# ch4:ucx), its launcher and compiler wrapper by their own names
# (mpirun.mpich, mpicc.mpich), forced onto TCP over loopback with no shared
# memory by $mpich_switches: MPIR_CVAR_NOLOCAL=1 (every rank is treated as
# on another node: no shared-memory path, no node-aware collectives),
# UCX_TLS=tcp (UCX's TCP transport only: no posix/sysv shared memory, no
# cma) and UCX_NET_DEVICES=lo. Checked with strace: the sockets carry the
# payload with these switches (117 MB written for 13 all-reduces of 4 MiB
# at K = 2), 8.6 MB without UCX_TLS (shared memory carried the rest).
mpich_switches="MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp UCX_NET_DEVICES=lo"

# mpich_peer_ready PEERS TMP: 0 when mpirun.mpich and PEERS/mpi_coll.mpich
# are there (built by experiments/peers/build.sh if need be); else 1,
# having said why on stdout as a '#' line.
mpich_peer_ready() {
    if ! command -v mpirun.mpich >/dev/null 2>&1; then
        echo "# ${prog:-${0##*/}}: mpirun.mpich not found: no MPICH peer (apt-get install mpich libmpich-dev)"
        return 1
    fi
    local src="$root/experiments/peers/mpi_coll.c"
    [ -x "$1/mpi_coll.mpich" ] && ! [ "$src" -nt "$1/mpi_coll.mpich" ] && return 0
    sh "$root/experiments/peers/build.sh" "$1" >"$2/build.log" 2>&1
    [ -x "$1/mpi_coll.mpich" ] && ! [ "$src" -nt "$1/mpi_coll.mpich" ] && return 0
    echo "# ${prog:-${0##*/}}: the MPICH peer did not build:"
    cat "$2/build.log"
    return 1
}

# mpich_tcp NP SETTING OUT ARGS...: mpirun.mpich -np NP ARGS, its stdout
# into OUT, with $mpich_switches and SETTING (VAR=VALUE: a forced
# algorithm; "defaults": none) in the environment, which mpirun.mpich
# hands to every rank. With mpich_timeout set (seconds), under timeout(1),
# which signals mpirun.mpich itself (it takes its ranks down with it).
# MPICH 4.0.2 over UCX's TCP sometimes never returns from MPI_Finalize once
# the figures are out (gdb: rank 0 in ucp_worker_progress under
# PMPI_Finalize, spinning, its peer gone; 7 of about 40 runs on the
# loaded 2-CPU machine): once mpi_coll's last line ('# avg bus
# bandwidth') is in OUT, the run gets 5 s more, then is ended, saying so
# on stderr, with status 0. Its status otherwise.
mpich_tcp() {
    local np=$1 set=$2 out=$3 pid i=0
    shift 3
    [ "$set" = defaults ] && set=
    ${mpich_timeout:+timeout "$mpich_timeout"} env $mpich_switches $set mpirun.mpich -np "$np" "$@" >"$out" &
    pid=$!
    while kill -0 $pid 2>/dev/null; do
        if grep -q '^# avg bus bandwidth' "$out" 2>/dev/null; then
            i=$((i + 1))
            if [ $i -gt 50 ]; then
                kill $pid 2>/dev/null
                wait $pid
                say "mpirun.mpich: MPI_Finalize had not returned 5 s after the figures; ended"
                return 0
            fi
        fi
        sleep 0.1
    done
    wait $pid
}

# mpich_forced COLL: MPICH's algorithms that psring also has, each forced
# by its control variable (mpivars of MPICH 4.0.2 lists, for
# MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM: auto, nb, smp, recursive_doubling,
# reduce_scatter_allgather; no ring for the blocking call). Sets
# mpich_configs: "LABEL=VAR=VALUE" words, run beside mpich_default (its
# own rules: recursive doubling up to MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE,
# 2 KiB, reduce_scatter_allgather above).
#   all_reduce  mpich_rd: recursive_doubling (psring's rd),
#               mpich_rsag: reduce_scatter_allgather (Rabenseifner's,
#               psring's rabenseifner)
mpich_forced() {
    case $1 in
    all_reduce) mpich_configs="mpich_rd=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling
        mpich_rsag=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=reduce_scatter_allgather" ;;
    *) say "mpich_forced: no configuration for '$1'"; return 1 ;;
    esac
}

# mpich_ran_as SETTING OUT: whether mpi_coll.mpich, whose output is OUT,
# ran with SETTING (VAR=VALUE, or "defaults"): its '# mpich:' header line
# lists the variables the ranks were given. Else one line on stderr,
# status 1: the bench drops the run.
mpich_ran_as() {
    local got
    got=$(sed -n 's/^# mpich: //p' "$2")
    case " $got " in
    *" $1 "*) return 0 ;;
    esac
    say "MPICH ran with '${got:-?}', not $1: its figures dropped"
    return 1
}

# ompi_summary FILE LABEL [PEER NAME]: PEER (default ompi) and NAME
# (default Open MPI) name the peer in the lines. FILE holds a bench's rows, "GROUP SIZE RATIO
# BEST" per line (RATIO: psring over Open MPI's better configuration, BEST:
# that configuration's label; nan and - where Open MPI did not run). Per
# GROUP, one '#' line: the range and median of RATIO, how many sizes each
# configuration won, and the rows where psring was slower (RATIO > 1).
ompi_summary() {
    awk -v label="$2" -v peer="${3:-ompi}" -v pname="${4:-Open MPI}" '
        function flush(  i, j, t, m, won) {
            if (g == "") return
            if (n == 0) { printf "# summary %s %s: no %s figures\n", label, g, pname; return }
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            won = ""
            for (i = 1; i <= nk; i++) won = won sprintf("%s%s at %d", i > 1 ? ", " : "", key[i], cnt[key[i]])
            printf "# summary %s %s: psring/%s_best %.2f-%.2f (median %.2f) over %d sizes, psring slower at %d; the better %s: %s\n",
                   label, g, peer, v[1], v[n], m, n, slow, pname, won
        }
        $1 != g { flush(); g = $1; n = 0; nk = 0; slow = 0; split("", cnt) }
        $3 != "nan" {
            v[++n] = $3 + 0
            if (!($4 in cnt)) key[++nk] = $4
            cnt[$4]++
            if ($3 + 0 > 1) slow++
        }
        END { flush() }' "$1"
}

size_bytes() {
    local n u m
    n=${1%%[!0-9]*}
    u=${1#"$n"}
    [ ${#n} -ge 1 ] && [ ${#n} -le 9 ] || return 1
    case $u in
    '' | B) m=1 ;;
    K | KiB) m=1024 ;;
    M | MiB) m=1048576 ;;
    G | GiB) m=1073741824 ;;
    *) return 1 ;;
    esac
    while [ ${#n} -gt 1 ] && [ "${n#0}" != "$n" ]; do n=${n#0}; done    # not octal
    echo $((n * m))
}

# The job runs in the background and the script waits for it: a trapped
# signal interrupts `wait` at once (it would wait for a foreground command
# to end first), so stop_on_interrupt's trap can stop the job. Bash makes
# a background command ignore SIGINT; the subshell puts it back, so that
# a ^C to the terminal's group reaches the job as before.
jobs_done="" job_now=""
job() {
    local what=$1 o=$2 e=$3 rc
    shift 3
    job_now=$what
    ( trap - INT QUIT; exec "$@" ) >"$o" 2>"$e" &
    wait $!
    rc=$?
    job_now=""
    jobs_done="$jobs_done${jobs_done:+; }$what$([ $rc = 0 ] || echo " (failed, $rc)")"
    [ $rc = 0 ] && return 0
    echo "${prog:-${0##*/}}: $what failed; see $e:" >&2
    tail -n 3 "$e" | sed 's/^/    /' >&2
    return $rc
}

csv_awk() {
    local vars=""
    while [ "$1" = -v ]; do
        vars="$vars -v $(printf '%s' "$2" | sed "s/'/'\\\\''/g; s/^/'/; s/\$/'/")"
        shift 2
    done
    local prog_text=$1
    shift
    eval "awk -F, $vars"' "FNR == 1 { split(\"\", c); for (i = 1; i <= NF; i++) c[\$i] = i } $prog_text" "$@"'
}

csv_col() {
    csv_awk -v n="$2" 'FNR == 2 { print $c[n]; exit }' "$1"
}

cpu_busy() {
    awk '/^cpu_s / { c += $2 } /^wall_s / { if ($2 > w) w = $2 } /^ncpu / { n = $2 }
         END { printf "%.2f", (w > 0 && n > 0) ? c / (w * n) : 0 }' "$@"
}

opt_value() {
    name=${1%%=*}
    case $1 in
    *=*) val=${1#*=}; extra=0 ;;
    *) [ $# -ge 2 ] || die_usage "$name: missing value"; val=$2; extra=1 ;;
    esac
    case $name:$val in
    --server-args: | --worker-args:) ;;     # no extra flags: harmless
    *:) usage_error "$name" "" "empty value" ;;
    esac
}

need_bash51() {
    if [ -z "${BASH_VERSION-}" ] || [ "${BASH_VERSINFO[0]}" -lt 5 ] ||
        { [ "${BASH_VERSINFO[0]}" = 5 ] && [ "${BASH_VERSINFO[1]}" -lt 1 ]; }; then
        echo "${prog:-${0##*/}}: needs bash 5.1 or newer (this is ${BASH_VERSION:-not bash})" >&2
        exit 64
    fi
}

help_or_version() {
    local a
    for a in "$@"; do
        case $a in
        --help | -h) usage; exit 0 ;;
        --version) echo "${prog:-${0##*/}} (psring)"; exit 0 ;;
        esac
    done
}

# csv_table CSV: the CSV as aligned columns on stdout (for a person's eyes;
# plain awk, since column(1) is not on a minimal Debian).
csv_table() {
    awk -F, 'NR == FNR { for (i = 1; i <= NF; i++) if (length($i) > w[i]) w[i] = length($i); next }
             { for (i = 1; i <= NF; i++) printf (i < NF ? "%-" w[i] "s  " : "%s\n"), $i }' "$1" "$1"
}

progress() { if [ -t 2 ]; then printf '\r\033[K%s' "$1" >&2; fi; }
done_line() { if [ -t 2 ]; then printf '\r\033[K' >&2; fi; host_msg "$1" >&2; }
elapsed() { echo $(( $(date +%s) - t_start ))s; }

# stop_on_interrupt [TITLE CMDLINE]: a script that runs one job after
# another stops at ^C or SIGTERM, within a second or two, leaving nothing
# running. The terminal's ^C reaches the whole foreground group, but a
# SIGTERM (make's, a batch system's, kill PID) only this script: so the
# trap stops every process below this one itself (descendants), whatever
# group it is in. launch.sh stops its programs on SIGTERM within 0.1 s;
# anything still there after 1 s gets SIGKILL. Given TITLE (the script
# that owns $out; not its helper scripts, whose parent writes it),
# $out/manifest.txt then says "interrupted", when, the job running then,
# and the jobs that had finished (their results are in $out).
stop_on_interrupt() {
    intr_manifest=$# intr_title=${1-} intr_cmdline=${2-}
    intr_t0=$(date +%s)
    trap 'on_interrupt INT' INT
    trap 'on_interrupt TERM' TERM
}

# descendants: "PID PGID" for each process below this shell, from /proc,
# but the command substitution that runs it (BASHPID, bash's) and its
# own children. POSIX sh and awk: lib.sh is sourced by sh scripts too.
descendants() {
    cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$$" -v me="${BASHPID:-}" '
        { s = $0; sub(/.*\) /, "", s); split(s, f, " ")     # after the name: state ppid pgrp
          if (f[1] == "Z" || $1 == me || f[2] == me) next
          kids[f[2]] = kids[f[2]] " " $1; grp[$1] = f[3] }
        END { q[1] = root; n = 1
              for (i = 1; i <= n; i++) { m = split(kids[q[i]], k, " ")
                  for (j = 1; j <= m; j++) { print k[j], grp[k[j]]; q[++n] = k[j] } } }'
}

# on_interrupt SIG: stop_on_interrupt's trap. SIGTERM to every process
# below this one, and to any that appears while they stop (launch.sh
# forking a job as the signal came); after 1 s SIGKILL to those left and to
# every process group they were in but this script's (launch.sh's jobs: a
# group each, whose members outlive launch.sh if it is killed first).
on_interrupt() {
    local sig=$1 i=0 p g own seen=" " groups=" " new list
    trap '' INT TERM
    say "interrupted (SIG$sig)${job_now:+ during $job_now}; stopping"
    own=$(awk '{ sub(/.*\) /, ""); print $3 }' /proc/$$/stat)
    while :; do
        new=""
        list=$(descendants)
        while read -r p g; do
            [ -n "$p" ] || continue
            case $seen in *" $p "*) ;; *) seen="$seen$p "; new="$new $p" ;; esac
            [ "$g" = "$own" ] || case $groups in *" $g "*) ;; *) groups="$groups$g " ;; esac
        done <<EOF
$list
EOF
        [ -n "$new" ] && kill -TERM $new 2>/dev/null
        [ -n "$list" ] && [ $i -lt 20 ] || break
        sleep 0.05; i=$((i + 1))
    done
    for g in $groups; do kill -KILL -- "-$g" 2>/dev/null; done
    p=$(descendants | cut -d' ' -f1)
    [ -n "$p" ] && kill -KILL $p 2>/dev/null
    if [ "${intr_manifest:-0}" -gt 0 ] && [ -n "${out-}" ] && [ -d "$out" ]; then
        {
            echo "interrupted: SIG$sig after $(( $(date +%s) - ${t_start:-$intr_t0} )) s${job_now:+, during $job_now (stopped)}"
            echo "finished: ${jobs_done:-nothing}"
            echo "jobs_failed: ${failed:-0}"
            echo "# every job's command line started (their results so far: $out)"
        } | manifest "$out" "$intr_title (INTERRUPTED)" "$intr_cmdline"
    fi
    exit 130
}

need_programs() {
    local p
    for p in "$@"; do
        if [ "$p" = gnuplot ]; then
            command -v gnuplot >/dev/null ||
                { say "gnuplot is missing: apt-get install gnuplot-nox (or run 'make deps' as root)"; exit 2; }
        else
            [ -x "$PSR_BIN/$p" ] || { say "$PSR_BIN/$p is missing: run 'make' first"; exit 2; }
        fi
    done
}

make_out() {
    local d
    [ -n "$out" ] || out=$root/results/$(date +%Y%m%d-%H%M%S)
    for d in "$@"; do mkdir -p "$out/$d" || { say "cannot create $out"; exit 2; }; done
}

note_command() {
    local tag=$1
    shift
    { printf '%s:' "$tag"; printf ' %q' "$@"; echo; } >> "$out/commands.txt"
}

git_rev() {
    # Without .git (a container: .dockerignore), PSR_GIT: the commit the
    # image was built from, its build argument (Dockerfile).
    if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
        echo "$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (modified)')"
    else
        echo "${PSR_GIT:-unknown}"
    fi
}

manifest() {
    {
        echo "# psring lab manifest$2"
        echo "command: $3"
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "git: $(git_rev)"
        echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) online${4-}"
        cat
        cat "$1/commands.txt" 2>/dev/null
    } > "$1/manifest.txt"
    json_beside "$1"
}

json_beside() {
    local top="${1%/}"
    # POSIX sh (grade.sh sources this file with sh): no arrays, a pipe.
    find "$top" -name '*.csv' -type f 2>/dev/null | (
        rc=0
        while IFS= read -r f; do
            d=${f%/*} m=
            while :; do
                if [ -f "$d/manifest.txt" ]; then m=$d/manifest.txt; break; fi
                case $d in "$top"/*) d=${d%/*} ;; *) break ;; esac
            done
            if [ -n "$m" ]; then
                "$PSR_BIN/psr_json" --manifest "$m" --out "${f%.csv}.json" "$f"
            else
                "$PSR_BIN/psr_json" --out "${f%.csv}.json" "$f"
            fi || { say "could not write ${f%.csv}.json"; rc=1; }
        done
        exit $rc
    )
}
