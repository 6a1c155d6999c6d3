#!/usr/bin/env bash
# sim_all.sh -- the simulation study of docs/sim.md (`make sim`), under
# results/sim-<date>/ (or --out DIR):
#
#   1. validation.csv  the model check: psring_sim (star, CM02, factors 1)
#      against bin/model, PS / ring / rd, K = 2, 3, 4, 6, 8, 12, 16 and
#      4 KiB..16 MiB; then the EMULATED link: experiments/launch.sh (real
#      processes) against psring_sim with the same flags, row by row.
#      Each row's link (its link_bw, link_latency columns) follows a rule
#      fixed beforehand, from the system and K alone, so that the link and
#      not this machine sets the pace (LINKS below); launch.sh's bound_by
#      says where it did not, and those rows are kept, flagged, and left
#      out of the figures. Calibration: bandwidth factor = median(sim /
#      real) over the unflagged rows >= 1 MiB (fit); the error is reported
#      on the rows below 1 MiB (validation), which the fit did not see
#      -> calibration.txt
#   2. large_k.csv     PS and ring, K = 2..1024, n = 4 KiB, 64 KiB, 1 MiB,
#      16 MiB and 64 MiB, sizes only, on star and on fat-tree:4, one step
#      (--steps 1 --warmup 0: the simulation is deterministic, so a warm-up
#      step repeats the timed one to the bit and the row is the same;
#      tests/t_sim.sh sim-9.1); wall time and peak memory of the whole
#      sweep (/usr/bin/time -v) -> large_k.time
#   3. seed_k.csv      the seed's exercise (P = 2e9 two-byte parameters,
#      25 GB/s links, K = 8, 64, 512; the PS in one bucket), simulated,
#      beside bin/model
#   4. plots: sim_validation.png, k_time_sim.png (plots/sim_*.gp)
# Platform XML files are kept next to the results (platform-*.xml).
#
# LINKS of part 1. On one machine every real byte is copied by its CPUs,
# and every ring step costs the host a few hundred microseconds (wake-ups,
# syscalls) that the model has not. So the rows run on a slow, long link:
#   latency  --link-latency, default 20 ms: a host's 0.3-0.5 ms per step
#            is then 2% of the step, not 30-50% as at 1 ms
#   rate     the host carries --host-bw in all (default 256 Mbit/s): a
#            ring or rd row, whose K links are all busy at once, gives each
#            link host-bw / K (at least 8 Mbit/s); a PS row, whose server
#            link is the one busy link each way, host-bw / 2
# --link-bw RATE gives every row that one rate instead.
#
#   experiments/sim_all.sh [--quick] [--no-real] [--out DIR]
#       [--link-bw RATE] [--link-latency TIME] [--host-bw RATE]
#       [--large-bw RATE] [--large-latency TIME]
#     --quick    K = 2, 4, 8; sizes 64 KiB..4 MiB; large K to 256 at 64 KiB
#                and 4 MiB
#     --no-real  skip the launch.sh half of 1 (the model check stays)
#     --large-bw, --large-latency
#                the simulated link of part 2 (default 500Mbit, 200us)
set -u
prog=sim_all.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
usage() {
    cat <<EOF
usage: experiments/sim_all.sh [--quick] [--no-real] [--out DIR]
           [--link-bw RATE] [--link-latency TIME] [--host-bw RATE]
           [--large-bw RATE] [--large-latency TIME]
The simulation study (make sim, docs/sim.md): psring_sim against bin/model
and against the real processes on the EMULATED link, row by row (K = 2..16,
4 KiB-16 MiB), the large-K sweep to K = 1024, the seed's table, and the
plots, under results/sim-<date>/ (or --out DIR).
  --quick              K = 2, 4, 8; 64 KiB-4 MiB; large K to 256 at 64 KiB, 4 MiB
  --no-real            the model check only (no launch.sh runs)
  --link-latency TIME  the validation rows' latency (default 20ms)
  --host-bw RATE       what the host carries in all (default 256Mbit): a ring
                       or rd row's K links get RATE / K each (at least 8Mbit),
                       a PS row's server link RATE / 2
  --link-bw RATE       one rate for every validation row instead
  --large-bw RATE, --large-latency TIME
                       the large-K sweep's simulated link (500Mbit, 200us)
EOF
}
need_bash51
help_or_version "$@"

