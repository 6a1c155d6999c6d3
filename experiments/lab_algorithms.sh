#!/usr/bin/env bash
# lab_algorithms.sh -- the algorithms section of the lab (`experiments/lab.sh
# --only algorithms`; issue 29): the map of which all-reduce algorithm, or
# which placement of the parameter server, wins each cell (K, n), measured
# on the EMULATED link and predicted by the model side by side, and how
# well the selector (ring_worker --algo auto) picks.
#
# THE CANDIDATES. The parameter server with one server (`ps`), with 2
# separate servers (`ps-S`) and colocated (`ps-coloc`: a shard on every
# worker's host, S = K), and every all-reduce of the model's table
# (common/measure/model.h, model_algos: ring, rd, rabenseifner, tree,
# dbtree, and whatever joins it), read from bin/model --help: a new row
# there joins the map with nothing changed here.
#
# THE GRID. K in --ks, n in --sizes (this section's defaults below: 6 x 5
# = 30 cells, K = 2..8, 4 KiB-16 MiB), synthetic f32, the lab's link
# (--link-bw auto means $alg_rate here: no calibration). Each point is a
# launch.sh job of a few steps (the timed part about 0.2 s in the model,
# 2 to 30 steps after --warmup), repeated by the lab's rule (lab_lib.sh,
# THE REPEAT RULE) within --budget. A candidate whose model time is over
# --prune X (default 4) times the cell's best model time is not run: it
# could only win if the model were off by that factor (listed in the
# manifest; --prune 0 runs every one).
#
# THE SELECTOR. One ring_worker --algo auto run (K = 1, the link as
# configured) writes calibration.txt (a, bw, and g from a local reduction
# loop; ring_worker/auto.h); bin/model --algo auto with those numbers then
# picks per cell, among the all-reduce algorithms (ring_worker runs no
# PS). selector.txt: per cell its pick, the measured best all-reduce, the
# pick's measured time over the best's; the share of cells within 5% of
# the best and the time lost to the wrong picks (the sum of the picks'
# measured times over the sum of the bests', less 1); the same for two
# fixed rules, mapped onto psring's algorithms:
#   Open MPI 4.1's tuned component (4.1.4 here: `ompi_info --param coll
#     tuned --level 9` lists coll_tuned_allreduce_algorithm 0 ignore, 1
#     basic linear, 2 nonoverlapping, 3 recursive doubling, 4 ring, 5
#     segmented ring, 6 rabenseifner; with it left at ignore the fixed
#     decision of coll_tuned_decision_fixed.c,
#     ompi_coll_tuned_allreduce_intra_dec_fixed, decides; its commutative
#     table for K < 16 is below, the segmented ring counted as our ring);
#   MPICH's (4.0.2 here: `mpivars` gives MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE
#     = 2048): recursive doubling when n <= 2 KiB or the count is below
#     the largest power of two <= K, else reduce-scatter + all-gather
#     (Rabenseifner). That is its rule for one rank per node; with several
#     ranks on a node MPICH 4 goes SMP-aware first (not modelled here).
# A cell where a rule's pick was not measured (pruned) is counted apart.
#
# LAB_ALG_MODEL=1 (what `make lab` runs, through lab.sh): the model's map
# only, no job: algo_map_model.csv, .md, .png/.svg, in seconds.
# LAB_ALG_REDRAW=1 with --out DIR and the run's flags: the map, the
# selector's score and the manifest again from DIR's algorithms.csv and
# calibration.txt, no job (a script fixed after a long run).
#
# Results: algorithms.csv (one row per point, the lab's four columns
# appended), algorithms_runs.csv, algo_map.csv (experiments/algo_map.awk:
# source measured and model, a row per cell), algo_map.md (the same as a
# markdown table), algo_map.png and .svg (plots/algo_map.gp),
# calibration.txt, selector.txt, manifest.txt, logs/.
set -uo pipefail

prog=lab.sh
cmdline=${LAB_CMDLINE:-$0${*:+ $*}}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/lab_lib.sh"

