#!/usr/bin/env bash
# algo_check.sh -- every all-reduce algorithm against its formula and the
# simulator (issue 29, "Done when": each algorithm within 5% of its formula
# on the EMULATED link at a link-bound point, and psring_sim within 5% of
# the real run, K = 4 and 8, 4 KiB to 4 MiB).
#
#   experiments/algo_check.sh [--quick] [--ks "4 8"] [--sizes "4K 64K 256K 1M 4M"]
#       [--algos "ring rd ..."] [--reps N] [--link-bw RATE] [--link-latency TIME]
#       [--out DIR] [--redraw]
#
# For each algorithm A (default every one: ring rd rabenseifner tree dbtree
# hring swing-lat swing-bw), K and size n, three times of one all-reduce:
#
#   real   experiments/launch.sh ring K --worker-args "--algo A" --bench
#          -b n -e n -n I -w 1 --link-bw RATE --link-latency TIME: the
#          CSV's time_s (per iteration the slowest rank, median over the I
#          iterations; I chosen so that the timed loop is about 0.5 s of
#          the model, 3 to 20), the median over --reps runs; the runs are
#          interleaved (rep 1 of every point, then rep 2, ...), so that
#          every algorithm sees the same machine
#   model  bin/model --algo A --K K --bytes n --bw RATE --latency TIME
#          (common/measure/model.c: the formula of each algorithm)
#   sim    bin/psring_sim ring K --algo A --bench --bytes n, the same link
#          on the star platform (the emulated link's twin), 3 iterations
#          after 1 warm-up, the median call as in the real runs (a loop's
#          calls overlap for the trees: a rank enters the next as soon as
#          its own part of the last is done); one run: simulated time is
#          deterministic. Empty where psring_sim is not built (no SimGrid).
#
# hring runs with --ranks-per-host K/2 (two hosts; K odd: 1) in all three.
# Default link 32 Mbit/s and 1 ms, where 2 cores keep up with K = 8
# (4 MiB is 1.8 s a ring all-reduce).
#
# --quick: one rep, sizes 4K 256K 4M (about 4 minutes on an idle 2-core
# machine at the default link). Progress: a line on stderr per run.
# --redraw (with --out DIR of an earlier run and its flags): no real run;
# the model and the simulator again, and the tables from DIR/runs.csv (a
# model or simulator changed since).
#
# Results in --out DIR (default results/algo_check-DATE):
#   algo_check.csv  a row per (algo, K, bytes): model_s, real_s (median),
#                   real_min_s, real_max_s, sim_s, real_model (real_s /
#                   model_s), sim_model, sim_real, bound_by (each run's
#                   bound_by column counted: "link:2 busy:1"; only `link`
#                   runs measure the link), reps, ok (1 when real_model
#                   and sim_real are both within 5%, and every run was
#                   `link`)
#   algo_check.md   the same ratios as a markdown table, a row per
#                   algorithm and K, a column group per size
#   runs.csv        every real run's row (the launcher's CSV, rep added)
#   manifest.txt    the command, the machine, the git revision; logs/
# Exit 0 when every job ran (the ratios are figures, not a verdict), 1
# when one failed (its row's real_s is empty), 64 for a usage error.
set -uo pipefail

prog=algo_check.sh
cmdline="$0${*:+ $*}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_bash51
usage() {
    sed -n '2,/^[^#]/ s/^# \{0,1\}//p' "$0"
}
help_or_version "$@"

all_algos="ring rd rabenseifner tree dbtree hring swing-lat swing-bw"
ks="4 8" sizes="4K 64K 256K 1M 4M" algos=$all_algos reps=3
bw=32Mbit lat=1ms out="" quick=0 redraw=0 sizes_set=0 reps_set=0
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift; continue ;;
    --redraw) redraw=1; shift; continue ;;
    --ks | --sizes | --algos | --reps | --link-bw | --link-latency | --out | --*=*) opt_value "$@" ;;
    *) die_usage "$(shown_value "$1"): not an option" ;;
    esac
    case $name in
    --ks) ks=$val ;;
    --sizes) sizes=$val sizes_set=1 ;;
    --algos) algos=$val ;;
    --reps) reps=$val reps_set=1 ;;
    --link-bw) bw=$val ;;
    --link-latency) lat=$val ;;
    --out) out=$val ;;
    *) die_usage "$(shown_value "$name"): not an option" ;;
    esac
    shift $((1 + extra))
done
if [ $quick = 1 ]; then
    [ $sizes_set = 1 ] || sizes="4K 256K 4M"
    [ $reps_set = 1 ] || reps=1
fi
for k in $ks; do
    [[ $k =~ ^[1-9][0-9]{0,2}$ ]] && [ "$k" -ge 2 ] && [ "$k" -le 64 ] ||
        usage_error --ks "$k" "not a rank count 2..64"
