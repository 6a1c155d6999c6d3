# t_student.sh -- the student track (docs/lab.md, S; common/coll/student.h):
# students/ring_student.c builds as shipped and `--algo student` then stops
# with "not written yet" (exit 1); `grade.sh --code` passes the
# instructor's solution (tests/data/student/ring_solution.c: the sum, the
# bytes and the killed neighbour checked; the timing line printed, never
# asserted) and fails each of five broken versions with a hint that names
# its mistake; bad usage is one line, exit 64; --algo student is refused
# where it cannot run.
# tier: full
. "$PSR_TESTS/lib.sh"
grade="$PSR_TESTS/../experiments/grade.sh"
data="$PSR_TESTS/data/student"
for b in ring_worker reference model; do
    [ -x "$PSR_BIN/$b" ] || { t_skip student-1 "the student track" "no $b in $PSR_BIN"; exit 0; }
done
command -v make >/dev/null || { t_skip student-1 "the student track" "no make"; exit 0; }

t_case student-1.1 "the template as shipped: --algo student exits 1, each rank saying 'not written yet'"
job 60 "$PSR_TESTS/../experiments/launch.sh" ring 2 --worker-args "--algo student" --workload synthetic \
    --params 1000 --dtype f32 --steps 2 --timeout 3
expect_rc 1
expect_grep err 'student_allreduce in students/ring_student.c is not written yet'
t_end

t_case student-1.2 "grade.sh --code on the instructor's solution: sum and bytes at K = 2..5, the killed neighbour named; the time line printed (not asserted)"
job 200 sh "$grade" --code "$data/ring_solution.c"
for k in 2 3 4 5; do
    grep -q "^ok *sum and bytes at K = $k:" "$T_TMP/out" || t_fail "no ok line for K = $k: $(cat "$T_TMP/out" | tail -c 600)"
done
grep -q '^ok *fault: rank 1 killed at K = 3' "$T_TMP/out" || t_fail "the fault check did not pass: $(grep fault "$T_TMP/out")"
grep -q '^\(ok\|note\|off\) *time at K = 4' "$T_TMP/out" || t_fail "no time line"
sed -n 's/^\(ok\|note\|off\) *time/     timing: time/p' "$T_TMP/out"
t_end

# broken FILE PHRASE: grade.sh --code --quick fails FILE (exit 1) with a hint holding PHRASE.
broken() {
    job 120 sh "$grade" --code "$data/$1" --quick
    expect_rc 1
    grep -q "^hint .*$2" "$T_TMP/out" || t_fail "$1: no hint with '$2': $(grep -v '^ok' "$T_TMP/out" | tail -c 500)"
    grep -q '^grade: [0-9]* check(s) failed' "$T_TMP/out" || t_fail "$1: no summary line"
}
t_case student-1.3 "five broken rings, each failed with its mistake named: an off-by-one chunk, the wrong neighbour, the whole vector (no divide by K), adding in the all-gather, steps split by parity (odd K)"
broken broken_offbyone.c "An index off by one"
broken broken_neighbour.c "must send to its right neighbour"
broken broken_nodivide.c "Forgot to divide by K"
broken broken_reduce_gather.c "the all-gather COPIES"
broken broken_parity_odd.c "fails at odd K"
t_end

t_case student-1.4 "bad usage: no file, a folder, an unknown flag: one line, exit 64; a file that does not compile: exit 1, the compiler's lines"
for a in "--code" "--code $T_TMP" "--code $data/ring_solution.c --bogus"; do
    # shellcheck disable=SC2086
    job 20 sh "$grade" $a
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$a: not one line: $(cat "$T_TMP/err")"
done
printf '#include "coll/student.h"\nint student_allreduce(struct student *st, void *buf, size_t n) { return st_exchange(st); }\n' > "$T_TMP/nobuild.c"
job 120 sh "$grade" --code "$T_TMP/nobuild.c" --quick
expect_rc 1
grep -q "does not compile" "$T_TMP/out" || t_fail "no 'does not compile' line: $(head -c 300 "$T_TMP/out")"
grep -q "error" "$T_TMP/out" || t_fail "the compiler's error not shown"
t_end

t_case student-1.5 "--algo student refused where it cannot run (--compress, --device cuda, --zero): one line, exit 64"
for a in "--compress fp16" "--device cuda" "--zero 1"; do
    # shellcheck disable=SC2086
    job 20 "$PSR_BIN/ring_worker" --algo student $a --steps 1
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$a: not one line: $(cat "$T_TMP/err")"
    grep -q 'student' "$T_TMP/err" || t_fail "$a: the line does not name --algo student: $(cat "$T_TMP/err")"
done
t_end
