# t_psgd_ps.sh -- PowerSGD through the parameter server as real processes
# on 127.0.0.1 (experiments/launch.sh ps): ps_server and ps_worker with
# --compress powersgd:R, two rounds per step (common/ps/store.h, POWERSGD
# PUSHES). The mlp at K = 4 ends with every worker's weights and the
# server's bit-identical, and equal to the ring's PowerSGD run of the same
# seed within f64 rounding (the sums are in another order: not bit for
# bit); the servers' payload bytes per step are the rounds' (counted by
# the server, not computed); two servers whose boundary cuts W2 (then
# raw: one server takes plain pushes) agree too; the unfit combinations
# exit 64 with one line, and a worker whose R differs from its server's is
# refused at HELLO; a hostile worker (tests/peer_hostile.c) whose round-0
# push has the wrong size, or a NaN, ends the run with one line naming it.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need psgd-ps "--compress powersgd on the PS" ring_worker ps_server ps_worker psr_merge

# col FILE NAME: row 2's column NAME of a launch.sh CSV.
col() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c[n] }' "$1"
}
# near A B TOL: the largest |a - b| over the two weight files is <= TOL.
near() {
    paste "$1" "$2" | awk -v t="$3" '{ d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d }
        END { if (NR == 0 || m > t) { print "max |diff| " m " over " NR " lines"; exit 1 } }'
}

t_case psgd-ps-1.1 "mlp K = 4, seed 7, 20 steps, powersgd:2 through one server: the 4 workers' weights and the server's bit-identical; the ring's powersgd:2 run within 1e-12 (f64; the sums' order differs)"
job 120 "$launch" ps 4 --workload mlp --seed 7 --steps 20 --timeout 10 \
    --server-args "--compress powersgd:2" --worker-args "--compress powersgd:2" \
    --weights-out "$T_TMP/ps" --csv-out "$T_TMP/ps.csv"
expect_rc 0
t_ranks_same 4 "$T_TMP/ps"
cmp -s "$T_TMP/ps.0" "$T_TMP/ps.server" || t_fail "the server's weights differ from worker 0's"
[ "$(col "$T_TMP/ps.csv" compress)" = powersgd:2 ] || t_fail "compress column '$(col "$T_TMP/ps.csv" compress)'"
cp "$T_TMP/err" "$T_TMP/ps.err"
job 120 "$launch" ring 4 --workload mlp --seed 7 --steps 20 --timeout 10 \
    --worker-args "--compress powersgd:2 --algo ring" --weights-out "$T_TMP/ring"
expect_rc 0
why=$(near "$T_TMP/ps.0" "$T_TMP/ring.0" 1e-12) || t_fail "PS against the ring: $why"
t_end

t_case psgd-ps-1.2 "the server's payload bytes per step, counted: in 4 x (449 + 192) x 8 (P 128 + 128 and 193 raw, Q 64 + 128), out 4 x (641 + 6337) x 8 (both sums and the weights)"
grep -q 'payload bytes per step: in 20512, out 223296 ' "$T_TMP/ps.err" ||
    t_fail "$(grep 'payload bytes per step' "$T_TMP/ps.err")"
t_end

t_case psgd-ps-1.3 "two servers (--servers 2), the boundary inside W2: every worker the same weights, the shards' together theirs; server 0 takes W1's factors and 1121 raw elements (W2 cut: raw), server 1 plain pushes of its 3168 (counted)"
job 120 "$launch" ps 4 --servers 2 --workload mlp --seed 7 --steps 20 --timeout 10 \
    --server-args "--compress powersgd:2" --worker-args "--compress powersgd:2" \
    --weights-out "$T_TMP/ps2"
expect_rc 0
t_ranks_same 4 "$T_TMP/ps2"
cat "$T_TMP/ps2.server.0" "$T_TMP/ps2.server.1" | cmp -s - "$T_TMP/ps2.0" ||
    t_fail "the servers' shards differ from worker 0's weights"