done
for s in $sizes; do
    size_bytes "$s" >/dev/null || usage_error --sizes "$s" "not a size like 4K or 4M"
done
for a in $algos; do
    case " $all_algos " in *" $a "*) ;; *) usage_error --algos "$a" "not one of: $all_algos" ;; esac
done
[[ $reps =~ ^[1-9][0-9]?$ ]] || usage_error --reps "$reps" "not a count 1..99"
[ -n "$ks" ] && [ -n "$sizes" ] && [ -n "$algos" ] || die_usage "--ks, --sizes and --algos need a value each"
flags_check model --K 2 --bytes 1 --algo ring --bw "$bw" --latency "$lat"
if [ $redraw = 1 ]; then
    [ -n "$out" ] && [ -s "$out/runs.csv" ] || die_usage "--redraw: needs --out DIR of an earlier run (its runs.csv)"
    need_programs model
else
    need_programs ring_worker psr_merge model
fi
sim=1
[ -x "$PSR_BIN/psring_sim" ] || { sim=0; say "no $PSR_BIN/psring_sim (SimGrid): the sim columns stay empty"; }

[ -n "$out" ] || out=$root/results/algo_check-$(date +%Y%m%d-%H%M%S)
make_out logs
t_start=$(date +%s)
stop_on_interrupt "algo_check" "$cmdline"

# group K: hring's ranks per host (two hosts; one rank a host for odd K).
group() { if [ $(($1 % 2)) = 0 ]; then echo $(($1 / 2)); else echo 1; fi; }
# extra ALGO K: the flags the algorithm needs besides --algo.
extra() { [ "$1" = hring ] && echo "--ranks-per-host $(group "$2")"; }
model() {
    # shellcheck disable=SC2046
    "$PSR_BIN/model" --algo "$1" --K "$2" --bytes "$3" --bw "$bw" --latency "$lat" $(extra "$1" "$2")
}

# The points, and each one's model time and iteration count.
: > "$out/points"
for k in $ks; do
    for s in $sizes; do
        n=$(size_bytes "$s")
        for a in $algos; do
            m=$(model "$a" "$k" "$n") || { say "bin/model --algo $a --K $k --bytes $n failed"; exit 1; }
            it=$(awk -v m="$m" 'BEGIN { i = int(0.5 / m); print (i < 3 ? 3 : i > 20 ? 20 : i) }')
            echo "$a $k $n $s $m $it" >> "$out/points"
        done
    done
done
total=$(( $(wc -l < "$out/points") * reps ))
failed=0 i=0

# The real runs, interleaved: rep 1 of every point, then rep 2, ...
[ $redraw = 1 ] || : > "$out/runs.csv"
runs=$reps
[ $redraw = 1 ] && runs=0
for r in $(seq 1 "$runs"); do
    while read -r a k n s m it; do
        i=$((i + 1))
        tag=$a.$k.$n.$r
        rm -f "$out/logs/row.csv"
        cmd=(bash "$here/launch.sh" ring "$k" --worker-args "--algo $a $(extra "$a" "$k")"
             --bench -b "$n" -e "$n" -n "$it" -w 1 --link-bw "$bw" --link-latency "$lat"
             --timeout 60 --time-limit 300 --out "$out/logs/$tag" --csv-out "$out/logs/row.csv")
        note_command "real $a K=$k $s rep $r" "${cmd[@]}"
        if job "real $a K=$k $s rep $r" "$out/logs/$tag.out" "$out/logs/$tag.err" "${cmd[@]}" &&
            [ -s "$out/logs/row.csv" ]; then
            [ -s "$out/runs.csv" ] || { printf 'rep,'; head -n 1 "$out/logs/row.csv"; } > "$out/runs.csv"
            sed -n "2p" "$out/logs/row.csv" | sed "s/^/$r,/" >> "$out/runs.csv"
            t=$(csv_col "$out/logs/row.csv" time_s) b=$(csv_col "$out/logs/row.csv" bound_by)
            say "[$i/$total] rep $r $a K=$k $s: $t s, model $m ($(awk -v t="$t" -v m="$m" 'BEGIN { printf "%.3f", t / m }')), $b  [$(elapsed)]"
        else
            failed=$((failed + 1))
            say "[$i/$total] rep $r $a K=$k $s: failed  [$(elapsed)]"
        fi
    done < "$out/points"
done

