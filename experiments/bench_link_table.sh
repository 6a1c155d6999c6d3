#!/usr/bin/env bash
# bench_link_table.sh -- issue 27's table: how close each system keeps to
# its alpha-beta model on the EMULATED link, at the rates users try. For
# every link (rate and latency), system and K it runs one training job
#     launch.sh SYSTEM K --workload synthetic --dtype f32 --params N/4
#         --steps STEPS --link-bw RATE --link-latency LAT
# and prints time_s / model_s, with bound_by where it is not `link`
# (docs/link.md, "Where the time and the CPU go"). The systems:
#     ps     the parameter server on a host of its own
#     psco   the PS colocated, one shard on each worker's host (S = K)
#     ring   the ring all-reduce
#     rd     recursive doubling (--algo rd)
# Meant for a machine with a core per process (16 cores for K = 16): on
# fewer the rows say cpu or busy. Every row also goes to
# $PSR_RESULTS/bench/link_table.csv (results/bench/ by default).
# Settings (environment variables):
#     LINKS     "RATE/LAT ..." (default "500Mbit/1ms 500Mbit/100us 1Gbit/1ms 1Gbit/100us")
#     KS        worker counts (default "2 4 8 16")
#     SYSTEMS   (default "ps psco ring rd")
#     BYTES     n in bytes (default 4194304)
#     STEPS     steps per job, 2 of them warm-up (default 8)
# On 16 idle cores (2026-11-27) the 64 jobs take about 3 minutes.
. "$(dirname "$0")/bench_lib.sh"
bench_need ring_worker
bench_need ps_server
links=${LINKS:-500Mbit/1ms 500Mbit/100us 1Gbit/1ms 1Gbit/100us}
ks=${KS:-2 4 8 16}
systems=${SYSTEMS:-ps psco ring rd}
bytes=${BYTES:-4194304}
steps=${STEPS:-8}
csv=$out/link_table.csv
echo "# time_s / model_s per K ($ks); n = $bytes bytes f32, $steps steps; (flag) where bound_by is not link"
echo "# machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for l in $links; do
    rate=${l%/*} lat=${l#*/}
    line="$rate $lat:"
    for sys in $systems; do
        cells=""
        for k in $ks; do
            case $sys in
            ps) set -- ps "$k" ;;
            psco) set -- ps "$k" --colocated-servers ;;
            ring) set -- ring "$k" ;;
            rd) set -- ring "$k" --worker-args "--algo rd" ;;
            *) die_usage "SYSTEMS: '$sys' is not ps, psco, ring or rd" ;;
            esac
            cell=$("$launch" "$@" --workload synthetic --dtype f32 --params $((bytes / 4)) \
                --steps "$steps" --link-bw "$rate" --link-latency "$lat" --csv-out "$csv" \
                2>"$tmp/log" >/dev/null && csv_awk 'END { if ($c["model_s"] > 0)
                    printf "%.3f%s", $c["time_s"] / $c["model_s"],
                        $c["bound_by"] == "link" ? "" : "(" $c["bound_by"] ")" }' "$csv")
            cells="$cells ${cell:-failed}"
        done
        line="$line  $sys$cells"
    done
    echo "$line"
done
echo "# rows: $csv"
