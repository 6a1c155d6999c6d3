#!/bin/sh
# grade.sh -- grade a student's lab: the results folder `make lab` wrote
# and the predictions the worksheet (docs/lab.md) asked for.
#
#   experiments/grade.sh RESULTS_DIR PREDICTIONS_CSV [--tol FRACTION]
#   experiments/grade.sh --template        a blank predictions.csv on stdout
#   experiments/grade.sh --key             the same, filled with the model's
#                                          values (docs/lab-key.md quotes them)
#   experiments/grade.sh --code FILE       the student track: FILE's ring
#                                          all-reduce checked (grade_code.sh)
#
# THE PREDICTIONS. predictions.csv has the columns exercise,quantity,value
# (read by name, in any order); --template lists every quantity the
# worksheet asks for, with an empty value. Each is compared with the
# alpha-beta model (bin/model, common/measure/model.h) under the exercise's own
# settings: a number is in range when it is within --tol (default 0.25,
# i.e. 25%) of the model's value, relative; a yes/no answer must match.
# A value left empty is "not answered", a problem.
#
# THE RESULTS. RESULTS_DIR must hold manifest.txt, k_sweep.csv and
# size_sweep.csv (experiments/lab.sh). Every row of the two sweeps is
# checked, its columns read by name (lib.sh's csv_awk):
#   - trustworthy only when bound_by is "link": a row bound by "cpu" (the
#     job's own processes) or "busy" (other programs) measured the machine,
#     and one bound by "sw" (the link's own record says it stood idle over
#     5% of the combine: link_util) measured the software, not the
#     emulated network: neither says anything about the algorithms;
#   - its bytes_in must be the model's (bin/model --quantity bytes_in) plus
#     the headers: within 1% + 128 bytes per worker. This one is
#     deterministic: a row off here is a broken run, whatever its timing.
#   Timings are never graded (the machine sets them); the summary gives
#   each trustworthy row's time_s / model_s for the discussion.
#
# OUTPUT. One line per problem on stdout ("problem: ..."), then one line per
# prediction ("ok" or "off"), then the summary line
#   "grade: P/Q predictions in range, T/R rows trustworthy, N problem(s)".
# Exit status: 0 when grading ran (whatever the grade), 64 on bad usage
# (wrong arguments, a folder or file that does not exist, a predictions
# file without the three columns).
prog=grade.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
# --code FILE: the student's ring (docs/lab.md, S), checked by grade_code.sh.
case ${1-} in --code | --code=*) exec sh "$here/grade_code.sh" "$@" ;; esac

