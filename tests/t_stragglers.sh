# t_stragglers.sh -- the stragglers section of the lab (issue 16):
#   - bin/model --stragglers: the straggler models of common/measure/model.h on
#     the EMULATED compute times of common/train/compute.h: the synchronous step
#     follows the slowest worker, backup:1 with one straggler is the
#     straggler-free step, ssp's rate is K over the synchronous step, the
#     jitter is the run's own draws (reproducible, seed-dependent); bad
#     values exit 64 with one line; on the emulated link (--bytes, --bw,
#     --latency) the pushes and the pulls share the server's NIC (sync,
#     backup), async's rate is its MVA fixed point, ssp's with a straggler
#     its pace with the burst it releases (model.h, THE STALE MODES);
#   - experiments/lab.sh --only stragglers --quick: every mode at every
#     factor gives a row (psr_merge's columns and the lab's), the model
#     column is bin/model's for that row, every mode reaches the target
#     loss (ttt_s), the loss files have their three columns, the plots and
#     index.html are written; bad options exit 64 with one line.
# Timings are printed by the sweep, never asserted.
# tier: full
. "$PSR_TESTS/lib.sh"
t_need stragglers-1 "the stragglers section" model ring_worker ps_server ps_worker psr_merge
lab="$PSR_TESTS/../experiments/lab.sh"
m="$PSR_BIN/model"
export PSR_BIN

# st ARGS...: bin/model --stragglers ARGS with K = 8, T = 100 ms, t = 10 ms.
st() { "$m" --stragglers "$@" --K 8 --backward-time 100ms --comm 10ms; }
# same A B: A and B are equal numbers within 1e-9 relative.
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= 1e-9 * (b < 0 ? -b : b) + 1e-15) }'; }

t_case stragglers-1.1 "bin/model --stragglers: sync follows the slowest, backup:1 hides one straggler, ssp = K / sync"
s1=$(st sync --straggler 1:1) s3=$(st sync --straggler 1:3) s4=$(st sync --straggler 1:4)
r3=$(st ring --straggler 1:3) b3=$(st backup:1 --straggler 1:3) b1=$(st backup:1 --straggler 1:1)
p3=$(st ssp:2 --straggler 1:3) a3=$(st async --straggler 1:3) a1=$(st async --straggler 1:1)
echo "     sync x1 $s1, x3 $s3, x4 $s4; backup:1 x3 $b3; ssp x3 $p3 /s; async x1 $a1, x3 $a3 /s"
same "$s1" 0.11 || t_fail "sync at 1x: $s1, want T + t = 0.11"
same "$(awk -v a="$s4" -v b="$s3" 'BEGIN { print a - b }')" 0.1 || t_fail "sync: x4 - x3 = $s4 - $s3, want T = 0.1"
same "$r3" "$s3" || t_fail "ring $r3 is not sync $s3"
same "$b3" "$s1" || t_fail "backup:1 with one 3x straggler $b3 is not the straggler-free step $s1"
same "$b1" "$s1" || t_fail "backup:1 at 1x $b1 is not sync's $s1"
same "$p3" "$(awk -v s="$s3" 'BEGIN { printf "%.17g", 8 / s }')" || t_fail "ssp at 3x $p3 is not K / sync = 8 / $s3"
same "$a1" "$(awk -v s="$s1" 'BEGIN { printf "%.17g", 8 / s }')" || t_fail "async at 1x $a1 is not K / (T + t)"
awk -v a="$a3" -v p="$p3" -v a1="$a1" 'BEGIN { exit !(a > p && a < a1) }' || t_fail "async at 3x ($a3) not between ssp ($p3) and async at 1x ($a1)"
t_end

t_case stragglers-1.2 "bin/model --stragglers: the jitter is the run's draws: reproducible, the seed's, the median over the timed steps"
j1=$(st sync --straggler 1:3 --jitter 0.5 --steps 30 --warmup 2)
j2=$(st sync --straggler 1:3 --jitter 0.5 --steps 30 --warmup 2)
j3=$(st sync --straggler 1:3 --jitter 0.5 --steps 30 --warmup 2 --seed 8)
j0=$(st sync --straggler 1:3 --jitter 0 --steps 30 --warmup 2)
echo "     jitter 0.5: $j1 (again $j2, seed 8 $j3); none $j0"
[ "$j1" = "$j2" ] || t_fail "the same flags gave $j1 then $j2"
[ "$j1" != "$j3" ] || t_fail "--seed 8 gave the same median $j1"
same "$j0" "$s3" || t_fail "--jitter 0 over 30 steps $j0 is not one step's $s3"
[ "$j1" != "$j0" ] || t_fail "--jitter 0.5 changed nothing"
# backup:7 of 8 takes the fastest push: with jitter below sync's
jb=$(st backup:7 --straggler 1:3 --jitter 0.5 --steps 30 --warmup 2)
awk -v b="$jb" -v s="$j1" 'BEGIN { exit !(b < s) }' || t_fail "backup:7 $jb is not below sync $j1"
t_end

