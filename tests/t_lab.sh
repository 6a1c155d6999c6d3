# tier: full
# t_lab.sh -- `make lab`'s driver end to end at toy sizes: the calibration
# resolves --link-bw auto to a rate, every job runs, the CSVs hold one row
# per configuration (the median of its repeats) in the shared schema plus
# the lab's columns (the size sweep: the parameter server, the ring and
# recursive doubling at each size), the plots, the crossover lines and the
# manifest exist; the programs refuse 'auto'. No timing is asserted.
. "$PSR_TESTS/lib.sh"

if ! command -v gnuplot >/dev/null; then
    t_skip lab-1 "lab.sh --quick" "gnuplot not installed (make deps)"; exit 0
fi
for b in ps_server ps_worker ring_worker; do
    [ -x "$PSR_BIN/$b" ] || { t_skip lab-1 "lab.sh --quick" "no $b in $PSR_BIN"; exit 0; }
done

t_case lab-1.1 "lab.sh --quick --steps 2: both sweeps (size sweep with ps, ring, rd) with 2 steps, model table, plots, manifest, index.html"
job 170 bash "$PSR_TESTS/../experiments/lab.sh" --quick --steps 2 --out "$T_TMP/lab"
expect_rc 0
expect_grep err 'loopback TCP, unpaced: [0-9]* MB/s'
expect_grep out "results: $T_TMP/lab"
# The shared schema first (columns another module appends after host_bound,
# bound_by say, may follow), the lab's four columns last; the runs' CSVs
# carry the shared schema alone.
hdr='system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound,bound_by,machine_busy,job_busy,run_queue'
for f in k_sweep size_sweep; do
    h=$(head -n 1 "$T_TMP/lab/$f.csv" 2>/dev/null)
    case $h in "$hdr"*",runs,run_min_s,run_max_s,spread") ;; *) t_fail "$f.csv header is not the shared schema plus the lab's columns: $h" ;; esac
    case $(head -n 1 "$T_TMP/lab/${f}_runs.csv" 2>/dev/null) in "$hdr"*) ;; *) t_fail "no ${f}_runs.csv in the shared schema" ;; esac
    # --quick caps the repeats at 2: every point ran once or twice, and its
    # row's time_s lies within its runs' min and max.
    awk -F, 'NR > 1 { r = $(NF - 3); if (r < 1 || r > 2 || $7 < $(NF - 2) || $7 > $(NF - 1)) bad = bad " " $0 } END { if (bad != "") { print bad; exit 1 } }' \
        "$T_TMP/lab/$f.csv" >"$T_TMP/reps" || t_fail "$f.csv: runs or the median off: $(cat "$T_TMP/reps")"
done
# --link-bw auto (the default) resolved by the calibration to a rate.
grep -Eq '^link_bw: [0-9]+[MG]bit \(auto, ' "$T_TMP/lab/manifest.txt" || t_fail "manifest: --link-bw auto not resolved to a rate: $(grep '^link_bw' "$T_TMP/lab/manifest.txt")"
grep -Eq '^calibration: auto -> [0-9]+[MG]bit ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the calibration"
grep -q '^probe_[0-9]*[MG]bit: .*launch.sh ring 4 --bench' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the calibration probe's command line"
grep -q -- '--link-bw auto' "$T_TMP/lab/commands.txt" && t_fail "a job was given --link-bw auto"
grep -q '^repeat: ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the repeat rule"
grep -q '^cut: ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks what the budget cut"
# --steps 2 (after --quick, whose warm-up is 1 and whose sweeps run 3
# steps): 1 timed step in every row of BOTH sweeps (the size sweep used to
# keep its own step count). Fewer steps than --quick's, so that the test
# stays within its watchdog under the sanitizers on a loaded machine.
for f in k_sweep size_sweep; do
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
             $c["steps"] != 1 { print $1, $2, $4, $5, "steps", $c["steps"] }' "$T_TMP/lab/$f.csv" > "$T_TMP/steps" 2>&1
    [ -s "$T_TMP/steps" ] && t_fail "$f.csv: rows not at --steps 2 (1 timed): $(cat "$T_TMP/steps")"
