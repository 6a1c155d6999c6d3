# t_metrics_time.sh -- issue 16's metrics through experiments/launch.sh on
# 127.0.0.1: the loss against wall-clock time (--loss-time-out: the
# --loss-out file's steps and losses with a non-decreasing wall_s), the
# time to a target loss (--target-loss: the CSV's ttt_s, the first wall_s
# at or under the target, empty when never reached), and the wait per
# worker (the log's lines, the CSV's wait_s: the largest mean), in sync,
# async, ssp:1 and backup:1 and on the ring. The straggler cases compare
# waits only as relations with a wide margin (EMULATED compute: one worker
# 4 x 50 ms, the others 50 ms), never against a time; bad values exit 64
# with one line.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need metrics-time-2 "loss against time, time to target, waits" ps_server ps_worker ring_worker psr_merge

# col NAME: column NAME of the CSV row the launcher printed (stdout).
col() {
    awk -F, -v n="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
                       c { print $c; exit }' "$T_TMP/out"
}

# same_steps TIMEFILE LOSSFILE: TIMEFILE's data lines less their third
# column are LOSSFILE's, byte for byte; wall_s never decreases; prints the
# first wall_s.
same_steps() {
    awk '!/^#/ { print $1, $2 }' "$1" >"$1.cut"
    grep -v '^#' "$2" | cmp -s - "$1.cut" ||
        t_fail "$1: steps and losses differ from $2: $(grep -v '^#' "$2" | diff - "$1.cut" | head -3 | tr '\n' ' ')"
    [ "$(head -n 1 "$1")" = "# step loss wall_s" ] || t_fail "$1: header '$(head -n 1 "$1")'"
    grep -q '^# wall_s: .*EMULATED compute time included' "$1" || t_fail "$1: no EMULATED note"
    awk '!/^#/ { if (NF != 3 || $3 !~ /^[0-9.e+-]+$/ || (n++ && $3 < last)) bad = 1; last = $3 }
         END { exit bad || n == 0 }' "$1" || t_fail "$1: a wall_s missing or decreasing: $(grep -v '^#' "$1" | head -4 | tr '\n' ' ')"
}

# wait_of NAME R: worker (rank) R's mean wait from the log (stderr).
wait_of() {
    sed -n "s/^$2| .*worker $3 waited: mean \([^ ]*\) s.*/\1/p" "$T_TMP/$1.err" | head -n 1
}

t_case metrics-time-2.1 "ring K=3: --loss-time-out is --loss-out's steps and losses with a non-decreasing wall_s; --target-loss above the first loss gives ttt_s = the first wall_s"
job 120 "$launch" ring 3 --steps 8 --timeout 10 --loss-time-out "$T_TMP/r.time" \
    --target-loss 1e9 --out "$T_TMP/r.job" --worker-args "--loss-out $T_TMP/r.loss"
expect_rc 0
same_steps "$T_TMP/r.time" "$T_TMP/r.loss"
[ "$(grep -vc '^#' "$T_TMP/r.time")" = 8 ] || t_fail "r.time: want 8 steps"
first=$(awk '!/^#/ { printf "%.6g", $3; exit }' "$T_TMP/r.time")
[ -n "$first" ] && [ "$(col ttt_s)" = "$first" ] ||
    t_fail "ttt_s '$(col ttt_s)', want the first wall_s '$first'"
[ -n "$(col wait_s)" ] || t_fail "wait_s is empty"
t_end

t_case metrics-time-2.2 "sync PS K=3: the same file from the server; --target-loss 0 (below every loss) leaves ttt_s empty; wait_s is the largest mean wait"
job 120 "$launch" ps 3 --steps 8 --timeout 10 --loss-time-out "$T_TMP/p.time" \
    --target-loss 0 --out "$T_TMP/p.job" --server-args "--loss-out $T_TMP/p.loss"
expect_rc 0
cp "$T_TMP/err" "$T_TMP/p.err"
same_steps "$T_TMP/p.time" "$T_TMP/p.loss"
[ -z "$(col ttt_s)" ] || t_fail "ttt_s '$(col ttt_s)', want empty (0 is never reached)"
expect_grep err "target-loss 0: not reached"
max=$(for r in 0 1 2; do wait_of p server0 $r; done | sort -g | tail -n 1)
awk -v a="$(col wait_s)" -v b="$max" 'BEGIN { d = a - b; if (d < 0) d = -d
    exit !(a != "" && b != "" && d <= 1e-5 * (b > 1e-9 ? b : 1e-9)) }' ||
    t_fail "wait_s '$(col wait_s)', want the largest worker mean '$max'"
t_end

t_case metrics-time-2.3 "sync PS K=3, worker 1 four times slower (EMULATED 4 x 50 ms): its mean wait at the barrier is below each other worker's"
job 120 "$launch" ps 3 --steps 6 --timeout 10 --backward-time 0.05 --straggler 1:4 \
    --out "$T_TMP/s.job"