# The seed's exercise (copied from the seed text, so nothing outside the
# repository is needed): P parameters of E bytes, links of BW.
SEED_P=2000000000 SEED_E=2 SEED_BW=25GB SEED_KS="8 64 512"
BW="" LAT=20ms HOST_BW=256Mbit BIG_BW=500Mbit BIG_LAT=200us

quick=0 real=1 out=""
while (($# > 0)); do
    case $1 in
    --quick) quick=1 ;;
    --no-real) real=0 ;;
    --out|--link-bw|--link-latency|--host-bw|--large-bw|--large-latency)
        (($# >= 2)) || die_usage "$1: missing value"
        [[ -n $2 ]] || usage_error "$1" "" "empty value"
        case $1 in
        --out) out=$2 ;;
        --link-bw) BW=$2 ;;
        --link-latency) LAT=$2 ;;
        --host-bw) HOST_BW=$2 ;;
        --large-bw) BIG_BW=$2 ;;
        --large-latency) BIG_LAT=$2 ;;
        esac
        shift ;;
    *) die_usage "$(shown_value "$1"): unknown option" ;;
    esac
    shift
done
out=${out:-$here/../results/sim-$(date +%Y%m%d-%H%M%S)}
sim=$PSR_BIN/psring_sim model=$PSR_BIN/model
# mbit RATE: RATE (kbit, Mbit, Gbit) in whole Mbit/s, or nothing.
mbit() {
    awk -v r="$1" 'BEGIN { if (match(r, /^[0-9]+(\.[0-9]+)?/)) { v = substr(r, 1, RLENGTH); u = substr(r, RLENGTH + 1)
                   f = u == "kbit" ? 1e-3 : u == "Mbit" ? 1 : u == "Gbit" ? 1e3 : 0
                   if (f && v * f >= 1) printf "%d\n", v * f } }'
}
host_mbit=$(mbit "$HOST_BW")
[[ -n $host_mbit ]] || usage_error --host-bw "$HOST_BW" "not a rate such as 256Mbit or 1Gbit"
# ok_link RATE TIME: whether bin/model takes them (units.h's grammar).
ok_link() { "$model" --algo ring --K 2 --bytes 4096 --bw "$1" --latency "$2" >/dev/null 2>&1; }
ok_link "${BW:-1Gbit}" 0 || usage_error --link-bw "$BW" "not a rate such as 32Mbit"
ok_link 1Gbit "$LAT" || usage_error --link-latency "$LAT" "not a time such as 20ms"
ok_link "$BIG_BW" 0 || usage_error --large-bw "$BIG_BW" "not a rate such as 500Mbit"
ok_link 1Gbit "$BIG_LAT" || usage_error --large-latency "$BIG_LAT" "not a time such as 200us"
[[ -x $sim ]] || { say "no psring_sim in $PSR_BIN (SimGrid not found: make deps)"; exit 1; }
mkdir -p "$out" || usage_error --out "$out" "cannot create it"

# rate_for SYSTEM K: part 1's link rate for one row (LINKS above).
rate_for() {
    if [[ -n $BW ]]; then echo "$BW"; return; fi
    if [[ $1 == ps ]]; then echo "$((host_mbit / 2))Mbit"; return; fi
    local r=$((host_mbit / $2))
    echo "$((r < 8 ? 8 : r))Mbit"
}

if ((quick)); then
    ks="2 4 8" sizes="65536 262144 1048576 4194304" bigks="2 16 64 256" bigsizes="65536 4194304"
else
    ks="2 3 4 6 8 12 16" sizes="4096 16384 65536 262144 1048576 4194304 16777216"
    bigks="2 4 8 16 32 64 128 256 512 1024" bigsizes="4096 65536 1048576 16777216 67108864"
fi