t_case stragglers-1.3 "bin/model --stragglers: bad values exit 64 with one line"
for args in "--stragglers bogus --K 8 --backward-time 100ms --comm 0" \
    "--stragglers backup:8 --K 8 --backward-time 100ms --comm 0" \
    "--stragglers backup:0 --K 8 --backward-time 100ms --comm 0" \
    "--stragglers ssp:-1 --K 8 --backward-time 100ms --comm 0" \
    "--stragglers sync --K 8 --backward-time 100ms --straggler 9:2 --comm 0" \
    "--stragglers sync --K 8 --backward-time 100ms --straggler 1:0.5 --comm 0" \
    "--stragglers sync --K 8 --backward-time 100ms --jitter 3 --comm 0" \
    "--stragglers sync --K 8 --backward-time 100ms" \
    "--stragglers sync --K 8 --comm 0" \
    "--stragglers sync --backward-time 100ms --comm 0" \
    "--stragglers sync --K 8 --backward-time 100ms --comm 0 --steps 3 --warmup 3" \
    "--stragglers sync --K 8 --backward-time 100ms --comm 0 --algo ring" \
    "--stragglers sync --K 8 --backward-time 100ms --comm 0 --quantity time" \
    "--backward-time 100ms --K 8 --comm 0"; do
    job 30 "$m" $args
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "'$args': want one line on stderr: $(cat "$T_TMP/err")"
    [ -s "$T_TMP/out" ] && t_fail "'$args': printed $(cat "$T_TMP/out")"
done
t_end

t_case stragglers-1.4 "bin/model --stragglers on the link: the pushes and pulls share the server's NIC (sync, backup:B), async's rate is its MVA fixed point, ssp with a straggler keeps its pace with the burst it releases"
# K = 4, T = 100 ms, no jitter, n = 50000 bytes at 4 MB/s, a = 1 ms: a
# frame is s = 50040 / 4e6 s each way (model.h, THE STALE MODES).
ln() { "$m" --stragglers "$@" --K 4 --backward-time 100ms --bytes 50000 --bw 4e6 --latency 1ms; }
u=$(ln async) u3=$(ln async --straggler 1:3) p3=$(ln ssp:2 --straggler 1:3) p1=$(ln ssp:2 --straggler 1:1)
sy=$(ln sync --straggler 1:3) s1=$(ln sync) bk=$(ln backup:1 --straggler 1:3) b1=$(ln backup:1)
echo "     async $u /s (x3 $u3), ssp:2 x3 $p3 /s, sync $s1 s (x3 $sy), backup:1 $b1 s (x3 $bk)"
# async alike: x = U / K per worker, R = s (1 + 3 x R) per direction, x = 1 / (T + 2a + 2R)
awk -v u="$u" 'BEGIN { s = 50040 / 4e6; x = u / 4; r = s / (1 - 3 * x * s); d = 1 / (0.102 + 2 * r) - x
    if (d < 0) d = -d; exit !(u > 0 && d <= 1e-6 * x && r > s) }' ||
    t_fail "async on the link: $u updates/s is not the MVA fixed point x = 1 / (T + 2a + 2R), R = s (1 + 3 x R)"
awk -v u="$u" -v u3="$u3" 'BEGIN { exit !(u3 < u) }' || t_fail "async: a 3x straggler did not lower the rate ($u3 vs $u)"
same "$p3" "$(awk 'BEGIN { s = 50040 / 4e6; printf "%.17g", 4 / (0.3 + 0.002 + s + 4 * s) }')" ||
    t_fail "ssp:2 at 3x on the link: $p3 /s is not K / (3T + 2a + s + K s): its pull shares the egress with the K - 1 it releases"
