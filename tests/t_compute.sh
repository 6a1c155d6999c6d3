# t_compute.sh -- the EMULATED compute-time model (common/train/compute.h) end to
# end: bad --straggler/--jitter/--pause values exit 64 with one line naming
# the flag, through every binary; one real job each on the ring and the
# parameter server (K = 2, synthetic, --backward-time 50ms --straggler 1:3)
# finishes, and rank 0's log line says EMULATED and names the straggler.
# The text and the exit status are asserted, never the time.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need compute "compute-time model" reference ps_server ps_worker ring_worker

SYN="--workload synthetic --params 1000 --batch 64"

t_case compute-5.1 "bad --straggler/--jitter/--pause exit 64 with one line naming the flag"
for b in reference ring_worker ps_worker; do
    for args in "--world 8 --rank 0 --backward-time 50ms --straggler 9:2" \
                "--backward-time 50ms --straggler 1:0.5" \
                "--backward-time 50ms --jitter -1" \
                "--backward-time 50ms --jitter nan" \
                "--backward-time 50ms --straggler 1x3" \
                "--backward-time 50ms --pause 1:1s@" \
                "--world 2 --rank 0 --backward-time 50ms --pause 2:1s" \
                "--straggler 0:2" "--jitter 0.1" "--pause 0:1s"; do
        # shellcheck disable=SC2086
        MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$PSR_BIN/$b" $SYN $args >"$T_TMP/o" 2>"$T_TMP/e"
        st=$?
        [ "$st" = 64 ] || t_fail "$b $args: exit $st, want 64: $(head -c 200 "$T_TMP/e")"
        [ "$(wc -l <"$T_TMP/e")" = 1 ] || t_fail "$b $args: stderr $(wc -l <"$T_TMP/e") lines"
        flag=${args##*--}; flag="--${flag%% *}"
        grep -q -e "$flag" "$T_TMP/e" || t_fail "$b $args: does not name $flag: $(cat "$T_TMP/e")"
    done
done
t_end

t_case compute-5.2 "--help says EMULATED for --straggler, --jitter, --pause"
for b in reference ring_worker ps_worker; do
    "$PSR_BIN/$b" --help >"$T_TMP/h" 2>&1
    for f in straggler jitter pause; do
        grep -q -e "--$f .*EMULATED" "$T_TMP/h" || t_fail "$b --help: --$f lacks EMULATED"
    done
done
t_end

RUN="$SYN --steps 3 --warmup 1 --timeout 10 --backward-time 50ms --straggler 1:3"

t_case compute-5.3 "ring, K = 2, --backward-time 50ms --straggler 1:3: finishes; rank 0 says EMULATED and the straggler"
# shellcheck disable=SC2086
job 120 "$launch" ring 2 $RUN --weights-out "$T_TMP/r.w"
expect_rc 0
expect_grep err '^rank0| .*EMULATED backward time.*EMULATED compute model: straggler rank 1 x3'
expect_grep err '^rank1| .*EMULATED compute model: straggler rank 1 x3'
t_ranks_same 2 "$T_TMP/r.w"
t_end

t_case compute-5.4 "parameter server, K = 2, --backward-time 50ms --straggler 1:3: finishes; worker 0 says EMULATED and the straggler"
# shellcheck disable=SC2086
job 120 "$launch" ps 2 $SYN --steps 3 --warmup 1 --timeout 10 \
    --worker-args "--backward-time 50ms --straggler 1:3" --weights-out "$T_TMP/p.w"
expect_rc 0
expect_grep err 'worker0| .*EMULATED backward time.*EMULATED compute model: straggler rank 1 x3'
t_end
t_exit
