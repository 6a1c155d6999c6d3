# experiments/bench_lib.sh -- the start that bench_coll.sh, bench_ring.sh
# and bench_rd.sh share; each sources it first,
#     . "$(dirname "$0")/bench_lib.sh"
# It answers --help (help_or_version: the script's opening comment) and
# refuses any other argument (exit 64). It sets prog (the script's name, for lib.sh's messages) and here (its
# folder), sources lib.sh, and sets where the tables go ($out,
# $PSR_RESULTS/bench, made here), launch.sh ($launch), the MPI peers
# ($peers) and a scratch folder ($tmp, removed at exit). bench_need
# PROGRAM ends the script, saying so, when $PSR_BIN lacks PROGRAM.
prog=$(basename "$0")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
# The scripts take no options (their settings are environment variables):
# --help prints the script's opening comment, anything else is refused
# before a table or a job is started.
usage() {
    echo "usage: $prog   (no options; the settings below are environment variables)"
    sed -n '2,/^[^#]/ s/^# \{0,1\}//p' "$0"
}
help_or_version "$@"
[ $# -eq 0 ] || die_usage "$(shown_value "$1"): no options (the settings are environment variables)"
out=${PSR_RESULTS:-results}/bench
launch="$here/launch.sh"
peers=${PSR_PEERS:-$here/../build/peers}
mkdir -p "$out" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/psring-${prog%.sh}.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

bench_need() {
    [ -x "$PSR_BIN/$1" ] || { echo "$prog: no $1 in $PSR_BIN (run make)" >&2; exit 1; }
}
