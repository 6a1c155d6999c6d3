# t_phases.sh -- ring_worker --bench --phases FILE (common/coll/ring_steps.h)
# as real processes on 127.0.0.1, and the exercise that draws it
# (experiments/lab_phases.sh, plots/ring_phases.gp; docs/lab.md 21):
# every (rank, phase, step) of a recorded all-reduce sends and receives
# exactly the chunks of the step table in common/coll/ring.c's opening
# comment (K = 4, read from the comment itself) and of the rule it states
# (K = 3: the reduce-scatter sends r-s-1 and receives r-s-2, the
# all-gather one chunk later); what a rank receives is what its left
# neighbour sends in the same step; each rank's steps follow one another;
# each step's bytes are its chunk's (odd n: chunks of two sizes). Then the
# exercise's script draws both pictures and prints ring.c's table, and the
# bad flags are refused with one usage line.
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
ring_c="$PSR_TESTS/../common/coll/ring.c"
t_need phases "the ring's steps" ring_worker psr_merge

# table_of_ring_c: the K = 4 step table of ring.c's opening comment as
# "phase step rank send recv" lines, sorted.
table_of_ring_c() {
    awk '/K = 4, "s>r"/ { on = 1; next } /Read a column down/ { on = 0 }
         on {
             sub(/^ \*/, "")
             if ($1 == "reduce-scatter" || $1 == "all-gather") { ph = $1; $1 = ""; $0 = $0 }
             if ($1 ~ /^[0-9]+$/ && NF == 13)
                 for (r = 0; r < 4; r++) print ph, $1, r, $(2 + 3 * r), $(4 + 3 * r)
         }' "$ring_c" | sort
}
# rows_of PREFIX: the recorded steps, the same way.
rows_of() {
    cat "$1".[0-9]* | awk '!/^#/ { print $2, $3, $1, $4, $5 }' | sort
}
# consistent PREFIX K N: the rows' own checks; one line per problem.
consistent() {
    cat "$1".[0-9]* | awk -v k="$2" -v n="$3" '
        !/^#/ {
            rows++; r = $1; key = $2 " " $3
            send[key, r] = $4; recv[key, r] = $5; cnt[r]++
            if ($8 < $7) printf "rank %d %s step %d ends (%s) before it starts (%s)\n", r, $2, $3, $8, $7
            if (r in last && $7 < last[r]) printf "rank %d %s step %d starts before its previous step ended\n", r, $2, $3
            last[r] = $8
            # ring_chunk: chunk c has q + 1 elements when c < e, else q (4-byte floats)
            q = int(n / k); e = n % k; want = 4 * (q + ($4 < e ? 1 : 0))
            if ($6 != want) printf "rank %d %s step %d sent %d bytes of chunk %d, want %d\n", r, $2, $3, $6, $4, want
            keys[key] = 1
        }
        END {
            if (rows != 2 * (k - 1) * k) printf "%d rows, want 2(K-1)K = %d\n", rows, 2 * (k - 1) * k
            for (r = 0; r < k; r++) if (cnt[r] != 2 * (k - 1)) printf "rank %d: %d rows, want %d\n", r, cnt[r], 2 * (k - 1)
            for (key in keys) for (r = 0; r < k; r++)
                if (recv[key, r] != send[key, (r + k - 1) % k])
                    printf "%s: rank %d receives %s, its left neighbour sends %s\n", key, r, recv[key, r], send[key, (r + k - 1) % k]
        }'
}

t_case phases-1.1 "K = 4, 1001 floats: every (rank, phase, step) has the chunks of ring.c's step table"
table_of_ring_c > "$T_TMP/want4"
[ "$(wc -l < "$T_TMP/want4")" = 24 ] || t_fail "ring.c's K = 4 table: $(wc -l < "$T_TMP/want4") cells read, want 24 (did its layout change?)"
job 120 "$launch" ring 4 --worker-args "--phases $T_TMP/ph4" --bench -b 4004 -e 4004 -n 1 -w 0 --timeout 10
expect_rc 0
rows_of "$T_TMP/ph4" > "$T_TMP/got4"
diff "$T_TMP/want4" "$T_TMP/got4" > "$T_TMP/d4" ||
    t_fail "the recorded steps differ from ring.c's table (< table, > run): $(head -n 8 "$T_TMP/d4" | tr '\n' ' ')"
probs=$(consistent "$T_TMP/ph4" 4 1001)
[ -z "$probs" ] || t_fail "$(echo "$probs" | head -n 5 | tr '\n' ';')"
grep -q '^# ring_worker --phases: rank 0 of K 4, 1001 f32 (4004 bytes), the first timed call$' "$T_TMP/ph4.0" ||
    t_fail "ph4.0's first line: $(head -n 1 "$T_TMP/ph4.0")"
t_end