[ "$p1" = "$u" ] || t_fail "ssp:2 at 1x (no persistent straggler): $p1 /s, want async's $u"
# sync: every push at T, K in and K out; at 3x the others' pushes are in
# before the straggler's: 3T + s + K s + 2a; backup:1 at 3x: T + 3s + 3s + 2a;
# backup:1 without a straggler: the late push comes with the others, a sync step
same "$s1" "$(awk 'BEGIN { s = 50040 / 4e6; printf "%.17g", 0.1 + 8 * s + 0.002 }')" || t_fail "sync on the link: $s1, want T + 4s in + 4s out + 2a"
same "$sy" "$(awk 'BEGIN { s = 50040 / 4e6; printf "%.17g", 0.3 + 5 * s + 0.002 }')" || t_fail "sync at 3x on the link: $sy, want 3T + s + 4s + 2a"
same "$bk" "$(awk 'BEGIN { s = 50040 / 4e6; printf "%.17g", 0.1 + 6 * s + 0.002 }')" || t_fail "backup:1 at 3x on the link: $bk, want T + 3s + 3s + 2a"
[ "$b1" = "$s1" ] || t_fail "backup:1 with every push together: $b1, want sync's $s1"
for args in "async --K 4 --backward-time 100ms --bytes 1000 --bw 1e6 --comm 1ms" \
    "async --K 4 --backward-time 100ms --bw 1e6" "async --K 4 --backward-time 100ms --bytes 1000"; do
    job 30 "$m" --stragglers $args
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "'$args': want one line on stderr: $(cat "$T_TMP/err")"
done
t_end

t_case stragglers-2.1 "lab.sh --only stragglers --quick: a row per mode and factor, the target reached, plots and index.html"
command -v gnuplot >/dev/null || { t_skip stragglers-2.1 "the quick sweep" "gnuplot not installed"; t_exit; }
o="$T_TMP/strag"
job 600 bash "$lab" --only stragglers --quick --out "$o"
expect_rc 0
cat "$T_TMP/out" | sed 's/^/     /'
csv="$o/stragglers.csv"
[ -s "$csv" ] || t_fail "no $csv"
rows=$(tail -n +2 "$csv" | grep -vc '^#')
[ "$rows" = 10 ] || t_fail "$rows rows, want 5 modes x 2 factors = 10"
for md in ring sync backup:1 ssp:2 async; do
    for f in 1 3; do
        n=$(awk -F, -v m="$md" -v f="$f" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            $c["mode"] == m && $c["straggler_factor"] == f { n++ } END { print n + 0 }' "$csv")
        [ "$n" = 1 ] || t_fail "$md at ${f}x: $n rows, want 1"
    done
done
# psr_merge's columns and the lab's, by name; every row of K = 4, n =
# 50696 (the mlp, f64), the system its mode's, the target reached.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
                   split("system K bytes step_s ttt_s wait_s mode straggler_factor jitter mode_step_s model_step_s comm_s", need, " ")
                   for (j in need) if (!c[need[j]]) { print "no column " need[j]; bad = 1 }
                   if (bad) exit; next }
         { want = $c["mode"] == "ring" ? "ring" : "ps"
           if ($c["system"] != want) print $c["mode"] ": system " $c["system"]
           if ($c["K"] != 4 || $c["bytes"] != 50696) print $c["mode"] ": K " $c["K"] " bytes " $c["bytes"]
           if ($c["ttt_s"] == "" || !($c["ttt_s"] > 0)) print $c["mode"] " at " $c["straggler_factor"] "x: target not reached (ttt_s \"" $c["ttt_s"] "\")"
           if (!($c["mode_step_s"] > 0) || !($c["model_step_s"] > 0)) print $c["mode"] ": no step or model" }' "$csv" > "$T_TMP/bad"
[ -s "$T_TMP/bad" ] && t_fail "$(tr '\n' ';' < "$T_TMP/bad")"
for f in stragglers.png loss_time.png stragglers.svg index.html stragglers.txt manifest.txt; do
    [ -s "$o/$f" ] || t_fail "no $o/$f"
done
head -c 8 "$o/stragglers.png" | od -An -c | grep -q 'P   N   G' || t_fail "stragglers.png is not a PNG"
grep -q 'stragglers.svg' "$o/index.html" || t_fail "index.html does not show stragglers.svg"
grep -q 'EMULATED link 100Mbit, latency 1ms' "$o/stragglers.txt" || t_fail "the table does not say the emulated link"
# bytes per update (the workers' records): the PS's are a push and a pull
# of the mlp (n = 50696) per worker update, headers on top; sync's step
# is K of them, async's update one
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         $c["mode"] != "ring" && !($c["bytes_per_update"] >= 2 * 50696) { print $c["mode"] ": bytes_per_update " $c["bytes_per_update"] }
         $c["mode"] == "sync" { s = $c["bytes_per_update"] } $c["mode"] == "async" { a = $c["bytes_per_update"] }
         END { if (!(a > 0 && s > 2 * a)) print "async " a " per update, sync " s " per step" }' "$csv" > "$T_TMP/bad"