alg_rate=32Mbit         # --link-bw auto: a K = 8 ring of 16 MiB is 7 s a step here
alg_ks="2 3 4 5 6 8"
alg_sizes="4K 32K 256K 2M 16M"
prune=4
args=()
while [ $# -gt 0 ]; do
    case $1 in
    --prune) [ $# -ge 2 ] || die_usage "--prune: missing value"
             [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error --prune "$2" "not a factor like 4 (0: none)"
             prune=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
    esac
done
lab_options ${args[@]+"${args[@]}"}
[ "$ks_given" = 1 ] || ks=$alg_ks
[ "$sizes" = "4K 16K 64K 256K 1M 4M 16M" ] && sizes=$alg_sizes
[ "$quick" = 1 ] && { ks="2 4"; sizes="4K 1M"; }
[ "$link_bw" = auto ] && link_bw=$alg_rate
model_only=${LAB_ALG_MODEL:-0}

# The candidates: the PS's three, then model_algos' rows (bin/model --help).
# Not swing-lat and swing-bw (model.h: twins of rd and Rabenseifner on one
# switch, where the map is drawn) nor hring (its time needs the hosts' G).
allreduce=$("$PSR_BIN/model" --help 2>&1 | sed -n 's/^  --algo \(ps|[^ ]*\).*/\1/p' | head -n 1 |
            tr '|' '\n' | grep -v -e '^ps$' -e '^auto$' -e '^swing-' -e '^hring$' | tr '\n' ' ')
allreduce=${allreduce% }
names="ps ps-S ps-coloc $allreduce"

# cand_model NAME K BYTES: the candidate's model time (bin/model; gamma 0).
cand_model() {
    case $1 in
    ps) set -- --algo ps --K "$2" --bytes "$3" ;;
    ps-S) set -- --algo ps --servers 2 --K "$2" --bytes "$3" ;;
    ps-coloc) set -- --algo ps --placement colocated --K "$2" --bytes "$3" ;;
    *) set -- --algo "$1" --K "$2" --bytes "$3" ;;
    esac
    "$PSR_BIN/model" "$@" --bw "$link_bw" --latency "$link_lat" 2>/dev/null || echo nan
}
# cand_row NAME K BYTES: the candidate as a shared-schema row of the model.
cand_row() {
    local sys=ring algo=$1 servers="" place=""
    case $1 in
    ps) sys=ps algo="" servers=1 place=separate ;;
    ps-S) sys=ps algo="" servers=2 place=separate ;;
    ps-coloc) sys=ps algo="" servers=$2 place=colocated ;;
    esac
    echo "$sys,$algo,$2,$3,$(cand_model "$1" "$2" "$3"),$servers,$place"
}

if [ "$model_only" = 1 ]; then
    need_programs model gnuplot
    make_out logs
    t_start=$(date +%s) failed=0
else
    lab_ready
    stop_on_interrupt " (--only algorithms)" "$cmdline"
fi

# ------------------------------------------------------------ the model's map
{
    echo "system,algo,K,bytes,time_s,servers,placement"
    for k in $ks; do
        for s in $sizes; do
            b=$(size_bytes "$s")
            for a in $names; do cand_row "$a" "$k" "$b"; done
        done
    done
} > "$out/algo_model_rows.csv"
awk -F, -v source=model -v names="$names" -f "$here/algo_map.awk" "$out/algo_model_rows.csv" \
    > "$out/algo_map_model.csv"
sub="the alpha-beta model (bin/model) at the EMULATED link: $link_bw, $link_lat"
if [ "$model_only" = 1 ]; then
    # A second panel, the all-reduce algorithms alone: in the model the
    # colocated PS (the ring's bytes in two latencies) wins most cells, and
    # hides which all-reduce would win among themselves.
    grep -v '^ps,' "$out/algo_model_rows.csv" |
        awk -F, -v source=all-reduce -v names="$names" -f "$here/algo_map.awk" | tail -n +2 \
        >> "$out/algo_map_model.csv"
    awk -F, -v mode=md -f "$here/algo_map.awk" "$out/algo_map_model.csv" > "$out/algo_map_model.md"
    for fmt in png svg; do
        gnuplot -e "dir='$root/plots/'; map='$out/algo_map_model.csv'; srcs='model all-reduce'; names='$names'; fmt='$fmt'; out='$out/algo_map_model.$fmt'; sub='$sub'" \
            "$root/plots/algo_map.gp" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
    done
    exit $(( failed > 0 ))
fi

