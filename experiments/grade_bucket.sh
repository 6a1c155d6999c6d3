#!/bin/sh
# grade_bucket.sh -- `experiments/grade.sh --code FILE` for the student
# track's second part (grade_code.sh sends a FILE that writes
# student_layer_done here): check a student's buckets
# (students/bucket_student.c, docs/lab.md "SB. Write the buckets")
# against the project's own bucketed run (common/train/buckets.c and the
# step driver's overlap), and say what is wrong in the student's terms.
#
#   experiments/grade.sh --code FILE [--quick]
#
# THE RUNS. Every check compares a run of ring_worker --bucket-student
# (FILE's buckets) with the same run of the project's ring_worker: the
# synthetic workload, 64K f32 parameters in 8 layers of 32 KiB,
# --bucket-size 96K (3 buckets: layers 7-5, 4-2, and 1-0, which stays
# under the size and waits for the end of the pass), an EMULATED backward pass of
# 200 ms a step (25 ms a layer, last layer first), 100 Mbit/s links, 3
# steps, --trace on.
#
# THE CHECKS, in order:
#   build     FILE compiled and linked as ring_worker's student_layer_done
#             and student_backward_done (make student-bucket STUDENT=FILE:
#             $(BUILD)/student-bucket/ring_worker)
#   weights   at K = 2 and 3: the run ends 0 (the step driver itself checks
#             every element started once, and the sum against its closed
#             form) and every rank's weights are the project's run's, bit
#             for bit
#   bytes     rank 0's bytes_in per step equals the project's (the same
#             buckets make the same frames)
#   buckets   rank 0's buckets in the order started (from the trace: their
#             bytes, and the first element of the first) are the project's:
#             the last layers first
#   overlap   the share of the buckets' bytes whose all-reduce FINISHED
#             before the backward pass ended (rank 0's trace, mean over the
#             steps) is at least the project's run's less 0.25: 0.75 there
#             (every bucket but the one holding layer 0), 0 for buckets
#             started after the pass. The two runs share the machine, so a
#             busy machine moves both
#   fault     K = 3 with --bucket-student, rank 1 killed (SIGKILL) mid
#             training: ranks 0 and 2 end with status 1 within 20 s, each
#             naming rank 1 (grade_fault.sh)
# --quick: K = 2 only, no fault check (the tests).
#
# THE DIAGNOSIS (a "hint" line), from what failed where: the template
# still there; elements never started (the last bucket, or a boundary off
# by one element); a bucket started before its layers were done, or twice;
# the first bucket started holding layer 0 (buckets in forward order);
# buckets of other sizes than the project's (a bucket closed one layer
# late or early: >= against >); the project's buckets with no overlap
# (started after the backward pass).
#
# Exit: 0 when every check passed, 1 when one failed, 64 on bad usage.
prog=grade.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/grade_fault.sh"

usage() {
    cat <<'EOF'
usage: grade.sh --code FILE [--quick]
Check a student's buckets (students/bucket_student.c, docs/lab.md, SB):
build them into ring_worker --bucket-student, then against the project's
own bucketed run: the weights (bit for bit at K = 2 and 3), the bytes,
the buckets and their order, the overlap (the communication finished
before the backward pass ended) and a killed neighbour (named, not a
hang). --quick: K = 2 only, no fault check.
Exit 0 when all pass, 1 when one fails, 64 on bad usage.
EOF
}
help_or_version "$@"

