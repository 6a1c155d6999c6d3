# t_launch_sizes.sh -- experiments/launch.sh with a ring --bench sweep over
# several sizes writes one CSV row per size (the ranks' records are one per
# size, FILE.SIZE): to --csv-out (one header, rows smallest size first) and
# to stdout; every row has its own bytes, K and steps, and the columns the
# machine check adds (docs/design.md's CSV table), read by name. A
# --csv-out file under another header is refused.
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

# csv_awk PROG FILE: awk over a CSV with c["name"] the column of that name
# (from the header), as experiments/lib.sh's: columns by name only.
csv_awk() {
    awk -F, "FNR == 1 { split(\"\", c); for (i = 1; i <= NF; i++) c[\$i] = i } $1" "$2"
}

t_need launch-sizes "launch.sh size sweep" ring_worker psr_merge

t_case launch-sizes-1.1 "ring 3 --bench -b 4K -e 64K -f 4 --link-bw: 3 rows (4096, 16384, 65536) in --csv-out"
job 120 "$launch" ring 3 --bench -b 4K -e 64K -f 4 -n 3 -w 1 --link-bw 1Gbit --timeout 10 \
    --csv-out "$T_TMP/sweep.csv"
expect_rc 0
[ "$(grep -c '^system,' "$T_TMP/sweep.csv")" = 1 ] || t_fail "want one header line: $(cat "$T_TMP/sweep.csv")"
got=$(csv_awk 'FNR > 1 { printf "%s:%s:%s:%s ", $c["system"], $c["K"], $c["bytes"], $c["steps"] }' "$T_TMP/sweep.csv")
[ "$got" = "ring:3:4096:3 ring:3:16384:3 ring:3:65536:3 " ] || t_fail "rows (system:K:bytes:steps): '$got'"
# bound_by is link|sw|cpu|busy with a link limit, host_bound 1 exactly when
# it is cpu or busy; machine_busy a share in [0, 1] or empty; link_util a
# share in [0, 1], sw exactly when it is under 0.95 and the machine set
# no flag; cpu_s_per_gb positive (the link's record and the CPU's cost,
# metrics.h: never a time against the model).
bad=$(csv_awk 'FNR > 1 { b = $c["bound_by"]; h = $c["host_bound"]; m = $c["machine_busy"]; u = $c["link_util"]
                         if (b !~ /^(link|sw|cpu|busy)$/ || (h == 1) != (b == "cpu" || b == "busy") ||
                             (m != "" && (m < 0 || m > 1)) || u == "" || u < 0 || u > 1 ||
                             (b == "sw") != (h == 0 && u < 0.95) || !($c["cpu_s_per_gb"] > 0)) print }' "$T_TMP/sweep.csv")
[ -z "$bad" ] || t_fail "rows with a bad bound_by/host_bound/machine_busy/link_util/cpu_s_per_gb: $bad"
t_end

t_case launch-sizes-1.2 "the same sweep to stdout: one header, 3 rows; without a link limit bound_by and link_util are empty, cpu_s_per_gb is not"
job 120 "$launch" ring 2 --bench -b 4K -e 16K -f 2 -n 2 -w 1 --timeout 10
expect_rc 0
[ "$(grep -c '^system,' "$T_TMP/out")" = 1 ] || t_fail "want one header line on stdout: $(cat "$T_TMP/out")"
got=$(csv_awk 'FNR > 1 { printf "%s:%s:%s:[%s][%s] ", $c["K"], $c["bytes"], $c["steps"], $c["host_bound"], $c["bound_by"] }' "$T_TMP/out")
[ "$got" = "2:4096:2:[][] 2:8192:2:[][] 2:16384:2:[][] " ] || t_fail "rows (K:bytes:steps:[host_bound][bound_by]): '$got'"
bad=$(csv_awk 'FNR > 1 && ($c["link_util"] != "" || !($c["cpu_s_per_gb"] > 0)) { print }' "$T_TMP/out")
[ -z "$bad" ] || t_fail "unpaced rows with a link_util or without cpu_s_per_gb: $bad"
# The table and the CSV measure two things, and say so (issue 32: 346.8 us
# in the table, 404 us in the CSV, for one size, unexplained).
grep -q "^rank0| # the table's time is a MEAN (the loop / 2); the records' (--csv, the launcher's CSV row) time_s is the MEDIAN" "$T_TMP/err" ||
    t_fail "the table does not say what its time is against the CSV's: $(grep '^rank0| #' "$T_TMP/err")"
