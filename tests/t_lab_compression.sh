# t_lab_compression.sh -- the compression section of the lab (issue 30,
# item 4): experiments/lab.sh --only compression --quick on a tiny grid
# (the ring's none and fp16, the PS's none and sign, two rates, 8 steps)
# writes compression.csv with psr_merge's columns and the section's, a
# break-even bandwidth (measured and predicted) on every compressed row,
# the plots with a line per run, the manifest's breakeven line and
# index.html's table; a compressor on a system it does not fit exits 64
# with one line; the PS's rows carry the workers' entry spread (from the
# records) and every row its mean step; --around DIR places each
# compressor's rates at half, once and twice DIR's predicted break-even,
# reports the measured one as an interval with a verdict, and says
# "beyond what this machine can emulate faithfully" (no number) where the
# prediction lies above the rate at which the link stopped setting the
# pace; THE BREAK-EVEN ON THE COMBINE: every row's combine_s is its
# time_s (one repeat), combine_none_s none's at the same rate, a
# prediction and a verdict per compressor, and --around takes DIR's
# combine_predicted_bps before its predicted_bps. Timings are printed,
# never asserted.
# tier: full
. "$PSR_TESTS/lib.sh"
t_need lab-compression-1 "the compression section" model ring_worker ps_server ps_worker psr_merge
lab="$PSR_TESTS/../experiments/lab.sh"
export PSR_BIN

t_case lab-compression-1.1 "a compressor on a system it does not fit, a bad rate, --repeats 0, --around a folder without compression.csv or of another K: exit 64 with one line"
mkdir -p "$T_TMP/k8"
printf 'system,K,compressor,predicted_bps\nring,8,fp16,4000000\n' > "$T_TMP/k8/compression.csv"
for args in "--ring sign" "--ps powersgd:2" "--rates 8mbps" "--repeats 0" "--around $T_TMP/nothing" "--around $T_TMP/k8"; do
    job 30 bash "$lab" --only compression --quick $args --out "$T_TMP/bad"
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$args: $(wc -l < "$T_TMP/err") lines on stderr, want 1: $(head -c 300 "$T_TMP/err")"
done
t_end

command -v gnuplot >/dev/null || { t_skip lab-compression-1.2 "the quick section" "gnuplot not installed"; t_exit; }
t_case lab-compression-1.2 "--quick on a tiny grid: the CSV's columns, break-even numbers, the combine's (combine_s is time_s, none's at its rate), the plots, the manifest, index.html"
o=$T_TMP/c
job 300 bash "$lab" --only compression --quick --rates "32Mbit 128Mbit" --ring "none fp16" --ps "none sign" \
    --steps 8 --target-loss 0.45 --out "$o"
expect_rc 0
sed 's/^/     /' "$o/compression.txt" 2>/dev/null
for f in compression.csv compression.txt compression.png compression.svg compression_steps.png \
         compression_steps.svg index.html manifest.txt; do
    [ -s "$o/$f" ] || t_fail "no $f"
