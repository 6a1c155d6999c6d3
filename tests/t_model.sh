# t_model.sh -- bin/model prints the seed's exercise table from the
# alpha-beta formulas, answers one number per query (ps, ring, rd, the
# crossover: checked against numbers worked out here by hand), and checks
# its input.
. "$PSR_TESTS/lib.sh"

# col K N: column N of the row for K in the last job's output.
col() { awk -v k="$1" -v c="$2" '$1 == k { print $c }' "$T_TMP/out"; }
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-3 * b) }'; }

t_case model-1.1 "seed exercise: P=2e9 x 2 B, 25 GB/s, K=8,64,512"
job 10 "$PSR_BIN/model"
expect_rc 0
# By hand: ingress K*4e9/25e9; ring 2(K-1)/K*4e9/25e9.
near "$(col 8 2)" 1.28 || t_fail "K=8 ps ingress '$(col 8 2)', want 1.28 s"
near "$(col 512 2)" 81.92 || t_fail "K=512 ps ingress '$(col 512 2)', want 81.92 s"
near "$(col 8 4)" 0.28 || t_fail "K=8 ring '$(col 8 4)', want 0.28 s"
near "$(col 512 4)" 0.319375 || t_fail "K=512 ring '$(col 512 4)', want 0.319375 s"
near "$(col 64 5)" 32.507937 || t_fail "K=64 ratio '$(col 64 5)', want 64^2/126"
t_end

t_case model-1.2 "latency enters 2(K-1) times for the ring, once for the server"
job 10 "$PSR_BIN/model" --elements 1 --elem-bytes 1 --bw 1GB --latency 1ms --workers 4
expect_rc 0
near "$(col 4 4)" 0.006 || t_fail "ring time '$(col 4 4)', want 6 ms (+ 1.5 ns)"
near "$(col 4 2)" 0.001 || t_fail "ps ingress '$(col 4 2)', want 1 ms"
t_end

t_case model-1.3 "bad worker lists and sizes are usage errors"
for bad in "--workers 0" "--workers 2.5" "--workers 8,,64" "--elements 0" "--bw 0"; do
    job 10 "$PSR_BIN/model" $bad
    [ "$rc" = 64 ] || t_fail "model $bad: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "model $bad: stderr not one line"
done
t_end

# q ARGS...: bin/model's one number for a query (in $(...): rc stays there).
q() { job 10 "$PSR_BIN/model" "$@"; cat "$T_TMP/out"; }
# want WHAT GOT WANT: GOT within 1e-9 relative of WANT, computed by hand.
want() {
    awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-9 * (b < 0 ? -b : b)) }' ||
        t_fail "$1: '$2', want $3"
}

# K = 4, n = 1e6 bytes, bw = 100MB (1e8 bytes/s), a = 100us throughout.
L="--bw 100MB --latency 100us"
t_case model-2.1 "ring: 2(K-1) a + 2(K-1)/K n / bw; its bytes and steps"
job 10 "$PSR_BIN/model" --algo ring --K 4 --bytes 1000000 $L
expect_rc 0
want "ring K=4" "$(cat "$T_TMP/out")" 0.0156                                # 6e-4 + 1.5e6/1e8
[ "$(wc -l < "$T_TMP/out")" = 1 ] || t_fail "not one line: $(cat "$T_TMP/out")"
want "ring K=2" "$(q --algo ring --K 2 --bytes 1000000 $L)" 0.0102          # 2e-4 + 1e6/1e8
want "ring K=1" "$(q --algo ring --K 1 --bytes 1000000 $L)" 0
want "ring bytes_in" "$(q --algo ring --K 4 --bytes 1000000 --quantity bytes_in)" 1500000
want "ring bytes_out" "$(q --algo ring --K 4 --bytes 1000000 --quantity bytes_out)" 1500000
want "ring steps" "$(q --algo ring --K 4 --bytes 1M --quantity steps)" 6
want "ring 1M" "$(q --algo ring --K 4 --bytes 1M --bw 1MiB)" 1.5            # 1.5 MiB at 1 MiB/s
t_end

