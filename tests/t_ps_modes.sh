# t_ps_modes.sh -- the parameter server's modes (ps_server --mode, mode.h)
# on 127.0.0.1 through experiments/launch.sh: async and ssp:N with a worker
# slowed on purpose (--straggler, EMULATED compute time) finish, their
# record replayed by bin/reference --replay gives the server's weights bit
# for bit (cmp), SSP's largest lead never exceeds N; sync's --weights-out
# PATH.server is the weights every worker pulled; bad values exit 64 with
# one line; a tampered record is refused naming its line; the modes
# other than sync run on the emulated link (whole frames, paced).
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need ps-modes "parameter server modes" ps_server ps_worker

# run_mode NAME MODE: K = 3, linreg f64, 12 steps, worker 1 four times
# slower than the others (EMULATED: 10 ms of compute, 40 ms for it); the
# record in $T_TMP/NAME.rec, the weights in $T_TMP/NAME.w.*; then the
# replay, whose weights must be the server's, byte for byte.
run_mode() {
    job 120 "$launch" ps 3 --steps 12 --timeout 10 --backward-time 0.01 --straggler 1:4 \
        --weights-out "$T_TMP/$1.w" --out "$T_TMP/$1.job" \
        --server-args "--mode $2 --record $T_TMP/$1.rec --staleness-out $T_TMP/$1.hist"
    expect_rc 0
    expect_grep err "mode $2: 36 updates; staleness over 36 updates"
    # the histogram file counts the 36 updates, and agrees with the record:
    # staleness = the version before the update - the version computed on
    awk '/^a / { s = $2 - 1 - $5; if (s > 16) s = 16; n[s]++ }
         END { for (i = 0; i <= 16; i++) print i, n[i] + 0 }' "$T_TMP/$1.rec" >"$T_TMP/$1.hist.want"
    grep -v '^#' "$T_TMP/$1.hist" | cmp -s - "$T_TMP/$1.hist.want" ||
        t_fail "$1.hist is not the record's staleness: $(grep -v '^#' "$T_TMP/$1.hist" | tr '\n' ' ') vs $(tr '\n' ' ' <"$T_TMP/$1.hist.want")"
    [ "$(grep -c '^a ' "$T_TMP/$1.rec")" = 36 ] ||
        t_fail "$1.rec: want 36 applied pushes, got $(grep -c '^a ' "$T_TMP/$1.rec")"
    "$PSR_BIN/reference" --replay "$T_TMP/$1.rec" --world 3 --weights-out "$T_TMP/$1.rep" \
        >"$T_TMP/$1.repout" 2>"$T_TMP/$1.reperr" ||
        t_fail "reference --replay: $(cat "$T_TMP/$1.reperr")"
    cmp -s "$T_TMP/$1.rep.0" "$T_TMP/$1.w.server" ||
        t_fail "the replay's weights are not the server's: $(diff "$T_TMP/$1.rep.0" "$T_TMP/$1.w.server" | head -4 | tr '\n' ' ')"
}

t_case ps-modes-1.1 "async, a 4x straggler: finishes; the replayed record gives the server's weights bit for bit"
run_mode async async
t_end

t_case ps-modes-1.2 "ssp:1, a 4x straggler: finishes, the largest lead is at most 1, the replay is bit for bit"
run_mode ssp ssp:1
lead=$(sed -n 's/.*largest lead \([0-9]*\) steps (checked at every push).*/\1/p' "$T_TMP/err")
[ -n "$lead" ] && [ "$lead" -le 1 ] || t_fail "largest lead '$lead', want at most 1"
t_end

t_case ps-modes-1.3 "sync: the server's PATH.server is the weights every worker pulled"
job 120 "$launch" ps 3 --steps 5 --timeout 10 --weights-out "$T_TMP/sy.w" --out "$T_TMP/sy.job"
expect_rc 0
cmp -s "$T_TMP/sy.w.server" "$T_TMP/sy.w.0" || t_fail "sy.w.server differs from worker 0's weights"
t_end

t_case ps-modes-1.4 "bad --mode values and combinations exit 64 with one line"
for args in "--mode ssp:-1" "--mode backup:K" "--mode backup:0" "--mode fast" "--mode ssp:" \
            "--mode backup:3" "--mode async --local-worker 0" "--mode ssp:2 --checkpoint $T_TMP/ck" \
            "--record $T_TMP/sync.rec" "--staleness-out $T_TMP/sync.hist"; do
    # shellcheck disable=SC2086
    job 20 "$PSR_BIN/ps_server" --workers 3 $args
    [ "$rc" = 64 ] || t_fail "ps_server $args: exit $rc, want 64"
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "ps_server $args: want one line, got: $(cat "$T_TMP/err")"
done
t_end

t_case ps-modes-1.5 "a tampered record is refused, naming the line"
if [ -s "$T_TMP/async.rec" ]; then
    # the first applied push says it computed on a version it was not sent
    awk '/^a / && !done { $5 = $5 + 7; done = 1 } { print }' "$T_TMP/async.rec" >"$T_TMP/bad.rec"
    job 20 "$PSR_BIN/reference" --replay "$T_TMP/bad.rec" --world 3
    [ "$rc" != 0 ] || t_fail "a tampered record replayed without complaint"
    expect_grep err "bad.rec: line [0-9]*: the worker computed on a version it was not sent"
    job 20 "$PSR_BIN/reference" --replay "$T_TMP/async.rec" --world 4
    [ "$rc" != 0 ] || t_fail "K 3 against --world 4 replayed without complaint"