# ---------------------------------------------------------------- 1
# Every line on stdout says what it is: a part's heading, then its lines
# labelled (make sim printed GNU time's lines and bare CSV rows).
echo "== 1. validation: psring_sim against bin/model$( ((real)) && echo " and the real processes on the EMULATED link") -> $out/validation.csv, calibration.txt"
v=$out/validation.csv
# field NAME: column NAME of the CSV row on stdin (under its header).
field() { csv_awk -v n="$1" 'FNR == 2 { print (n in c) ? $c[n] : ""; exit }'; }
echo "system,algo,K,bytes,link_bw,link_latency,model_s,sim_s,real_s,bound_by" >"$v"
nrows=$(($(wc -w <<<"$ks") * $(wc -w <<<"$sizes") * 3)) row_i=0 t_start=$(date +%s)
for k in $ks; do
    for b in $sizes; do
        for a in ps ring rd; do
            m=ring; [[ $a == ps ]] && m=ps
            rate=$(rate_for $m "$k")
            flags=(--steps 3 --link-bw "$rate" --link-latency "$LAT" --bytes "$b")
            [[ $a == rd ]] && flags+=(--algo rd)
            s=$("$sim" $m "$k" "${flags[@]}" --payload sizes | field time_s)
            mo=$("$model" --algo $a --K "$k" --bytes "$b" --bw "$rate" --latency "$LAT")
            r="" rb=""
            if ((real)); then
                wa=(); [[ $a == rd ]] && wa=(--worker-args "--algo rd")
                row=$("$here/launch.sh" $m "$k" "${wa[@]}" --workload synthetic --dtype f32 \
                    --params $((b / 4)) --steps 3 --warmup 1 --link-bw "$rate" --link-latency "$LAT" \
                    --timeout 60 --time-limit 600 2>/dev/null)
                r=$(field time_s <<<"$row") rb=$(field bound_by <<<"$row")
            fi
            row_i=$((row_i + 1))
            echo "$m,$a,$k,$b,$rate,$LAT,$mo,$s,$r,$rb" >>"$v"
            # progress: one line per row, on stderr
            printf '%s: %d/%d  %-4s K=%-2d %8d B  %-8s model %-10s sim %-10s real %-10s %s  (%d s)\n' \
                "$prog" $row_i $nrows $a "$k" "$b" "$rate" "$mo" "$s" "${r:--}" "${rb:-}" \
                $(($(date +%s) - t_start)) >&2
        done
    done
done
awk -F, 'NR > 1 { d = $8 / $7 - 1; if (d < 0) d = -d; if (d > w) w = d; n++ }
         END { printf "model vs sim: %d rows, worst relative error %.2e\n", n, w }' "$v" \
    | tee "$out/calibration.txt"
if ((real)); then
    # Only the real rows the link set the pace of (bound_by link): a
    # host-bound row measures the machine, a sw row (the link stood idle)
    # the software, not the network.
    awk -F, 'NR > 1 && $9 != "" { n++; if ($10 == "link") u++ }
             END { printf "real rows: %d, unflagged (bound_by link): %d (%.0f%%); the rest are left out below\n", n, u, n ? 100 * u / n : 0 }' \
        "$v" | tee -a "$out/calibration.txt"
    awk -F, 'NR > 1 && $9 != "" && $10 == "link" && $4 >= 1048576 { print $8 / $9 }' "$v" | sort -g |
        awk '{ r[++n] = $1 } END { if (n) printf "%.6f\n", n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2 }' \
        >"$out/bandwidth_factor"
    bf=$(cat "$out/bandwidth_factor")
    [[ -n $bf ]] || { bf=1; echo "real vs sim: no unflagged real row of 1 MiB or more to fit on: factor 1" | tee -a "$out/calibration.txt"; }
    # |error| of sim / bf against real; the geometric mean over the rows
    # (each |error| floored at 1e-6) and the worst, with the worst row named.
    awk -F, -v bf="$bf" '
        function put(tag, n, s, g, w, wr) {
            if (n) printf "real vs sim: %s %d rows: geometric mean |error| %.1f%%, mean %.1f%%, worst %.1f%% (%s)\n", tag, n, 100 * exp(g / n), 100 * s / n, 100 * w, wr
            else printf "real vs sim: %s no rows\n", tag }
        NR > 1 && $9 != "" && $10 == "link" { e = ($8 / bf) / $9 - 1; if (e < 0) e = -e
              name = $2 " K=" $3 " " $4 " B"
              if ($4 >= 1048576) { fn++; fs += e; fg += log(e > 1e-6 ? e : 1e-6); if (e > fw) { fw = e; fwr = name } }
              else { vn++; vs += e; vg += log(e > 1e-6 ? e : 1e-6); if (e > vw) { vw = e; vwr = name } } }
        END { printf "real vs sim: bandwidth factor %.4f (median sim / real over the unflagged rows >= 1 MiB)\n", bf
              put("fitted on the rows >= 1 MiB,", fn, fs, fg, fw, fwr)
              put("validated on the rows < 1 MiB,", vn, vs, vg, vw, vwr)
              put("all", fn + vn, fs + vs, fg + vg, fw > vw ? fw : vw, fw > vw ? fwr : vwr) }' \
        "$v" | tee -a "$out/calibration.txt"