t_case model-2.2 "parameter server: a + K n / (S bw) each way"
want "ps time" "$(q --algo ps --K 4 --bytes 1000000 $L)" 0.0802             # 2 (1e-4 + 4e6/1e8)
want "ps ingress" "$(q --algo ps --K 4 --bytes 1000000 $L --quantity ingress)" 0.0401
want "ps egress" "$(q --algo ps --K 4 --bytes 1000000 $L --quantity egress)" 0.0401
want "ps 2 servers" "$(q --algo ps --K 4 --bytes 1000000 $L --servers 2 --quantity ingress)" 0.0201
want "ps bytes_in" "$(q --algo ps --K 4 --bytes 1000000 --quantity bytes_in)" 4000000
want "ps steps" "$(q --algo ps --K 4 --bytes 1 --quantity steps)" 2
t_end

t_case model-2.3 "recursive doubling: s (a + n / bw), s = log2 K, or floor(log2 K) + 2"
want "rd K=4" "$(q --algo rd --K 4 --bytes 1000000 $L)" 0.0202              # 2 (1e-4 + 1e-2)
want "rd K=8" "$(q --algo rd --K 8 --bytes 1000000 $L)" 0.0303
want "rd K=6" "$(q --algo rd --K 6 --bytes 1000000 $L)" 0.0404              # fold: 2 + 2 steps
want "rd K=6 steps" "$(q --algo rd --K 6 --bytes 1 --quantity steps)" 4
want "rd K=4 bytes_in" "$(q --algo rd --K 4 --bytes 1000000 --quantity bytes_in)" 2000000
want "rd K=6 bytes_in" "$(q --algo rd --K 6 --bytes 1000000 --quantity bytes_in)" 3000000
t_end

t_case model-2.4 "crossover n* = (2(K-1) - s) a / ((s - 2(K-1)/K) b); none at K = 2"
want "K=4" "$(q --crossover --K 4 $L)" 80000                                # 4e-4 / (0.5e-8)
want "K=8" "$(q --crossover --K 8 $L)" 88000                                # 11e-4 / (1.25e-8)
job 10 "$PSR_BIN/model" --crossover --K 2 $L
expect_rc 0
[ "$(cat "$T_TMP/out")" = nan ] || t_fail "K=2 crossover '$(cat "$T_TMP/out")', want nan"
t_end

t_case model-2.5 "--sweep: N sizes evenly spaced in log n, lines bytes,value"
q --algo ps --K 1 --sweep 1000,100000,3 --bw 1000 >/dev/null
printf '1000,2\n10000,20\n100000,200\n' | cmp -s - "$T_TMP/out" || t_fail "sweep printed: $(cat "$T_TMP/out")"
t_end

t_case model-2.6 "bad queries: one line on stderr, exit 64"
for bad in "--algo foo --K 4 --bytes 1 --bw 1" "--algo ring --K 0 --bytes 1 --bw 1" \
           "--algo ring --K 4 --bytes -1 --bw 1" "--algo ring --K 4 --bytes 0 --bw 1" \
           "--algo ring --K 4 --bytes 1" "--algo ring --K 4 --bw 1" \
           "--algo ring --K 4 --bytes 1 --bw 1 --quantity ingress" "--algo ring --K 4 --bytes 1 --servers 2 --quantity bytes_in" \
           "--algo ps --K 4 --bytes 1 --bw 1 --quantity speed" "--algo ps --bytes 1 --bw 1" \
           "--algo ps --K 4 --sweep 10,1,5 --bw 1" "--algo ps --K 4 --sweep 1,10 --bw 1" \
           "--algo ps --K 4 --bytes 1 --sweep 1,10,3 --bw 1" "--crossover --K 4" \
           "--crossover --K 4 --bw 1 --algo ring" "--table --algo ps --K 4 --bytes 1 --bw 1" \
           "--K 4" "--bogus"; do
    job 10 "$PSR_BIN/model" $bad
    [ "$rc" = 64 ] || t_fail "model $bad: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "model $bad: stderr not one line"
done
job 10 "$PSR_BIN/model" --help
expect_rc 0
expect_grep out '--crossover'
t_end

