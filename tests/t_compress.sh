# t_compress.sh -- ring_worker --compress fp16|bf16 as real processes on
# 127.0.0.1 through experiments/launch.sh: the payload bytes the links
# count are half the f32 run's (the headers, counted apart, the same), the
# row says compress, the benchmark's check passes; training with fp16 (the
# ring) and bf16 (rd) keeps every rank bit-identical and the loss near the
# uncompressed run's; the bad combinations exit 64 with one line naming
# what --compress needs. The parameter server: ps_worker pushes 16-bit
# values, the servers' bytes in are half the f32 run's, the weights come
# back in full, and a worker that disagrees with its server is refused.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
t_need compress-proc "--compress" ring_worker ps_server ps_worker psr_merge

# col FILE NAME: row 2's column NAME of a launch.sh CSV.
col() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c[n] }' "$1"
}

t_case compress-proc-1.1 "ring 3 --bench 64 KiB f32: fp16's payload half of none's, counted by the links; headers the same; #wrong 0"
for c in none fp16; do
    job 120 "$launch" ring 3 --compress $c --bench -b 64K -e 64K -n 4 -w 1 \
        --dtype f32 --timeout 10 --csv-out "$T_TMP/$c.csv"
    expect_rc 0
    expect_grep err 'rank0| # out of bounds values : 0 OK'
    [ "$(col "$T_TMP/$c.csv" compress)" = $c ] || t_fail "$c: compress column '$(col "$T_TMP/$c.csv" compress)'"
done
full=$(col "$T_TMP/none.csv" bytes_out) half=$(col "$T_TMP/fp16.csv" bytes_out)
# none = P + H, fp16 = P/2 + H, the same frames: P = 2 (none - fp16). Rank
# 0 sends 2 chunks in each phase: (5461 + 5461) + (5462 + 5461) f32 = 87380.
payload=$((2 * (full - half))) hdr=$((full - 2 * (full - half)))
[ "$payload" = 87380 ] || t_fail "payload $payload bytes (none $full, fp16 $half), want 87380"
[ "$hdr" -gt 0 ] && [ $((hdr % 4)) = 0 ] || t_fail "headers $hdr bytes: not 4 frames' worth"
t_end

t_case compress-proc-1.2 "training linreg K = 3, fp16 on the ring and bf16 with --algo rd: bit-identical ranks, loss within 1% of the f32 run"
job 120 "$launch" ring 3 --steps 20 --timeout 10
expect_rc 0
want=$(sed -n 's/^rank0| .* step 19: loss \([0-9.e+-]*\).*/\1/p' "$T_TMP/err")
for a in "fp16 ring" "bf16 rd"; do
    set -- $a
    job 120 "$launch" ring 3 --worker-args "--compress $1 --algo $2" --steps 20 --timeout 10 \
        --weights-out "$T_TMP/w$1" --csv-out "$T_TMP/t$1.csv"
    expect_rc 0
    t_ranks_same 3 "$T_TMP/w$1"
    got=$(sed -n 's/^rank0| .* step 19: loss \([0-9.e+-]*\).*/\1/p' "$T_TMP/err")
    awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= 0.01 * w) }' ||
        t_fail "$1 $2: loss at step 19 $got, f32 $want"
    [ "$(col "$T_TMP/t$1.csv" compress)" = $1 ] || t_fail "$1: compress column"
done
t_end

