# t_ps_mpirun.sh -- the parameter server's workers under Open MPI's
# mpirun.openmpi: MPI rank r is worker rank r, the world size is K (from
# OMPI_COMM_WORLD_RANK/_SIZE, no --rank/--world flags), the server runs
# outside mpirun and is found by its address. The recipe of
# ps_worker/README.md, checked against the big-batch reference.
# tier: full
. "$PSR_TESTS/lib.sh"

if [ ! -x "$PSR_BIN/ps_server" ] || [ ! -x "$PSR_BIN/ps_worker" ]; then
    t_skip ps-mpirun-1.1 "workers under mpirun" "no ps_server/ps_worker in $PSR_BIN"
    t_exit
fi
if ! command -v mpirun.openmpi >/dev/null; then
    t_skip ps-mpirun-1.1 "workers under mpirun" "mpirun.openmpi not installed (apt-get install openmpi-bin)"
    t_exit
fi

t_case ps-mpirun-1.1 "mpirun.openmpi -np 4 ps_worker: ranks from Open MPI, weights == big batch within 1e-12"
"$PSR_BIN/reference" --steps 5 --weights-out "$T_TMP/ref" >/dev/null 2>"$T_TMP/ref.err" \
    || t_fail "reference: $(cat "$T_TMP/ref.err")"
# The job's secret travels to the server by the environment and to the
# workers with mpirun.openmpi -x (docs/security.md).
export PSRING_SECRET=ps-mpirun-secret-0123456789abcdef
setsid timeout -s KILL 120 "$PSR_BIN/ps_server" --listen 127.0.0.1:0 --port-file "$T_TMP/port" \
    --workers 4 --steps 5 --timeout 20 >"$T_TMP/srv.out" 2>"$T_TMP/srv.err" </dev/null &
srv=$!
trap 'kill -KILL "-$srv" 2>/dev/null; rm -rf "$T_TMP"' EXIT
i=0
while [ $i -lt 200 ] && [ ! -s "$T_TMP/port" ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$T_TMP/port" 2>/dev/null)
if [ -z "$port" ]; then
    t_fail "ps_server wrote no port file: $(head -c 300 "$T_TMP/srv.err")"
else
    # Root needs --allow-run-as-root; --oversubscribe: 4 ranks on 2 cores.
    asroot=""
    [ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
    job 120 mpirun.openmpi $asroot --oversubscribe -np 4 -x PSRING_SECRET \
        "$PSR_BIN/ps_worker" --server "127.0.0.1:$port" --steps 5 --timeout 20 \
        --weights-out "$T_TMP/w"
    expect_rc 0
    for r in 0 1 2 3; do
        grep -q "ps_worker\[$r\]: rank $r of 4 (from openmpi)" "$T_TMP/err" \
            || t_fail "worker $r does not say it took rank $r of 4 from openmpi: $(head -c 400 "$T_TMP/err")"
        cmp -s "$T_TMP/w.0" "$T_TMP/w.$r" || t_fail "worker $r's weights differ from worker 0's"
    done
    awk 'NR == FNR { ref[FNR] = $1; n = FNR; next }
         { m = FNR; d = $1 - ref[FNR]; if (d < 0) d = -d; b = ref[FNR]; if (b < 0) b = -b
           if (b < 1e-300) b = 1e-300; if (d > 1e-12 * b) bad++ }
         END { exit !(m == n && n > 0 && !bad) }' "$T_TMP/ref.0" "$T_TMP/w.0" \
        || t_fail "weights not within 1e-12 of the reference: $(paste "$T_TMP/w.0" "$T_TMP/ref.0" | head -3 | tr '\n' ' ')"
    wait "$srv"; st=$?
    [ "$st" = 0 ] || t_fail "ps_server exit status $st: $(tail -c 300 "$T_TMP/srv.err")"
fi
t_end
t_case ps-mpirun-1.2 "the README's mpirun.openmpi line for the ring runs as written (as root with --allow-run-as-root added, as the README says)"
line=$(awk '/^```sh$/ { c = 1; next } /^```$/ { c = 0 } c && /^mpirun\.openmpi .*ring_worker/' "$PSR_TESTS/../README.md")
[ -n "$line" ] || t_fail "no mpirun.openmpi line for ring_worker in a README code block"
asroot=""
[ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
port=$(awk 'BEGIN { srand(); print 20000 + int(rand() * 20000) }')
set -- $(echo "$line" | sed "s|bin/ring_worker|$PSR_BIN/ring_worker|; s|127.0.0.1:5556|127.0.0.1:$port|; s|^mpirun.openmpi|mpirun.openmpi $asroot|")
job 120 "$@" --timeout 20
expect_rc 0
grep -q 'ring_worker\[3\]: rank 3 of 4 (rank from openmpi)' "$T_TMP/err" || t_fail "rank 3 of 4 from openmpi not said: $(head -c 400 "$T_TMP/err")"
t_end
t_exit