# ------------------------------------------------------------ the selector's calibration
calib=$out/calibration.txt
[ "${LAB_ALG_REDRAW:-0}" = 1 ] || job "the selector's calibration" "$out/logs/calibration.out" "$out/logs/calibration.log" \
    "$PSR_BIN/ring_worker" --rank 0 --world 1 --algo auto --calibration "$calib" --bench \
    --minbytes 4K --maxbytes 4K --warmup-iters 0 --iters 1 --link-bw "$link_bw" \
    --link-latency "$link_lat" || { say "the selector's calibration failed"; exit 1; }
gamma=$(awk '$1 == "gamma_s_per_byte" { print $2 }' "$calib")

# ------------------------------------------------------------ the points
pruned=""
planned=0
[ "${LAB_ALG_REDRAW:-0}" = 1 ] && ks=""       # the folder's algorithms.csv as it is
for k in $ks; do
    for s in $sizes; do
        b=$(size_bytes "$s")
        best=$(for a in $names; do cand_model "$a" "$k" "$b"; done | sort -g | head -n 1)
        for a in $names; do
            t=$(cand_model "$a" "$k" "$b")
            if [ "$prune" != 0 ] && awk -v t="$t" -v b="$best" -v p="$prune" 'BEGIN { exit !(t == "nan" || t > p * b) }'; then
                pruned="$pruned k$k/$s/$a"
                continue
            fi
            st=$(awk -v t="$t" -v w="$warmup" 'BEGIN { n = int(0.2 / t) + 1; n = n < 2 ? 2 : n > 30 ? 30 : n; print n + w }')
            case $a in
            ps) add_point "alg_${a}_k${k}_$s" algorithms ps "$k" "$b" "$st" ;;
            ps-S) add_point "alg_${a}_k${k}_$s" algorithms ps "$k" "$b" "$st" "--servers 2" ;;
            ps-coloc) add_point "alg_${a}_k${k}_$s" algorithms ps "$k" "$b" "$st" "--colocated-servers" ;;
            *) add_point "alg_${a}_k${k}_$s" algorithms ring "$k" "$b" "$st" "--worker-args '--algo $a'" ;;
            esac
            planned=$(awk -v p="$planned" -v t="$t" -v s="$st" 'BEGIN { print p + t * s + 1.5 }')
        done
    done
done
host_msg "algorithms: ${#P_name[@]} points over $(echo $ks | wc -w) x $(echo $sizes | wc -w) cells (pruned: $(echo $pruned | wc -w)); first pass about ${planned%.*} s in the model" >&2
label() { echo "alg]"; }
if [ "${LAB_ALG_REDRAW:-0}" = 1 ]; then
    ks=$(csv_awk 'FNR > 1 { print $c["K"] }' "$out/algorithms.csv" | sort -un | tr '\n' ' ')
    sizes=$(csv_awk 'FNR > 1 { print $c["bytes"] }' "$out/algorithms.csv" | sort -un | tr '\n' ' ')
else
    repeat_points label $(( t_start + budget ))
    points_csv algorithms "$out/algorithms"
fi

# ------------------------------------------------------------ the map
awk -F, -v source=measured -v names="$names" -f "$here/algo_map.awk" "$out/algorithms.csv" \
    > "$out/algo_map_measured.csv"
{ cat "$out/algo_map_measured.csv"; tail -n +2 "$out/algo_map_model.csv"; } > "$out/algo_map.csv"
awk -F, -v mode=md -f "$here/algo_map.awk" "$out/algo_map.csv" > "$out/algo_map.md"
sub="measured: EMULATED link $link_bw, $link_lat per host, 127.0.0.1, $(nproc) CPUs; model: bin/model at the same link"
for fmt in png svg; do
    gnuplot -e "dir='$root/plots/'; map='$out/algo_map.csv'; srcs='measured model'; names='$names'; fmt='$fmt'; out='$out/algo_map.$fmt'; sub='$sub'" \
        "$root/plots/algo_map.gp" 2>>"$out/logs/plots.log" || failed=$((failed + 1))
done