done
if [ -s "$o/compression.csv" ]; then
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
                       split("system K step_s compress compressor rate rate_bps steps_to_target time_to_target_s breakeven_bps breakeven_where breakeven_step_bps breakeven_step_where predicted_bps predicted_step_bps steps_ratio compute_s repeats spread_s period_s combine_s combine_none_s combine_spread_s combine_model_s codec_s combine_lo_bps combine_hi_bps combine_predicted_bps combine_verdict", w, " ")
                       for (j in w) if (!(w[j] in c)) print "no column " w[j]; next }
             { n[$c["system"] ":" $c["compressor"]]++
               if ($c["K"] != 4) print "row " NR ": K " $c["K"]
               if (!($c["rate_bps"] == 4000000 || $c["rate_bps"] == 16000000)) print "row " NR ": rate_bps " $c["rate_bps"]
               # the entry spread of the PS, from the records of its workers (ENTER_T): > 0
               if ($c["system"] == "ps" && !($c["spread_s"] + 0 > 0)) print "row " NR ": spread_s \"" $c["spread_s"] "\""
               if ($c["system"] == "ring" && $c["spread_s"] != 0) print "row " NR ": ring spread_s \"" $c["spread_s"] "\""
               if (!($c["period_s"] + 0 > 0)) print "row " NR ": period_s \"" $c["period_s"] "\""
               # the combine: time_s itself with one repeat; combine_none_s: none at the rate
               if ($c["combine_s"] == "" || $c["combine_s"] != $c["time_s"] + 0) print "row " NR ": combine_s \"" $c["combine_s"] "\", time_s " $c["time_s"]
               nz[$c["system"] ":" $c["rate"]] = nz[$c["system"] ":" $c["rate"]] " " $c["combine_none_s"]
               if ($c["compressor"] == "none") { z[$c["system"] ":" $c["rate"]] = $c["time_s"] + 0; next }
               if (!($c["combine_model_s"] + 0 > 0)) print "row " NR ": combine_model_s \"" $c["combine_model_s"] "\""
               if (!($c["codec_s"] + 0 > 0)) print "row " NR ": codec_s \"" $c["codec_s"] "\""
               p = $c["combine_predicted_bps"]
               if (!(p == "inf" || p == "0" || p + 0 > 0)) print "row " NR ": combine_predicted_bps \"" p "\""
               if ($c["combine_verdict"] !~ /^(within|outside|flat|edge|beyond|never|unemulable)$/) print "row " NR ": combine_verdict \"" $c["combine_verdict"] "\""
               m = $c["breakeven_bps"]; p = $c["predicted_bps"]
               if (!(m == "inf" || m == "nan" || m + 0 > 0 || m == "0")) print "row " NR ": breakeven_bps \"" m "\""
               m = $c["breakeven_step_bps"]
               if (!(m == "inf" || m == "nan" || m + 0 > 0 || m == "0")) print "row " NR ": breakeven_step_bps \"" m "\""
               if (!(p == "inf" || p + 0 > 0)) print "row " NR ": predicted_bps \"" p "\""
               p = $c["predicted_bps"]
               if (!(p == "inf" || p + 0 > 0)) print "row " NR ": predicted_step_bps \"" p "\""
               if (!($c["steps_ratio"] + 0 > 0)) print "row " NR ": steps_ratio \"" $c["steps_ratio"] "\"" }
             END { split("ring:none ring:fp16 ps:none ps:sign", r, " ")
                   for (j = 1; j <= 4; j++) if (n[r[j]] != 2) print r[j] ": " n[r[j]] + 0 " rows, want 2"
                   for (k in nz) { m = split(nz[k], v, " "); for (j = 1; j <= m; j++) if (v[j] != z[k]) print k ": combine_none_s " v[j] ", none time_s " z[k] } }' \
        "$o/compression.csv" > "$T_TMP/why" 2>&1 || echo "the check itself failed: $(head -c 200 "$T_TMP/why")" >> "$T_TMP/why"
    [ -s "$T_TMP/why" ] && t_fail "compression.csv: $(head -n 5 "$T_TMP/why" | tr '\n' ';')"
fi
# every run's line is drawn: its title is in the time panel's legend (a
# file with no points is skipped, title and all)
for r in ring:none ring:fp16 ps:none ps:sign; do
    grep -q ">$r<" "$o/compression.svg" 2>/dev/null || t_fail "compression.svg: no line for $r"
done
grep -q '^breakeven: .*ring fp16 measured .* predicted .* on the combine .* predicted ' "$o/manifest.txt" 2>/dev/null || t_fail "manifest.txt: no breakeven line for ring fp16 (with the combine's)"
grep -q '^# THE BREAK-EVEN ON THE COMBINE' "$o/compression.txt" 2>/dev/null || t_fail "compression.txt: no combine section"
grep -q 'id="compression"' "$o/index.html" 2>/dev/null || t_fail "index.html: no compression table"
t_end

t_case lab-compression-1.3 "--around DIR: each compressor at half, once and twice DIR's combine_predicted_bps (else predicted_bps), none at all of its system's; the interval and verdict columns; the PS at 8 to 32 Gbit/s is not link-paced (emulable_bps at most 8 Gbit/s); a prediction above emulable_bps, and only there, is unemulable, with no number"
mkdir -p "$T_TMP/prev"
# ring fp16: combine_predicted_bps places its rates (predicted_bps would
# put them at 4 to 16 Mbit/s); ps sign: none there, predicted_bps does
printf 'system,K,compressor,predicted_bps,combine_predicted_bps\nring,4,fp16,1000000,4000000\nps,4,sign,2000000000,\n' > "$T_TMP/prev/compression.csv"
o=$T_TMP/a
job 300 bash "$lab" --only compression --quick --around "$T_TMP/prev" --ring "none fp16" --ps "none sign" \
    --steps 6 --target-loss 0.45 --out "$o"