expect_rc 0
cp "$T_TMP/err" "$T_TMP/s.err"
w0=$(wait_of s server0 0) w1=$(wait_of s server0 1) w2=$(wait_of s server0 2)
awk -v a="$w1" -v b="$w0" -v c="$w2" 'BEGIN { exit !(a != "" && b != "" && c != "" &&
    a + 0 < b + 0 && a + 0 < c + 0) }' ||
    t_fail "waits: worker 0 '$w0', worker 1 (the straggler) '$w1', worker 2 '$w2'"
t_end

t_case metrics-time-2.4 "ring K=3, rank 1 four times slower: it waits less for its neighbour's first chunk than rank 2, whose left neighbour it is"
job 120 "$launch" ring 3 --steps 6 --timeout 10 --backward-time 0.05 --straggler 1:4 \
    --out "$T_TMP/q.job"
expect_rc 0
q1=$(sed -n 's/^rank1| .*first chunk.*: mean \([^ ]*\) s.*/\1/p' "$T_TMP/err")
q2=$(sed -n 's/^rank2| .*first chunk.*: mean \([^ ]*\) s.*/\1/p' "$T_TMP/err")
awk -v a="$q1" -v b="$q2" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }' ||
    t_fail "waits: rank 1 (the straggler) '$q1', rank 2 '$q2'"
t_end

t_case metrics-time-2.5 "async and ssp:1 (K=3, a 4x straggler): async waits are 0; ssp holds the fast workers, never the straggler; one loss line per update, as --loss-out's"
job 120 "$launch" ps 3 --steps 6 --timeout 10 --backward-time 0.02 --straggler 1:4 \
    --loss-time-out "$T_TMP/a.time" --out "$T_TMP/a.job" \
    --server-args "--mode async --loss-out $T_TMP/a.loss"
expect_rc 0
cp "$T_TMP/err" "$T_TMP/a.err"
for r in 0 1 2; do
    [ "$(wait_of a server0 $r)" = 0 ] || t_fail "async: worker $r waited '$(wait_of a server0 $r)', want 0"
done
same_steps "$T_TMP/a.time" "$T_TMP/a.loss"
[ "$(grep -vc '^#' "$T_TMP/a.time")" = 18 ] || t_fail "a.time: want 18 updates (K x steps)"
grep -q '^# step: an applied update' "$T_TMP/a.time" || t_fail "a.time: what a step is is not said"
job 120 "$launch" ps 3 --steps 6 --timeout 10 --backward-time 0.02 --straggler 1:4 \
    --out "$T_TMP/b.job" --server-args "--mode ssp:1"
expect_rc 0
cp "$T_TMP/err" "$T_TMP/b.err"
[ "$(wait_of b server0 1)" = 0 ] || t_fail "ssp:1: the straggler waited '$(wait_of b server0 1)', want 0"
for r in 0 2; do
    awk -v a="$(wait_of b server0 $r)" 'BEGIN { exit !(a != "" && a + 0 > 0) }' ||
        t_fail "ssp:1: worker $r was never held (mean '$(wait_of b server0 $r)')"
done
t_end

t_case metrics-time-2.6 "backup:1 (K=3, a 4x straggler): one loss line per applied step, as --loss-out's; a wait line per worker; ttt_s filled"
job 120 "$launch" ps 3 --steps 6 --timeout 10 --backward-time 0.02 --straggler 1:4 \
    --loss-time-out "$T_TMP/k.time" --target-loss 1e9 --out "$T_TMP/k.job" \
    --server-args "--mode backup:1 --loss-out $T_TMP/k.loss"
expect_rc 0
cp "$T_TMP/err" "$T_TMP/k.err"
same_steps "$T_TMP/k.time" "$T_TMP/k.loss"
[ "$(grep -vc '^#' "$T_TMP/k.time")" = 6 ] || t_fail "k.time: want 6 steps"
for r in 0 1 2; do
    [ -n "$(wait_of k server0 $r)" ] || t_fail "backup: no wait line for worker $r"
done
[ -n "$(col ttt_s)" ] || t_fail "ttt_s is empty with --target-loss 1e9"
t_end

t_case metrics-time-2.7 "bad --target-loss and --loss-time-out values: exit 64 with one line naming the flag, in every training binary"
for b in ps_server ps_worker ring_worker; do
    for arg in "--target-loss -1" "--target-loss nan" "--target-loss inf" "--target-loss abc" \
               "--target-loss 1e400" "--loss-time-out $T_TMP/no/such/dir/f"; do
        # shellcheck disable=SC2086
        case $b in
        ps_server) job 20 "$PSR_BIN/$b" --workers 1 $arg ;;
        ps_worker) job 20 "$PSR_BIN/$b" --server 127.0.0.1:1 $arg ;;
        *) job 20 "$PSR_BIN/$b" --world 1 --rank 0 --coordinator 127.0.0.1:0 $arg ;;
        esac
        [ "$rc" = 64 ] || t_fail "$b $arg: exit $rc, want 64"
        [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$b $arg: want one line: $(cat "$T_TMP/err")"
        grep -q -e "${arg%% *}" "$T_TMP/err" || t_fail "$b $arg: the flag is not named: $(cat "$T_TMP/err")"
    done
done
t_end

t_exit
