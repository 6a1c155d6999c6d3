# t_lab_scale.sh -- experiments/lab_scale.sh (docs/lab.md, exercise 0): the
# lab's n/bw, a bw/n and the PS/ring ratio beside a cluster's, derived
# here from the fixture manifest's rate (1e6 bytes/s), latency (1 ms) and
# n (64 KiB) rather than typed in; flags override the folder; --html
# writes the same rows; the simulator's lines equal bin/model's; a bad
# flag or a folder without a manifest is one line, exit 64, nothing
# written.
. "$PSR_TESTS/lib.sh"
for b in model; do
    [ -x "$PSR_BIN/$b" ] || { t_skip lab-scale-1 "lab_scale.sh" "no $b in $PSR_BIN"; exit 0; }
done
s="$PSR_TESTS/../experiments/lab_scale.sh"
d="$T_TMP/run"
mkdir -p "$d"
cp "$PSR_TESTS/data/lab_scale/manifest.txt" "$d/"

# row NAME FILE: the row's fields after the label, space-separated
row() { awk -v l="$1" 'index($0, l) == 1 { s = substr($0, length(l) + 1); sub(/^ +/, "", s); print s; exit }' "$2"; }

t_case lab-scale-1.1 "the table from a lab folder: n/bw, a bw/n and PS ingress / ring as the formulas give them"
sh "$s" "$d" --no-sim --html "$T_TMP/t.html" > "$T_TMP/out" 2>"$T_TMP/err" || t_fail "exit $?: $(cat "$T_TMP/err")"
# n/bw = 65536 / 1e6 = 65.5 ms; cluster 4e9 / 25e9 = 160 ms
row "n/bw: one gradient over one link" "$T_TMP/out" | grep -q '^65.5 ms  *160 ms ' || t_fail "n/bw row: $(row "n/bw" "$T_TMP/out")"
# a bw/n = 1e-3 * 1e6 / 65536 = 0.0153; 5e-6 * 25e9 / 4e9 = 3.13e-05
row "a bw/n: latency, in gradient transfers" "$T_TMP/out" | grep -q '^0.0153  *3.13e-05 ' || t_fail "a bw/n row"
# PS ingress / ring at K = 8 (the sweep's largest K), from bin/model's own numbers
pi=$("$PSR_BIN/model" --algo ps --quantity ingress --K 8 --bytes 65536 --bw 1MB --latency 1ms)
ri=$("$PSR_BIN/model" --algo ring --K 8 --bytes 65536 --bw 1MB --latency 1ms)
want=$(awk -v p="$pi" -v r="$ri" 'BEGIN { printf "%.3g", p / r }')
row "PS ingress / ring: the bottleneck ratio" "$T_TMP/out" | grep -q "^$want " || t_fail "ratio row, want $want: $(row "PS ingress / ring" "$T_TMP/out")"
grep -q 'ring all-reduce, K = 8 ' "$T_TMP/out" || t_fail "K is not the sweep's largest, 8"
grep -q '<td>a bw/n: latency, in gradient transfers</td><td>0.0153</td>' "$T_TMP/t.html" || t_fail "--html: no a bw/n row"
t_end

t_case lab-scale-1.2 "flags override the folder; no folder needed with all three; the simulator's lines equal bin/model's"
sh "$s" --bytes 1M --link-bw 100Mbit --link-latency 200us --K 4 > "$T_TMP/out2" 2>"$T_TMP/err2" || t_fail "exit $?: $(cat "$T_TMP/err2")"
# n/bw = 1048576 / 12.5e6 = 83.9 ms
row "n/bw: one gradient over one link" "$T_TMP/out2" | grep -q '^83.9 ms ' || t_fail "n/bw row: $(row "n/bw" "$T_TMP/out2")"
grep -q 'ring all-reduce, K = 4 ' "$T_TMP/out2" || t_fail "--K 4 not used"
if [ -x "$PSR_BIN/psring_sim" ]; then
    awk '/simulated/ { n++; s = $6; m = $9; if (s != m) bad = 1 } END { exit !(n == 2 && !bad) }' "$T_TMP/out2" ||
        t_fail "the simulator's lines: $(grep simulated "$T_TMP/out2" | tr '\n' ';')"
else
    grep -q 'no .*psring_sim' "$T_TMP/out2" || t_fail "no psring_sim, and no line saying so"
fi
t_end

t_case lab-scale-1.3 "a bad flag, a bad value or a folder without a manifest: one line, exit 64, nothing written"
for args in "--bogus" "--K 1" "--link-bw fast --bytes 1M --link-latency 1ms" "--bytes 1M --link-bw 1MB --link-latency soon" \
            "$T_TMP --html $T_TMP/no.html" "--K"; do
    # shellcheck disable=SC2086
    sh "$s" $args > "$T_TMP/o3" 2>"$T_TMP/e3"
    rc=$?
    [ "$rc" = 64 ] || t_fail "$args: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/e3")" = 1 ] || t_fail "$args: not one line: $(cat "$T_TMP/e3")"
    [ -s "$T_TMP/o3" ] && t_fail "$args: printed a table"
done
[ -e "$T_TMP/no.html" ] && t_fail "--html written for a folder without a manifest"
t_end