expect_rc 0
sed -n '/^# THE MEASURED BREAK-EVEN/,$s/^/     /p' "$o/compression.txt" 2>/dev/null
if [ -s "$o/compression.csv" ]; then
    awk -F, 'function num(v) { return v == "inf" ? 1e300 : v + 0 }
             NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
                       split("breakeven_lo_bps breakeven_hi_bps emulable_bps verdict", w, " ")
                       for (j in w) if (!(w[j] in c)) print "no column " w[j]; next }
             { k = $c["system"] ":" $c["compressor"]; r[k] = r[k] " " $c["rate"]
               if ($c["compressor"] == "none") next
               v = $c["verdict"]; lo = $c["breakeven_lo_bps"]; hi = $c["breakeven_hi_bps"]
               e = $c["emulable_bps"]; p = $c["predicted_bps"]; cp = $c["combine_predicted_bps"]
               if (cp ~ /^([0-9.e+-]+|inf)$/ && e ~ /^([0-9.e+-]+|inf)$/ && num(cp) > num(e)) {
                   if ($c["combine_verdict"] != "unemulable") print k ": combine_verdict \"" $c["combine_verdict"] "\", combine predicted " cp " over emulable " e ": want unemulable"
                   if ($c["combine_lo_bps"] != "-" || $c["combine_hi_bps"] != "-") print k ": a combine interval where the link cannot say"
               } else if ($c["combine_verdict"] !~ /^(within|outside|flat|edge|beyond|never)$/ ||
                          !($c["combine_lo_bps"] ~ /^[0-9.e+-]+$|^inf$/ && $c["combine_hi_bps"] ~ /^[0-9.e+-]+$|^inf$/ && num($c["combine_lo_bps"]) <= num($c["combine_hi_bps"])))
                   print k ": combine verdict \"" $c["combine_verdict"] "\", interval \"" $c["combine_lo_bps"] "\" to \"" $c["combine_hi_bps"] "\", predicted " cp ", emulable " e
               if (k == "ps:sign" && !(e ~ /^[0-9.e+]+$/ && e + 0 <= 1e9)) print k ": emulable_bps \"" e "\", want at most 1e9 (8 Gbit/s)"
               if (p ~ /^([0-9.e+-]+|inf)$/ && e ~ /^([0-9.e+-]+|inf)$/ && num(p) > num(e)) {
                   u[k] = 1
                   if (v != "unemulable") print k ": verdict \"" v "\", predicted " p " over emulable " e ": want unemulable"
                   if (lo != "-" || hi != "-") print k ": an interval " lo " " hi " where the link cannot say"
               } else {
                   if (v !~ /^(within|outside|flat|edge|beyond|never)$/) print k ": verdict \"" v "\", predicted " p ", emulable " e
                   if (!(lo ~ /^[0-9.e+-]+$|^inf$/ && hi ~ /^[0-9.e+-]+$|^inf$/ && num(lo) <= num(hi))) print k ": interval \"" lo "\" to \"" hi "\""
               } }
             END { want["ring:fp16"] = want["ring:none"] = " 16Mbit 32Mbit 64Mbit"
                   want["ps:sign"] = want["ps:none"] = " 8000Mbit 16000Mbit 32000Mbit"
                   for (k in want) if (r[k] != want[k]) print k ": rates \"" r[k] "\", want \"" want[k] "\""
                   for (k in u) print k > "/dev/stderr" }' \
        "$o/compression.csv" > "$T_TMP/why" 2> "$T_TMP/unemulable" || echo "the check itself failed: $(head -c 200 "$T_TMP/why")" >> "$T_TMP/why"
    [ -s "$T_TMP/why" ] && t_fail "compression.csv: $(head -n 5 "$T_TMP/why" | tr '\n' ';')"
    # each unemulable one: its row and its sentence in the table, no number
    for x in $(sort -u "$T_TMP/unemulable"); do
        sy=${x%%:*} cm=${x#*:}
        grep -q "^$sy *$cm  *- *- .*unemulable" "$o/compression.txt" || t_fail "compression.txt: no unemulable row for $sy $cm"
        grep -q "^# $sy $cm: .*beyond what this machine can emulate faithfully; no measured number" "$o/compression.txt" ||
            t_fail "compression.txt: no sentence for $sy $cm"
    done
fi
grep -q '^ring fp16 .* 16Mbit 32Mbit 64Mbit$' "$o/compression.txt" 2>/dev/null || t_fail "compression.txt: no verdict row for ring fp16 at its three rates"
t_end