t_case compress-proc-1.3 "bad combinations: exit 64, one line naming what --compress needs"
for a in "--device cuda|--device cpu --transport tcp" "--transport nccl|--device cpu --transport tcp" \
         "--zero 1|without --zero" "--bench --coll broadcast|--coll all_reduce" "|not none, fp16 or bf16"; do
    args=${a%%|*} need=${a#*|}
    c=fp16
    [ -z "$args" ] && c=fp8
    # shellcheck disable=SC2086
    job 30 "$PSR_BIN/ring_worker" --compress $c $args --coordinator 127.0.0.1:0 --timeout 3
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q -e "^ring_worker: --compress $c: .*$need" "$T_TMP/err" ||
        t_fail "$c $args: $(cat "$T_TMP/err")"
done
t_end

t_case compress-proc-2.1 "ps 2 --compress bf16, synthetic f32: the servers' payload in half the f32 run's (counted), the weights back in full, every process the same weights"
for c in none bf16; do
    job 120 "$launch" ps 2 --compress $c --workload synthetic --params 10001 --dtype f32 \
        --steps 6 --timeout 10 --weights-out "$T_TMP/p$c" --csv-out "$T_TMP/p$c.csv"
    expect_rc 0
    [ "$(col "$T_TMP/p$c.csv" compress)" = $c ] || t_fail "$c: compress column '$(col "$T_TMP/p$c.csv" compress)'"
    cmp -s "$T_TMP/p$c.0" "$T_TMP/p$c.1" || t_fail "$c: workers' weights differ"
done
full=$(col "$T_TMP/pnone.csv" bytes_in) half=$(col "$T_TMP/pbf16.csv" bytes_in)
# 2 workers x 10001 f32 = 80008 payload bytes per step; bf16 carries half.
payload=$((2 * (full - half)))
[ "$payload" = 80008 ] || t_fail "payload in $payload bytes (none $full, bf16 $half), want 80008"
[ $((full - payload)) -gt 0 ] || t_fail "no header bytes counted apart: none $full, payload $payload"
[ "$(col "$T_TMP/pnone.csv" bytes_out)" = "$(col "$T_TMP/pbf16.csv" bytes_out)" ] ||
    t_fail "weights' bytes differ: $(col "$T_TMP/pnone.csv" bytes_out) vs $(col "$T_TMP/pbf16.csv" bytes_out)"
t_end

t_case compress-proc-2.2 "a worker whose --compress differs from the server's is refused at HELLO, naming both"
job 60 "$launch" ps 1 --worker-args "--compress fp16" --steps 3 --timeout 5
[ "$rc" != 0 ] || t_fail "the job succeeded"
expect_grep err 'HELLO refused: rank 0: --compress fp16, this server has none'
t_end

t_case compress-proc-2.3 "ps_worker --device cuda --compress fp16 and a bad name: exit 64, one line"
job 30 "$PSR_BIN/ps_worker" --server 127.0.0.1:1 --compress fp16 --device cuda --timeout 3
expect_rc 64
[ "$(wc -l <"$T_TMP/err")" = 1 ] && expect_grep err '^ps_worker: --compress fp16: .*needs --device cpu'
job 30 "$PSR_BIN/ps_server" --workers 2 --compress fp4
expect_rc 64
[ "$(wc -l <"$T_TMP/err")" = 1 ] && expect_grep err '^ps_server: --compress fp4: not none, fp16 or bf16'
t_end

t_case compress-proc-3.1 "bin/model --compress: the ring's bytes per link halve for fp16 on f32, quarter on f64; the PS refused (64)"
full=$("$PSR_BIN/model" --algo ring --K 4 --bytes 1M --quantity bytes_out)
half=$("$PSR_BIN/model" --algo ring --K 4 --bytes 1M --quantity bytes_out --compress fp16)
quarter=$("$PSR_BIN/model" --algo rd --K 4 --bytes 1M --quantity bytes_out --compress bf16 --dtype f64)
rdfull=$("$PSR_BIN/model" --algo rd --K 4 --bytes 1M --quantity bytes_out)
awk -v f="$full" -v h="$half" -v q="$quarter" -v r="$rdfull" 'BEGIN { exit !(f > 0 && h == f / 2 && q == r / 4) }' ||
    t_fail "ring $full -> fp16 $half; rd $rdfull -> bf16 on f64 $quarter"
job 10 "$PSR_BIN/model" --algo ps --K 4 --bytes 1M --bw 1e9 --compress fp16
expect_rc 64
expect_grep err '^model: --compress fp16: models the ring'
t_end

t_case compress-proc-3.2 "bin/model --spread: the PS's step from the last entry, the earlier pushes hidden by the skew, a sign frame not; only a PS time (64)"
# K 4, 50720 bytes at 125 MB/s (0.40576 ms a push), 1 ms: 1.85 ms of skew
# hide all but the last push: 2 a + n/bw + K n/bw = 4.0288 ms (no skew:
# 2 (a + K n/bw) = 5.24608); sign's 801-byte frames: 2 a + 801/bw + K n/bw
q="--algo ps --K 4 --bytes 50720 --bw 1.25e8 --latency 1ms"
v1=$("$PSR_BIN/model" $q --spread 1.85ms) v0=$("$PSR_BIN/model" $q --spread 0) vn=$("$PSR_BIN/model" $q)
vs=$("$PSR_BIN/model" $q --spread 1.7ms --dtype f64 --compress sign --compress-cost 0)
[ "$v1" = 0.0040288 ] && [ "$v0" = 0.00524608 ] && [ "$vn" = "$v0" ] && [ "$vs" = 0.003629448 ] ||
    t_fail "spread 1.85 ms $v1, 0 $v0, none $vn, sign $vs; want 0.0040288, 0.00524608 twice, 0.003629448"
for bad in "--algo ring --K 4 --bytes 1M --bw 1e9 --spread 1ms" "$q --spread 1ms --quantity bytes_in" "$q --servers 2 --spread 1ms"; do
    job 10 "$PSR_BIN/model" $bad
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] && expect_grep err '^model: .*--spread' || t_fail "$bad: $(head -c 200 "$T_TMP/err")"
done
t_end

t_case compress-proc-4.1 "psring_sim ring 3 --bench --compress fp16: the simulated link's bytes half of none's, model_s on the wire's bytes; the PS and sizes refused (64)"
if [ -x "$PSR_BIN/psring_sim" ]; then
    for c in none fp16; do
        job 60 "$PSR_BIN/psring_sim" ring 3 --bench --bytes 64K --dtype f32 --link-bw 1e8 \
            --compress $c --csv-out "$T_TMP/s$c.csv"
        expect_rc 0
        [ "$(col "$T_TMP/s$c.csv" compress)" = $c ] || t_fail "$c: compress column"
    done
    full=$(col "$T_TMP/snone.csv" bytes_out) half=$(col "$T_TMP/sfp16.csv" bytes_out)
    [ "$full" = 87380 ] && [ "$half" = 43690 ] || t_fail "bytes_out none $full, fp16 $half; want 87380, 43690"
    awk -v a="$(col "$T_TMP/snone.csv" model_s)" -v b="$(col "$T_TMP/sfp16.csv" model_s)" \
        'BEGIN { exit !(a > 0 && b > 0.45 * a && b < 0.55 * a) }' || t_fail "model_s not about half"
    job 30 "$PSR_BIN/psring_sim" ps 2 --link-bw 1e8 --compress bf16
    expect_rc 64
    expect_grep err '^psring_sim: --compress: simulated on the ring with real payloads only'
else
    echo "     (no psring_sim: SimGrid not installed)"
fi
t_end
t_exit