t_case model-2.7 "--table is what no flags print"
job 10 "$PSR_BIN/model"
cp "$T_TMP/out" "$T_TMP/plain"
job 10 "$PSR_BIN/model" --table
cmp -s "$T_TMP/out" "$T_TMP/plain" || t_fail "--table differs from no flags"
t_end
# Placements (model.h, PLACEMENTS). K = 8, n = 1e6 bytes, bw = 1e8 bytes/s, a = 100 us.
t_case model-3.1 "colocated, k = 0 extra servers: t_opt and bytes equal the ring's"
want "coloc t_opt" "$(q --algo ps --placement colocated --K 8 --bytes 1000000 $L --quantity t_opt)" 0.0175
want "ring t_opt" "$(q --algo ring --K 8 --bytes 1000000 $L --quantity t_opt)" 0.0175
want "coloc bytes_in" "$(q --algo ps --placement colocated --K 8 --bytes 1000000 --quantity bytes_in)" 1750000
want "ring bytes_in" "$(q --algo ring --K 8 --bytes 1000000 --quantity bytes_in)" 1750000
want "coloc one-pull" "$(q --algo ps --placement colocated --K 8 --bytes 1000000 $L)" 0.0177   # 2 (1e-4 + 7/8e-2)
t_end

t_case model-3.2 "colocated, k = K extra servers: the separate PS with S = K"
want "k=K t_opt" "$(q --algo ps --placement colocated --servers 8 --K 8 --bytes 1000000 $L --quantity t_opt)" 0.01
want "S=K t_opt" "$(q --algo ps --servers 8 --K 8 --bytes 1000000 $L --quantity t_opt)" 0.01
want "k=K time" "$(q --algo ps --placement colocated --servers 8 --K 8 --bytes 1000000 $L)" 0.0202
want "S=K time" "$(q --algo ps --servers 8 --K 8 --bytes 1000000 $L)" 0.0202
want "S=4 time" "$(q --algo ps --servers 4 --K 8 --bytes 1000000 $L)" 0.0402       # 2 (1e-4 + 2e6/1e8)
want "S=16 bytes" "$(q --algo ps --servers 16 --K 8 --bytes 1000000 --quantity bytes_in)" 1000000
t_end

t_case model-3.3 "Theorem 1 by hand, K = 8, k = 2: t_opt = 112/76 n / bw, the split 6/76 and 14/76"
want "t_opt" "$(q --algo ps --placement colocated --servers 2 --K 8 --bytes 1000000 $L --quantity t_opt)" 0.0147368421052632
want "pipelined" "$(q --algo ps --placement colocated --servers 2 --K 8 --bytes 1000000 $L --quantity pipelined --bucket 65536)" 0.0159026357894737
want "even t_opt" "$(q --algo ps --placement colocated --even-split --servers 2 --K 8 --bytes 1000000 $L --quantity t_opt)" 0.016
job 10 "$PSR_BIN/model" --split --K 8 --servers 2 --elements 1000
expect_rc 0
grep -v '^#' "$T_TMP/out" > "$T_TMP/split"
[ "$(wc -l < "$T_TMP/split")" = 10 ] || t_fail "want 10 servers: $(cat "$T_TMP/split")"
awk 'BEGIN { at = 0; bad = 0 } { if ($3 != at) bad = 1; at += $4 } END { exit !(at == 1000 && !bad) }' "$T_TMP/split" ||
    t_fail "the ranges do not tile [0, 1000): $(cat "$T_TMP/split")"
[ "$(awk '$1 == "colocated" && $2 == 0 { print $4 }' "$T_TMP/split")" = 79 ] || t_fail "colocated 0 not 79 elements"
[ "$(awk '$1 == "extra" && $2 == 1 { print $4 }' "$T_TMP/split")" = 184 ] || t_fail "extra 1 not 184 elements"
want "x" "$(awk '$1 == "colocated" && $2 == 0 { print $5 }' "$T_TMP/split")" 0.0789473684211
t_end

t_case model-3.4 "placement flags: bad combinations are usage errors"
for bad in "--algo ring --K 4 --bytes 1 --bw 1 --placement colocated" "--algo ps --K 4 --bytes 1 --bw 1 --placement star" \
           "--algo ps --K 4 --bytes 1 --bw 1 --servers 0" "--algo ps --K 4 --bytes 1 --bw 1 --even-split" \
           "--algo ps --K 4 --bytes 1 --bw 1 --quantity pipelined" "--algo ps --K 4 --bytes 1 --bw 1 --bucket 4K" \
           "--split" "--split --K 4 --elements 0" "--split --K 4 --algo ps"; do
    job 10 "$PSR_BIN/model" $bad
    [ "$rc" = 64 ] || t_fail "model $bad: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "model $bad: stderr not one line"
done
t_end

