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
#   die_usage MSG...          MSG on stderr, exit 64 (bad arguments)
#   median                    the median of the numbers on stdin; nan if none
#   size_bytes SIZE           4096, 4K, 4KiB, 16M, 1G -> bytes (powers of
#                             1024); fails, printing nothing, on anything else
#   job WHAT OUT ERR CMD...   run CMD, stdout to OUT, stderr to ERR; when it
#                             fails, say so with ERR's last 3 lines; its status
#   csv_awk [-v V=X]... PROG FILE...
#                             awk -F, over CSV files that start with a header:
#                             c["name"] is the column of that name (read from
#                             each file's first line), so PROG says
#                             $c["time_s"], never $7; the header line itself
#                             reaches PROG too (FNR == 1)
#   csv_col CSV NAME          column NAME of the first row under the header
#   cpu_busy RECORD...        the share of the machine's CPUs the processes
#                             of a job used in its timed steps (the records'
#                             cpu_s, wall_s, ncpu; see common/metrics.h)
#   opt_value ARG...          for a flag that takes a value ("--f V" or
#                             "--f=V"): name (--f), val (V) and extra (how
#                             many more arguments it used: 0 or 1, to shift);
#                             exit 64 when no value follows
#   need_bash51               exit 64 unless this is bash 5.1 or newer
#   help_or_version ARG...    --help/-h: usage, exit 0; --version: exit 0

say() {
    echo "${prog:-${0##*/}}: $*" >&2
}

root=$(cd "$here/.." && pwd)
: "${PSR_BIN:=$root/bin}"
export PSR_BIN

die_usage() {
    echo "${prog:-${0##*/}}: $*" >&2
    exit 64
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                                        else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
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

job() {
    local what=$1 o=$2 e=$3 rc
    shift 3
    "$@" >"$o" 2>"$e" && return 0
    rc=$?
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
