#!/bin/sh
# grade_code.sh -- `experiments/grade.sh --code FILE`: check a student's ring
# (students/ring_student.c, docs/lab.md "S. Write the ring") the way the
# project checks its own (common/coll/ring.c), and say what is wrong in
# the student's terms.
#
#   experiments/grade.sh --code FILE [--quick]
#
# THE CHECKS, in order:
#   build     FILE compiled and linked as ring_worker's student_allreduce
#             (make student STUDENT=FILE: $(BUILD)/student/ring_worker)
#   sum       at K = 2, 3, 4 and 5 (odd n = 1001, the synthetic workload,
#             f32, 3 steps): the run ends 0, every rank's weights are the
#             same bits, and they are bin/reference's big-batch weights
#             (the synthetic gradients are exact in f32, so any correct
#             summation order gives the same bits)
#   bytes     rank 0's bytes_in in each of those runs equals the project
#             ring's in the same run settings (2(K-1)/K n plus the same
#             frame headers)
#   time      K = 4, 1 MiB, on the EMULATED link (100 Mbit/s, 1 ms):
#             time_s within 10% of model_s; a row not bound by the link
#             (bound_by cpu, busy or sw: the machine set the pace) is
#             reported and not judged
#   fault     K = 3, rank 1 killed (SIGKILL) mid-training: ranks 0 and 2
#             end with status 1 within 20 s, each naming rank 1: not a hang
# --quick: the sum and bytes checks at K = 2, 3 and 4 only (the tests).
#
# THE DIAGNOSIS. From what failed where, the usual mistakes (the template
# and the worksheet's exercise S): a frame whose first element is not the
# one the receiver expected (a chunk index off by one); no progress (a
# rank sends to a neighbour that is not receiving from it); more bytes
# than the ring (the whole vector each step: forgot to divide by K);
# wrong sums with the ring's bytes (adding in the all-gather); failures
# at odd K only (steps split by rank parity).
#
# A FILE that writes student_layer_done is the track's second part (the
# buckets, docs/lab.md SB): grade_bucket.sh checks it. The killed
# neighbour is grade_fault.sh's check, shared by both.
#
# Exit: 0 when every check passed, 1 when one failed (the lines say
# which), 64 on bad usage.
prog=grade.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/grade_fault.sh"