# Issue 18: the standalone collectives, tensor and pipeline parallelism
# (common/measure/model.h, model_coll). The seed's statements they check (seed 003,
# copied here): "all-reduce = reduce-scatter + all-gather"; ring all-reduce
# "2(N-1)a + 2(N-1)/N n b"; ZeRO-3 "two all-gathers ... and one
# reduce-scatter ... roughly 1.5x the communication volume of DDP"; all-to-all
# "moves (N-1)/N n bytes per device like a ring"; tensor parallelism "4 x
# num_layers all-reduces per step" on the critical path; the pipeline bubble
# "(p-1)/(m+p-1)" with the seed's picture of p = 4 stages ("while stage 0
# works on the first microbatch, stages 1-3 sit idle").
t_case model-4.1 "reduce_scatter and all_gather: (K-1) a + (K-1)/K n b each, their sum the all-reduce; ZeRO-3 1.5x"
want "rs K=4" "$(q --coll reduce_scatter --K 4 --bytes 1000000 $L)" 0.0078     # 3e-4 + 0.75e6/1e8
want "ag K=4" "$(q --coll all_gather --K 4 --bytes 1000000 $L)" 0.0078
want "all_reduce = ring" "$(q --coll all_reduce --K 4 --bytes 1000000 $L)" 0.0156
want "rs bytes" "$(q --coll reduce_scatter --K 4 --bytes 1000000 --quantity bytes_out)" 750000
want "rs steps" "$(q --coll reduce_scatter --K 4 --bytes 1 --quantity steps)" 3
ar=$(q --coll all_reduce --K 8 --bytes 1000000 --quantity bytes_in)
rs=$(q --coll reduce_scatter --K 8 --bytes 1000000 --quantity bytes_in)
ag=$(q --coll all_gather --K 8 --bytes 1000000 --quantity bytes_in)
want "rs + ag = all-reduce (bytes)" "$(awk -v a=$rs -v b=$ag 'BEGIN { print a + b }')" "$ar"
want "ZeRO-3: 2 ag + rs = 1.5 all-reduce" "$(awk -v a=$rs -v b=$ag -v r=$ar 'BEGIN { print (2 * b + a) / r }')" 1.5
t_end

t_case model-4.2 "alltoall: (K-1)/K n per device, (K-1) a + (K-1) F n b / K; the hot rank takes F times"
want "a2a bytes K=8" "$(q --coll alltoall --K 8 --bytes 1000000 --quantity bytes_in)" 875000
want "a2a time K=4" "$(q --coll alltoall --K 4 --bytes 1000000 $L)" 0.0078     # as reduce_scatter
want "a2a F=2" "$(q --coll alltoall --K 4 --bytes 1000000 $L --imbalance 2)" 0.0153   # 3e-4 + 3*2*0.25e6/1e8
want "a2a F=2 bytes_in" "$(q --coll alltoall --K 4 --bytes 1000000 --imbalance 2 --quantity bytes_in)" 1500000
want "a2a F=K bytes_in" "$(q --coll alltoall --K 4 --bytes 1000000 --imbalance 4 --quantity bytes_in)" 3000000
t_end

t_case model-4.3 "broadcast and reduce: a chain of P = n/piece segments, (P+K-2)(a + n b/P); n per link"
want "bcast K=4 P=4" "$(q --coll broadcast --K 4 --bytes 1000000 --piece 250000 $L)" 0.0156   # 6 (1e-4 + 2.5e-3)
want "reduce K=4 P=1" "$(q --coll reduce --K 4 --bytes 1000000 --piece 1000000 $L)" 0.0303   # 3 (1e-4 + 1e-2)
want "bcast steps" "$(q --coll broadcast --K 8 --bytes 4M --quantity steps)" 10       # 4 x 1M default piece + 6
want "bcast bytes" "$(q --coll broadcast --K 8 --bytes 1000000 --quantity bytes_in)" 1000000
t_end

t_case model-4.4 "tensor parallel: 4 ring all-reduces of the activation per layer, L layers (latency-bound when small)"
want "tp 1 layer" "$(q --tp-layer --K 4 --bytes 1000000 $L)" 0.0624                  # 4 x 0.0156
want "tp 96 layers" "$(q --tp-layer --K 4 --bytes 1000000 $L --layers 96)" 5.9904
# A tiny activation: 4 L all-reduces x 2(t-1) latencies, the "(hundreds) x a" of the seed.
want "tp latency" "$(q --tp-layer --K 8 --bytes 1 --bw 1e30 --latency 1us --layers 80)" 0.00448  # 320 x 14 us
t_end

