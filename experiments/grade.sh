#!/bin/sh
# grade.sh -- grade a student's lab: the results folder `make lab` wrote
# and the predictions the worksheet (docs/lab.md) asked for.
#
#   experiments/grade.sh RESULTS_DIR PREDICTIONS_CSV [--tol FRACTION] [--exercises LIST]
#   experiments/grade.sh --template [--exercises LIST]
#                                          a blank predictions.csv on stdout
#   experiments/grade.sh --key [RESULTS_DIR] [--exercises LIST]
#                                          the same, filled with the model's
#                                          values for RESULTS_DIR's settings
#                                          (default: the reference run,
#                                          docs/lab-key.md quotes them)
#   experiments/grade.sh --code FILE       the student track: FILE's ring
#                                          all-reduce checked (grade_code.sh),
#                                          or its buckets (grade_bucket.sh)
#
# THE EXERCISES. Exercises 1-9 (the 120 minutes) unless --exercises says
# otherwise: a list like 1-9,12 or 10,M, or all (1-13, 21 and M: the
# exercises with quantities; 14-20 have none). The optional ones (10-13,
# 21, M) are graded, and listed by --template, only when asked; a
# prediction of an exercise not asked for is left alone.
#
# THE PREDICTIONS. predictions.csv has the columns exercise,quantity,value
# (read by name, in any order); --template lists every quantity the
# worksheet asks for, with an empty value. Each is compared with the
# alpha-beta model (bin/model, common/measure/model.h) under the exercise's
# own settings, the model the run itself uses (exercise 9's and 10's
# parameter server pulls per bucket: bin/model --quantity pipelined
# --bucket): a number is in range when it is within --tol (default 0.25,
# i.e. 25%) of the model's value, relative; a yes/no answer must match,
# and so must each cell of exercise 21's chunk table ("SEND > RECV", the
# chunks of common/coll/ring.c's step table; blanks ignored).
# An "off" line gives the ratio to the model and the likely mistake: a
# known wrong answer of that quantity (alts below: the one-pull PS, no
# overlap, ...) when the value is within 5% of one, else the usual factors
# (mistake_of: 0.5x the egress forgotten, K and 1/K, 8x bits for bytes,
# 1000x milliseconds, ...: docs/lab-key.md, Usual wrong predictions).
# A value left empty is "not answered", a problem.
#
# THE RUN'S SETTINGS. Exercises 2, 3 and 8 read the student's own `make
# lab` folder (docs/lab.md): the K sweep at the rate the calibration chose
# (k_sweep.csv's link_bw in bytes/s, link_latency in s, n = bytes) and the
# size sweep at its K (size_sweep.csv), so their quantities are priced at
# that folder's settings: the graded folder's, or for --key the folder
# given, else the reference run's (docs/reference-results/lab: 8 Mbit/s,
# 1 ms, n = 64 KiB, size sweep at K = 4; the key quotes those). The
# quantities' names say K = 8 (the K sweep's) and K = 4 (the size sweep's
# default, lab.sh --size-k).
#
# THE RESULTS. RESULTS_DIR must hold manifest.txt, k_sweep.csv (exercise
# 2's sweep) and size_sweep.csv (exercise 3's; experiments/lab.sh). Every
# row of the two sweeps is checked, its columns read by name (lib.sh's
# csv_awk):
#   - its bytes_in must be the model's (bin/model --quantity bytes_in) plus
#     the headers: within 1% + 128 bytes per worker. This one is
#     deterministic: a row off here is a broken run, whatever its timing;
#   - its time_s against its model_s: within 10% it is usable. A row bound
#     by "link" is trustworthy ("ok"); one bound by "cpu" (the job's own
#     processes), "busy" (other programs) or "sw" (the link's own record
#     says it stood idle over 5% of the combine: link_util) measured the
#     machine or the software, yet within 10% of its model it says what an
#     idle machine would have ("usable, flagged", not a problem). Over 10%
#     from its model a row is "off" (a problem) whatever its flag: a busy
#     machine is named as the likely cause, the software's per-message
#     cost (fit.txt) for a link-bound one. So the same answer sheet gets
#     the same verdict from a run made on a busy machine as from one made
#     on an idle one, as long as the busy run's rows kept to their model.
#
# OUTPUT. One line per problem on stdout ("problem: ..."), one line per
# usable row ("row ok" or "row usable, flagged"), then one line per
# prediction ("ok" or "off"), one verdict line per exercise graded
#   "verdict: exercise E: P/Q predictions in range[, U/R rows usable]"
# and the summary line
#   "grade: P/Q predictions in range (tolerance T), U/R rows usable (L bound_by=link, F flagged within 10% of their model), N problem(s)".
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
usage: $prog RESULTS_DIR PREDICTIONS_CSV [--tol FRACTION] [--exercises LIST]
       $prog --template [--exercises LIST] > predictions.csv
       $prog --key [RESULTS_DIR] [--exercises LIST]   (the template filled with the model's
             values; exercises 2, 3 and 8 at RESULTS_DIR's settings, default the reference run's)
       $prog --code FILE [--quick]   (the student track: FILE's ring or buckets, grade_code.sh)
Grade a lab: RESULTS_DIR is what \`make lab\` wrote (results/<run>/),
PREDICTIONS_CSV the student's filled-in template (exercise,quantity,value).
Predictions are compared with bin/model within --tol (default 0.25,
relative); an "off" one gets its ratio to the model and the likely
mistake. Each sweep row is usable when its time is within 10% of its
model (bound_by=link: ok; cpu, busy or sw: usable, flagged).
--exercises: which exercises (default 1-9; e.g. 1-9,12 or 10,M or 21 or all).
Exit 0 when graded, 64 on bad usage.
EOF
}

# THE QUANTITIES: exercise|quantity|K|what the worksheet asks. Their model
# values come from expect() below, the known wrong answers from alts();
# keep the three in step with docs/lab.md. K is the one the mistake table
# (mistake_of) tries as a factor ("-": none).
quantities() {
    cat <<'EOF'
1|ps_ingress_s_K8|8|seconds: the server's ingress, K=8, 4 GB gradient, 25 GB/s
1|ps_ingress_s_K64|64|seconds: the server's ingress, K=64
1|ps_ingress_s_K512|512|seconds: the server's ingress, K=512
1|ring_s_K8|8|seconds: the ring all-reduce, K=8
1|ring_s_K64|64|seconds: the ring all-reduce, K=64
1|ring_s_K512|512|seconds: the ring all-reduce, K=512
2|ps_time_s_K2|2|seconds: PS step, K=2, your make lab run's K sweep (its n, link_bw, link_latency: experiments/lab_report.sh --settings)
2|ps_time_s_K8|8|seconds: PS step, K=8
2|ring_time_s_K8|8|seconds: ring all-reduce, K=8
2|ps_bytes_in_K8|8|bytes into the server per step, K=8 (payload)
2|ring_bytes_in_K8|8|bytes into one ring worker per step, K=8 (payload)
3|ring_latency_bandwidth_bytes_K4|4|bytes: n where the ring's two terms are equal, your run's size sweep (K=4), link_bw, link_latency
3|ps_ring_crossover_bytes_K4|4|bytes: n above which the ring beats the PS in the model, K=4
4|mean_of_means_exact_equal|-|yes/no: mean-of-means gives the big-batch step with equal shards
4|mean_of_means_exact_unequal|-|yes/no: the same with unequal shards
5|identical_unequal_shards|-|yes/no: PS and ring end with the reference's weights, shards 5:1:1:3
6|accum_bytes_per_example_ratio|4|ring bytes per example with --micro 4 over without
7|sync_every_micro_bytes_ratio|4|sync-every-micro's bytes_in per step over exercise 6's
8|rd_time_s_4K|4|seconds: rd, 4 KiB, your run's size sweep (K=4), link_bw, link_latency
8|ring_time_s_4K|4|seconds: ring, 4 KiB
8|rd_time_s_1M|4|seconds: rd, 1 MiB
8|ring_time_s_1M|4|seconds: ring, 1 MiB
8|rd_ring_crossover_bytes|4|bytes: n where rd and the ring cost the same, K=4
9|ring_step_no_overlap_s|2|seconds: ring K=2 step, 8 MiB, 200 Mbit/s, 200 ms backward, no overlap
9|ring_step_overlap_s|2|seconds: the same with 8 overlapped buckets
9|ps_step_no_overlap_s|2|seconds: PS K=2 step, 1 MiB buckets pulled one by one, no overlap
9|ps_step_overlap_s|2|seconds: PS K=2 step, overlapped pushes
10|srv_one_server_s|8|seconds: one server, K=8, n=1 MiB, 8 Mbit/s, a=200 us, 64 KiB buckets pulled one by one
10|srv_separate8_s|8|seconds: 8 separate servers
10|srv_colocated_k0_s|8|seconds: colocated S = K (k = 0)
10|srv_ring_s|8|seconds: the ring all-reduce
10|srv_colocated_k2_s|8|seconds: colocated + k = 2
10|srv_colocated_k8_s|8|seconds: colocated + k = 8
10|srv_one_server_link_bytes|8|bytes per step through the busiest link, each way: one server
10|srv_colocated_k0_link_bytes|8|bytes: the same, colocated S = K (k = 0)
10|srv_colocated_k2_link_bytes|8|bytes: the same, colocated + k = 2
11|zero1_bytes_ratio|-|bytes sent per rank, ZeRO stage 1 over DDP's
11|zero2_bytes_ratio|-|the same, stage 2
11|zero3_bytes_ratio|-|the same, stage 3
11|zero1_adam_bytes_K2|2|bytes: Adam's state per rank under stage 1, K=2, n=256K f32
11|zero1_adam_bytes_K3|3|bytes: the same, K=3
11|zero3_weights_identical|-|yes/no: stage 3's final weights are DDP's byte for byte
12|strag_ring_step_s_F1|8|seconds: the ring's step, K=8, T=100 ms, the mlp's n = 50696 bytes on 100 Mbit/s, a=1 ms, no straggler (F=1)
12|strag_ring_step_s_F3|8|seconds: the same, worker 1 three times slower (F=3)
12|strag_sync_step_s_F1|8|seconds: the sync PS's step, K=8, the same link, F=1
12|strag_sync_step_s_F3|8|seconds: the same, F=3
12|strag_backup1_step_s_F3|8|seconds: backup:1's step at F=3
12|strag_backup1_batch_share|8|the share of a step's batch backup:1 uses, K=8
12|strag_ssp_updates_per_s_F3|8|updates per second of ssp:2 at F=3
12|strag_async_updates_per_s_F3|8|updates per second of async at F=3
13|sim_ring_s_K512|512|seconds: psring_sim ring, K=512, n=4 GB, 25 GB/s, a=5 us, star (simulated)
13|sim_ps_s_K512|512|seconds: psring_sim PS step, K=512, one bucket, star (simulated)
13|sim_ps_buckets_s_K64|64|seconds: psring_sim PS step, K=64, 25 MiB buckets, star (simulated)
13|sim_ring_fat_tree_over_star_K512|512|the ring's simulated time on fat-tree:4 over the star's, K=512
13|sim_ps_fat_tree_over_star_K512|512|the PS's simulated time on fat-tree:4 over the star's, K=512
13|sim_ring_s_racks_K512|512|seconds: the ring on racks:8:10GB, K=512 (simulated)
13|sim_ps_s_racks_K512|512|seconds: the PS on racks:8:10GB, K=512, one bucket (simulated)
M|mlp_bytes|4|bytes: the mlp gradient n, 6337 f64 parameters
M|mlp_ring_time_s_K4|4|seconds: ring all-reduce of the mlp gradient, K=4, 100 Mbit/s, a=200 us
M|mlp_ps_time_s_K4|4|seconds: PS step of the mlp gradient, K=4
M|mlp_comm_bound|-|yes/no: the mlp step without --backward-time is communication-bound
EOF
    # exercise 21: the chunk table's 24 cells (K = 4), then the step's and
    # the all-reduce's time at lab_phases.sh's defaults.
    for ph in rs ag; do
        for s in 0 1 2; do
            for r in 0 1 2 3; do
                echo "21|${ph}_step${s}_rank$r|4|chunks \"SEND > RECV\": $([ $ph = rs ] && echo reduce-scatter || echo all-gather) step $s, rank $r (K=4)"
            done
        done
    done
    cat <<'EOF'
21|phases_step_ms_K4|4|milliseconds: one step of the ring, K=4, 1 MiB per rank, 16 Mbit/s, a=1 ms
21|phases_allreduce_s_K4|4|seconds: the whole all-reduce, the same
EOF
}

m() { "$PSR_BIN/model" "$@"; }
# run_settings DIR: s_bw (bytes/s), s_lat (s) and s_n (bytes) of DIR's K
# sweep, s_k the K of its size sweep (THE RUN'S SETTINGS); exit 1 when DIR has none.
run_settings() {
    set -- $(csv_awk 'FNR == 2 { print $c["link_bw"], $c["link_latency"], $c["bytes"]; exit }' "$1/k_sweep.csv" 2>/dev/null) \
           $(csv_awk 'FNR == 2 { print $c["K"]; exit }' "$1/size_sweep.csv" 2>/dev/null)
    [ $# = 4 ] && awk -v b="$1" 'BEGIN { exit !(b + 0 > 0) }' || return 1
    s_bw=$1 s_lat=$2 s_n=$3 s_k=$4
}
ref="$(cd "$here" && pwd -P)/../docs/reference-results/lab"
# r ALGO K BYTES [QUANTITY]: the model's time at the run's link.
r() { m --algo "$1" --K "$2" --bytes "$3" --bw "$s_bw" --latency "$s_lat" ${4:+--quantity "$4"}; }
# t ALGO K BYTES BW [QUANTITY]: the model's time at latency 200 us.
t() { m --algo "$1" --K "$2" --bytes "$3" --bw "$4" --latency 200us ${5:+--quantity "$5"}; }
# t9 ALGO BYTES [QUANTITY [BUCKET]]: exercise 9's model, K = 2 at
# 200 Mbit/s and no latency (its commands give no --link-latency).
t9() { m --algo "$1" --K 2 --bytes "$2" --bw 200Mbit --latency 0 ${3:+--quantity "$3"} ${4:+--bucket "$4"}; }
# srv ARGS...: exercise 10's placements, K = 8, n = 1 MiB, 8 Mbit/s,
# 200 us; srvp the PS's, its 64 KiB buckets pulled one by one as lab.sh
# --only servers runs them (bin/model --quantity pipelined).
srv() { m --K 8 --bytes 1M --bw 8Mbit --latency 200us "$@"; }
srvp() { srv --algo ps "$@" --quantity pipelined --bucket 64K; }
# st MODE F: exercise 12's straggler model (bin/model --stragglers): K=8,
# T=100 ms, worker 1 F times slower, the communication the mlp's
# gradient's (50696 bytes) on the sweep's link, 100 Mbit/s and 1 ms.
st() { m --stragglers "$1" --K 8 --backward-time 100ms --straggler "1:$2" --bytes 50696 --bw 100Mbit --latency 1ms; }
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
# ph [ARGS...]: exercise 21's ring, lab_phases.sh's defaults: K = 4, 1 MiB
# per rank, 16 Mbit/s, 1 ms.
ph() { m --algo ring --K 4 --bytes 1M --bw 16Mbit --latency 1ms "$@"; }
# cell Q [SEND RECV]: exercise 21's cell Q (rs|ag_stepS_rankR) as "SEND > RECV",
# the chunks offset by SEND and RECV from r - s (default: ring.c's, -1 -2
# in the reduce-scatter, 0 -1 in the all-gather); chunks mod K = 4.
cell() {
    awk -v q="$1" -v a="${2-}" -v b="${3-}" 'BEGIN {
        split(q, w, "_"); s = substr(w[2], 5) + 0; r = substr(w[3], 5) + 0
        if (a == "") { a = (w[1] == "rs") ? -1 : 0; b = a - 1 }
        printf "%d > %d\n", (r - s + a + 8) % 4, (r - s + b + 8) % 4 }'
}
# lat_slope ALGO K: "LATENCY SLOPE" of the model's time at the run's link,
# from two sizes.
lat_slope() {
    awk -v a="$(r "$1" "$2" 1)" -v b="$(r "$1" "$2" 1048577)" \
        'BEGIN { s = (b - a) / 1048576; printf "%.9g %.9g", a - s, s }'
}

# expect QUANTITY: the model's value (or yes/no) for QUANTITY.
expect() {
    case $1 in
    ps_ingress_s_K*) m --algo ps --K "${1#ps_ingress_s_K}" --bytes 4e9 --bw 25GB --quantity ingress ;;
    ring_s_K*) m --algo ring --K "${1#ring_s_K}" --bytes 4e9 --bw 25GB ;;
    # exercises 2, 3 and 8: the run's own settings (THE RUN'S SETTINGS).
    ps_time_s_K*) r ps "${1#ps_time_s_K}" "$s_n" ;;
    ring_time_s_K8) r ring 8 "$s_n" ;;
    ps_bytes_in_K8) r ps 8 "$s_n" bytes_in ;;
    ring_bytes_in_K8) r ring 8 "$s_n" bytes_in ;;
    ring_latency_bandwidth_bytes_K4)
        set -- $(lat_slope ring "$s_k"); calc "$1 / $2" ;;
    ps_ring_crossover_bytes_K4)
        set -- $(lat_slope ps "$s_k") $(lat_slope ring "$s_k"); calc "($3 - $1) / ($2 - $4)" ;;
    mean_of_means_exact_equal | identical_unequal_shards) echo yes ;;
    mean_of_means_exact_unequal) echo no ;;
    accum_bytes_per_example_ratio) echo 0.25 ;;
    sync_every_micro_bytes_ratio) echo 4 ;;
    rd_time_s_4K) r rd "$s_k" 4K ;;
    ring_time_s_4K) r ring "$s_k" 4K ;;
    rd_time_s_1M) r rd "$s_k" 1M ;;
    ring_time_s_1M) r ring "$s_k" 1M ;;
    rd_ring_crossover_bytes) m --crossover --K "$s_k" --bw "$s_bw" --latency "$s_lat" ;;
    # exercise 9: a 200 ms backward pass; the ring's all-reduce of 8 MiB
    # hides behind it, then the last 1 MiB bucket's. The PS pulls per
    # bucket (bucket i's weights go back while bucket i+1 comes in: bin/model
    # --quantity pipelined): without overlap the backward pass, then the
    # pushes with the pulls behind them; with overlap the pushes behind
    # the backward pass, then the last bucket's pull.
    ring_step_no_overlap_s) calc "0.2 + $(t9 ring 8M)" ;;
    ring_step_overlap_s) c=$(t9 ring 8M); calc "($c > 0.2 ? $c : 0.2) + $(t9 ring 1M)" ;;
    ps_step_no_overlap_s) calc "0.2 + $(t9 ps 8M pipelined 1M)" ;;
    ps_step_overlap_s) i=$(t9 ps 8M ingress); calc "($i > 0.2 ? $i : 0.2) + $(t9 ps 1M egress)" ;;
    # exercise 10: each placement's own model, the PS's per-bucket pull.
    srv_one_server_s) srvp ;;
    srv_separate8_s) srvp --servers 8 ;;
    srv_colocated_k0_s) srvp --placement colocated --servers 0 ;;
    srv_ring_s) srv --algo ring ;;
    srv_colocated_k2_s) srvp --placement colocated --servers 2 ;;
    srv_colocated_k8_s) srvp --placement colocated --servers 8 ;;
    srv_one_server_link_bytes) srv --algo ps --quantity bytes_in ;;
    srv_colocated_k0_link_bytes) srv --algo ps --placement colocated --servers 0 --quantity bytes_in ;;
    srv_colocated_k2_link_bytes) srv --algo ps --placement colocated --servers 2 --quantity bytes_in ;;
    # exercise 11: reduce-scatter + all-gather ARE the all-reduce (stages
    # 1, 2); stage 3 gathers the weights once more; Adam keeps 2 n e / K.
    zero1_bytes_ratio | zero2_bytes_ratio) echo 1 ;;
    zero3_bytes_ratio) echo 1.5 ;;
    zero1_adam_bytes_K2) echo 1048576 ;;
    zero1_adam_bytes_K3) echo 699050.667 ;;
    zero3_weights_identical) echo yes ;;
    # exercise 12: the straggler models; backup:1 uses K-1 of K pushes.
    strag_ring_step_s_F1) st ring 1 ;;
    strag_ring_step_s_F3) st ring 3 ;;
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
    # exercise 21: ring.c's step table (common/coll/ring.c; lab_phases.sh
    # --answer prints it from a run): at reduce-scatter step s rank r sends
    # chunk r-s-1 and receives r-s-2, the all-gather one chunk later.
    rs_step*_rank* | ag_step*_rank*) cell "$1" ;;
    phases_step_ms_K4) calc "1000 * $(ph) / $(ph --quantity steps)" ;;
    phases_allreduce_s_K4) ph ;;
    *) return 1 ;;
    esac
}

# alts QUANTITY: its known wrong answers, "VALUE|the mistake" a line
# (docs/lab-key.md, Usual wrong predictions): a value within 5% of one is
# named as that mistake. Yes/no quantities: "WRONG ANSWER|why not".
alts() {
    case $1 in
    ring_s_K*) echo "$(m --algo ps --K 1 --bytes 4e9 --bw 25GB --quantity ingress)|n/bw: a ring worker moves 2(K-1)/K n each way, not n" ;;
    ring_bytes_in_K8) echo "$s_n|n: a ring worker receives 2(K-1)/K n, not n"
                      echo "$((8 * s_n))|K n: that is the server's bytes_in, not a ring worker's 2(K-1)/K n" ;;
    ps_time_s_K*) echo "$(r ps "${1#ps_time_s_K}" "$s_n" ingress)|the ingress alone: the weights go back out through the same link (the egress forgotten)" ;;
    ring_latency_bandwidth_bytes_K4) echo "$(calc "$s_k * $s_lat * $s_bw * 8")|K a bw with bw in bits/s: $(calc "$s_bw * 8 / 1e6") Mbit/s is $(calc "$s_bw / 1e6") MB/s" ;;
    ring_step_overlap_s) echo "$(expect ring_step_no_overlap_s)|no overlap: with buckets the all-reduces run during the backward pass" ;;
    ps_step_no_overlap_s) echo "$(calc "0.2 + $(t9 ps 8M)")|the one-pull model (push everything, then pull): the server pulls per bucket, bucket i's pull during bucket i+1's push" ;;
    ps_step_overlap_s) i=$(t9 ps 8M ingress)
        echo "$(calc "($i > 0.2 ? $i : 0.2) + $(t9 ps 8M egress)")|the one-pull model (push everything, then pull): the server pulls per bucket, so only the last bucket's pull is left after the pushes"
        echo "$(expect ps_step_no_overlap_s)|no overlap: the pushes start while the backward pass goes on" ;;
    srv_one_server_s) echo "$(srv --algo ps)|one pull per step: the lab's server pulls per 64 KiB bucket, push and pull overlapped" ;;
    srv_colocated_k2_s) echo "$(srv --algo ps --placement colocated --servers 2)|one pull per step under Theorem 1's split: the lab's server pulls per bucket" ;;
    zero3_bytes_ratio) echo "2|two more all-gathers: stage 3 adds one (3(K-1)/K n against 2(K-1)/K n)" ;;
    accum_bytes_per_example_ratio) echo "1|bytes per step, not per example: accumulation sends one gradient per m micro-batches" ;;
    sync_every_micro_bytes_ratio) echo "1|once per step: sync-every-micro communicates after every micro-batch, m = 4 times" ;;
    strag_ring_step_s_F3) echo "$(st ring 1)|the straggler-free step: a synchronous step waits for its slowest worker" ;;
    strag_sync_step_s_F3) echo "$(st sync 1)|the straggler-free step: a synchronous step waits for its slowest worker"
                          echo "$(st ring 3)|the ring's communication: the server's link carries K pushes and K pulls" ;;
    strag_ring_step_s_F1) echo "$(st sync 1)|the server's communication: a ring rank moves 2(K-1)/K n each way, the server's link K n" ;;
    strag_sync_step_s_F1) echo "$(st ring 1)|the ring's communication: the server's link carries K pushes and K pulls" ;;
    strag_ssp_updates_per_s_F3) echo "$(st ssp 1)|no straggler: ssp absorbs jitter, not a worker that is slow for good" ;;
    strag_backup1_batch_share) echo "1|the whole batch: backup:1 drops the last push, 1/K of it" ;;
    mean_of_means_exact_equal) echo "no|with equal shards every worker's mean weighs b_k/B = 1/K: mean-of-means is the global mean" ;;
    mean_of_means_exact_unequal) echo "yes|with unequal shards each mean must weigh b_k/B, not 1/K" ;;
    identical_unequal_shards) echo "no|both systems send sums and divide once by the global B: the shards may differ" ;;
    zero3_weights_identical) echo "no|each chunk is summed by the same ranks in the same order and updated elementwise: the same bits" ;;
    mlp_comm_bound) echo "no|6337 parameters compute in about a millisecond; the all-reduce takes several" ;;
    rs_step*) echo "$(cell "$1" 0 -1 | tr -d ' ')|starting rank r with chunk r (the all-gather's opening): in the reduce-scatter rank r starts with chunk r-1, so that it ends holding chunk r summed"
              echo "$(cell "$1" -2 -1 | tr -d ' ')|sent and received swapped: a cell is \"sent > received\"" ;;
    ag_step*) echo "$(cell "$1" -1 -2 | tr -d ' ')|the reduce-scatter's chunks: the all-gather starts one chunk later, rank r sending chunk r, the one it now holds summed"
              echo "$(cell "$1" -1 0 | tr -d ' ')|sent and received swapped: a cell is \"sent > received\"" ;;
    phases_step_ms_K4) echo "$(calc "1000 * (0.001 + 1048576 / 2e6)")|the whole vector: a step moves one chunk, n/K" ;;
    phases_allreduce_s_K4) echo "$(calc "6 * (0.001 + 1048576 / 2e6)")|the whole vector each step: each of the 2(K-1) steps moves one chunk, n/K"
                           echo "$(calc "$(ph) / 2")|one phase: the all-reduce is the reduce-scatter and then the all-gather, 2(K-1) steps" ;;
    esac
}

# mistake_of RATIO K: the usual factor the ratio VALUE / MODEL is within
# 5% of, as the likely mistake (docs/lab-key.md); nothing when none is.
mistake_of() {
    awk -v r="$1" -v k="$2" 'function near(f) { return f > 0 && r > f * 0.95 && r < f * 1.05 }
    BEGIN {
        if (k != "-" && k > 2) {
            if (near(k / (2 * (k - 1)))) { print "n where the ring moves 2(K-1)/K n"; exit }
            if (near(k)) { print "K = " k " times the model: every worker counted where one is (or K n where the link carries n)"; exit }
            if (near(1 / k)) { print "1/K of the model: the server carries K n, one push from each of the K workers"; exit }
        }
        if (near(0.5)) { print "half the model: the egress forgotten (the weights go back out through the same link), or one of two phases"; exit }
        if (near(2)) { print "twice the model: a phase counted twice, or two that overlap added"; exit }
        if (near(8) || near(1 / 8)) { print "bits vs bytes (8x): a rate in Mbit/s is 8 times its MB/s (500 Mbit/s is 62.5 MB/s)"; exit }
        if (near(1000) || near(1e-3)) { print "milliseconds vs seconds (1000x)"; exit }
        if (near(1e6) || near(1e-6)) { print "microseconds vs seconds (1e6 x)"; exit }
    }'
}

# exercises_of LIST: " E E ... " the exercises LIST names (1-9, 10,M,
# 21, all), of those with quantities (THE QUANTITIES); a range takes the
# ones it spans; exit 1 on a word that names none.
exercises_of() {
    awk -v l="$1" -v have="$(quantities | cut -d'|' -f1 | uniq | tr '\n' ' ')" 'BEGIN {
        nh = split(have, h, " "); for (j = 1; j <= nh; j++) { ok[h[j]] = 1; if (h[j] ~ /^[0-9]+$/ && h[j] + 0 > top) top = h[j] + 0 }
        n = split(l, w, ","); out = ""
        for (i = 1; i <= n; i++) {
            x = w[i]; gsub(/ /, "", x)
            if (x == "all") { for (j = 1; j <= top; j++) if (j in ok) out = out " " j; out = out " M"; continue }
            if (x == "M" || x == "m") { out = out " M"; continue }
            if (x ~ /^[0-9]+$/ && (x + 0) in ok) { out = out " " x + 0; continue }
            if (x ~ /^[0-9]+-[0-9]+$/) {
                split(x, r, "-"); got = 0
                if (r[1] + 0 >= 1 && r[2] + 0 <= top && r[1] + 0 <= r[2] + 0)
                    for (j = r[1] + 0; j <= r[2] + 0; j++) if (j in ok) { out = out " " j; got = 1 }
                if (got) continue
            }
            exit 1
        }
        if (out == "") exit 1
        print out " " }'
}

tol=0.25
template=0
dir=
pred=
exlist=1-9
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --template) template=1; shift ;;
    --key) template=2; shift ;;
    --tol | --tol=*)
        opt_value "$@"; shift $((1 + extra)); tol=$val
        awk -v t="$tol" 'BEGIN { exit !(t ~ /^[0-9.]+$/ && t + 0 > 0 && t + 0 < 10) }' ||
            die_usage "--tol $tol: not a fraction in (0, 10)" ;;
    --exercises | --exercises=*)
        opt_value "$@"; shift $((1 + extra)); exlist=$val ;;
    -*) die_usage "$(shown_value "$1"): unknown option" ;;
    *) if [ -z "$dir" ]; then dir=$1; elif [ -z "$pred" ]; then pred=$1;
       else die_usage "$1: one results folder and one predictions file"; fi; shift ;;
    esac
done
sel=$(exercises_of "$exlist") || usage_error --exercises "$exlist" "not a list of exercises 1-13, 21 and M (like 1-9,12 or 10,M or all)"
# selected EX: EX is one of the exercises graded.
selected() { case $sel in *" $1 "*) return 0 ;; esac; return 1; }
[ -x "$PSR_BIN/model" ] || die_usage "no $PSR_BIN/model: run make first"

# THE RUN'S SETTINGS: the graded folder's, or --key's, else the reference run's.
run_settings "${dir:-$ref}" || run_settings "$ref" || { s_bw=1e6 s_lat=0.001 s_n=65536 s_k=4; }
if [ $template != 0 ]; then
    [ -z "$pred" ] || die_usage "--template and --key take at most a folder"
    [ -z "$dir" ] || [ -d "$dir" ] || die_usage "$dir: no such folder"
    echo "exercise,quantity,value"
    echo "# exercises 2, 3 and 8 at the settings of ${dir:-the reference run (docs/reference-results/lab)}: link_bw $s_bw bytes/s, link_latency $s_lat s, the K sweep's n = $s_n bytes, the size sweep's K = $s_k"
    quantities | while IFS='|' read -r ex q k what; do
        selected "$ex" || continue
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
echo "settings: exercises 2, 3 and 8 priced at link_bw $s_bw bytes/s, link_latency $s_lat s, the K sweep's n = $s_n bytes, the size sweep's K = $s_k ($([ -s "$dir/k_sweep.csv" ] && [ -s "$dir/size_sweep.csv" ] && echo "$dir's own" || echo "the reference run's: $dir has no sweeps"))"

# ------------------------------------------------------------ the results
# k_sweep.csv is exercise 2's sweep, size_sweep.csv exercise 3's: their
# rows count in those exercises' verdicts.
for f in manifest.txt k_sweep.csv size_sweep.csv; do
    [ -s "$dir/$f" ] || problem "results: no $f in $dir (make lab writes it)"
done
rows=0 usable=0 linkok=0 flagged=0
rows_2=0 usable_2=0 rows_3=0 usable_3=0
for f in k_sweep.csv size_sweep.csv; do
    [ -s "$dir/$f" ] || continue
    case $f in k_*) ex=2 ;; *) ex=3 ;; esac
    csv_awk 'FNR == 1 { n = split("system,algo,K,bytes,bytes_in,link_bw,link_latency,bound_by,time_s,model_s", need, ",")
                        for (j = 1; j <= n; j++) if (!c[need[j]]) print "nocol " need[j]; next }
             { a = ($c["algo"] == "rd") ? "rd" : $c["system"]
               print "row", FNR, a, $c["K"], $c["bytes"], $c["bytes_in"], $c["link_bw"], $c["link_latency"],
                     ($c["bound_by"] == "" ? "-" : $c["bound_by"]), ($c["time_s"] == "" ? "-" : $c["time_s"]),
                     ($c["model_s"] == "" ? "-" : $c["model_s"]) }' \
        "$dir/$f" > "$pf.rows"
    while read -r kind line a k n bin bw lat by ts ms; do
        if [ "$kind" = nocol ]; then problem "results: $f has no column $line"; continue; fi
        rows=$((rows + 1)); eval "rows_$ex=\$((rows_$ex + 1))"
        what="$f line $line ($a K=$k n=$n)"
        want=$(m --algo "$a" --K "$k" --bytes "$n" --bw "$bw" --latency "$lat" --quantity bytes_in 2>/dev/null) ||
            { problem "results: $what: bin/model cannot price it"; continue; }
        if ! awk -v g="$bin" -v w="$want" -v k="$k" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 0.01 * w + 128 * k) }'; then
            problem "bytes: $what: bytes_in $bin, the model says $want (+ headers): a broken run"
            continue
        fi
        case $by in
        link) why= ;;
        sw) why="the link stood idle: the software, not the network, set its pace" ;;
        *) why="the machine, not the network, set its pace" ;;
        esac
        if [ "$ms" = - ] || [ "$ts" = - ]; then
            if [ "$by" = link ]; then
                echo "row ok   $what: bound_by=link (no model_s to compare with)"
                usable=$((usable + 1)); linkok=$((linkok + 1)); eval "usable_$ex=\$((usable_$ex + 1))"
            else
                problem "untrustworthy: $what: bound_by=$by, not link ($why), and no model_s to compare with"
            fi
            continue
        fi
        r=$(awk -v t="$ts" -v m="$ms" 'BEGIN { printf "%.3f", (m > 0 ? t / m : 0) }')
        if awk -v r="$r" 'BEGIN { exit !(r >= 0.9 && r <= 1.1) }'; then
            usable=$((usable + 1)); eval "usable_$ex=\$((usable_$ex + 1))"
            if [ "$by" = link ]; then
                linkok=$((linkok + 1))
                echo "row ok   $what: time_s $ts, model_s $ms, ratio $r"
            else
                flagged=$((flagged + 1))
                echo "row usable, flagged   $what: bound_by=$by ($why), yet time_s $ts is within 10% of model_s $ms (ratio $r)"
            fi
        elif [ "$by" = link ]; then
            problem "off: $what: time_s $ts, model_s $ms, ratio $r: more than 10% from its model, although bound_by=link (the per-message software cost the model leaves out, or a setting other than the row's: compare fit.txt)"
        else
            problem "off: $what: time_s $ts, model_s $ms, ratio $r: more than 10% from its model, and bound_by=$by, not link ($why): untrustworthy"
        fi
    done < "$pf.rows"
    rm -f "$pf.rows"
done

# ------------------------------------------------------------ the predictions
# off_hint Q VALUE RATIO K: the likely mistake: a known wrong answer of Q
# within 5% of VALUE (alts), else the usual factor RATIO is near.
off_hint() {
    h=$(alts "$1" | awk -F'|' -v v="$2" '{ w = $1 + 0
            if ((v == $1) || (v ~ /^[-+0-9.eE]+$/ && w != 0 && v / w > 0.95 && v / w < 1.05)) { print $2; exit } }')
    [ -n "$h" ] || [ "$3" = - ] || h=$(mistake_of "$3" "$4")
    echo "$h"
}
quantities | cut -d'|' -f1-3 | tr '|' , > "$pf.q"
answered=$(csv_awk 'FNR > 1 { print $c["exercise"] "," $c["quantity"] "," $c["value"] }' "$pf")
inrange=0 total=0
while IFS=, read -r ex q k; do
    selected "$ex" || continue
    total=$((total + 1)); eval "total_$ex=\$((\${total_$ex:-0} + 1)); in_$ex=\${in_$ex:-0}"
    v=$(echo "$answered" | awk -F, -v e="$ex" -v q="$q" '$1 == e && $2 == q { print $3 }' | tail -n 1 | tr -d ' \r')
    want=$(expect "$q")
    if [ -z "$v" ]; then problem "prediction: exercise $ex $q: not answered"; continue; fi
    case $want in
    yes | no)
        v=$(echo "$v" | tr 'A-Z' 'a-z')
        if [ "$v" = "$want" ]; then
            echo "ok   exercise $ex $q: $v"; inrange=$((inrange + 1)); eval "in_$ex=\$((in_$ex + 1))"
        else
            h=$(off_hint "$q" "$v" - -)
            echo "off  exercise $ex $q: $v, the answer is $want${h:+; likely: $h}"
        fi ;;
    *' > '*)    # exercise 21's cells, "SEND > RECV" (blanks in the answer ignored)
        if [ "$v" = "$(echo "$want" | tr -d ' ')" ]; then
            echo "ok   exercise $ex $q: $v"; inrange=$((inrange + 1)); eval "in_$ex=\$((in_$ex + 1))"
        else
            h=$(off_hint "$q" "$v" - -)
            [ -n "$h" ] || case $v in
                "${want%% *}>"*) h="what rank r receives is what rank r-1 sends in the same step" ;;
                *">${want##* }") h="what rank r sends at step s is what it received at step s-1" ;;
            esac
            echo "off  exercise $ex $q: $v, the answer is $want${h:+; likely: $h}"
        fi ;;
    *)
        if awk -v v="$v" -v w="$want" -v t="$tol" 'BEGIN { if (v !~ /^[-+0-9.eE]+$/) exit 2; d = v - w; if (d < 0) d = -d; exit !(d <= t * (w < 0 ? -w : w)) }'; then
            echo "ok   exercise $ex $q: $v (model $want, within $tol)"; inrange=$((inrange + 1)); eval "in_$ex=\$((in_$ex + 1))"
        elif [ $? = 2 ]; then problem "prediction: exercise $ex $q: '$v' is not a number"
        else
            r=$(awk -v v="$v" -v w="$want" 'BEGIN { r = (w != 0 ? v / w : 0); printf (r >= 100 ? "%.0f" : "%.3g"), r }')
            h=$(off_hint "$q" "$v" "$r" "$k")
            echo "off  exercise $ex $q: $v, the model says $want (ratio ${r}x, tolerance $tol)${h:+; likely: $h}"
        fi ;;
    esac
done < "$pf.q"
echo "$answered" | awk -F, 'NF' > "$pf.a"
while IFS=, read -r ex q v; do
    grep -q "^$ex,$q," "$pf.q" || problem "prediction: exercise $ex $q: no such quantity (--template lists them)"
done < "$pf.a"
rm -f "$pf.a" "$pf.q"

# ------------------------------------------------------------ the verdicts
for ex in $sel; do
    eval "p=\${in_$ex:-0} q=\${total_$ex:-0}"
    line="verdict: exercise $ex: $p/$q predictions in range"
    case $ex in 2 | 3) eval "line=\"\$line, \$usable_$ex/\$rows_$ex rows usable\"" ;; esac
    echo "$line"
done
echo "grade: $inrange/$total predictions in range (tolerance $tol), $usable/$rows rows usable ($linkok bound_by=link, $flagged flagged within 10% of their model), $problems problem(s)"
exit 0
