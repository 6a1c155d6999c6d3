# tier: full
# t_handout.sh -- every command in docs/lab.md (the ```sh blocks) runs and
# succeeds, so the handout never goes stale; a few outputs the text quotes
# are checked too. The commands run in a scratch folder that looks like the
# repository (bin/, experiments/, plots/ linked), so results/ lands there.
#
# In four parts, each a test file of its own so that none comes near its
# kill timeout under the sanitizers (the whole took 883 s of 900): this
# file, exercises 0-9 (handout-1.x; 27 s under the sanitizers on
# 2026-11-27, 2 cores shared with other sessions, load 9; 83 s before
# exercises 2, 3 and 8 read the student's own lab folder instead of
# running their own sweeps);
# tests/t_handout_labs.sh, exercises 10 on (the server placements, ZeRO,
# the stragglers, the mlp: handout-1.5, -12.1; 167 s under the sanitizers,
# load 7);
# tests/t_handout_sim.sh and t_handout_sim512.sh, exercise 13 (psring_sim:
# handout-2.1, the star, the buckets and the K = 512 compute; handout-2.2,
# the K = 512 platforms; 516 s for all of it in one file). They set
# HANDOUT_PART and source this file. Each command's start is a progress
# line ("     handout: [i/n] ..."), and one every 30 s while it runs, so no
# part is silent for minutes.
. "$PSR_TESTS/lib.sh"
part=${HANDOUT_PART:-main}

doc="$PSR_TESTS/../docs/lab.md"
repo=$(cd "$PSR_TESTS/.." && pwd)
for b in ps_server ps_worker ring_worker reference model exactness; do
    [ -x "$PSR_BIN/$b" ] || { t_skip handout-1 "docs/lab.md commands" "no $b in $PSR_BIN"; exit 0; }
done
command -v gnuplot >/dev/null || { t_skip handout-1 "docs/lab.md commands" "gnuplot not installed"; exit 0; }

w="$T_TMP/w"
mkdir -p "$w"
ln -s "$PSR_BIN" "$w/bin"
ln -s "$repo/experiments" "$w/experiments"
ln -s "$repo/plots" "$w/plots"

# The commands, one per line, in the order the handout gives them; the
# labs part from exercise 10's lab.sh --only servers on.
awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on && NF' "$doc" > "$T_TMP/all"
cut=$(grep -n -- '^experiments/lab.sh --only servers' "$T_TMP/all" | head -n 1 | cut -d: -f1)
if [ "$part" = labs ]; then tail -n +"${cut:-1}" "$T_TMP/all"; else head -n "$(( ${cut:-1} - 1 ))" "$T_TMP/all"; fi > "$T_TMP/cmds"
n=$(wc -l < "$T_TMP/cmds")

if [ "$part" = main ]; then

t_case handout-1.1 "docs/lab.md has commands to run"
[ "$n" -ge 10 ] || t_fail "only $n commands found in docs/lab.md"
t_end

