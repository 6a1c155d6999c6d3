# t_model.sh -- bin/model prints the seed's exercise table from the
# alpha-beta formulas, and checks its input.
. "$PSR_TESTS/lib.sh"

# col K N: column N of the row for K in the last job's output.
col() { awk -v k="$1" -v c="$2" '$1 == k { print $c }' "$T_TMP/out"; }
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-3 * b) }'; }

t_case modeltool-1.1 "seed exercise: P=2e9 x 2 B, 25 GB/s, K=8,64,512"
job 10 "$PSR_BIN/model"
expect_rc 0
# By hand: ingress K*4e9/25e9; ring 2(K-1)/K*4e9/25e9.
near "$(col 8 2)" 1.28 || t_fail "K=8 ps ingress '$(col 8 2)', want 1.28 s"
near "$(col 512 2)" 81.92 || t_fail "K=512 ps ingress '$(col 512 2)', want 81.92 s"
near "$(col 8 4)" 0.28 || t_fail "K=8 ring '$(col 8 4)', want 0.28 s"
near "$(col 512 4)" 0.319375 || t_fail "K=512 ring '$(col 512 4)', want 0.319375 s"
near "$(col 64 5)" 32.507937 || t_fail "K=64 ratio '$(col 64 5)', want 64^2/126"
t_end

t_case modeltool-1.2 "latency enters 2(K-1) times for the ring, once for the server"
job 10 "$PSR_BIN/model" --elements 1 --elem-bytes 1 --bw 1GB --latency 1ms --workers 4
expect_rc 0
near "$(col 4 4)" 0.006 || t_fail "ring time '$(col 4 4)', want 6 ms (+ 1.5 ns)"
near "$(col 4 2)" 0.001 || t_fail "ps ingress '$(col 4 2)', want 1 ms"
t_end

t_case modeltool-1.3 "bad worker lists and sizes are usage errors"
for bad in "--workers 0" "--workers 2.5" "--workers 8,,64" "--elements 0" "--bw 0"; do
    job 10 "$PSR_BIN/model" $bad
    [ "$rc" = 64 ] || t_fail "model $bad: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "model $bad: stderr not one line"
done
t_end
t_exit