t_case model-4.5 "pipeline bubble (p-1)/(m+p-1): p = 4 stages; m = 1, 4, 12; p = 1 none"
want "p=4 m=1" "$(q --bubble --stages 4 --micro 1)" 0.75
want "p=4 m=4" "$(q --bubble --stages 4 --micro 4)" 0.428571428571
want "p=4 m=12" "$(q --bubble --stages 4 --micro 12)" 0.2
want "p=1" "$(q --bubble --stages 1 --micro 7)" 0
t_end

t_case model-4.6 "bad collective queries: one line on stderr, exit 64"
for bad in "--coll allreduce --K 4 --bytes 1 --bw 1" "--coll alltoall --K 4 --bytes 1 --bw 1 --imbalance 5" \
           "--coll alltoall --K 4 --bytes 1 --bw 1 --imbalance 0.5" "--coll reduce --K 4 --bytes 1 --bw 1 --imbalance 2" \
           "--coll reduce_scatter --K 4 --bytes 1" "--coll reduce_scatter --bytes 1 --bw 1" \
           "--coll reduce_scatter --K 4 --bytes 1 --bw 1 --quantity ingress" "--coll broadcast --K 4 --bytes 1 --bw 1 --algo ring" \
           "--bubble --stages 4" "--bubble --stages 0 --micro 1" "--bubble --stages 4 --micro 2 --K 4" \
           "--tp-layer --K 4 --bytes 1" "--tp-layer --bytes 1 --bw 1" "--coll reduce --K 4 --bytes 1 --bw 1 --layers 2" \
           "--coll reduce --table" "--stages 3"; do
    job 10 "$PSR_BIN/model" $bad
    [ "$rc" = 64 ] || t_fail "model $bad: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "model $bad: stderr not one line: $(cat "$T_TMP/err")"
done
t_end

t_case model-4.7 "--quantity sched: the one-server PS as its round-robin egress serves it (model_ps_sched), by hand; a sparse push's frame; refused where not derived"
# 250 Mbit/s: 31250-byte pieces; K = 4, a = 1 ms: 16 KiB and its 40-byte
# header are one piece, 2a + 5 n / bw; 64 KiB ends in a 3076-byte piece,
# 2a + (8 n - 3 x 3076) / bw; the seeds' time (the headline) above both.
for q in "16384 0.00462144" "65536 0.01848192"; do
    set -- $q
    got=$("$PSR_BIN/model" --algo ps --K 4 --bytes $1 --bw 250Mbit --latency 1ms --quantity sched)
    [ "$got" = "$2" ] || t_fail "sched at $1: $got, by hand $2"
    seeds=$("$PSR_BIN/model" --algo ps --K 4 --bytes $1 --bw 250Mbit --latency 1ms)
    awk -v s="$seeds" -v g="$got" 'BEGIN { exit !(s > g) }' || t_fail "seeds' $seeds not above sched $got at $1"
done
# sign on 6337 f64: a push of under 1 KB, which the weights' spread
# (3 x 50696 bytes of wire) hides behind nothing: its own push, then the
# K dense pulls (the codec's cost 0 here)
x=$("$PSR_BIN/model" --algo ps --K 4 --bytes 50696 --bw 1Gbit --latency 1ms --compress sign --dtype f64 --compress-cost 0 --quantity sched)
y=$("$PSR_BIN/model" --algo ps --K 4 --bytes 50696 --bw 1Gbit --latency 1ms --compress sign --dtype f64 --compress-cost 0 --spread 1)
[ -n "$x" ] && [ "$x" = "$y" ] || t_fail "sign sched $x, want the push hidden by nothing: --spread 1's $y"
for bad in "--algo ring --K 4 --bytes 1M --bw 1Gbit --quantity sched" "--algo ps --K 4 --bytes 1M --quantity sched" \
           "--algo ps --K 4 --bytes 1M --bw 1Gbit --placement colocated --quantity sched" \
           "--algo ps --K 4 --bytes 1M --bw 1Gbit --spread 1ms --quantity sched" \
           "--algo ps --K 4 --bytes 1M --bw 1Gbit --quantity schedule"; do
    job 10 "$PSR_BIN/model" $bad
    [ "$rc" = 64 ] || t_fail "model $bad: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "model $bad: stderr not one line: $(cat "$T_TMP/err")"
done
expect_grep err 'not time, ingress, egress, bytes_in, bytes_out, steps, t_opt, pipelined or sched; see model --help$'
t_end
t_exit