t_case phases-1.2 "K = 3, 751 floats, two timed calls: one call's steps, by the rule ring.c states (RS r-s-1 > r-s-2, AG one later)"
job 120 "$launch" ring 3 --worker-args "--phases $T_TMP/ph3" --bench -b 3004 -e 3004 -n 2 -w 1 \
    --timeout 10
expect_rc 0
awk 'BEGIN { k = 3
             for (r = 0; r < k; r++) for (s = 0; s < k - 1; s++) {
                 print "reduce-scatter", s, r, (r - s - 1 + 2 * k) % k, (r - s - 2 + 2 * k) % k
                 print "all-gather", s, r, (r - s + 2 * k) % k, (r - s - 1 + 2 * k) % k } }' | sort > "$T_TMP/want3"
rows_of "$T_TMP/ph3" > "$T_TMP/got3"
diff "$T_TMP/want3" "$T_TMP/got3" > "$T_TMP/d3" ||
    t_fail "the recorded steps differ from the rule (< rule, > run): $(head -n 8 "$T_TMP/d3" | tr '\n' ' ')"
probs=$(consistent "$T_TMP/ph3" 3 751)
[ -z "$probs" ] || t_fail "$(echo "$probs" | head -n 5 | tr '\n' ';')"
t_end

if command -v gnuplot >/dev/null; then
    t_case phases-1.3 "lab_phases.sh: the blank sheet, then --answer: both pictures, and ring.c's table printed"
    lab="$PSR_TESTS/../experiments/lab_phases.sh"
    job 120 "$lab" --out "$T_TMP/lab" --bytes 4004 --link-bw 1Gbit --link-latency 50us
    expect_rc 0
    for f in ring_phases_blank.png ring_phases_blank.svg; do
        [ -s "$T_TMP/lab/$f" ] || t_fail "no $f after the run"
    done
    [ -e "$T_TMP/lab/ring_phases.png" ] && t_fail "the answer's picture drawn before --answer"
    grep -q 'in: [0-9]' "$T_TMP/lab/ring_phases_blank.svg" && t_fail "the blank sheet shows chunk numbers"
    job 60 "$lab" --answer --out "$T_TMP/lab"
    expect_rc 0
    for f in ring_phases.png ring_phases.svg; do
        [ -s "$T_TMP/lab/$f" ] || t_fail "no $f after --answer"
    done
    head -c 8 "$T_TMP/lab/ring_phases.png" | od -An -c | grep -q 'P   N   G' || t_fail "ring_phases.png is not a PNG"
    # The printed table is ring.c's, blanks aside.
    awk '/^ \*     phase  /, /^ \*  *2  .*1 > 0$/' "$ring_c" | sed 's/^ \*//' | tr -s ' ' > "$T_TMP/tab_c"
    tr -s ' ' < "$T_TMP/out" > "$T_TMP/tab_run"
    [ "$(wc -l < "$T_TMP/tab_c")" = 8 ] || t_fail "ring.c's table: $(wc -l < "$T_TMP/tab_c") lines read, want 8"
    diff "$T_TMP/tab_c" "$T_TMP/tab_run" > "$T_TMP/dt" ||
        t_fail "--answer's table differs from ring.c's (< ring.c, > run): $(head -n 6 "$T_TMP/dt" | tr '\n' ' ')"
    t_end
else
    t_skip phases-1.3 "lab_phases.sh draws both pictures" "gnuplot not installed"
fi

t_case phases-1.4 "--phases off the host ring's benchmark: one usage line, exit 64; lab_phases.sh's bad flags too"
for bad in "" "--bench --algo rd" "--bench --compress fp16" "--bench --coll broadcast"; do
    job 10 "$PSR_BIN/ring_worker" $bad --phases "$T_TMP/x" --world 2 --rank 1 --coordinator 127.0.0.1:9
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] && grep -q "^ring_worker: --phases $T_TMP/x: .*; see ring_worker --help$" "$T_TMP/err" ||
        t_fail "'$bad': want one line naming --phases: $(cat "$T_TMP/err")"
done
job 10 "$PSR_BIN/ring_worker" --bench --phases "$T_TMP/no/such/dir/x" --world 2 --rank 1 --coordinator 127.0.0.1:9
expect_rc 64
grep -q -- '--phases' "$T_TMP/err" || t_fail "an unwritable --phases: $(cat "$T_TMP/err")"
for bad in "--K 1" "--K 17" "--bytes 1Q" "--out a\ b"; do
    eval "job 10 \"\$PSR_TESTS/../experiments/lab_phases.sh\" $bad"
    expect_rc 64
    grep -q '^lab_phases.sh: --.*; see lab_phases.sh --help$' "$T_TMP/err" || t_fail "'$bad': $(cat "$T_TMP/err")"
done
job 10 "$PSR_TESTS/../experiments/lab_phases.sh" --answer --out "$T_TMP/empty"
expect_rc 1
grep -q "no $T_TMP/empty/ph.RANK" "$T_TMP/err" || t_fail "--answer without a run: $(cat "$T_TMP/err")"
t_end
t_exit