# ------------------------------------------------------------ the selector against the measured map
# pick RULE K BYTES: the algorithm a rule picks (the selector: bin/model --algo auto).
pick() {
    case $1 in
    selector) "$PSR_BIN/model" --algo auto --K "$2" --bytes "$3" --bw "$link_bw" --latency "$link_lat" --gamma "$gamma" | cut -d' ' -f1 ;;
    ompi) awk -v k="$2" -v n="$3" 'BEGIN {
              if (k < 4) a = n < 8 ? "ring" : n < 4096 ? "rd" : n < 8192 ? "ring" : n < 16384 ? "rd" : n < 262144 ? "ring" : "rabenseifner"
              else if (k < 8) a = n < 16 ? "ring" : n < 8192 ? "rd" : "rabenseifner"
              else if (k < 16) a = n < 8192 ? "rd" : "rabenseifner"
              else a = "rabenseifner"
              print a }' ;;
    mpich) awk -v k="$2" -v n="$3" 'BEGIN { p = 1; while (p * 2 <= k) p *= 2; print (n <= 2048 || n / 4 < p) ? "rd" : "rabenseifner" }' ;;
    esac
}
{
    echo "rule,K,bytes,pick,pick_s,best,best_s,ratio"
    for rule in selector ompi mpich; do
        for k in $ks; do
            for s in $sizes; do
                b=$(size_bytes "$s")
                p=$(pick "$rule" "$k" "$b")
                csv_awk -v rule="$rule" -v k="$k" -v b="$b" -v p="$p" '
                    FNR > 1 && $c["system"] == "ring" && $c["K"] == k && $c["bytes"] == b {
                        t[$c["algo"]] = $c["time_s"]; if (best == "" || $c["time_s"] + 0 < t[best] + 0) best = $c["algo"] }
                    END { if (best == "") exit
                          printf "%s,%d,%d,%s,%s,%s,%s,%s\n", rule, k, b, p, (p in t) ? t[p] : "", best, t[best],
                                 (p in t) ? sprintf("%.4f", t[p] / t[best]) : "" }' "$out/algorithms.csv"
            done
        done
    done
} > "$out/selector.csv"
{
echo "# the selector (ring_worker --algo auto: bin/model --algo auto, a and bw the link's, g = $gamma s/B"
echo "# from $calib) and two fixed rules against the measured all-reduces (selector.csv); EMULATED link"
echo "# $link_bw, $link_lat; one run per point unless the repeat rule had time; the machine may have been shared"
awk -F, 'NR > 1 {
        n[$1]++
        if ($8 == "") { miss[$1]++; next }
        m[$1]++; if ($8 <= 1.05) ok[$1]++
        sp[$1] += $5; sb[$1] += $7; lr[$1] += log($8) }
    END { for (r in n) printf "%-8s %d cells: pick within 5%% of the measured best all-reduce in %d of %d measured (%.0f%%); time lost to wrong picks %.1f%% (sum of picks / sum of bests - 1), %.1f%% per cell (geometric mean); %d not measured (pruned)\n",
                              r, n[r], ok[r], m[r], (m[r] ? 100 * ok[r] / m[r] : 0), (sb[r] > 0 ? 100 * (sp[r] / sb[r] - 1) : 0),
                              (m[r] ? 100 * (exp(lr[r] / m[r]) - 1) : 0), miss[r] }' \
    "$out/selector.csv" | sort
} > "$out/selector.txt"

busy=$(busy_runs "$out/algorithms_runs.csv")
manifest "$out" " (--only algorithms)" "$cmdline" "; load: $(cut -d' ' -f1-3 /proc/loadavg)" <<EOF
algorithms: K="$ks" sizes="$sizes" candidates="$names" link_bw=$link_bw (EMULATED, per host) link_latency=$link_lat warmup=$warmup synthetic f32
selector: $(tr '\n' ' ' < "$calib" | sed 's/# [^l]*latency_s/latency_s/')
pruned (model time over $prune x the cell's best):${pruned:- none}
repeat: each point until spread <= $spread_target or $repeat runs, budget $budget s; unsettled:$(points_unsettled)
busy_runs: ${busy:-0} (bound_by=busy: other programs slowed them)
jobs_failed: $failed
EOF
echo "the map (measured / model; winner and its margin over the runner-up):"
cat "$out/algo_map.md"
echo "the selector and the fixed rules against the measured all-reduces:"
cat "$out/selector.txt"
host_msg "results: $out (algo_map.md, algo_map.png/svg, algorithms.csv, selector.csv, selector.txt) in $(elapsed)"
[ "$failed" -eq 0 ] || { host_msg "lab.sh: $failed job(s) failed; logs in $out/logs" >&2; exit 1; }
exit 0
