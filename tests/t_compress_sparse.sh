# t_compress_sparse.sh -- --compress topk:F and sign as real processes on
# 127.0.0.1 through experiments/launch.sh: a K = 3 parameter-server run and
# a K = 3 ring run with topk:0.01 and a K = 3 PS run with sign end with
# every rank's weights identical and the loss going down, the payload the
# counters saw being the frames' (top-k: 4 + k (4 + 8) bytes for f64, k =
# ceil(F n); sign: 8 + ceil(n / 8)); the combinations that do not fit
# (sign on the ring, topk with --algo rd|rabenseifner|tree, buckets on
# the PS) exit 64 with one line naming what they need; a worker whose
# fraction differs from its server's is refused at HELLO.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need compress-sparse-proc "--compress topk" ring_worker ps_server ps_worker

# col FILE NAME: row 2's column NAME of a launch.sh CSV.
col() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c[n] }' "$1"
}

# loss_down ERRFILE PATTERN: the first and last loss lines PATTERN finds,
# the last below the first.
loss_down() {
    sed -n "$2" "$1" >"$T_TMP/losses"
    awk 'NR == 1 { a = $1 } { b = $1 } END { exit !(NR >= 2 && b < a) }' "$T_TMP/losses" ||
        t_fail "loss not going down: $(tr '\n' ' ' <"$T_TMP/losses")"
}

# The mlp workload has n = 6337 parameters (f64): top-k 1% keeps k = 64,
# a frame of 4 + 64 x 12 = 772 bytes; sign's is 8 + 793 = 801 bytes.
# ps_case C WANT: ps 3 --compress C, mlp: identical weights, the loss
# going down, the servers' payload in 3 frames of WANT bytes.
ps_case() {
    t_launched ps "p$1" 3 240 --compress "$1" --workload mlp --steps 12 --seed 7
    loss_down "$T_TMP/p$1.err" 's/.*ps_server\[0\]: step [0-9]* loss \([0-9.e+-]*\).*/\1/p'
    grep -q "payload bytes per step: in $((3 * $2)), out 152088" "$T_TMP/p$1.err" ||
        t_fail "payload line: $(grep 'payload bytes' "$T_TMP/p$1.err")"
}

t_case compress-sparse-proc-1.1 "ps 3 --compress topk:0.01, mlp: workers' weights identical, the loss going down, the servers' payload in K frames of 772 bytes"
ps_case topk:0.01 772
t_end

t_case compress-sparse-proc-1.2 "ps 3 --compress sign, mlp: workers' weights identical, the loss going down, the servers' payload in K frames of 801 bytes"
ps_case sign 801
t_end

t_case compress-sparse-proc-1.3 "ring 3 --compress topk:0.01, mlp: every rank bit-identical, the loss going down; each link carries K - 1 = 2 frames of 772 bytes a step (plus headers and the exact trailer)"
t_launched ring r 3 240 --worker-args "--compress topk:0.01" --workload mlp --steps 12 --seed 7 \
    --csv-out "$T_TMP/r.csv"
loss_down "$T_TMP/r.err" 's/^rank0| .* step [0-9]*: loss \([0-9.e+-]*\).*/\1/p'
[ "$(col "$T_TMP/r.csv" compress)" = topk:0.01 ] || t_fail "compress column '$(col "$T_TMP/r.csv" compress)'"
out=$(col "$T_TMP/r.csv" bytes_out)
[ "$out" -ge 1544 ] && [ "$out" -lt 1844 ] 2>/dev/null || t_fail "bytes_out $out, want 1544 + headers"
t_end

t_case compress-sparse-proc-1.4 "the combinations that do not fit exit 64 with one line naming the system they need"
while IFS='|' read -r prog args need; do
    job 30 "$PSR_BIN/$prog" $args --timeout 3
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q -e "^$prog: --compress .*$need" "$T_TMP/err" ||
        t_fail "$prog $args: $(cat "$T_TMP/err")"
done <<EOF
ring_worker|--coordinator 127.0.0.1:0 --compress sign|needs the parameter server
ring_worker|--coordinator 127.0.0.1:0 --compress topk:0.01 --algo rd|needs --algo ring
ring_worker|--coordinator 127.0.0.1:0 --compress topk:0.01 --algo rabenseifner|needs --algo ring
ring_worker|--coordinator 127.0.0.1:0 --compress topk:0.01 --algo tree|needs --algo ring
ring_worker|--coordinator 127.0.0.1:0 --compress topk:0|not none, fp16 or bf16
ps_worker|--server 127.0.0.1:1 --compress topk:0.01 --bucket-size 1K|range whole
ps_worker|--server 127.0.0.1:1 --compress sign --no-overlap|range whole
ps_server|--workers 2 --compress topk:2|not none, fp16 or bf16
EOF
t_end

t_case compress-sparse-proc-1.5 "a worker whose top-k fraction differs from the server's is refused at HELLO, naming both"
job 60 "$launch" ps 1 --compress topk:0.01 --worker-args "--compress topk:0.02" --steps 3 --timeout 5
[ "$rc" != 0 ] || t_fail "the job succeeded"
expect_grep err 'HELLO refused: rank 0: --compress topk:0.02, this server has topk:0.01'
t_end
t_exit
