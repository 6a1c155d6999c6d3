# t_grade.sh -- experiments/grade.sh grades a lab: a results folder built
# here from bin/model (every row exactly on the model) and predictions
# taken from its own --key, then a bad folder and bad predictions, one
# problem line each; usage errors exit 64.
. "$PSR_TESTS/lib.sh"
t_need grade-1 "experiments/grade.sh" model
g="$PSR_TESTS/../experiments/grade.sh"
m="$PSR_BIN/model"
export PSR_BIN

# row SYSTEM ALGO K BYTES BOUND_BY: one lab CSV row on the model's numbers
# (500 Mbit/s, 200 us), columns as lab.sh writes them.
row() {
    a=$2; [ -n "$a" ] || a=ps
    ts=$("$m" --algo "$a" --K "$3" --bytes "$4" --bw 500Mbit --latency 200us)
    bi=$("$m" --algo "$a" --K "$3" --bytes "$4" --bw 500Mbit --latency 200us --quantity bytes_in)
    echo "$1,$2,tcp,$3,$4,4,$ts,$ts,$ts,,,1,1,$bi,$bi,6.25e+07,0.0002,$ts,0,$5,0.1,0.1,1,2,$ts,$ts,0.01"
}
hdr=system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound,bound_by,machine_busy,job_busy,run_queue,runs,run_min_s,run_max_s,spread
mk() {
    mkdir -p "$1"; echo "# psring lab manifest (fixture)" > "$1/manifest.txt"
    { echo "$hdr"; row ps "" 2 4194304 "$2"; row ps "" 8 4194304 link; row ring ring 8 4194304 link; } > "$1/k_sweep.csv"
    { echo "$hdr"; row ps "" 4 4096 link; row ring ring 4 65536 link; row ring rd 4 1048576 "$3"; } > "$1/size_sweep.csv"
}
mk "$T_TMP/good" link link
mk "$T_TMP/bad" busy cpu
# the bad folder: one row's bytes_in far from the model (a broken run)
awk -F, -v OFS=, 'NR == 3 { $14 = $14 / 2 } 1' "$T_TMP/bad/k_sweep.csv" > "$T_TMP/x" && mv "$T_TMP/x" "$T_TMP/bad/k_sweep.csv"

t_case grade-1.1 "--template lists every quantity, blank; --key fills each from bin/model"
job 60 sh "$g" --template
expect_rc 0
cp "$T_TMP/out" "$T_TMP/tpl.csv"
[ "$(head -n 1 "$T_TMP/tpl.csv")" = exercise,quantity,value ] || t_fail "header: $(head -n 1 "$T_TMP/tpl.csv")"
nq=$(grep -vc '^#\|^exercise' "$T_TMP/tpl.csv")
[ "$nq" -ge 20 ] || t_fail "only $nq quantities"
grep -v '^#\|^exercise' "$T_TMP/tpl.csv" | grep -qv ',$' && t_fail "a template value is not blank"
for ex in 1 2 3 4 5 6 7 8 9; do grep -q "^$ex," "$T_TMP/tpl.csv" || t_fail "no quantity for exercise $ex"; done
job 60 sh "$g" --key
expect_rc 0
cp "$T_TMP/out" "$T_TMP/key.csv"
grep -qx '1,ps_ingress_s_K512,81.92' "$T_TMP/key.csv" || t_fail "key: K=512 ingress not 81.92"
grep -qx "8,rd_ring_crossover_bytes_K8,$("$m" --crossover --K 8 --bw 500Mbit --latency 200us)" "$T_TMP/key.csv" || t_fail "key: crossover not bin/model's"
t_end

t_case grade-1.2 "a good folder and the model's predictions: all in range, all rows trustworthy, no problem"
job 60 sh "$g" "$T_TMP/good" "$T_TMP/key.csv"
expect_rc 0
expect_grep out "^grade: $nq/$nq predictions in range (tolerance 0.25), 6/6 rows trustworthy (bound_by=link), 0 problem(s)$"
grep -q '^problem' "$T_TMP/out" && t_fail "problems on the good folder: $(grep '^problem' "$T_TMP/out")"
t_end