grade_args bucket_student.c "$@"
[ -x "$PSR_BIN/ring_worker" ] || { say "no $PSR_BIN/ring_worker: run make first"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/grade_bucket.XXXXXX") || { say "no temp folder"; exit 1; }
grade_start
grade_build student-bucket --bucket-student

# ------------------------------------------------------------------ runs
bucket=96K
# run BIN K TAG ARGS: a K-rank training run with BIN's ring_worker; its status.
run() {
    PSR_BIN=$1 timeout -s KILL 60 "$root/experiments/launch.sh" ring "$2" \
        --worker-args "--bucket-size $bucket --trace $tmp/$3.trace $4" --workload synthetic \
        --params 64K --layers 8 --dtype f32 --backward-time 200ms --steps 3 --warmup 0 \
        --link-bw 100Mbit --timeout 3 --time-limit 50 --weights-out "$tmp/$3.w" \
        --csv-out "$tmp/$3.csv" > "$tmp/$3.out" 2> "$tmp/$3.err" < /dev/null
}
# buckets TRACE: rank 0's step-0 buckets in the order started, "BYTES@FIRST ..."
# (the project's trace names no first element: BYTES@).
buckets() {
    awk '/"allreduce bucket/ && /"step":0[,}]/ {
            at = ""; if (match($0, /@[0-9]+/)) at = substr($0, RSTART + 1, RLENGTH - 1)
            b = $0; sub(/.*"bytes":/, "", b); sub(/[^0-9].*/, "", b)
            printf "%s%s@%s", n++ ? " " : "", b, at }' "$1"
}
# overlap TRACE: the share of the buckets' bytes whose all-reduce ended
# before the backward pass did (its "backward layer 0"), mean over steps.
overlap() {
    awk 'function num(k,   v) { v = $0; sub(".*\"" k "\":", "", v); sub(/[^0-9.].*/, "", v); return v + 0 }
         /"backward layer 0"/ { end[num("step")] = num("ts") + num("dur") }
         /"allreduce bucket/ { s = num("step"); e[s, ++m[s]] = num("ts") + num("dur"); b[s, m[s]] = num("bytes") }
         END { for (s in m) { t = 0; d = 0
                   for (i = 1; i <= m[s]; i++) { t += b[s, i]; if (e[s, i] <= end[s]) d += b[s, i] }
                   if (t > 0) { sum += d / t; k++ } }
               printf "%.2f", k ? sum / k : 0 }' "$1"
}

ks="2 3"
[ $quick = 1 ] && ks="2"
failed_k="" bytes_off="" s2ran=0
for k in $ks; do
    if ! run "$PSR_BIN" "$k" "p$k" ""; then
        say "the project's own run at K = $k failed (the machine?): $(grep 'ring_worker\[' "$tmp/p$k.err" | tail -n 1)"
        exit 1
    fi
    ok=1 why=""
    if run "$sbin" "$k" "s$k" --bucket-student; then
        [ "$k" = 2 ] && s2ran=1
        r=0
        while [ $r -lt "$k" ]; do
            cmp -s "$tmp/s$k.w.$r" "$tmp/p$k.w.$r" ||
                { ok=0; why="rank $r's weights differ from the project's bucketed run: the sums are wrong"; break; }
            r=$((r + 1))
        done
        sb=$(csv_col "$tmp/s$k.csv" bytes_in 2>/dev/null) pb=$(csv_col "$tmp/p$k.csv" bytes_in 2>/dev/null)
        if [ $ok = 1 ] && [ "$sb" != "$pb" ]; then
            ok=0 bytes_off=1
            why="rank 0 received $sb bytes per step where the project's buckets receive $pb"
        fi
    else
        ok=0
        why=$(grep 'ring_worker\[[0-9]*\]: \(step [0-9]*:\|--bucket-student\)' "$tmp/s$k.err" | head -n 1 | sed 's/^rank[0-9]*| //')
        [ -n "$why" ] || why=$(grep -v '^launch.sh' "$tmp/s$k.err" | tail -n 1)
    fi
    cat "$tmp/s$k.err" >> "$tmp/all.err"
    if [ $ok = 1 ]; then
        line ok "weights and bytes at K = $k: every rank the project's bits, its bytes ($sb per step at rank 0)"
    else
        failed_k="$failed_k $k"
        bad off "K = $k: $why"
    fi
done

# The buckets and the overlap, from rank 0's traces at K = 2.
sbk="" pbk="" so=0 po=0 nb=0 np=0
# (Not after a failed run: its trace says nothing.)
if [ "$s2ran" = 1 ] && [ -s "$tmp/s2.trace.0" ]; then
    sbk=$(buckets "$tmp/s2.trace.0") pbk=$(buckets "$tmp/p2.trace.0")
    so=$(overlap "$tmp/s2.trace.0") po=$(overlap "$tmp/p2.trace.0")
    sizes() { printf '%s\n' "$1" | tr ' ' '\n' | sed 's/@.*//' | tr '\n' ' ' | sed 's/ $//'; }
    first=${sbk%% *} nb=$(echo "$sbk" | wc -w) np=$(echo "$pbk" | wc -w)
    forward=0
    [ "$nb" -gt 1 ] && [ "${first#*@}" = 0 ] && forward=1
    if [ "$(sizes "$sbk")" = "$(sizes "$pbk")" ] && [ $forward = 0 ]; then
        line ok "buckets: $nb of $(sizes "$sbk") bytes, the last layers first, as the project's"
    else
        bad off "buckets: yours hold $(sizes "$sbk") bytes in the order started (the first from element ${first#*@}); the project's $(sizes "$pbk") (the first from its last layers)"
        buckets_off=1
    fi
    if awk -v s="$so" -v p="$po" 'BEGIN { exit !(s >= p - 0.25 && (s > 0 || p == 0)) }'; then
        line ok "overlap: $so of the buckets' bytes all-reduced before the backward pass ended (the project's: $po)"
    else
        bad off "overlap: $so of the buckets' bytes all-reduced before the backward pass ended, the project's $po: the communication did not overlap the backward pass"
        overlap_off=1
    fi