fi
# run_one LIMIT OUT ERR LABEL CMD: CMD in the scratch folder under a
# LIMIT s watchdog, in the background, with a line "LABEL still running
# after N s" every 30 s while it runs (a lab section or psring_sim at
# K = 512 takes minutes under the sanitizers; run.sh shows the lines as
# they come); its status.
run_one() {
    ( cd "$w" && exec setsid timeout -s KILL "$1" bash -c "$5" ) >"$2" 2>"$3" </dev/null &
    pid=$! c0=$(date +%s) beat=$(( $(date +%s) + 30 ))
    while kill -0 $pid 2>/dev/null; do
        sleep 0.2
        [ "$(date +%s)" -ge $beat ] || continue
        echo "     handout: $4 still running after $(( $(date +%s) - c0 )) s"
        beat=$((beat + 30))
    done
    wait $pid
}
# run_cmds: every command of $T_TMP/cmds, each's output in out.I / err.I.
run_cmds() {
i=0 t0=$(date +%s)
while IFS= read -r cmd; do
    i=$((i + 1))
    echo "     handout: [$i/$n] $(( $(date +%s) - t0 )) s: $(echo "$cmd" | cut -c1-120)"
    # A generous watchdog: under the sanitizers on a loaded 2-core machine
    # exercise 3's lab once took 68 s where it usually takes 10.
    run_one 300 "$T_TMP/out.$i" "$T_TMP/err.$i" "[$i/$n]" "$cmd"
    rc=$?
    why=; [ "$rc" = 137 ] && why=" (killed by the 300 s watchdog)"
    if [ "$rc" != 0 ]; then
        t_fail "command $i exited $rc$why: $cmd; stderr: $(tail -c 600 "$T_TMP/err.$i")"
        # a lab job's own log says which process stopped where
        log=$(ls -t "$w"/results/*/logs/*.log 2>/dev/null | head -n 1)
        [ -n "$log" ] && t_fail "newest job log $log: $(tail -c 800 "$log")"
    fi
done < "$T_TMP/cmds"
}
if [ "$part" = main ]; then
t_case handout-1.2 "every command in docs/lab.md up to exercise 10 succeeds"
# Exercises 0, 2, 3 and 8 read the student's `make lab` folder: the
# reference run (docs/reference-results/lab: 8 Mbit/s, 1 ms, n = 64 KiB,
# the size sweep at K = 4) stands in for it (the test does not run the
# whole lab).
mkdir -p "$w/results/20260101-000000"
for f in manifest.txt k_sweep.csv size_sweep.csv fit.txt; do
    cp "$repo/docs/reference-results/lab/$f" "$w/results/20260101-000000/"
done
run_cmds
t_end

t_case handout-1.3 "the figures the handout quotes are what the commands print"
grep -hq '^a bw/n: latency, in gradient transfers  *0.0153  *3.13e-05 .*latency weighs 488x more here' "$T_TMP"/out.* ||
    t_fail "exercise 0: lab_scale.sh's a bw/n row is not 0.0153 against 3.13e-05 (the key quotes them)"
grep -l '^ *512 ' "$T_TMP"/out.* >/dev/null 2>&1 || t_fail "bin/model printed no K=512 row"
awk '$1 == "512" && $2 + 0 > 81.9 && $2 + 0 < 81.95 { ok = 1 } END { exit !ok }' "$T_TMP"/out.* ||
    t_fail "bin/model's K=512 ingress is not 81.92 s"
grep -h 'max |w_acc - w_big|' "$T_TMP"/out.* | grep -q 'e-1[4-9]' || t_fail "exactness: the distributed step is not within 1e-14"
grep -hqx identical "$T_TMP"/out.* || t_fail "exercise 5: weights not identical"
# Exercises 2, 3 and 8 read the folder (lab_report.sh): its settings, the
# K sweep's bytes_in (the server's K n plus headers), exercise 3's model
# crossovers and exercise 8's measured one; none of their commands pins a
# rate (on 2 cores the K = 8 ring cannot keep to its model at 500 Mbit/s).
grep -hq '^  link: 1e+06 bytes/s (8 Mbit/s), latency a = 0.001 s, .*the K sweep: n = 65536 bytes' "$T_TMP"/out.* ||
    t_fail "exercise 2: lab_report.sh --settings did not print the folder's link and n"
grep -hq '^  the size sweep: K = 4, n = 4096 ' "$T_TMP"/out.* || t_fail "exercise 3: no size sweep settings line"
grep -hq '^  K=8   ps   bytes_in     524736  ingress ' "$T_TMP"/out.* || t_fail "exercise 2: the K=8 server's bytes_in (8 x 64 KiB + headers) not in the report"
grep -hq '^exercise 3, model (K = 4): the ring beats the PS above n = 615 bytes; its latency and bandwidth terms are equal at n = K a bw = 4000 bytes' "$T_TMP"/out.* ||
    t_fail "exercise 3: the report's model crossovers are not 615 and 4000 bytes (the key quotes them)"
grep -hq '^crossover measured (ring vs rd, K = 4): 10516 bytes' "$T_TMP"/out.* || t_fail "exercise 8: no measured ring/rd crossover in the report"
grep -n -- '--link-bw 500Mbit' "$T_TMP/cmds" && t_fail "a worksheet command pins 500 Mbit/s again"
# Exercise 7: mean-of-means exact with equal shards, wrong with unequal;
# sync-every-micro moves 4x exercise 6's bytes per step.
grep -hqx 'equal shards: mean-of-means is exact' "$T_TMP"/out.* || t_fail "exercise 7: equal-shard mean-of-means not identical"
grep -hqx 'unequal shards: mean-of-means is wrong' "$T_TMP"/out.* || t_fail "exercise 7: unequal-shard mean-of-means not different"
[ -s "$w/results/handout-7/loss.png" ] || t_fail "exercise 7: no loss.png"
acc=$(grep -n -- '--batch 4096 --micro 4 --steps 1 --warmup 0$' "$T_TMP/cmds" | head -n 1 | cut -d: -f1)
sync=$(grep -n -- '--mistake sync-every-micro$' "$T_TMP/cmds" | head -n 1 | cut -d: -f1)
if [ -n "$acc" ] && [ -n "$sync" ]; then
    a=$(awk -F, 'NR == 2 { print $14 }' "$T_TMP/out.$acc")
    b=$(awk -F, 'NR == 2 { print $14 }' "$T_TMP/out.$sync")
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b > 3.9 * a && b < 4.1 * a) }' ||
        t_fail "exercise 7: sync-every-micro bytes_in $b is not 4x exercise 6's $a"
else
    t_fail "exercise 6/7 commands not found in the handout"
fi
# Exercise 9: the bucket runs say whether they overlapped (timings are
# printed, never asserted).
grep -hq 'medians over .*overlap on)' "$T_TMP"/err.* || t_fail "exercise 9: no overlapped run"
grep -hq 'medians over .*overlap off)' "$T_TMP"/err.* || t_fail "exercise 9: no --no-overlap run"
t_end
t_case handout-1.4 "every model figure docs/lab-key.md quotes is what bin/model gives (grade.sh --key)"
key="$PSR_TESTS/../docs/lab-key.md"
PSR_BIN="$PSR_BIN" sh "$repo/experiments/grade.sh" --key --exercises all > "$T_TMP/key.csv" 2>"$T_TMP/key.err" || t_fail "grade.sh --key: $(cat "$T_TMP/key.err")"
grep -v '^#' "$T_TMP/key.csv" | tail -n +2 | while IFS=, read -r ex q v; do
    case $v in yes | no) continue ;; esac
    grep -Fq "$v" "$key" || echo "$ex $q $v"
done > "$T_TMP/missing"
[ -s "$T_TMP/missing" ] && t_fail "the key does not quote these model values: $(tr '\n' ';' < "$T_TMP/missing")"
grep -q "292 or 293" "$key" || t_fail "lab-key.md: the unequal shards are not 292 or 293"
grep -hq 'workers 1\.\.7 have 292\.\.293' "$T_TMP"/out.* || t_fail "exactness: the other shards are not printed as 292..293"
grep -q 'loses to the ring at every size' "$doc" "$key" && t_fail "the false claim of exercise 3 is back"
grep -q 'parameter server was at least as fast as the ring\|at 64 KiB ps 12.7 ms' "$key" && t_fail "exercise 3: the claim that the PS beat the ring at 64 KiB is back"
grep -q 'Explanation' "$doc" && t_fail "the worksheet holds an explanation (answers go in docs/lab-key.md)"
# the steps column: timed steps only (exercise 6: --steps 1 --warmup 0 shows 1)
[ -n "$acc" ] && { st=$(awk -F, 'NR == 2 { print $6 }' "$T_TMP/out.$acc"); [ "$st" = 1 ] || t_fail "exercise 6: steps $st, want 1"; }
# timings: printed, never asserted
grep -h '^ps,\|^ring,' "$T_TMP"/out.* | cut -d, -f1-7,18,20 | sed 's/^/     timing: /'
t_end
fi

if [ "$part" = labs ]; then
t_case handout-1.5 "every command in docs/lab.md from exercise 10 on (lab.sh --only servers, zero, stragglers, the mlp) succeeds, and exercise M's rows are as it says"
run_cmds
# Exercise M: the mlp gradient is 6337 f64 = 50696 bytes; a ring worker's
# bytes_in is the model's 2(K-1)/K n = 76044 plus frame headers (< 1%);
# step_s is filled (the whole step), and with the EMULATED backward pass
# it is at least 50 ms longer than time_s.
awk -F, '$1 == "system" { for (i = 1; i <= NF; i++) if ($i == "step_s") c = i; next }
         $1 == "ring" && $4 == 4 && $5 == 50696 { f = 1; if ($14 < 76044 || $14 > 76044 * 1.01 || !c || $c == "") bad = 1 }
         END { exit !(f && !bad) }' "$T_TMP"/out.* || t_fail "exercise M: no mlp ring row with n = 50696, bytes_in 76044 (+headers) and step_s"
awk -F, '$1 == "system" { for (i = 1; i <= NF; i++) if ($i == "step_s") c = i; next }
         c && $1 == "ring" && $4 == 4 && $5 == 50696 && $c - $7 >= 0.05 { ok = 1 } END { exit !ok }' "$T_TMP"/out.* ||
    t_fail "exercise M: no mlp row whose step_s is 50 ms over time_s (--backward-time 50ms)"
t_end
t_case handout-12.1 "exercise 12: the quick straggler sweep has every mode at 1x and 3x, each reaching the target"
s12="$w/results/handout-12"
if [ -s "$s12/stragglers.csv" ]; then
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
             { n[$c["mode"] "@" $c["straggler_factor"]]++; if (!($c["ttt_s"] > 0)) print $c["mode"] " at " $c["straggler_factor"] "x: target not reached" }
             END { split("ring sync backup:1 ssp:2 async", m, " ")
                   for (i = 1; i <= 5; i++) for (f = 1; f <= 3; f += 2) if (n[m[i] "@" f] != 1) print m[i] " at " f "x: " n[m[i] "@" f] + 0 " rows" }' \
        "$s12/stragglers.csv" > "$T_TMP/s12"
    [ -s "$T_TMP/s12" ] && t_fail "$(tr '\n' ';' < "$T_TMP/s12")"
    for f in stragglers.png loss_time.png stragglers.txt; do [ -s "$s12/$f" ] || t_fail "exercise 12: no $f"; done
    # the worksheet's two bin/model lines (K = 8, T = 100 ms, F = 3, the mlp's
    # 50696 bytes on 100 Mbit/s and 1 ms; s = (40 + n)/bw a frame): sync
    # waits for the straggler, 3T + 2a + s + K s (the others' pushes are in
    # before its); backup:1 does not, T + 2(a + (K-1) s) (docs/lab-key.md
    # quotes both)
    grep -hqx 0.33852992 "$T_TMP"/out.* || t_fail "exercise 12: bin/model's sync step at F = 3 is not 0.33852992"
    grep -hqx 0.15882432 "$T_TMP"/out.* || t_fail "exercise 12: bin/model's backup:1 step at F = 3 is not 0.15882432"
    # timings: printed, never asserted
    sed 's/^/     exercise 12 timing: /' "$s12/stragglers.txt"
else
    t_fail "exercise 12: no $s12/stragglers.csv"
fi
t_end
t_case handout-14.1 "exercises 14-17: the bucket rows' bytes_in are 2(K-1)/K S (plus headers), the all-to-all rows exist, and the model figures the key quotes are what bin/model prints"
# 14: ring --bench rows at K = 2 and 8, 64 KiB and 1 MiB; bytes_in within
# 1% + 1 KiB of 2(K-1)/K S (the headers).
for ks in "2 65536" "2 1048576" "8 65536" "8 1048576"; do
    set -- $ks
    awk -F, -v k="$1" -v s="$2" '$1 == "ring" && $2 == "ring" && $4 == k && $5 == s {
            want = 2 * (k - 1) / k * s; if ($14 >= want && $14 <= want * 1.01 + 1024) ok = 1 }
         END { exit !ok }' "$T_TMP"/out.* || t_fail "exercise 14: no K = $1, S = $2 row with bytes_in 2(K-1)/K S"
done
grep -hq '^ring,pairwise,tcp,4,1048576,' "$T_TMP"/out.* || t_fail "exercise 15: no all-to-all row"
for v in 0.25465824 0.428571428571 0.157894736842 0.304347826087 0.0340139758933 0.30960771072; do
    grep -hqx "$v" "$T_TMP"/out.* || t_fail "bin/model did not print $v"
done
key="$PSR_TESTS/../docs/lab-key.md"
for v in 0.2547 0.4286 0.1579 0.3043 0.0340 0.3096 0.00724 0.02318 0.08589 0.16080; do
    grep -q "$v" "$key" || t_fail "lab-key.md does not quote $v"
done
t_end
# handout-2.x: exercise 13, the simulation (docs/sim.md). Its commands are the
# block fenced "```sh sim" (they need bin/psring_sim, built only where
# SimGrid is; handout-1.2 runs the plain "```sh" blocks). Every figure
# checked is deterministic (simulated time) and derived here, none typed
# in: on the star the ring's and the one-bucket PS's simulated times are
# bin/model's; with 25 MiB buckets the PS step lies between the ingress
# K n/bw and the one-pull model; a 4:1 fat-tree changes neither system at
# K = 512; behind 10 GB/s rack uplinks the ring is bin/model's at 10 GB/s
# and the PS pushes and pulls the 455 outside workers' gradients through
# its rack's uplink; a straggler adds its extra compute to the ring's
# step_s and jitter the slowest draw's; and docs/lab-key.md quotes every
# simulated time_s and step_s.
# PSR_HANDOUT_QUICK=1: K = 8 and 64 only (no K = 512 run).
fi

# In two parts (psring_sim under the sanitizers took 516 s for all of it):
# sim, the star, the 25 MiB buckets and the K = 512 compute (handout-2.1);
# sim512, the star again and the K = 512 platforms (handout-2.2).
if [ "$part" = sim ] || [ "$part" = sim512 ]; then
if [ "$part" = sim ]; then
    t_case handout-2.1 "exercise 13, the star, the buckets, compute: psring_sim's seed table on the star == bin/model, 25 MiB buckets between K n/bw and the one-pull model, a straggler and jitter at K = 512 as derived, every simulated time_s quoted by the key"
else
    t_case handout-2.2 "exercise 13, the platforms at K = 512: fat-tree:4 == star, racks:8:10GB as derived, every simulated time_s quoted by the key"
fi
if [ ! -x "$PSR_BIN/psring_sim" ]; then
    if [ "$part" = sim ]; then
        t_skip handout-2.1 "exercise 13" "no psring_sim in $PSR_BIN (SimGrid not found at build time; make deps)"
    else
        t_skip handout-2.2 "exercise 13" "no psring_sim in $PSR_BIN (SimGrid not found at build time; make deps)"
    fi
else
    awk '/^```sh sim$/ { on = 1; next } /^```/ { on = 0 } on && NF' "$doc" > "$T_TMP/simcmds"
    [ "$(wc -l < "$T_TMP/simcmds")" -ge 3 ] || t_fail "no \`\`\`sh sim block in exercise 13"
    quick=${PSR_HANDOUT_QUICK:-0}
    if [ "$part" = sim ]; then
        sed -i -e '/--platform \$p/d' "$T_TMP/simcmds"
    else
        sed -i -e '/buckets\.csv/d' -e '/--straggler/d' "$T_TMP/simcmds"
    fi
    if [ "$quick" = 1 ]; then
        sed -i -e 's/for k in 8 64 512;/for k in 8 64;/' -e '/--platform \$p/d' -e '/--straggler/d' "$T_TMP/simcmds"
    fi
    i=0
    while IFS= read -r cmd; do
        i=$((i + 1))
        echo "     handout: exercise 13 [$i] $(echo "$cmd" | cut -c1-120)"
        run_one 600 "$T_TMP/sim.$i" "$T_TMP/simerr.$i" "exercise 13 [$i]" "$cmd" ||
            t_fail "exercise 13 command $i exited $?: $cmd; stderr: $(tail -c 600 "$T_TMP/simerr.$i")"
    done < "$T_TMP/simcmds"
    d="$w/results/handout-13"
    # col FILE SYSTEM K COLUMN: that row's column, read by name
    col() { awk -F, -v s="$2" -v k="$3" -v n="$4" 'NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }
                 $1 == s && $4 == k { print $c[n] }' "$1"; }
    near() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && w != "" && d <= 1e-5 * w) }'; }
    mo() { "$PSR_BIN/model" --K "$2" --bytes 4e9 --latency 5us --algo "$1" --bw "${3:-25GB}" ${4:+--quantity "$4"}; }
    : > "$T_TMP/simtimes"
    ks="8 64 512"; [ "$quick" = 1 ] && ks="8 64"
    [ "$part" = sim ] || ks=""
    for k in $ks; do
        for s in ring ps; do
            got=$(col "$d/star.csv" $s $k time_s) want=$(mo $s $k)
            near "$got" "$want" || t_fail "$s K=$k, star: simulated $got s, bin/model $want s"
            echo "$got" >> "$T_TMP/simtimes"
        done
    done
    if [ "$part" = sim ]; then
    ps=$(col "$d/buckets.csv" ps 64 time_s) lo=$(mo ps 64 25GB ingress) hi=$(mo ps 64)
    awk -v g="$ps" -v l="$lo" -v h="$hi" 'BEGIN { exit !(g != "" && g >= l * (1 - 1e-6) && g < 0.6 * h) }' ||
        t_fail "ps K=64, 25 MiB buckets: simulated $ps s, want between the ingress $lo s and 0.6 x the one-pull model $hi s"
    echo "$ps" >> "$T_TMP/simtimes"
    fi
    if [ "$quick" != 1 ] && [ "$part" = sim512 ]; then
        for s in ring ps; do
            a=$(col "$d/star.csv" $s 512 time_s) b=$(col "$d/fat-tree.csv" $s 512 time_s)
            [ -n "$a" ] && [ "$a" = "$b" ] || t_fail "$s K=512: fat-tree:4 $b s, star $a s (want the same)"
        done
        ring=$(col "$d/racks.csv" ring 512 time_s) want=$(mo ring 512 10GB)
        near "$ring" "$want" || t_fail "ring on racks:8:10GB: $ring s, bin/model at 10 GB/s $want s"
        # the PS's 513 hosts in racks of ceil(513 / 8) = 65: the server (h512)
        # in the last rack, workers h0..h454 behind its 10 GB/s uplink, which
        # carries their 4 GB in (push) and then out (pull)
        per=$(( (513 + 7) / 8 )); out=$(( 512 / per * per ))
        ps=$(col "$d/racks.csv" ps 512 time_s)
        awk -v g="$ps" -v o="$out" 'BEGIN { exit !(g != "" && g >= 2 * o * 4e9 / 10e9 * (1 - 1e-6) && g < 1.01 * 2 * o * 4e9 / 10e9) }' ||
            t_fail "ps on racks:8:10GB: $ps s, want just above 2 x $out workers x 4 GB through a 10 GB/s uplink"
        echo "$ring $ps" >> "$T_TMP/simtimes"
    fi
    if [ "$quick" != 1 ] && [ "$part" = sim ]; then
        # SIMULATED compute (docs/sim.md): a 2x straggler adds its extra
        # 0.1 s to the ring's step; jitter 0.1 costs the slowest of 512
        # draws, between 1x and exp(0.1 x 4) of the mean
        r512=$(mo ring 512)
        st=$(awk -F, 'NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next } { print $c["step_s"] }' "$d/compute.csv")
        set -- $st
        near "${1:-}" "$(awk -v r="$r512" 'BEGIN { printf "%.9g", 0.2 + r }')" ||
            t_fail "ring K=512, straggler 7:2: step_s '${1:-}', want 0.2 + $r512"
        awk -v g="${2:-}" -v r="$r512" 'BEGIN { exit !(g != "" && g > 0.1 + r && g < 0.1 * exp(0.4) + r) }' ||
            t_fail "ring K=512, jitter 0.1: step_s '${2:-}', want between 0.1 and 0.149 s above $r512"
        echo "$st" >> "$T_TMP/simtimes"
    fi
    key="$PSR_TESTS/../docs/lab-key.md"
    for v in $(cat "$T_TMP/simtimes"); do
        grep -Fq "$v" "$key" || t_fail "docs/lab-key.md (exercise 13) does not quote the simulated $v s"
    done
    t_end
fi
fi
t_exit