t_case grade-1.3 "predictions within the tolerance pass, outside fail; yes/no must match"
# 20% off passes at 0.25, fails at 0.1
awk -F, -v OFS=, '$2 == "ps_time_s_K8" { $3 = $3 * 1.2 } $2 == "mean_of_means_exact_unequal" { $3 = "Yes" } 1' "$T_TMP/key.csv" > "$T_TMP/p1.csv"
job 60 sh "$g" "$T_TMP/good" "$T_TMP/p1.csv"
expect_rc 0
expect_grep out '^ok   exercise 2 ps_time_s_K8: '
expect_grep out '^off  exercise 4 mean_of_means_exact_unequal: Yes, the answer is no$'
job 60 sh "$g" "$T_TMP/good" "$T_TMP/p1.csv" --tol 0.1
expect_rc 0
expect_grep out '^off  exercise 2 ps_time_s_K8: .*the model says'
expect_grep out "^grade: $((nq - 2))/$nq predictions in range (tolerance 0.1)"
t_end

t_case grade-1.4 "a bad folder and bad predictions: one problem line each, still exit 0"
awk -F, -v OFS=, '$2 == "ring_s_K8" { $3 = "" } $2 == "ps_bytes_in_K8" { $3 = "lots" } 1' "$T_TMP/key.csv" > "$T_TMP/p2.csv"
echo "2,ring_time_s_K3,0.1" >> "$T_TMP/p2.csv"
rm "$T_TMP/bad/manifest.txt"
job 60 sh "$g" "$T_TMP/bad" "$T_TMP/p2.csv"
expect_rc 0
[ "$(grep -c '^problem: untrustworthy: k_sweep.csv line 2 (ps K=2 n=4194304): bound_by=busy' "$T_TMP/out")" = 1 ] || t_fail "busy row not named once"
[ "$(grep -c '^problem: untrustworthy: size_sweep.csv line 4 (rd K=4 n=1048576): bound_by=cpu' "$T_TMP/out")" = 1 ] || t_fail "cpu row not named once"
[ "$(grep -c '^problem: bytes: k_sweep.csv line 3 (ps K=8' "$T_TMP/out")" = 1 ] || t_fail "the halved bytes_in not named once"
expect_grep out '^problem: results: no manifest.txt'
expect_grep out '^problem: prediction: exercise 1 ring_s_K8: not answered$'
expect_grep out "^problem: prediction: exercise 2 ps_bytes_in_K8: 'lots' is not a number$"
expect_grep out '^problem: prediction: exercise 2 ring_time_s_K3: no such quantity'
expect_grep out "^grade: $((nq - 2))/$nq predictions in range (tolerance 0.25), 4/6 rows trustworthy (bound_by=link), 7 problem(s)$"
t_end

t_case grade-1.5 "bad usage exits 64 with one line"
for args in "" "--bogus" "$T_TMP/none $T_TMP/key.csv" "$T_TMP/good $T_TMP/none.csv" "$T_TMP/good $T_TMP/key.csv --tol -1" "$T_TMP/good $T_TMP/good/k_sweep.csv"; do
    job 60 sh "$g" $args
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "'$args': want one line on stderr: $(cat "$T_TMP/err")"
done
t_end
t_case grade-1.6 "a row bound_by=sw (the link stood idle: link_util) is untrustworthy, named as the software's"
mk "$T_TMP/sw" sw link
job 60 sh "$g" "$T_TMP/sw" "$T_TMP/key.csv"
expect_rc 0
[ "$(grep -c '^problem: untrustworthy: k_sweep.csv line 2 (ps K=2 n=4194304): bound_by=sw, not link (the link stood idle: the software' "$T_TMP/out")" = 1 ] ||
    t_fail "sw row not named once: $(grep '^problem' "$T_TMP/out")"
expect_grep out "^grade: $nq/$nq predictions in range (tolerance 0.25), 5/6 rows trustworthy (bound_by=link), 1 problem(s)$"
t_end

t_exit
