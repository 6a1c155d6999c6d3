# t_lab_report.sh -- experiments/lab_report.sh, the lab's text report, read
# from a results folder alone: on the committed reference run
# (docs/reference-results/lab) every row of both sweeps against its model,
# bin/fit's crossover lines, and what the manifest says was unsettled or
# cut; a flagged row marked as the plots mark it; a bad argument refused;
# without a folder the newest results/2*/, and --settings alone.
. "$PSR_TESTS/lib.sh"
ref="$PSR_TESTS/../docs/reference-results/lab"
report="$PSR_TESTS/../experiments/lab_report.sh"

t_case lab-report-1.1 "the reference run: 7 K sweep rows, 15 size sweep rows at K = 4, the crossover, unsettled and cut from the manifest"
job 30 bash "$report" "$ref"
expect_rc 0
[ "$(grep -c '^  \(ps\|ring\) *K=' "$T_TMP/out")" = 7 ] || t_fail "want 7 K sweep rows: $(grep -c ' K=' "$T_TMP/out")"
[ "$(grep -c '^  \(ps\|ring\|rd\) *n=' "$T_TMP/out")" = 15 ] || t_fail "want 15 size sweep rows"
expect_grep out '^model vs measured (time_s / model_s: the median run), size sweep at K = 4:$'
# ps at K = 8: 1.05203 s against 1.0506 s, 2 runs
expect_grep out '^  ps   K=8   time   1\.0520 s  model   1\.0506 s  ratio 1\.001  2 run(s) 1\.0518\.\.1\.0522$'
grep '^crossover' "$ref/fit.txt" >"$T_TMP/xo"
grep '^crossover' "$T_TMP/out" | cmp -s - "$T_TMP/xo" || t_fail "the crossover lines are not fit.txt's"
# exercise 3's crossovers apart from exercise 8's (8 Mbit/s, 1 ms, K = 4):
# 4 a bw / 6.5 = 615 bytes, K a bw = 4000 bytes
expect_grep out '^exercise 3, model (K = 4): the ring beats the PS above n = 615 bytes; its latency and bandwidth terms are equal at n = K a bw = 4000 bytes'
expect_grep out '^points whose runs did not settle within 0.05: size_rd_64K (1 runs, spread 0.0000, time budget);'
expect_grep out '^cut to fit the 180 s budget: K sweep n 4M -> 64K (the rate is below 500 Mbit/s);'
grep -q 'host-bound\|HOST-BOUND\|^warning' "$T_TMP/out" && t_fail "a host-bound row or warning in a run with none"
t_end

t_case lab-report-1.2 "a busy row is marked as the plots mark it; the manifest's host-bound rows and warning are repeated"
mkdir -p "$T_TMP/run"
cp "$ref"/*.csv "$ref/fit.txt" "$T_TMP/run/"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
                  $c["system"] == "ring" && $c["K"] == 8 { $c["bound_by"] = "busy"; $c["host_bound"] = 1 } { print }' \
    "$ref/k_sweep.csv" >"$T_TMP/run/k_sweep.csv"
sed 's/^host_bound_rows: none$/host_bound_rows: ring K=8 n=65536; /' "$ref/manifest.txt" >"$T_TMP/run/manifest.txt"
echo "warning: K x link rate = 8 MB/s is not well below the loopback rate 10 MB/s" >>"$T_TMP/run/manifest.txt"
job 30 bash "$report" "$T_TMP/run"
expect_rc 0
expect_grep out '^  ring K=8 .*  HOST-BOUND (busy: other programs)$'
[ "$(grep -c HOST-BOUND "$T_TMP/out")" = 1 ] || t_fail "want one marked row"
expect_grep out '^host-bound rows (the CPU, not the emulated link, set the pace): ring K=8 n=65536; $'
expect_grep out '^warning: K x link rate = 8 MB/s is not well below the loopback rate 10 MB/s; the emulated link may not be the bottleneck$'
t_end

t_case lab-report-1.3 "no folder, or not one: one line on stderr, exit 64"
# a scratch checkout (experiments/ linked) with no results/ at all, so that
# a make lab run in the real checkout does not count
mkdir -p "$T_TMP/r"
ln -s "$PSR_TESTS/../experiments" "$T_TMP/r/experiments"
job 10 bash "$T_TMP/r/experiments/lab_report.sh"
expect_rc 64
job 10 bash "$report" "$T_TMP/none"
expect_rc 64
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "not one line: $(cat "$T_TMP/err")"
t_end

t_case lab-report-1.4 "no folder given: the newest results/2*/ of the checkout; --settings prints the run's link, n and size sweep K alone (what docs/lab.md's exercises 2, 3 and 8 predict with)"
for d in 20260101-000000 20260102-000000; do
    mkdir -p "$T_TMP/r/results/$d"
    for f in manifest.txt k_sweep.csv size_sweep.csv fit.txt; do cp "$ref/$f" "$T_TMP/r/results/$d/"; done
done
# the older folder at another rate: the newer one must be the one read
sed -i 's/,1e+06,0.001,/,2e+06,0.001,/' "$T_TMP/r/results/20260101-000000/k_sweep.csv"
job 10 bash "$T_TMP/r/experiments/lab_report.sh" --settings
expect_rc 0
expect_grep out '^settings: .*/results/20260102-000000$'
expect_grep out '^  link: 1e+06 bytes/s (8 Mbit/s), latency a = 0.001 s, one-way (EMULATED); the K sweep: n = 65536 bytes, K = 1..8$'
expect_grep out '^  the size sweep: K = 4, n = 4096 16384 65536 262144 1048576 bytes$'
[ "$(wc -l <"$T_TMP/out")" = 3 ] || t_fail "--settings printed more than the settings: $(sed -n 4p "$T_TMP/out")"
job 30 bash "$T_TMP/r/experiments/lab_report.sh"
expect_rc 0
expect_grep out '^  K=8   ps   bytes_in     524736  ingress   0.5242 s  egress   0.5207 s  bound_by link$'
expect_grep out '^  K=8   ring bytes_in     115268  bound_by link$'
# in a container the results are the host's through a volume: the
# settings line names the host's folder (PSR_HOST_RESULTS, lib.sh
# host_msg), as make check-container checks
PSR_HOST_RESULTS=/srv/host/results job 10 bash "$T_TMP/r/experiments/lab_report.sh" --settings
expect_rc 0
expect_grep out '^settings: /srv/host/results/20260102-000000$'
t_end
t_exit