# server 0: 4 x ((128 + 1121) + 64) x 8 in, 4 x (1313 + 3169) x 8 out
expect_grep err 'server0| .*payload bytes per step: in 42016, out 143424 '
expect_grep err 'server1| .*payload bytes per step: in 101376, out 101376 '
t_end

t_case psgd-ps-2.1 "unfit combinations: exit 64, one line naming what powersgd needs on the PS"
for a in "ps_server|--workers 2 --mode ssp:2|only with --mode sync" \
         "ps_server|--workers 2 --sync-every 2|not with --sync-every" \
         "ps_server|--workers 2 --checkpoint $T_TMP/ck|not with --checkpoint or --resume" \
         "ps_worker|--server 127.0.0.1:1 --no-overlap|not with --bucket-size or --no-overlap" \
         "ps_worker|--server 127.0.0.1:1 --reconnect-window 5|not with --reconnect-window" \
         "ps_worker|--server 127.0.0.1:1 --mistake sync-every-micro --micro 2|not with --mistake sync-every-micro"; do
    prog=${a%%|*} rest=${a#*|}
    args=${rest%%|*} need=${rest#*|}
    # shellcheck disable=SC2086
    job 30 "$PSR_BIN/$prog" --compress powersgd:2 $args --timeout 3
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q -e "^$prog: --compress powersgd:2: .*$need" "$T_TMP/err" ||
        t_fail "$prog $args: $(cat "$T_TMP/err")"
done
t_end

t_case psgd-ps-2.2 "a worker at powersgd:4 against a server at powersgd:2: HELLO refused, naming both"
job 60 "$launch" ps 1 --workload mlp --steps 2 --timeout 5 \
    --server-args "--compress powersgd:2" --worker-args "--compress powersgd:4"
[ "$rc" != 0 ] || t_fail "the job ran"
expect_grep err 'compress powersgd:4, this server has powersgd:2'
t_end

t_case psgd-ps-3.1 "a hostile worker's round-0 push (peer_hostile): 10 elements, not the round's 449, or a NaN at element 3: the server refuses it whole and ends the run (1) with one line naming worker 0 and why"
for a in "--elems 10|carries 10 elements from 0, not the round's 449" \
         "--elems 449 --nan 3|PowerSGD round 0 of step 0 refused: element 3 of its frame is nan"; do
    args=${a%%|*} why=${a#*|}
    rm -f "$T_TMP/h.port"
    bg_start hs 30 "$PSR_BIN/ps_server" --listen 127.0.0.1:0 --port-file "$T_TMP/h.port" \
        --workers 1 --workload mlp --seed 7 --steps 5 --timeout 5 --compress powersgd:2
    i=0
    while [ $i -lt 200 ] && [ ! -s "$T_TMP/h.port" ]; do sleep 0.05; i=$((i + 1)); done
    # shellcheck disable=SC2086
    job 30 "$PSR_TESTBIN/peer_hostile" push "127.0.0.1:$(cat "$T_TMP/h.port")" --rank 0 --world 1 \
        --gap 0.00001 --hello 6337,2,3,7,256,1027 --max 5 $args
    i=0
    while [ $i -lt 200 ] && [ ! -s "$T_TMP/hs.rc" ]; do sleep 0.05; i=$((i + 1)); done
    [ "$(cat "$T_TMP/hs.rc" 2>/dev/null)" = 1 ] || t_fail "$args: server status '$(cat "$T_TMP/hs.rc" 2>/dev/null)'"
    [ "$(grep -c 'run failed' "$T_TMP/hs.err")" = 1 ] &&
        grep -q -e "run failed: worker 0 (.*): .*$why" "$T_TMP/hs.err" ||
        t_fail "$args: $(grep 'run failed' "$T_TMP/hs.err")"
done
bg_kill_all
t_end