grep -q "^launch.sh: --bench: each CSV row's time_s .* is the median .*; rank0's table above is the slowest rank's loop / calls, a mean\$" "$T_TMP/err" ||
    t_fail "launch.sh does not say what the CSV's time_s is: $(grep '^launch.sh' "$T_TMP/err")"
t_end

t_case launch-sizes-1.3 "one size (-b = -e) is still one row"
job 120 "$launch" ring 2 --bench -b 8K -e 8K -n 2 -w 1 --timeout 10 --csv-out "$T_TMP/one.csv"
expect_rc 0
got=$(csv_awk 'FNR > 1 { printf "%s:%s ", $c["bytes"], $c["steps"] }' "$T_TMP/one.csv")
[ "$got" = "8192:2 " ] || t_fail "rows (bytes:steps): '$got'"
t_end

t_case launch-sizes-1.4 "a --csv-out file with another header (an older psring's) is refused, left as it was"
printf 'system,algo,transport,K,bytes\nring,ring,tcp,2,4096\n' >"$T_TMP/old.csv"
cp "$T_TMP/old.csv" "$T_TMP/old.keep"
job 120 "$launch" ring 2 --bench -b 4K -e 4K -n 2 -w 1 --timeout 10 --csv-out "$T_TMP/old.csv"
expect_rc 1
expect_grep err 'another header'
cmp -s "$T_TMP/old.csv" "$T_TMP/old.keep" || t_fail "the file changed: $(cat "$T_TMP/old.csv")"
t_end
t_case launch-sizes-1.5 "a synthetic run logs no 'loss 0' (it has no loss): ring, sync PS and async PS say 'no loss'; linreg still logs its loss"
for sa in "" "--mode async"; do
    job 60 "$launch" ps 2 --workload synthetic --params 1000 --steps 2 --timeout 10 --server-args "$sa"
    expect_rc 0
    grep -q 'loss 0\b' "$T_TMP/err" && t_fail "ps $sa: a loss 0 line: $(grep 'loss 0' "$T_TMP/err" | head -n 2)"
    grep -q 'server0| ps_server\[0\]: .*step 0.* done (synthetic workload: no loss)' "$T_TMP/err" ||
        t_fail "ps $sa: no 'no loss' line: $(grep 'step 0' "$T_TMP/err" | head -n 2)"
done
job 60 "$launch" ring 2 --workload synthetic --params 1000 --steps 2 --timeout 10
expect_rc 0
grep -q 'rank0| ring_worker\[0\]: step 0: done (synthetic workload: no loss; global batch of 1024)$' "$T_TMP/err" ||
    t_fail "ring: no 'no loss' line: $(grep 'step 0' "$T_TMP/err")"
job 60 "$launch" ring 2 --workload linreg --steps 2 --timeout 10
grep -q 'rank0| ring_worker\[0\]: step 0: loss 10\.' "$T_TMP/err" || t_fail "linreg: no loss line: $(grep 'step 0' "$T_TMP/err")"
t_end
t_case launch-sizes-1.6 "--bind-cores: a ring of up to one rank a CPU runs (rank r on CPU r); more ranks than CPUs, ps and --wrap refused in one line, exit 64"
ncpu=$(getconf _NPROCESSORS_ONLN)
if [ "$ncpu" -ge 2 ]; then
    job 60 "$launch" ring 2 --bind-cores --bench -b 4K -e 4K -n 2 -w 1 --timeout 10
    expect_rc 0
    [ "$(grep -c '^ring,' "$T_TMP/out")" = 1 ] || t_fail "want one row: $(cat "$T_TMP/out")"
fi
job 30 "$launch" ring $((ncpu + 1)) --bind-cores --bench --timeout 10
expect_rc 64
grep -q "bind-cores: $((ncpu + 1)) ranks on $ncpu CPUs" "$T_TMP/err" || t_fail "K > CPUs: $(cat "$T_TMP/err")"
job 30 "$launch" ps 1 --bind-cores --timeout 10
expect_rc 64
grep -q "bind-cores: ring only" "$T_TMP/err" || t_fail "ps: $(cat "$T_TMP/err")"
job 30 "$launch" ring 1 --bind-cores --wrap "true" --timeout 10
expect_rc 64
grep -q "bind-cores: not with --wrap" "$T_TMP/err" || t_fail "--wrap: $(cat "$T_TMP/err")"
t_end
t_exit