fi

# ---------------------------------------------------------------- 2
echo "== 2. large K: psring_sim, PS and ring, K = ${bigks// /,}, sizes only, star and fat-tree:4 -> $out/large_k.csv (wall time and peak memory below)"
big() {
    for p in star fat-tree:4; do
        for b in $bigsizes; do
            for k in $bigks; do
                for m in ps ring; do
                    "$sim" $m "$k" --bytes "$b" --steps 1 --warmup 0 --link-bw $BIG_BW --link-latency $BIG_LAT \
                        --payload sizes --platform $p --platform-out "$out/platform-${p//:/_}-$k-$m.xml" \
                        | awk -F, -v p="$p" 'NR == 2 { print p "," $0 }'
                done
            done
        done
    done
}
echo "platform,system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound" \
    >"$out/large_k.csv"
export -f big 2>/dev/null
# GNU time (Debian's `time`, which make deps-sim installs) for the peak
# memory; without it the wall time alone, and a line saying so.
timer=(/usr/bin/time -v -o "$out/large_k.time")
if [[ ! -x /usr/bin/time ]]; then
    timer=()
    echo "Maximum resident set size (kbytes): unknown (no /usr/bin/time: apt-get install time)" >"$out/large_k.time"
    t0=$(date +%s.%N)
fi
"${timer[@]}" bash -c "$(declare -f big); sim=$sim out=$out bigks='$bigks' bigsizes='$bigsizes' BIG_BW=$BIG_BW BIG_LAT=$BIG_LAT big" \
    >>"$out/large_k.csv"
[[ -n ${t0:-} ]] && awk -v a="$t0" -v b="$(date +%s.%N)" \
    'BEGIN { s = b - a; printf "\tElapsed (wall clock) time (h:mm:ss or m:ss): %d:%05.2f\n", s / 60, s - 60 * int(s / 60) }' >>"$out/large_k.time"
grep -E "Elapsed|Maximum resident" "$out/large_k.time" | sed 's/^[[:space:]]*/large-K sweep, whole: /' | tee -a "$out/calibration.txt"

# ---------------------------------------------------------------- 3
echo "== 3. the seed's K table: P = $SEED_P parameters of $SEED_E bytes, $SEED_BW links, psring_sim beside bin/model -> $out/seed_k.csv"
echo "system,K,bytes,model_s,sim_s" >"$out/seed_k.csv"
for k in $SEED_KS; do
    for a in ps ring; do
        b=$((SEED_P * SEED_E))
        # the PS in one bucket (the whole gradient pushed, then pulled): the
        # formula's setting; 25 MiB buckets would overlap the pull with the
        # push (about half the time: docs/lab.md exercise 13) and take 160
        # buckets x K messages to simulate
        bk=(); [[ $a == ps ]] && bk=(--bucket-size $b)
        s=$("$sim" $a "$k" --bytes $b "${bk[@]}" --steps 1 --warmup 0 --link-bw $SEED_BW --link-latency 0 \
            --payload sizes | awk -F, 'NR == 2 { print $7 }')
        mo=$("$model" --algo $a --K "$k" --bytes $b --bw $SEED_BW --latency 0)
        echo "$a,$k,$b,$mo,$s" >>"$out/seed_k.csv"
        printf 'seed K table: %-4s K=%-4s n=%s B  model %s s  sim %s s\n' "$a" "$k" "$b" "$mo" "$s"
    done
done

# ---------------------------------------------------------------- 4
echo "== 4. plots: $out/sim_validation.png, $out/k_time_sim.png"
if command -v gnuplot >/dev/null; then
    gnuplot -e "dir='$here/../plots/'; vfile='$out/validation.csv'; fmt='png'; out='$out/sim_validation.png'" \
        "$here/../plots/sim_validation.gp" &&
        gnuplot -e "dir='$here/../plots/'; file='$out/large_k.csv'; fmt='png'; out='$out/k_time_sim.png'" \
        "$here/../plots/sim_k_time.gp" || say "gnuplot failed"
fi
say "results in $out"