done
grep -q '^size_sweep: .* steps=2 ' "$T_TMP/lab/manifest.txt" || t_fail "manifest: the size sweep's steps are not 2"
[ -s "$T_TMP/lab/index.html" ] || t_fail "no index.html (experiments/lab_html.sh)"
rows=$(awk 'NR > 1' "$T_TMP/lab/k_sweep.csv" 2>/dev/null | wc -l)
[ "$rows" = 4 ] || t_fail "k_sweep.csv has $rows rows, want 4 (2 systems x 2 K)"
rows=$(awk 'NR > 1' "$T_TMP/lab/size_sweep.csv" 2>/dev/null | wc -l)
[ "$rows" = 6 ] || t_fail "size_sweep.csv has $rows rows, want 6 (ps, ring, rd x 4K, 64K)"
# One row per algorithm and size: ps (algo empty), ring,ring and ring,rd, at
# K = 4 and exactly 4096 and 65536 bytes; rd's links carry log2 K = 2 whole
# vectors per step, the ring's 2(K-1)/K n in 2(K-1) = 6 chunks (plus at most
# 64 bytes of frame header per message); every rd row has its own model,
# 2(a + n b).
for want in 'ps,,tcp,4,4096' 'ps,,tcp,4,65536' 'ring,ring,tcp,4,4096' 'ring,ring,tcp,4,65536' \
            'ring,rd,tcp,4,4096' 'ring,rd,tcp,4,65536'; do
    [ "$(grep -c "^$want," "$T_TMP/lab/size_sweep.csv" 2>/dev/null)" = 1 ] ||
        t_fail "size_sweep.csv: not exactly one row $want"
done
awk -F, 'NR > 1 && $2 == "rd" { m = 2 * $5; if ($14 < m || $14 > m + 2 * 64) bad = bad " rd n=" $5 " in=" $14
                                 r = 2 * ($17 + $5 / $16); if ($18 < r * 0.999 || $18 > r * 1.001) bad = bad " rd n=" $5 " model_s=" $18 }
         NR > 1 && $2 == "ring" { m = 1.5 * $5; if ($14 < m || $14 > m + 6 * 64) bad = bad " ring n=" $5 " in=" $14 }
         END { if (bad != "") { print bad; exit 1 } }' "$T_TMP/lab/size_sweep.csv" >"$T_TMP/rdbytes" ||
    t_fail "size sweep's rd/ring rows off the model:$(cat "$T_TMP/rdbytes")"
grep -q '^size_rd_4K: .*launch.sh ring 4 .*--worker-args --algo\\ rd' "$T_TMP/lab/manifest.txt" ||
    t_fail "manifest lacks the rd job's command line"
expect_grep out '^crossover measured (ring vs rd, K = 4): '
# The model's crossover at the rate the calibration chose (a loaded machine
# picks a lower one): bin/model's, to the byte.
bw=$(sed -n 's/^link_bw: \([0-9]*[MG]bit\) .*/\1/p' "$T_TMP/lab/manifest.txt")
xo=$("$PSR_BIN/model" --crossover --K 4 --bw "${bw:-none}" --latency 200us 2>/dev/null)
xo=$(printf '%.0f' "${xo:-0}" 2>/dev/null)
expect_grep out "^crossover model: n\\* = .*: $xo bytes"
grep -q '^fit rd: ' "$T_TMP/lab/fit.txt" 2>/dev/null || t_fail "fit.txt lacks rd's fit"
# The K sweep's byte counters: the server's link carries K n each way (plus
# headers), a ring worker's 2(K-1)/K n.
awk -F, 'NR > 1 && $1 == "ps" { if ($14 < $4 * $5 || $14 > $4 * $5 * 1.01) bad = bad " ps K=" $4 " in=" $14 }
         NR > 1 && $1 == "ring" { m = 2 * ($4 - 1) / $4 * $5; if ($14 < m || $14 > m * 1.01) bad = bad " ring K=" $4 " in=" $14 }
         END { if (bad != "") { print bad; exit 1 } }' "$T_TMP/lab/k_sweep.csv" >"$T_TMP/bytes" ||
    t_fail "byte counters off the model:$(cat "$T_TMP/bytes")"
for p in k_time k_bytes k_scaling size; do
    for ext in png svg; do
        [ -s "$T_TMP/lab/$p.$ext" ] || t_fail "plot $p.$ext missing or empty"
    done
done
expect_grep out 'model vs measured'
grep -q '^loopback_MBps: [0-9]' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the loopback rate"
grep -q '^git: ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the git revision"
grep -q '^jobs_failed: 0' "$T_TMP/lab/manifest.txt" || t_fail "manifest: jobs failed"
grep -q '^k_ps_2: .*launch.sh ps 2 .*--link-bw' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the jobs' command lines"
[ -s "$T_TMP/lab/loss.png" ] || t_fail "no loss.png (experiments/lab_loss.sh)"
grep -q ' 512 ' "$T_TMP/lab/model.txt" || t_fail "model.txt lacks the seed's K=512 row"
t_end

t_case lab-1.2 "lab.sh refuses a bad flag with one line and exit 64"
job 10 bash "$PSR_TESTS/../experiments/lab.sh" --bogus
expect_rc 64
[ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "stderr is not one line"
t_end

t_case lab-1.3 "the programs refuse --link-bw auto (the lab resolves it) with one line and exit 64"
for b in ps_server ps_worker ring_worker; do
    job 10 "$PSR_BIN/$b" --link-bw auto
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$b: stderr is not one line"
    expect_grep err "'auto' is resolved by experiments/lab.sh"
done
job 10 "$PSR_BIN/model" --algo ring --K 4 --bytes 1 --bw auto
expect_rc 64
t_end
t_exit