else
    t_fail "no async record from ps-modes-1.1"
fi
t_end

t_case ps-modes-1.6 "backup:1 of 4, a 4x straggler: each step uses 3 pushes, late ones dropped and counted; the replay is bit for bit"
job 120 "$launch" ps 4 --steps 12 --timeout 10 --backward-time 0.01 --straggler 1:4 \
    --weights-out "$T_TMP/bk.w" --out "$T_TMP/bk.job" \
    --server-args "--mode backup:1 --record $T_TMP/bk.rec"
expect_rc 0
[ "$(grep -c '^s ' "$T_TMP/bk.rec")" = 12 ] || t_fail "bk.rec: want 12 steps"
awk '/^s / && NF != 7 { bad = 1 } END { exit bad }' "$T_TMP/bk.rec" ||
    t_fail "bk.rec: a step that did not use exactly 3 pushes: $(grep '^s ' "$T_TMP/bk.rec" | awk 'NF != 7' | head -2)"
drops=$(grep -c '^d ' "$T_TMP/bk.rec")
expect_grep err "mode backup:1: 12 updates; .* $drops late pushes dropped"
"$PSR_BIN/reference" --replay "$T_TMP/bk.rec" --world 4 --weights-out "$T_TMP/bk.rep" \
    >"$T_TMP/bk.repout" 2>"$T_TMP/bk.reperr" || t_fail "reference --replay: $(cat "$T_TMP/bk.reperr")"
cmp -s "$T_TMP/bk.rep.0" "$T_TMP/bk.w.server" ||
    t_fail "the replay (the reference on the pushes used) is not the server's weights"
t_end

t_case ps-modes-1.7 "async with 2 shards and buckets: each shard writes its own record and PATH.server.I"
job 120 "$launch" ps 3 --steps 6 --timeout 10 --servers 2 --weights-out "$T_TMP/sh.w" \
    --out "$T_TMP/sh.job" --worker-args "--bucket-size 32" \
    --server-args "--mode async --record $T_TMP/sh.rec"
expect_rc 0
for i in 0 1; do
    [ "$(grep -c '^a ' "$T_TMP/sh.rec.$i" 2>/dev/null)" = 18 ] || t_fail "sh.rec.$i: want 18 applied pushes"
    [ "$(grep -vc '^#' "$T_TMP/sh.w.server.$i" 2>/dev/null)" = 6 ] || t_fail "sh.w.server.$i: want 6 weights"
done
[ ! -e "$T_TMP/sh.rec" ] || t_fail "an unsuffixed sh.rec was written by a shard"
t_end

t_case ps-modes-1.8 "async, ssp:1, backup:1 on the emulated link: finish, the loss goes down, whole frames on the wire, model_s filled"
# K = 3, linreg f64 (n = 96 bytes): a push is 152 bytes on the wire, a
# weights frame 136 (40-byte header + n): each worker's record holds one
# of each per step; the link is slow enough (2 Mbit/s) that the frames go
# in pieces. No timing is checked.
for md in async ssp:1 backup:1; do
    n=$(echo "$md" | tr -d :)
    job 120 "$launch" ps 3 --steps 12 --timeout 10 --backward-time 0.01 --straggler 1:3 \
        --link-bw 2Mbit --link-latency 1ms --loss-time-out "$T_TMP/$n.loss" --out "$T_TMP/$n.lj" \
        --csv-out "$T_TMP/$n.csv" --server-args "--mode $md"
    expect_rc 0
    awk '!/^#/ { if (n++ == 0) first = $2; last = $2 } END { exit !(n >= 2 && last < first) }' "$T_TMP/$n.loss" ||
        t_fail "$md: the loss did not go down: $(grep -v '^#' "$T_TMP/$n.loss" | sed -n '1p;$p' | tr '\n' ' ')"
    # each worker's step: one whole weights frame in, one whole push out
    for w in 0 1 2; do
        awk '$1 == "step" { n++; if ($6 != 136 || $7 != 152) bad = 1 } END { exit !(n == 10 && !bad) }' \
            "$T_TMP/$n.lj/rec.worker.$w" ||
            t_fail "$md: worker $w's bytes per step are not 136 in, 152 out: $(awk '$1 == "step" { printf "%s/%s ", $6, $7 }' "$T_TMP/$n.lj/rec.worker.$w")"
    done
    # the server's NIC carried them (its rows: what it carried between them)
    awk '$1 == "step" { i += $6; o += $7 } END { exit !(i >= 10 * 152 && o >= 10 * 136 && i <= 36 * 152 && o <= 48 * 136) }' \
        "$T_TMP/$n.lj/rec.server.0" ||
        t_fail "$md: the server's bytes: $(awk '$1 == "step" { printf "%s/%s ", $6, $7 }' "$T_TMP/$n.lj/rec.server.0")"
    m=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c["model_s"], $c["link_bw"] }' "$T_TMP/$n.csv")
    awk -v m="$m" 'BEGIN { split(m, a, " "); exit !(a[1] > 0 && a[2] == 250000) }' ||
        t_fail "$md: the row's model_s and link_bw: '$m', want model_s > 0 and 250000 bytes/s"
done
t_end

t_exit
