#!/bin/sh
# experiments/lab_phases.sh -- the ring's phases drawn from a real run
# (docs/lab.md, exercise 21; seed 001's "ring phases by hand").
#
#   experiments/lab_phases.sh [--out DIR] [--K K] [--bytes N] [--link-bw RATE]
#       [--link-latency TIME]
#   experiments/lab_phases.sh --answer [--out DIR]
#
# First form: K ranks all-reduce N bytes once on the EMULATED link
# (experiments/launch.sh ring K --bench, one warm-up call, then the timed
# one), each rank writing the steps of that call with ring_worker --phases
# (common/coll/ring_steps.h: phase, step, chunk sent, chunk received,
# start, end) to DIR/ph.RANK; then the BLANK picture, DIR/ring_phases_blank
# .png and .svg: the bars of every rank's steps on the run's time axis, no
# chunk numbers, for the student to fill in. The defaults (K = 4, 1 MiB,
# 16 Mbit/s, 1 ms) make each step about 130 ms: the steps stand apart.
#
# --answer (after the first form, on its DIR): the same picture with the
# chunk each rank sent and received in each bar, DIR/ring_phases.png and
# .svg, and on stdout the chunk table as common/coll/ring.c's opening
# comment prints it ("s > r": the chunk a rank sends > the one it
# receives), read from the run's files, not computed: the key.
#
# DIR defaults to results/phases. The --worker-args of launch.sh are split
# at blanks: DIR must have none.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
prog=lab_phases.sh

usage() {
    cat <<'EOF'
usage: experiments/lab_phases.sh [--out DIR] [--K K] [--bytes N] [--link-bw RATE]
           [--link-latency TIME]
       experiments/lab_phases.sh --answer [--out DIR]
The ring's chunk schedule drawn from a real run (docs/lab.md, exercise 21): one
all-reduce at K ranks on the EMULATED link, each rank's steps recorded
(ring_worker --phases), drawn blank for you to fill in; --answer draws the same
run with its chunk numbers and prints the chunk table.

  --out DIR              the run's folder (default results/phases; no blanks)
  --K K                  ranks (default 4; 2 to 16)
  --bytes N              the vector each rank all-reduces (default 1M)
  --link-bw RATE         the EMULATED link's rate (default 16Mbit)
  --link-latency TIME    its one-way latency (default 1ms)
  --answer               draw the run in DIR with its chunks; print the table
EOF
}
help_or_version "$@"

out="" k=4 bytes=1M bw=16Mbit lat=1ms answer=0
while [ $# -gt 0 ]; do
    case $1 in
    --out | --K | --bytes | --link-bw | --link-latency | \
    --out=* | --K=* | --bytes=* | --link-bw=* | --link-latency=*)
        opt_value "$@"
        case $name in
        --out) out=$val ;;
        --K) k=$val ;;
        --bytes) bytes=$val ;;
        --link-bw) bw=$val ;;
        --link-latency) lat=$val ;;
        esac
        shift $((1 + extra)) ;;
    --answer) answer=1; shift ;;
    *) die_usage "$1: unknown option" ;;
    esac
done
again=""                       # how to name this DIR in the hints
[ -n "$out" ] && again=" --out $out"
[ -n "$out" ] || out=$root/results/phases
case $out in *[[:space:]]*) usage_error --out "$out" "no blanks (launch.sh splits --worker-args at them)" ;; esac
case $k in
*[!0-9]* | '' | 0 | 1) usage_error --K "$k" "ranks: a whole number from 2 to 16" ;;
*) [ "$k" -le 16 ] || usage_error --K "$k" "ranks: a whole number from 2 to 16" ;;
esac
need_programs ring_worker model gnuplot
# Each value checked by bin/model's own parser, the error naming this
# script's flag.
chk() {
    "$PSR_BIN/model" --algo ring --quantity time --K 2 --bytes "$1" --bw "$2" --latency "$3" >/dev/null 2>&1
}
chk "$bytes" 1MB 0 || usage_error --bytes "$bytes" "not a size (examples: 64K, 1M, 1048576)"
chk 1M "$bw" 0 || usage_error --link-bw "$bw" "not a rate (examples: 16Mbit, 32Mbit, 2MB)"
chk 1M 1MB "$lat" || usage_error --link-latency "$lat" "not a time (examples: 1ms, 200us)"

# draw BLANK NAME: plots/ring_phases.gp over DIR/ph.*, PNG and SVG.
draw() {
    for fmt in png svg; do
        gnuplot -e "dir='$root/plots/'; data='$out/ph'; fmt='$fmt'; out='$out/$2.$fmt'; blank=$1; sub='$sub'" \
            "$root/plots/ring_phases.gp" || { say "gnuplot failed on $out/ph.*"; exit 1; }
    done
}

if [ "$answer" = 1 ]; then
    set -- "$out"/ph.[0-9]*
    [ -f "$1" ] || { say "no $out/ph.RANK: run experiments/lab_phases.sh$again first"; exit 1; }
    sub=$(cat "$out/sub.txt" 2>/dev/null)
    draw 0 ring_phases
    # The chunk table, ring.c's layout: a row per (phase, step), a column
    # per rank, "s > r".
    awk '!/^#/ && NF >= 8 {
             r = $1; p = $2; s = $3; if (r + 1 > k) k = r + 1; if (s + 1 > m) m = s + 1
             cell[p, s, r] = $4 " > " $5
         }
         END {
             line = sprintf("  %-15s %-6s", "phase", "step")
             for (r = 0; r < k; r++) line = line sprintf(" rank %-3d", r)
             out(line)
             for (i = 0; i < 2; i++) {
                 p = i ? "all-gather" : "reduce-scatter"
                 for (s = 0; s < m; s++) {
                     line = sprintf("  %-15s %-6d", s ? "" : p, s)
                     for (r = 0; r < k; r++) line = line sprintf(" %-8s", ((p, s, r) in cell) ? cell[p, s, r] : "?")
                     out(line)
                 }
                 if (!i) out("  (rank r now holds the full sum of chunk r)")
             }
         }
         function out(l) { sub(/ +$/, "", l); print l }' "$@" || exit 1
    say "the answer: $out/ring_phases.png (and .svg); compare it with your sheet"
    exit 0
fi

mkdir -p "$out" || { say "cannot create $out"; exit 2; }
rm -f "$out"/ph.[0-9]* "$out"/ring_phases.png "$out"/ring_phases.svg
sub="$bytes per rank, EMULATED link $bw, $lat"
printf '%s\n' "$sub" > "$out/sub.txt"
say "K = $k, $sub: one all-reduce, each rank's steps into $out/ph.RANK"
"$here/launch.sh" ring "$k" --worker-args "--phases $out/ph" --bench -b "$bytes" -e "$bytes" \
    -n 1 -w 1 --link-bw "$bw" --link-latency "$lat" --time-limit 120 \
    >"$out/bench.txt" 2>&1 || { say "the run failed: $(tail -n 3 "$out/bench.txt" | tr '\n' ' ')"; exit 1; }
for r in $(seq 0 $((k - 1))); do
    [ -s "$out/ph.$r" ] || { say "no $out/ph.$r after the run"; exit 1; }
done
draw 1 ring_phases_blank
say "fill in $out/ring_phases_blank.png (or .svg), then: experiments/lab_phases.sh --answer$again"
