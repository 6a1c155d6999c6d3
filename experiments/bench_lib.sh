# experiments/bench_lib.sh -- the start that bench_coll.sh, bench_ring.sh
# and bench_rd.sh share; each sources it first,
#     . "$(dirname "$0")/bench_lib.sh"
# It sets prog (the script's name, for lib.sh's messages) and here (its
# folder), sources lib.sh, and sets where the tables go ($out,
# $PSR_RESULTS/bench, made here), launch.sh ($launch), the MPI peers
# ($peers) and a scratch folder ($tmp, removed at exit). bench_need
# PROGRAM ends the script, saying so, when $PSR_BIN lacks PROGRAM.
prog=$(basename "$0")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=${PSR_RESULTS:-results}/bench
launch="$here/launch.sh"
peers=${PSR_PEERS:-$here/../build/peers}
mkdir -p "$out" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/psring-${prog%.sh}.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

bench_need() {
    [ -x "$PSR_BIN/$1" ] || { echo "$prog: no $1 in $PSR_BIN (run make)" >&2; exit 1; }
}
