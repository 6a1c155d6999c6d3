#!/usr/bin/env bash
# lab_servers.sh -- the server placements section of the lab (`experiments/lab.sh
# --only servers`; in `make lab-all`, not in the default `make lab`): the
# parameter server at its best (issue 15; common/measure/model.h, PLACEMENTS).
#
# At K = 8 workers (4 with --quick): the parameter server with a shard on
# each worker's host plus k extra server hosts (launch.sh
# --colocated-servers --servers k: BytePS's mix; k = 0 is colocated S = K,
# which moves the ring's bytes; k >= K is the separate PS with S = k), and
# the ring at the same K. Each point is repeated by the lab's rule
# (lab_lib.sh, THE REPEAT RULE: until spread <= --spread, --repeat runs, or
# the budget). The PS pushes n in 16 buckets of one layer each and pulls per
# bucket (the pull of one bucket overlaps the push of the next, as t_opt
# assumes), so each row's model_s is the pipelined one: t_opt + one bucket
# / bw + 2a (bin/model --quantity pipelined --bucket n/16). The ring runs
# one all-reduce per step, its own model. Theorem 1's split is uneven for
# 0 < k < K and needs ps_server --range; without it those points run with
# equal shards (--even-split, placement colocated-even) and say so.
#
# Results: servers.csv (one row per point, the lab's four columns
# appended), servers_runs.csv, ps_servers.png and .svg (plots/ps_servers.gp:
# time against k with bin/model's t_opt, each placement's own model, the
# ring's line), manifest.txt, logs/. It takes lab.sh's flags (lab.sh
# --help); those of the sweeps alone (--ks, --sizes, ...) are checked and
# not used. --link-bw auto means 8 Mbit/s here (no calibration: up to 16
# processes and 16 frames per step each on the cores).
set -uo pipefail

prog=lab.sh
cmdline=${LAB_CMDLINE:-$0${*:+ $*}}     # lab.sh --only servers passes its own
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/lab_lib.sh"
lab_options "$@"
lab_ready
stop_on_interrupt " (--only servers)" "$cmdline"

placement_note=""
[ "$link_bw" = auto ] && link_bw=$srv_rate
nb=$(size_bytes "$srv_bytes")
bytes=$srv_bytes
bucket=$(( nb / srv_layers ))
[ "$bucket" -ge 4 ] || bucket=4
bps=$(rate_Bps "$link_bw")
if ! "$PSR_BIN/ps_server" --help 2>/dev/null | grep -q -- '--range'; then
    placement_note="ps_server has no --range yet: 0 < k < K ran with equal shards (--even-split), not Theorem 1's split"
fi
add_point "servers_ring_$srv_k" servers ring "$srv_k" "$nb" "$steps"
for k in $srv_ks; do
    extra="--colocated-servers --servers $k --layers $srv_layers --worker-args --bucket-size=$bucket"
    [ -n "$placement_note" ] && [ "$k" -gt 0 ] && [ "$k" -lt "$srv_k" ] && extra="$extra --even-split"
    add_point "servers_ps_k$k" servers ps "$srv_k" "$nb" "$steps" "$extra"
done
label() { echo "servers]"; }
repeat_points label $(( t_start + budget ))
points_csv servers "$out/servers"

busy=$(busy_runs "$out/servers_runs.csv")
sub="K = $srv_k, n = $srv_bytes; EMULATED links: $link_bw per host, $link_lat one-way; synthetic f32; 127.0.0.1, $(nproc) CPUs"
draw ps_servers "$out/servers.csv" "$out/ps_servers" "$sub" "bucket=$bucket"
manifest "$out" " (--only servers)" "$cmdline" "; load: $(cut -d' ' -f1-3 /proc/loadavg)" <<EOF
servers: K=$srv_k extra servers k="$srv_ks" bytes=$srv_bytes bucket=$bucket (PS: per-bucket push and pull, $srv_layers layers) steps=$steps warmup=$warmup link_bw=$link_bw ($bps bytes/s, EMULATED, per host) link_latency=$link_lat
split: ${placement_note:-Theorem 1 (bin/model --split), --range where uneven}
repeat: each point until spread <= $spread_target or $repeat runs, budget $budget s
busy_runs: ${busy:-0} (bound_by=busy: other programs slowed them; their points are marked)
jobs_failed: $failed
EOF

echo "servers at K = $srv_k (time_s: the median run; model_s: that placement's model, the PS's pipelined with $bucket-byte buckets: t_opt + one bucket / bw + 2a; t_opt: Theorem 1, push and pull overlapped):"
csv_awk -v model="$PSR_BIN/model" -v bw="$link_bw" -v lat="$link_lat" "$flag_awk"'
    FNR > 1 && $c["model_s"] != "" {
        if ($c["system"] == "ring") { what = "ring"; q = sprintf("--algo ring --K %d", $c["K"]) }
        else { k = $c["placement"] == "separate" ? $c["servers"] : $c["servers"] - $c["K"]
               what = $c["placement"] == "separate" ? sprintf("ps colocated + k=%d = %d separate", k, k) \
                    : k == 0 ? "ps colocated S = K (k=0)" : sprintf("ps colocated + k=%d%s", k, $c["placement"] == "colocated-even" ? " (even)" : "")
               q = sprintf("--algo ps --placement colocated --servers %d --K %d", k, $c["K"]) }
        cmd = sprintf("\"%s\" %s --bytes %s --bw %s --latency %s --quantity t_opt", model, q, $c["bytes"], bw, lat)
        t = "nan"; cmd | getline t; close(cmd)
        printf "  %-34s time %8.4f s  model %8.4f s  ratio %.3f  t_opt %8.4f s  %d run(s) %.4f..%.4f%s\n", what, $c["time_s"],
               $c["model_s"], $c["time_s"] / $c["model_s"], t, $c["runs"], $c["run_min_s"], $c["run_max_s"], flag() }' \
    "$out/servers.csv" 2>/dev/null
[ -n "$placement_note" ] && echo "note: $placement_note"
if [ "${busy:-0}" -gt 0 ]; then
    echo "THE MACHINE WAS BUSY: $busy run(s) were slowed by other programs (bound_by=busy); their points are marked." >&2
fi
host_msg "results: $out (manifest.txt, servers.csv, servers_runs.csv, ps_servers.png/svg) in $(elapsed)"
[ "$failed" -eq 0 ] || { host_msg "lab.sh: $failed job(s) failed; logs in $out/logs" >&2; exit 1; }
exit 0