fi

# The usual mistakes, from the symptoms (THE DIAGNOSIS).
diagnose() {
    if grep -q 'not written yet' "$tmp/all.err" 2>/dev/null; then
        echo "the template's body is still there: write student_layer_done and student_backward_done, delete the BS_NOT_WRITTEN lines"
    elif grep -q 'were never started' "$tmp/all.err" 2>/dev/null; then
        if grep -q 'elements \[0, [0-9]*) (layers 0\.\.[0-9]*) were never started' "$tmp/all.err" &&
            ! grep -q 'elements \[0, 1) ' "$tmp/all.err"; then
            echo "the last bucket was never started: the layers still in the open bucket when the backward pass ended (layer 0's) were never all-reduced. student_backward_done must start what is left"
        else
            echo "an element at a bucket's edge was never started: a bucket boundary off by one element. A layer's range is [first, first + count); a bucket's count is the sum of its layers' counts, in elements"
        fi
    elif grep -q 'has not finished yet' "$tmp/all.err" 2>/dev/null; then
        echo "a bucket was started before all its layers were done: the backward pass finishes the last layer first, so a bucket may hold only layers that student_layer_done has already been given"
    elif grep -q 'runs past the vector' "$tmp/all.err" 2>/dev/null; then
        echo "a bucket ran past the vector: the layers arrive from the top of the vector down, so a new layer goes IN FRONT of the bucket (its first element becomes the bucket's first), not behind it"
    elif grep -q 'would be all-reduced twice\|more buckets than' "$tmp/all.err" 2>/dev/null; then
        echo "a layer was started twice: after bs_start, empty the open bucket (bs_open) before the next layer"
    elif [ "${forward-0}" = 1 ]; then
        echo "the first bucket started begins at element 0 (layer 0): buckets in forward order. The backward pass finishes the LAST layer first, so a bucket of the first layers is complete only at the very end and nothing overlaps; cut from the last layer down and start each bucket as soon as it is complete"
    elif [ -n "${buckets_off-}" ] && [ "$nb" -lt "$np" ]; then
        echo "fewer, larger buckets than the project's ($nb against $np): a bucket was closed one layer late. Start it as soon as it holds AT LEAST --bucket-size bytes (>=), not only when it holds more (>)"
    elif [ -n "${buckets_off-}" ] && [ "$nb" -gt "$np" ]; then
        echo "more, smaller buckets than the project's ($nb against $np): a bucket was closed one layer early. Add layers while it holds fewer than --bucket-size bytes, start it when it holds at least that many"
    elif [ -n "${overlap_off-}" ]; then
        echo "the buckets are the project's, but their all-reduces finished only after the backward pass: they were started after it (in student_backward_done?). Start each bucket in student_layer_done as soon as it is complete; only the last one waits for the end"
    elif [ -n "$bytes_off" ]; then
        echo "the bytes differ from the project's buckets: more or fewer all-reduces (each has its frames' headers) than its $np buckets"
    else
        echo "see the lines above"
    fi
}
if [ $fails -gt 0 ]; then
    line hint "$(diagnose)"
fi

# ----------------------------------------------------------------- fault
if [ $quick = 0 ] && [ $fails = 0 ]; then
    grade_fault "$sbin" --bucket-student --bucket-size $bucket --workload synthetic --params 64K \
        --layers 8 --dtype f32 --backward-time 20ms --steps 100000 --link-bw 20MB --timeout 2
fi

if [ $fails = 0 ]; then
    echo "grade: every check passed$([ $quick = 1 ] && echo " (--quick: K = 2, no fault check)")"
    exit 0
fi
echo "grade: $fails check(s) failed"
exit 1
