# t_grade.sh -- experiments/grade.sh grades a lab: a results folder built
# here from bin/model (every row exactly on the model) and predictions
# taken from its own --key, then a bad folder and bad predictions, one
# problem line each; usage errors exit 64. Then the fixtures of
# tests/data/grade/ (README.md there): a recorded run of exercise 9 graded
# in range, and a mixed answer sheet graded against a busy run and an idle
# one, the same verdict per exercise from both.
. "$PSR_TESTS/lib.sh"
t_need grade-1 "experiments/grade.sh" model
g="$PSR_TESTS/../experiments/grade.sh"
m="$PSR_BIN/model"
export PSR_BIN

# row SYSTEM ALGO K BYTES BOUND_BY: one lab CSV row on the model's numbers
# (500 Mbit/s, 200 us), columns as lab.sh writes them; a row not bound by
# the link took 1.5 x its model (more than 10% off: untrustworthy).
row() {
    a=$2; [ -n "$a" ] || a=ps
    ms=$("$m" --algo "$a" --K "$3" --bytes "$4" --bw 500Mbit --latency 200us)
    ts=$ms; [ "$5" = link ] || ts=$(awk -v t="$ms" 'BEGIN { print 1.5 * t }')
    bi=$("$m" --algo "$a" --K "$3" --bytes "$4" --bw 500Mbit --latency 200us --quantity bytes_in)
    echo "$1,$2,tcp,$3,$4,4,$ts,$ts,$ts,,,1,1,$bi,$bi,6.25e+07,0.0002,$ms,0,$5,0.1,0.1,1,2,$ts,$ts,0.01"
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
grep -q '^1[0-3],\|^21,\|^M,' "$T_TMP/tpl.csv" && t_fail "an optional exercise in the default template: $(grep '^1[0-3],\|^21,\|^M,' "$T_TMP/tpl.csv" | head -n 1)"
job 60 sh "$g" --template --exercises all
expect_rc 0
for ex in 1 2 3 4 5 6 7 8 9 10 11 12 13 21 M; do grep -q "^$ex," "$T_TMP/out" || t_fail "--exercises all: no quantity for exercise $ex"; done
# exercises 2, 3 and 8 are priced at a folder's own settings: --key alone
# at the reference run's (8 Mbit/s, 1 ms, n = 64 KiB, size sweep K = 4),
# --key FOLDER at FOLDER's (here 500 Mbit/s, 200 us, n = 4 MiB)
job 60 sh "$g" --key
expect_rc 0
grep -qx "8,rd_ring_crossover_bytes,$("$m" --crossover --K 4 --bw 8Mbit --latency 1ms)" "$T_TMP/out" || t_fail "key: crossover not bin/model's at the reference run's settings"
grep -qx "2,ps_time_s_K8,$("$m" --algo ps --K 8 --bytes 64K --bw 8Mbit --latency 1ms)" "$T_TMP/out" || t_fail "key: exercise 2 not at the reference run's settings"
job 60 sh "$g" --key "$T_TMP/good"
expect_rc 0
cp "$T_TMP/out" "$T_TMP/key.csv"
grep -qx '1,ps_ingress_s_K512,81.92' "$T_TMP/key.csv" || t_fail "key: K=512 ingress not 81.92"
grep -qx "8,rd_ring_crossover_bytes,$("$m" --crossover --K 4 --bw 500Mbit --latency 200us)" "$T_TMP/key.csv" || t_fail "key: crossover not bin/model's at the folder's settings"
grep -qx "2,ps_time_s_K8,$("$m" --algo ps --K 8 --bytes 4M --bw 500Mbit --latency 200us)" "$T_TMP/key.csv" || t_fail "key: exercise 2 not at the folder's settings"
# exercise 9's PS pulls per bucket: the step is the run's own model, 0.2 s
# of backward pass + bin/model --quantity pipelined (not ingress + egress)
grep -qx "9,ps_step_no_overlap_s,$(awk -v p="$("$m" --algo ps --K 2 --bytes 8M --bw 200Mbit --latency 0 --quantity pipelined --bucket 1M)" 'BEGIN { printf "%.6g", 0.2 + p }')" "$T_TMP/key.csv" ||
    t_fail "key: exercise 9's PS is not 0.2 s + the pipelined model: $(grep '^9,ps_' "$T_TMP/key.csv" | tr '\n' ' ')"
t_end

t_case grade-1.2 "a good folder and the model's predictions: all in range, all rows trustworthy, no problem"
job 60 sh "$g" "$T_TMP/good" "$T_TMP/key.csv"
expect_rc 0
expect_grep out "^grade: $nq/$nq predictions in range (tolerance 0.25), 6/6 rows usable (6 bound_by=link, 0 flagged within 10% of their model), 0 problem(s)$"
grep -q '^problem' "$T_TMP/out" && t_fail "problems on the good folder: $(grep '^problem' "$T_TMP/out")"
t_end

t_case grade-1.3 "predictions within the tolerance pass, outside fail; yes/no must match"
# 20% off passes at 0.25, fails at 0.1
awk -F, -v OFS=, '$2 == "ps_time_s_K8" { $3 = $3 * 1.2 } $2 == "mean_of_means_exact_unequal" { $3 = "Yes" } 1' "$T_TMP/key.csv" > "$T_TMP/p1.csv"
job 60 sh "$g" "$T_TMP/good" "$T_TMP/p1.csv"
expect_rc 0
expect_grep out '^ok   exercise 2 ps_time_s_K8: '
expect_grep out '^off  exercise 4 mean_of_means_exact_unequal: yes, the answer is no; likely: with unequal shards each mean must weigh b_k/B'
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
[ "$(grep -c '^problem: off: k_sweep.csv line 2 (ps K=2 n=4194304): .*ratio 1.500: more than 10% from its model, and bound_by=busy' "$T_TMP/out")" = 1 ] || t_fail "busy row not named once"
[ "$(grep -c '^problem: off: size_sweep.csv line 4 (rd K=4 n=1048576): .*and bound_by=cpu' "$T_TMP/out")" = 1 ] || t_fail "cpu row not named once"
[ "$(grep -c '^problem: bytes: k_sweep.csv line 3 (ps K=8' "$T_TMP/out")" = 1 ] || t_fail "the halved bytes_in not named once"
expect_grep out '^problem: results: no manifest.txt'
expect_grep out '^problem: prediction: exercise 1 ring_s_K8: not answered$'
expect_grep out "^problem: prediction: exercise 2 ps_bytes_in_K8: 'lots' is not a number$"
expect_grep out '^problem: prediction: exercise 2 ring_time_s_K3: no such quantity'
expect_grep out "^grade: $((nq - 2))/$nq predictions in range (tolerance 0.25), 3/6 rows usable (3 bound_by=link, 0 flagged within 10% of their model), 7 problem(s)$"
t_end

t_case grade-1.5 "bad usage exits 64 with one line"
for args in "" "--bogus" "--template --exercises 14" "--key --exercises 3-1" "--template --exercises 14-20" "$T_TMP/none $T_TMP/key.csv" "$T_TMP/good $T_TMP/none.csv" "$T_TMP/good $T_TMP/key.csv --tol -1" "$T_TMP/good $T_TMP/good/k_sweep.csv"; do
    job 60 sh "$g" $args
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "'$args': want one line on stderr: $(cat "$T_TMP/err")"
done
t_end
t_case grade-1.6 "a row bound_by=sw (the link stood idle: link_util) more than 10% off its model is untrustworthy, named as the software's"
mk "$T_TMP/sw" sw link
job 60 sh "$g" "$T_TMP/sw" "$T_TMP/key.csv"
expect_rc 0
[ "$(grep -c '^problem: off: k_sweep.csv line 2 (ps K=2 n=4194304): .*bound_by=sw, not link (the link stood idle: the software' "$T_TMP/out")" = 1 ] ||
    t_fail "sw row not named once: $(grep '^problem' "$T_TMP/out")"
expect_grep out "^grade: $nq/$nq predictions in range (tolerance 0.25), 5/6 rows usable (5 bound_by=link, 0 flagged within 10% of their model), 1 problem(s)$"
t_end

t_case grade-1.7 "exercise 21: --key's 24 cells are ring.c's K = 4 step table, its times bin/model's; a sheet's cells graded with the usual mistake named"
# ring.c's opening comment, K = 4, as "ph_stepS_rankR,SEND > RECV" lines
awk '/K = 4, "s>r"/ { on = 1; next } /Read a column down/ { on = 0 }
     on { sub(/^ \*/, "")
          if ($1 == "reduce-scatter") { p = "rs"; $1 = ""; $0 = $0 }
          if ($1 == "all-gather") { p = "ag"; $1 = ""; $0 = $0 }
          if ($1 ~ /^[0-9]+$/ && NF == 13)
              for (r = 0; r < 4; r++) printf "%s_step%d_rank%d,%s > %s\n", p, $1, r, $(2 + 3 * r), $(4 + 3 * r) }' \
    "$PSR_TESTS/../common/coll/ring.c" | sort > "$T_TMP/want21"
[ "$(wc -l < "$T_TMP/want21")" = 24 ] || t_fail "ring.c's K = 4 table: $(wc -l < "$T_TMP/want21") cells read, want 24 (did its layout change?)"
job 60 sh "$g" --key --exercises 21
expect_rc 0
cp "$T_TMP/out" "$T_TMP/key21.csv"
grep '^21,[ra][sg]_step' "$T_TMP/key21.csv" | cut -d, -f2- | sort > "$T_TMP/got21"
diff "$T_TMP/want21" "$T_TMP/got21" > "$T_TMP/d21" ||
    t_fail "--key's cells differ from ring.c's table (< ring.c, > key): $(head -n 6 "$T_TMP/d21" | tr '\n' ' ')"
ph() { "$m" --algo ring --K 4 --bytes 1M --bw 16Mbit --latency 1ms "$@"; }
grep -qx "21,phases_allreduce_s_K4,$(ph)" "$T_TMP/key21.csv" || t_fail "the all-reduce is not bin/model's $(ph)"
grep -qx "21,phases_step_ms_K4,$(awk -v t="$(ph)" -v s="$(ph --quantity steps)" 'BEGIN { printf "%.6g", 1000 * t / s }')" "$T_TMP/key21.csv" ||
    t_fail "one step is not bin/model's time / steps: $(grep phases_step "$T_TMP/key21.csv")"
# a sheet: one cell as the key writes it, one without blanks, and each usual mistake
awk -F, -v OFS=, '$2 == "rs_step0_rank1" { $3 = "0>3" } $2 == "rs_step0_rank0" { $3 = "0 > 3" } $2 == "rs_step1_rank0" { $3 = "1 > 2" }
                  $2 == "ag_step0_rank1" { $3 = "0 > 3" } $2 == "ag_step1_rank1" { $3 = "0 > 2" } $2 == "ag_step2_rank1" { $3 = "1 > 2" }
                  $2 == "rs_step2_rank2" { $3 = "" }
                  $2 == "phases_step_ms_K4" { $3 = 525 } $2 == "phases_allreduce_s_K4" { $3 = 0.4 } 1' "$T_TMP/key21.csv" > "$T_TMP/p21.csv"
job 60 sh "$g" "$T_TMP/good" "$T_TMP/p21.csv" --exercises 21
expect_rc 0
expect_grep out '^ok   exercise 21 rs_step0_rank1: 0>3$'
expect_grep out '^ok   exercise 21 ag_step2_rank3: 1>0$'
for want in 'rs_step0_rank0: 0>3, the answer is 3 > 2; likely: starting rank r with chunk r' \
            'rs_step1_rank0: 1>2, the answer is 2 > 1; likely: sent and received swapped' \
            'ag_step0_rank1: 0>3, the answer is 1 > 0; likely: the reduce-scatter.s chunks' \
            'ag_step1_rank1: 0>2, the answer is 0 > 3; likely: what rank r receives is what rank r-1 sends' \
            'ag_step2_rank1: 1>2, the answer is 3 > 2; likely: what rank r sends at step s is what it received' \
            'phases_step_ms_K4: 525, .*(ratio 3.98x, .*likely: the whole vector' \
            'phases_allreduce_s_K4: 0.4, .*(ratio 0.505x, .*likely: one phase'; do
    grep -q "^off  exercise 21 $want" "$T_TMP/out" || t_fail "no off line like '$want'"
done
expect_grep out '^problem: prediction: exercise 21 rs_step2_rank2: not answered$'
expect_grep out '^verdict: exercise 21: 18/26 predictions in range$'
grep -q '^verdict: exercise [1-9]:' "$T_TMP/out" && t_fail "exercises 1-9 graded under --exercises 21"
t_end

# ------------------------------------------------------------ the fixtures
fx="$PSR_TESTS/data/grade"
t_case grade-2.1 "a recorded run of exercise 9's parameter server (tests/data/grade/ex9_ps.csv) grades in range; the one-pull model's values do not"
# step_s of the two rows: with overlap first, then --no-overlap
set -- $(awk -F, '/^#/ { next } !h { h = 1; for (i = 1; i <= NF; i++) if ($i == "step_s") c = i; next } { print $c }' "$fx/ex9_ps.csv")
[ $# = 2 ] || t_fail "ex9_ps.csv: want two rows with step_s, got '$*'"
awk -F, -v OFS=, -v o="$1" -v no="$2" '$2 == "ps_step_overlap_s" { $3 = o } $2 == "ps_step_no_overlap_s" { $3 = no } 1' "$T_TMP/key.csv" > "$T_TMP/p9.csv"
job 60 sh "$g" "$T_TMP/good" "$T_TMP/p9.csv"
expect_rc 0
expect_grep out "^ok   exercise 9 ps_step_overlap_s: $1 "
expect_grep out "^ok   exercise 9 ps_step_no_overlap_s: $2 "
# the one-pull model of before per-bucket pull: off, and named
awk -F, -v OFS=, '$2 == "ps_step_overlap_s" { $3 = 1.34258 } $2 == "ps_step_no_overlap_s" { $3 = 1.54258 } 1' "$T_TMP/key.csv" > "$T_TMP/p9b.csv"
job 60 sh "$g" "$T_TMP/good" "$T_TMP/p9b.csv"
expect_rc 0
expect_grep out '^off  exercise 9 ps_step_overlap_s: 1.34258, .*likely: the one-pull model'
expect_grep out '^off  exercise 9 ps_step_no_overlap_s: 1.54258, .*likely: the one-pull model'
t_end

t_case grade-2.2 "a mixed answer sheet against a busy run and an idle one: the same verdict per exercise; the row 20% off its model is off in both"
for d in busy idle; do
    job 60 sh "$g" "$fx/$d" "$fx/mixed.csv"
    expect_rc 0
    cp "$T_TMP/out" "$T_TMP/mixed.$d"
    grep '^verdict: \|^ok\|^off' "$T_TMP/out" > "$T_TMP/v.$d"
    [ "$(grep -c '^problem: off: size_sweep.csv line 6 (ring K=4 n=16384): .*ratio 1.200: more than 10% from its model' "$T_TMP/out")" = 1 ] ||
        t_fail "$d: the row 20% off its model is not off: $(grep 'line 6 ' "$T_TMP/out")"
    [ "$(grep -c '^problem' "$T_TMP/out")" = 1 ] || t_fail "$d: want one problem: $(grep '^problem' "$T_TMP/out" | head -n 3)"
    expect_grep out '^verdict: exercise 3: 1/2 predictions in range, 14/15 rows usable$'
    # exercises 2, 3 and 8 priced at the folder's own settings, not a pinned rate
    expect_grep out "^settings: exercises 2, 3 and 8 priced at link_bw 1e+06 bytes/s, link_latency 0.001 s, the K sweep's n = 65536 bytes, the size sweep's K = 4 (.*/$d's own)$"
done
cmp -s "$T_TMP/v.busy" "$T_TMP/v.idle" || t_fail "the verdicts differ: $(diff "$T_TMP/v.busy" "$T_TMP/v.idle" | head -n 4)"
[ "$(grep -c '^verdict: ' "$T_TMP/v.idle")" = 9 ] || t_fail "want verdicts for exercises 1-9: $(grep -c '^verdict: ' "$T_TMP/v.idle")"
grep -q '^row usable, flagged   k_sweep.csv line 8 (ring K=8 n=65536): bound_by=busy' "$T_TMP/mixed.busy" || t_fail "busy: the busy rows are not usable, flagged"
grep -q '^row usable, flagged' "$T_TMP/mixed.idle" && t_fail "idle: a row flagged"
grep -q '^grade: 16/27 predictions in range (tolerance 0.25), 21/22 rows usable (5 bound_by=link, 16 flagged within 10% of their model), 1 problem(s)$' "$T_TMP/mixed.busy" ||
    t_fail "busy summary: $(tail -n 1 "$T_TMP/mixed.busy")"
# every usual mistake of the sheet: its ratio, and the mistake named
for want in 'ps_ingress_s_K64: 0.16, .*(ratio 0.0156x, .*likely: 1/K of the model' \
            'ring_s_K8: 0.16, .*likely: n/bw: a ring worker moves 2(K-1)/K n' \
            'ps_time_s_K2: 0.132, .*(ratio 0.5x, .*likely: the ingress alone: .*egress forgotten' \
            'ring_bytes_in_K8: 65536, .*likely: n: a ring worker receives' \
            'ring_latency_bandwidth_bytes_K4: 32000, .*(ratio 8x, .*likely: K a bw with bw in bits/s' \
            'mean_of_means_exact_equal: no, the answer is yes; likely: with equal shards' \
            'accum_bytes_per_example_ratio: 1, .*likely: bytes per step, not per example' \
            'rd_time_s_4K: 10.2, .*(ratio 1001x, .*likely: milliseconds vs seconds' \
            'ring_step_overlap_s: 0.54, .*likely: no overlap' \
            'ps_step_overlap_s: 1.34, .*likely: the one-pull model'; do
    grep -q "^off  exercise [0-9]* $want" "$T_TMP/mixed.idle" || t_fail "no off line like '$want'"
done
t_end

t_case grade-2.3 "the optional exercises only when asked: --exercises 1-9,12 grades the sheet's exercise 12; a bare factor names its usual mistake"
grep -q 'exercise 12\|no such quantity' "$T_TMP/mixed.idle" && t_fail "exercise 12 graded by default: $(grep 'exercise 12\|no such' "$T_TMP/mixed.idle" | head -n 1)"
job 60 sh "$g" "$fx/idle" "$fx/mixed.csv" --exercises 1-9,12
expect_rc 0
expect_grep out '^ok   exercise 12 strag_sync_step_s_F1: 0.167 '
expect_grep out '^off  exercise 12 strag_ring_step_s_F1: 0.167, .*likely: the server'"'"'s communication'
expect_grep out '^problem: prediction: exercise 12 strag_sync_step_s_F3: not answered$'
expect_grep out '^verdict: exercise 12: 1/8 predictions in range$'
# a value twice the model (no known wrong answer of its own): the factor's mistake
awk -F, -v OFS=, '$2 == "rd_time_s_1M" { $3 = 2 * $3 } 1' "$T_TMP/key.csv" > "$T_TMP/p3.csv"
job 60 sh "$g" "$T_TMP/good" "$T_TMP/p3.csv"
expect_rc 0
expect_grep out '^off  exercise 8 rd_time_s_1M: .*(ratio 2x, tolerance 0.25); likely: twice the model'
t_end

t_exit