usage() {
    cat <<'EOF'
usage: grade.sh --code FILE [--quick]
Check a student's ring all-reduce (students/ring_student.c, docs/lab.md, S):
build it as ring_worker --algo student, then the sum (K = 2..5: every rank
the same bits, equal to the big batch), the bytes (the ring's 2(K-1)/K n),
the time on the emulated link (within 10% of the model) and a killed
neighbour (named, not a hang). --quick: the sum and the bytes at K = 2..4.
A FILE that writes student_layer_done (students/bucket_student.c, SB) is
checked against the project's buckets instead (grade_bucket.sh).
Exit 0 when all pass, 1 when one fails, 64 on bad usage.
EOF
}
help_or_version "$@"

grade_args ring_student.c "$@"
# The buckets' track (docs/lab.md, SB): a file that writes student_layer_done.
if grep -q 'student_layer_done' "$file"; then
    set -- --code "$file"
    [ $quick = 1 ] && set -- "$@" --quick
    exec sh "$here/grade_bucket.sh" "$@"
fi
for b in ring_worker reference model; do
    [ -x "$PSR_BIN/$b" ] || { say "no $PSR_BIN/$b: run make first"; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/grade_code.XXXXXX") || { say "no temp folder"; exit 1; }
grade_start
grade_build student "--algo student"

# ------------------------------------------------------------ sum, bytes
n=1001 steps=3
"$PSR_BIN/reference" --workload synthetic --params $n --dtype f32 --steps $steps \
    --weights-out "$tmp/ref" > /dev/null 2>"$tmp/ref.err" ||
    { say "bin/reference failed: $(head -c 300 "$tmp/ref.err")"; exit 1; }
# run BIN K TAG: a K-rank training run with BIN's ring_worker; its status.
run() {
    PSR_BIN=$1 timeout -s KILL 60 "$root/experiments/launch.sh" ring "$2" \
        --worker-args "--algo $4" --workload synthetic --params $n --dtype f32 --steps $steps \
        --warmup 0 --timeout 3 --time-limit 50 --weights-out "$tmp/$3.w" \
        --csv-out "$tmp/$3.csv" > "$tmp/$3.out" 2> "$tmp/$3.err" < /dev/null
}
ks="2 3 4 5"
[ $quick = 1 ] && ks="2 3 4"
passed_k="" failed_k="" run_failed_k="" why_all=""
for k in $ks; do
    ok=1 why=""
    if run "$sbin" "$k" "s$k" student; then
        r=1
        while [ $r -lt "$k" ]; do
            cmp -s "$tmp/s$k.w.0" "$tmp/s$k.w.$r" || { ok=0; why="rank $r's weights differ from rank 0's"; break; }
            r=$((r + 1))
        done
        [ $ok = 1 ] && { cmp -s "$tmp/s$k.w.0" "$tmp/ref.0" || { ok=0; why="the weights are not the big batch's: the sums are wrong"; }; }
        [ $ok = 1 ] || run_failed_k="$run_failed_k $k"
        if [ $ok = 1 ] && run "$PSR_BIN" "$k" "p$k" ring; then
            sb=$(csv_col "$tmp/s$k.csv" bytes_in 2>/dev/null) pb=$(csv_col "$tmp/p$k.csv" bytes_in 2>/dev/null)
            if [ "$sb" != "$pb" ]; then
                ok=0
                ratio=$(awk -v a="$sb" -v b="$pb" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
                why="rank 0 received $sb bytes per step where the ring receives $pb (${ratio}x)"
                echo "$k $ratio" >> "$tmp/bytes_off"
            fi
        fi
    else
        ok=0 run_failed_k="$run_failed_k $k"
        why=$(grep '^rank[0-9]*| ring_worker\[[0-9]*\]: step' "$tmp/s$k.err" | head -n 1 | sed 's/^rank[0-9]*| //')
        [ -n "$why" ] || why=$(grep -v '^launch.sh' "$tmp/s$k.err" | tail -n 1)
        cat "$tmp/s$k.err" >> "$tmp/all.err"
    fi
    if [ $ok = 1 ]; then
        passed_k="$passed_k $k"
        line ok "sum and bytes at K = $k: every rank the big batch's bits, the ring's bytes ($(csv_col "$tmp/s$k.csv" bytes_in) per step at rank 0)"
    else
        failed_k="$failed_k $k"
        bad off "K = $k: $why"
        why_all="$why_all $why"
    fi
done

# The usual mistakes, from the symptoms (THE DIAGNOSIS).
diagnose() {
    # odd_only: every odd K's run failed, no even K's did (a few extra
    # header bytes there allowed: the parity split sends twice the frames)
    odd_only=0
    for k in $ks; do
        case " $run_failed_k " in
        *" $k "*) [ $((k % 2)) = 1 ] && odd_only=$((odd_only | 1)) || odd_only=$((odd_only | 4)) ;;
        *) [ $((k % 2)) = 0 ] && odd_only=$((odd_only | 2)) || odd_only=$((odd_only | 4)) ;;
        esac
    done
    [ $odd_only = 3 ] && odd_only=1 || odd_only=0
    if grep -q 'not written yet' "$tmp/all.err" 2>/dev/null; then
        echo "the template's body is still there: write student_allreduce, delete the ST_NOT_WRITTEN line"
    elif [ $odd_only = 1 ]; then
        echo "it sums right at even K (with more frames than the ring) and fails at odd K: steps split by rank parity (even ranks send first, odd ranks receive first, the habit that avoids a deadlock with blocking sends) break where two even ranks are neighbours, rank K-1 and rank 0 at odd K. In a ring every rank sends right and receives left in the same step: one st_exchange per step"
    elif grep -q 'expected element\|starting at element' "$tmp/all.err" 2>/dev/null; then
        echo "a rank received a chunk other than the one it expected: at step s of the reduce-scatter rank r sends chunk r-s-1 and must receive chunk r-s-2 (what its left neighbour r-1 sends in the same step); in the all-gather one chunk later. An index off by one?"
    elif grep -q 'no progress for' "$tmp/all.err" 2>/dev/null; then
        echo "ranks waited for frames that never came (no progress until --timeout): a rank sends to a neighbour that is not receiving from it. Every rank must send to its right neighbour (r+1)%K and receive from its left one (r+K-1)%K"
    elif grep -q 'is connected to ranks' "$tmp/all.err" 2>/dev/null; then
        echo "st_exchange was given a rank that is not a neighbour: the transport connects (r+1)%K and (r+K-1)%K only"
    elif grep -q 'runs past the vector' "$tmp/all.err" 2>/dev/null; then
        echo "a range runs past the vector: use st_chunk's [lo, hi) and count hi - lo, in elements"
    elif [ -s "$tmp/bytes_off" ] && awk '$2 >= 1.5 { f = 1 } END { exit !f }' "$tmp/bytes_off"; then
        echo "each step moved far more than one chunk: a step sends and receives one chunk of about n/K elements (st_chunk), not the whole vector. Forgot to divide by K?"
    elif [ -s "$tmp/bytes_off" ]; then
        echo "a few more bytes than the ring: more frames than its 2(K-1) steps (each frame has a header). One st_exchange per step"
    elif echo "$why_all" | grep -q 'sums are wrong\|closed form\|example counts add up'; then
        echo "every step matched but the sums are wrong: the reduce-scatter ADDs what it receives (ST_ADD), the all-gather COPIES the finished chunks (ST_COPY). Adding in the all-gather counts finished sums again"
    else
        echo "see the lines above"
    fi
}
if [ -n "$failed_k" ]; then
    line hint "$(diagnose)"
fi

# ------------------------------------------------------------------ time
if [ $quick = 0 ] && [ -z "$failed_k" ]; then
    if PSR_BIN=$sbin timeout -s KILL 60 "$root/experiments/launch.sh" ring 4 --worker-args "--algo student" \
            --bench -b 1M -e 1M -n 3 -w 1 --link-bw 100Mbit --link-latency 1ms --timeout 5 \
            --time-limit 50 --csv-out "$tmp/time.csv" > "$tmp/time.out" 2> "$tmp/time.err" < /dev/null; then
        t=$(csv_col "$tmp/time.csv" time_s) m=$(csv_col "$tmp/time.csv" model_s) bb=$(csv_col "$tmp/time.csv" bound_by)
        ratio=$(awk -v t="$t" -v m="$m" 'BEGIN { printf "%.3f", (m > 0) ? t / m : 0 }')
        if [ "$bb" != link ]; then
            line note "time at K = 4, 1 MiB, 100 Mbit/s (EMULATED), 1 ms: ${t} s, ${ratio}x the model's ${m} s; not judged: bound_by=$bb (the machine, not the link, set the pace)"
        elif awk -v r="$ratio" 'BEGIN { exit !(r <= 1.10) }'; then
            line ok "time at K = 4, 1 MiB, 100 Mbit/s (EMULATED), 1 ms: ${t} s, ${ratio}x the model's ${m} s"
        else
            bad off "time at K = 4, 1 MiB: ${t} s, ${ratio}x the model's ${m} s (over 10%, bound by the link): more steps or more waiting than the ring's 2(K-1)"
        fi
    else
        bad off "time at K = 4, 1 MiB: the benchmark failed: $(grep 'ring_worker\[' "$tmp/time.err" | head -n 1)"
    fi
fi

# ----------------------------------------------------------------- fault
if [ $quick = 0 ] && [ -z "$failed_k" ]; then
    grade_fault "$sbin" --algo student --workload synthetic --params 256K --dtype f32 \
        --steps 100000 --link-bw 20MB --timeout 2
fi

if [ $fails = 0 ]; then
    echo "grade: every check passed$([ $quick = 1 ] && echo " (--quick: sum and bytes at K = 2..4)")"
    exit 0
fi
echo "grade: $fails check(s) failed"
exit 1