[ -s "$T_TMP/bad" ] && t_fail "$(tr '\n' ';' < "$T_TMP/bad")"
grep -q 'EMULATED backward time' "$o/stragglers.txt" || t_fail "the table does not say the compute is EMULATED"
grep -q '^# CPU check: ' "$o/stragglers.txt" || t_fail "no CPU check line"
for md in ring sync backup1 ssp2 async; do
    l="$o/loss/${md}_f3.loss"
    [ -s "$l" ] || { t_fail "no $l"; continue; }
    awk '!/^#/ && NF != 3 { bad = 1 } !/^#/ { n++ } END { exit !(n > 0 && !bad) }' "$l" || t_fail "$l: not \"step loss wall_s\" lines"
done
t_end

t_case stragglers-2.2 "the sweep's model column is bin/model --stragglers for the row (the ring's t calibrated at 1x, the PS modes' the link's)"
[ -s "$csv" ] && awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { print $c["mode"], $c["straggler_factor"], $c["jitter"], ($c["comm_s"] == "" ? "-" : $c["comm_s"]), $c["model_step_s"] }' "$csv" |
while read -r md f j t want; do
    q=$md; case $md in ssp:*) q=ssp ;; esac
    set -- --comm "$t"
    [ "$md" = ring ] || set -- --bytes 50696 --bw 100Mbit --latency 1ms
    got=$("$m" --stragglers "$q" --K 4 --backward-time 50ms --straggler "1:$f" --jitter "$j" --steps 20 --warmup 2 "$@")
    case $q in async | ssp) got=$(awk -v u="$got" 'BEGIN { printf "%.6g", 4 / u }') ;; esac
    awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * b) }' ||
        echo "     stragglers-2.2: $md at ${f}x: model_step_s $want, bin/model says $got"
done > "$T_TMP/m"
[ -s "$T_TMP/m" ] && { cat "$T_TMP/m"; t_fail "model_step_s is not bin/model's"; }
# on the link the PS modes' t is the model's: a sync step of K for sync,
# of K - 1 for backup:1; async's and ssp's their own (empty)
want=$("$m" --algo ps --K 4 --bytes 50696 --bw 100Mbit --latency 1ms)
wb=$("$m" --algo ps --K 3 --bytes 50696 --bw 100Mbit --latency 1ms)
awk -F, -v w="$want" -v wb="$wb" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["mode"] == "sync" && $c["comm_s"] != w { bad = 1 } $c["mode"] == "backup:1" && $c["comm_s"] != wb { bad = 1 }
    ($c["mode"] == "async" || $c["mode"] ~ /^ssp/) && $c["comm_s"] != "" { bad = 1 } END { exit bad }' "$csv" ||
    t_fail "comm_s: want $want for sync, $wb for backup:1, empty for async and ssp"
t_end

t_case stragglers-2.3 "stragglers.gp reads columns by name: the same numbers with the columns reversed; no mode column is refused"
plots="$PSR_TESTS/../plots"
awk -F, '{ for (i = NF; i >= 1; i--) printf "%s%s", $i, (i > 1 ? "," : "\n") }' "$csv" > "$T_TMP/rev.csv"
for f in "$csv" "$T_TMP/rev.csv"; do
    job 60 gnuplot -e "dir='$plots/'; model='$m'; file='$f'; fmt='table'; out='$f.tab'; panel='sweep'; target=0.2" "$plots/stragglers.gp"
    expect_rc 0
done
grep -q '^ *[0-9]' "$csv.tab" || t_fail "the table has no points: $(head -c 300 "$csv.tab")"
cmp -s "$csv.tab" "$T_TMP/rev.csv.tab" || t_fail "reversed columns plot other numbers: $(diff "$csv.tab" "$T_TMP/rev.csv.tab" | head -4 | tr '\n' ' ')"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "mode") $i = "modus" } 1' "$csv" > "$T_TMP/nomode.csv"
job 60 gnuplot -e "dir='$plots/'; file='$T_TMP/nomode.csv'; fmt='table'; out='$T_TMP/x.tab'; panel='sweep'" "$plots/stragglers.gp"
[ "$rc" != 0 ] || t_fail "a CSV without the mode column was plotted"
expect_grep err 'no mode, straggler_factor'
t_end

t_case stragglers-3.1 "bad options exit 64 with one line"
for args in "--bogus" "--K 1" "--K x" "--factors 0.5" "--factors abc" "--modes backup:4" "--modes foo" \
    "--modes ssp:x" "--jitter 3" "--backward-time abc" "--steps 0" "--warmup 20 --steps 20" "--lr -1" \
    "--target-loss 0"; do
    job 30 bash "$lab" --only stragglers --quick $args --out "$T_TMP/never"
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "'$args': want one line on stderr: $(cat "$T_TMP/err")"
done
[ -e "$T_TMP/never/stragglers.csv" ] && t_fail "a refused run wrote a CSV"
job 30 bash "$lab" --only nosuch
expect_rc 64
expect_grep err 'stragglers'
t_end
t_exit