# The simulator, once a point (simulated time does not vary).
: > "$out/sim.txt"
if [ $sim = 1 ]; then
    while read -r a k n s m it; do
        rm -f "$out/logs/sim.csv"
        # shellcheck disable=SC2046
        if job "sim $a K=$k $s" "$out/logs/sim.$a.$k.$n.out" "$out/logs/sim.$a.$k.$n.err" \
            "$PSR_BIN/psring_sim" ring "$k" --algo "$a" $(extra "$a" "$k") --bench --bytes "$n" \
            --link-bw "$bw" --link-latency "$lat" --iters 3 --warmup-iters 1 --csv-out "$out/logs/sim.csv"; then
            echo "$a $k $n $(csv_col "$out/logs/sim.csv" time_s)" >> "$out/sim.txt"
        else
            failed=$((failed + 1))
        fi
    done < "$out/points"
    say "simulated $(wc -l < "$out/sim.txt") points  [$(elapsed)]"
fi

# The table: a row per point.
csv_awk -v points="$out/points" -v simf="$out/sim.txt" -v reps="$reps" '
    BEGIN { while ((getline l < simf) > 0) { split(l, f, " "); st[f[1] " " f[2] " " f[3]] = f[4] } }
    FNR > 1 { a = $c["algo"]; sub(/:.*/, "", a)        # hring:G is hring
              key = a " " $c["K"] " " $c["bytes"]
              t[key] = t[key] " " $c["time_s"]; bb = $c["bound_by"]; nb[key, bb]++
              if (!((key, "seen", bb) in nb)) { nb[key, "seen", bb] = 1; bl[key] = bl[key] " " bb } }
    function med(s,   v, m, i, j, x) {
        m = split(s, v, " ")
        for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > x + 0; j--) v[j + 1] = v[j]; v[j + 1] = x }
        lo = v[1]; hi = v[m]
        return m == 0 ? "" : (m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2)
    }
    function r(x, y) { return (x == "" || y == "" || y + 0 == 0) ? "" : sprintf("%.3f", x / y) }
    END {
        print "algo,K,bytes,model_s,real_s,real_min_s,real_max_s,sim_s,real_model,sim_model,sim_real,bound_by,reps,ok"
        while ((getline l < points) > 0) {
            split(l, p, " "); key = p[1] " " p[2] " " p[3]; m = p[5]
            lo = hi = ""; rs = med(t[key]); ss = st[key]
            nr = split(t[key], dummy, " ")
            flags = ""; allink = nr > 0
            ns = split(bl[key], bs, " ")
            for (i = 1; i <= ns; i++) { flags = flags (flags == "" ? "" : " ") bs[i] ":" nb[key, bs[i]]; if (bs[i] != "link") allink = 0 }
            rm = r(rs, m); sm = r(ss, m); sr = r(ss, rs)
            ok = (rm != "" && sr != "" && rm >= 0.95 && rm <= 1.05 && sr >= 0.95 && sr <= 1.05 && allink) ? 1 : 0
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%d\n", p[1], p[2], p[3], m, rs, lo, hi, ss, rm, sm, sr, flags, nr, ok
        }
    }' "$out/runs.csv" /dev/null > "$out/algo_check.csv"

# The markdown table: real/model, sim/model, sim/real per size.
awk -F, -v bw="$bw" -v lat="$lat" -v reps="$([ $redraw = 1 ] && echo "the" || echo "$reps")" '
    NR == 1 { next }
    { row = $1 " | " $2; if (!(row in seen)) { seen[row] = 1; rows[++nr] = row }
      if (!($3 in sz)) { sz[$3] = 1; szs[++ns] = $3 }
      cell[row, $3] = ($9 == "" ? "-" : $9) " / " ($10 == "" ? "-" : $10) " / " ($11 == "" ? "-" : $11) ($14 == 1 ? "" : " *") }
    END {
        printf "Each cell: real/model / sim/model / sim/real (%s, %s; real: median of %s runs; * not within 5%% or not link-bound)\n\n", bw, lat, reps
        h = "| algo | K |"; d = "|---|---|"
        for (j = 1; j <= ns; j++) { b = szs[j]; h = h " " (b >= 1048576 ? b / 1048576 "M" : b / 1024 "K") " |"; d = d "---|" }
        print h; print d
        for (i = 1; i <= nr; i++) { l = "| " rows[i] " |"; for (j = 1; j <= ns; j++) l = l " " cell[rows[i], szs[j]] " |"; print l }
    }' "$out/algo_check.csv" > "$out/algo_check.md"

{
    echo "link: $bw, $lat; ks: $ks; sizes: $sizes; algos: $algos; reps: $reps"
    echo "jobs_failed: $failed"
    echo "elapsed: $(elapsed)"
} | manifest "$out" " algo_check" "$cmdline" ", machine shared or not: see each run's bound_by"
csv_table "$out/algo_check.csv"
say "wrote $out/algo_check.csv, algo_check.md  [$(elapsed)]"
[ "$failed" = 0 ]