usage() {
    cat <<EOF
usage: $prog RESULTS_DIR PREDICTIONS_CSV [--tol FRACTION]
       $prog --template > predictions.csv
       $prog --key         (the template filled with the model's values)
       $prog --code FILE [--quick]   (the student track: FILE's ring, grade_code.sh)
Grade a lab: RESULTS_DIR is what \`make lab\` wrote (results/<run>/),
PREDICTIONS_CSV the student's filled-in template (exercise,quantity,value).
Predictions are compared with bin/model within --tol (default 0.25,
relative); each sweep row is trustworthy only when bound_by=link.
Exit 0 when graded, 64 on bad usage.
EOF
}

# THE QUANTITIES: exercise|quantity|what the worksheet asks. Their model
# values come from expect() below; keep the two in step with docs/lab.md.
quantities() {
    cat <<'EOF'
1|ps_ingress_s_K8|seconds: the server's ingress, K=8, 4 GB gradient, 25 GB/s
1|ps_ingress_s_K64|seconds: the server's ingress, K=64
1|ps_ingress_s_K512|seconds: the server's ingress, K=512
1|ring_s_K8|seconds: the ring all-reduce, K=8
1|ring_s_K64|seconds: the ring all-reduce, K=64
1|ring_s_K512|seconds: the ring all-reduce, K=512
2|ps_time_s_K2|seconds: PS step, K=2, n=4 MiB, 500 Mbit/s, a=200 us
2|ps_time_s_K8|seconds: PS step, K=8
2|ring_time_s_K8|seconds: ring all-reduce, K=8
2|ps_bytes_in_K8|bytes into the server per step, K=8 (payload)
2|ring_bytes_in_K8|bytes into one ring worker per step, K=8 (payload)
3|ring_latency_bandwidth_bytes_K4|bytes: n where the ring's two terms are equal, K=4, 500 Mbit/s, a=200 us
3|ps_ring_crossover_bytes_K4|bytes: n above which the ring beats the PS in the model, K=4
4|mean_of_means_exact_equal|yes/no: mean-of-means gives the big-batch step with equal shards
4|mean_of_means_exact_unequal|yes/no: the same with unequal shards
5|identical_unequal_shards|yes/no: PS and ring end with the reference's weights, shards 5:1:1:3
6|accum_bytes_per_example_ratio|ring bytes per example with --micro 4 over without
7|sync_every_micro_bytes_ratio|sync-every-micro's bytes_in per step over exercise 6's
8|rd_time_s_4K_K8|seconds: rd, K=8, 4 KiB, 500 Mbit/s, a=200 us
8|ring_time_s_4K_K8|seconds: ring, K=8, 4 KiB
8|rd_time_s_1M_K8|seconds: rd, K=8, 1 MiB
8|ring_time_s_1M_K8|seconds: ring, K=8, 1 MiB
8|rd_ring_crossover_bytes_K8|bytes: n where rd and the ring cost the same, K=8
9|ring_step_no_overlap_s|seconds: ring K=2 step, 8 MiB, 200 Mbit/s, 200 ms backward, no overlap
9|ring_step_overlap_s|seconds: the same with 8 overlapped buckets
9|ps_step_no_overlap_s|seconds: PS K=2 step, no overlap
9|ps_step_overlap_s|seconds: PS K=2 step, overlapped pushes
12|strag_sync_step_s_F1|seconds: ring or sync PS step, K=8, T=100 ms, t=10 ms, no straggler (F=1)
12|strag_sync_step_s_F3|seconds: the same, worker 1 three times slower (F=3)
12|strag_backup1_step_s_F3|seconds: backup:1's step at F=3
12|strag_backup1_batch_share|the share of a step's batch backup:1 uses, K=8
12|strag_ssp_updates_per_s_F3|updates per second of ssp:2 at F=3
12|strag_async_updates_per_s_F3|updates per second of async at F=3
13|sim_ring_s_K512|seconds: psring_sim ring, K=512, n=4 GB, 25 GB/s, a=5 us, star (simulated)
13|sim_ps_s_K512|seconds: psring_sim PS step, K=512, one bucket, star (simulated)
13|sim_ps_buckets_s_K64|seconds: psring_sim PS step, K=64, 25 MiB buckets, star (simulated)
13|sim_ring_fat_tree_over_star_K512|the ring's simulated time on fat-tree:4 over the star's, K=512
13|sim_ps_fat_tree_over_star_K512|the PS's simulated time on fat-tree:4 over the star's, K=512
13|sim_ring_s_racks_K512|seconds: the ring on racks:8:10GB, K=512 (simulated)
13|sim_ps_s_racks_K512|seconds: the PS on racks:8:10GB, K=512, one bucket (simulated)
M|mlp_bytes|bytes: the mlp gradient n, 6337 f64 parameters
M|mlp_ring_time_s_K4|seconds: ring all-reduce of the mlp gradient, K=4, 100 Mbit/s, a=200 us
M|mlp_ps_time_s_K4|seconds: PS step of the mlp gradient, K=4
M|mlp_comm_bound|yes/no: the mlp step without --backward-time is communication-bound
EOF
}

m() { "$PSR_BIN/model" "$@"; }
# t ALGO K BYTES BW: the model's time at latency 200 us.
t() { m --algo "$1" --K "$2" --bytes "$3" --bw "$4" --latency 200us ${5:+--quantity "$5"}; }
# st MODE F: exercise 12's straggler model (bin/model --stragglers): K=8,
# T=100 ms, worker 1 F times slower, t=10 ms.
st() { m --stragglers "$1" --K 8 --backward-time 100ms --straggler "1:$2" --comm 10ms; }
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
# lat_slope ALGO K BW: "LATENCY SLOPE" of the model's time, from two sizes.
lat_slope() {
    awk -v a="$(t "$1" "$2" 1 "$3")" -v b="$(t "$1" "$2" 1048577 "$3")" \
        'BEGIN { s = (b - a) / 1048576; printf "%.9g %.9g", a - s, s }'
}

# expect QUANTITY: the model's value (or yes/no) for QUANTITY.
expect() {
    case $1 in
    ps_ingress_s_K*) m --algo ps --K "${1#ps_ingress_s_K}" --bytes 4e9 --bw 25GB --quantity ingress ;;
    ring_s_K*) m --algo ring --K "${1#ring_s_K}" --bytes 4e9 --bw 25GB ;;
    ps_time_s_K*) t ps "${1#ps_time_s_K}" 4M 500Mbit ;;
    ring_time_s_K8) t ring 8 4M 500Mbit ;;
    ps_bytes_in_K8) t ps 8 4M 500Mbit bytes_in ;;
    ring_bytes_in_K8) t ring 8 4M 500Mbit bytes_in ;;
    ring_latency_bandwidth_bytes_K4)
        set -- $(lat_slope ring 4 500Mbit); calc "$1 / $2" ;;
    ps_ring_crossover_bytes_K4)
        set -- $(lat_slope ps 4 500Mbit) $(lat_slope ring 4 500Mbit); calc "($3 - $1) / ($2 - $4)" ;;
    mean_of_means_exact_equal | identical_unequal_shards) echo yes ;;
    mean_of_means_exact_unequal) echo no ;;
    accum_bytes_per_example_ratio) echo 0.25 ;;
    sync_every_micro_bytes_ratio) echo 4 ;;
    rd_time_s_4K_K8) t rd 8 4K 500Mbit ;;
    ring_time_s_4K_K8) t ring 8 4K 500Mbit ;;
    rd_time_s_1M_K8) t rd 8 1M 500Mbit ;;
    ring_time_s_1M_K8) t ring 8 1M 500Mbit ;;
    rd_ring_crossover_bytes_K8) m --crossover --K 8 --bw 500Mbit --latency 200us ;;
    # exercise 9: a 200 ms backward pass; c the all-reduce of 8 MiB, K=2.
    ring_step_no_overlap_s) calc "0.2 + $(t ring 2 8M 200Mbit)" ;;
    ring_step_overlap_s) c=$(t ring 2 8M 200Mbit); calc "($c > 0.2 ? $c : 0.2) + $(t ring 2 1M 200Mbit)" ;;
    ps_step_no_overlap_s) calc "0.2 + $(t ps 2 8M 200Mbit ingress) + $(t ps 2 8M 200Mbit egress)" ;;
    ps_step_overlap_s) i=$(t ps 2 8M 200Mbit ingress); calc "($i > 0.2 ? $i : 0.2) + $(t ps 2 8M 200Mbit egress)" ;;
    # exercise 12: the straggler models; backup:1 uses K-1 of K pushes.
    strag_sync_step_s_F1) st sync 1 ;;
    strag_sync_step_s_F3) st sync 3 ;;
    strag_backup1_step_s_F3) st backup:1 3 ;;
    strag_backup1_batch_share) echo 0.875 ;;
    strag_ssp_updates_per_s_F3) st ssp 3 ;;
    strag_async_updates_per_s_F3) st async 3 ;;
    # exercise 13 (psring_sim, docs/sim.md): on the star the simulated
    # ring and one-bucket PS are the model's; with 25 MiB buckets the pull
    # overlaps the push (the pipelined model); a 4:1 fat-tree changes
    # neither; behind 10 GB/s rack uplinks the ring runs at 10 GB/s and the
    # PS's 455 outside workers (513 hosts in racks of 65) push, then pull,
    # their 4 GB through its rack's uplink.
    sim_ring_s_K512) m --algo ring --K 512 --bytes 4e9 --bw 25GB --latency 5us ;;
    sim_ps_s_K512) m --algo ps --K 512 --bytes 4e9 --bw 25GB --latency 5us ;;
    sim_ps_buckets_s_K64) m --algo ps --K 64 --bytes 4e9 --bw 25GB --latency 5us --quantity pipelined --bucket 25MiB ;;
    sim_ring_fat_tree_over_star_K512 | sim_ps_fat_tree_over_star_K512) echo 1 ;;
    sim_ring_s_racks_K512) m --algo ring --K 512 --bytes 4e9 --bw 10GB --latency 5us ;;
    sim_ps_s_racks_K512) calc "2 * 455 * 4e9 / 10e9" ;;
    # exercise M: the mlp workload's gradient, 6337 f64 parameters.
    mlp_bytes) echo 50696 ;;
    mlp_ring_time_s_K4) t ring 4 50696 100Mbit ;;
    mlp_ps_time_s_K4) t ps 4 50696 100Mbit ;;
    mlp_comm_bound) echo yes ;;
    *) return 1 ;;
    esac
}

tol=0.25
template=0
dir=
pred=
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --template) template=1; shift ;;
    --key) template=2; shift ;;
    --tol | --tol=*)
        opt_value "$@"; shift $((1 + extra)); tol=$val
        awk -v t="$tol" 'BEGIN { exit !(t ~ /^[0-9.]+$/ && t + 0 > 0 && t + 0 < 10) }' ||
            die_usage "--tol $tol: not a fraction in (0, 10)" ;;
    -*) die_usage "$(shown_value "$1"): unknown option" ;;
    *) if [ -z "$dir" ]; then dir=$1; elif [ -z "$pred" ]; then pred=$1;
       else die_usage "$1: one results folder and one predictions file"; fi; shift ;;
    esac
done
[ -x "$PSR_BIN/model" ] || die_usage "no $PSR_BIN/model: run make first"

if [ $template != 0 ]; then
    [ -z "$dir" ] || die_usage "--template and --key take no folder"
    echo "exercise,quantity,value"
    quantities | while IFS='|' read -r ex q what; do
        echo "# $what"
        if [ $template = 1 ]; then echo "$ex,$q,"; else echo "$ex,$q,$(expect "$q")"; fi
    done
    exit 0
fi
[ -n "$pred" ] || die_usage "want RESULTS_DIR PREDICTIONS_CSV (or --template)"
[ -d "$dir" ] || die_usage "$dir: no such folder"
[ -f "$pred" ] || die_usage "$pred: no such file"
grep -v '^#' "$pred" > "${TMPDIR:-/tmp}/grade.$$" || :
trap 'rm -f "${TMPDIR:-/tmp}/grade.$$"' EXIT
pf="${TMPDIR:-/tmp}/grade.$$"
csv_awk 'FNR == 1 { exit !(c["exercise"] && c["quantity"] && c["value"]) }' "$pf" ||
    die_usage "$pred: want the columns exercise,quantity,value (--template writes them)"

problems=0
problem() { echo "problem: $*"; problems=$((problems + 1)); }

# ------------------------------------------------------------ the results
for f in manifest.txt k_sweep.csv size_sweep.csv; do
    [ -s "$dir/$f" ] || problem "results: no $f in $dir (make lab writes it)"
done
rows=0 trusted=0
for f in k_sweep.csv size_sweep.csv; do
    [ -s "$dir/$f" ] || continue
    csv_awk 'FNR == 1 { n = split("system,algo,K,bytes,bytes_in,link_bw,link_latency,bound_by,time_s,model_s", need, ",")
                        for (j = 1; j <= n; j++) if (!c[need[j]]) print "nocol " need[j]; next }
             { a = ($c["algo"] == "rd") ? "rd" : $c["system"]
               print "row", FNR, a, $c["K"], $c["bytes"], $c["bytes_in"], $c["link_bw"], $c["link_latency"],
                     ($c["bound_by"] == "" ? "-" : $c["bound_by"]), $c["time_s"], ($c["model_s"] == "" ? "-" : $c["model_s"]) }' \
        "$dir/$f" > "$pf.rows"
    while read -r kind line a k n bin bw lat by ts ms; do
        if [ "$kind" = nocol ]; then problem "results: $f has no column $line"; continue; fi
        rows=$((rows + 1))
        what="$f line $line ($a K=$k n=$n)"
        if [ "$by" = link ]; then trusted=$((trusted + 1))
        elif [ "$by" = sw ]; then problem "untrustworthy: $what: bound_by=sw, not link (the link stood idle: the software, not the network, set its pace)"
        else problem "untrustworthy: $what: bound_by=$by, not link (the machine, not the network, set its pace)"; fi
        want=$(m --algo "$a" --K "$k" --bytes "$n" --bw "$bw" --latency "$lat" --quantity bytes_in 2>/dev/null) ||
            { problem "results: $what: bin/model cannot price it"; continue; }
        awk -v g="$bin" -v w="$want" -v k="$k" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 0.01 * w + 128 * k) }' ||
            problem "bytes: $what: bytes_in $bin, the model says $want (+ headers)"
        [ "$by" = link ] && [ "$ms" != - ] && echo "timing: $what: time_s $ts, model_s $ms, ratio $(calc "$ts / $ms")"
    done < "$pf.rows"
    rm -f "$pf.rows"
done

# ------------------------------------------------------------ the predictions
quantities | cut -d'|' -f1,2 | tr '|' , > "$pf.q"
answered=$(csv_awk 'FNR > 1 { print $c["exercise"] "," $c["quantity"] "," $c["value"] }' "$pf")
inrange=0 total=0
while IFS=, read -r ex q; do
    total=$((total + 1))
    v=$(echo "$answered" | awk -F, -v e="$ex" -v q="$q" '$1 == e && $2 == q { print $3 }' | tail -n 1 | tr -d ' \r')
    want=$(expect "$q")
    if [ -z "$v" ]; then problem "prediction: exercise $ex $q: not answered"; continue; fi
    case $want in
    yes | no)
        if [ "$(echo "$v" | tr 'A-Z' 'a-z')" = "$want" ]; then echo "ok   exercise $ex $q: $v"; inrange=$((inrange + 1))
        else echo "off  exercise $ex $q: $v, the answer is $want"; fi ;;
    *)
        if awk -v v="$v" -v w="$want" -v t="$tol" 'BEGIN { if (v !~ /^[-+0-9.eE]+$/) exit 2; d = v - w; if (d < 0) d = -d; exit !(d <= t * (w < 0 ? -w : w)) }'; then
            echo "ok   exercise $ex $q: $v (model $want, within $tol)"; inrange=$((inrange + 1))
        elif [ $? = 2 ]; then problem "prediction: exercise $ex $q: '$v' is not a number"
        else echo "off  exercise $ex $q: $v, the model says $want (tolerance $tol)"; fi ;;
    esac
done < "$pf.q"
echo "$answered" | awk -F, 'NF' > "$pf.a"
while IFS=, read -r ex q v; do
    grep -qx "$ex,$q" "$pf.q" || problem "prediction: exercise $ex $q: no such quantity (--template lists them)"
done < "$pf.a"
rm -f "$pf.a"
rm -f "$pf.q"
echo "grade: $inrange/$total predictions in range (tolerance $tol), $trusted/$rows rows trustworthy (bound_by=link), $problems problem(s)"
exit 0
