# t_ps_model_s.sh -- model_s of a parameter-server row whose workers pushed
# in several buckets (issue 15, per-bucket pull): the worker's record
# carries its buckets (common/measure/metrics.h, RECORD FILE: "buckets N",
# "bucket_bytes B", the largest bucket), and psr_merge fills model_s with
# the pipelined model (model_ps_pipelined: the pull of one bucket overlaps
# the push of the next) in the row's placement, where a one-bucket row
# keeps the one-pull model (push phase, then pull phase). Every expected
# value is asked of bin/model with the job's flags, never typed in here.
# The weights stay the big batch's bit for bit (synthetic workload), and
# every row carries link_util and cpu_s_per_gb (issue 27).
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need ps-model-s-1 "model_s of a bucketed parameter server" ps_server ps_worker psr_merge model reference

csv_awk() {
    awk -F, "FNR == 1 { split(\"\", c); for (i = 1; i <= NF; i++) c[\$i] = i } $1" "$2"
}
# near A B: within 1e-5 relative (model_s is printed with %.6g)
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= 1e-5 * b) }'; }

# 8192 f64 = 64 KiB in 8 equal layers of 8 KiB: --bucket-size 16K makes 4
# buckets of 16384 bytes.
N=65536
SYN="--workload synthetic --params 8192 --dtype f64 --steps 4 --warmup 1 --timeout 10"
LINK="--link-bw 200Mbit --link-latency 100us"
Q="--K 2 --bytes $N --bw 200Mbit --latency 100us"
t_reference syn $SYN
# run NAME K LAUNCH-FLAGS...: a launch.sh ps job with records kept in
# $T_TMP/NAME, the row in $T_TMP/NAME.csv, the weights checked exact.
run() {
    _n=$1 _k=$2; shift 2
    job 120 "$launch" ps "$_k" $SYN $LINK --out "$T_TMP/$_n" --csv-out "$T_TMP/$_n.csv" \
        --weights-out "$T_TMP/$_n.w" "$@"
    expect_rc 0
    t_ranks_exact "$_k" "$T_TMP/$_n.w" "$T_TMP/syn.ref.0"
    # every placement: each server's record carries its link's span and
    # idle, the row a link_util in [0, 1] and a positive cpu_s_per_gb
    # (metrics.h; never a time against the model)
    for _f in "$T_TMP/$_n"/rec.server.*; do
        grep -q '^link_span_s ' "$_f" && grep -q '^link_idle_s ' "$_f" || t_fail "$_n: $_f has no link_span_s/link_idle_s"
    done
    csv_awk 'FNR == 2 { u = $c["link_util"]; exit !(u != "" && u >= 0 && u <= 1 && $c["cpu_s_per_gb"] > 0) }' "$T_TMP/$_n.csv" ||
        t_fail "$_n: link_util or cpu_s_per_gb not filled: $(tail -n 1 "$T_TMP/$_n.csv")"
}
model_s() { csv_awk 'FNR == 2 { print $c["model_s"] }' "$T_TMP/$1.csv"; }

t_case ps-model-s-1.1 "separate, one server: 4 buckets -> the pipelined model; one bucket -> the one-pull model, unchanged"
run b4 2 --worker-args "--bucket-size 16K"
run b1 2
for r in 0 1; do
    grep -qx 'buckets 4' "$T_TMP/b4/rec.worker.$r" && grep -qx "bucket_bytes 16384" "$T_TMP/b4/rec.worker.$r" ||
        t_fail "worker $r's record does not say 4 buckets of 16384 bytes: $(grep bucket "$T_TMP/b4/rec.worker.$r")"
    ! grep -q '^bucket' "$T_TMP/b1/rec.worker.$r" || t_fail "a one-bucket record names buckets"
done
! grep -q '^bucket' "$T_TMP/b4/rec.server.0" || t_fail "the server's record names buckets"
pipe=$("$PSR_BIN/model" --algo ps $Q --quantity pipelined --bucket 16K)
onepull=$("$PSR_BIN/model" --algo ps $Q --quantity sched)   # the server's round-robin egress (model.h)
near "$(model_s b4)" "$pipe" || t_fail "4 buckets: model_s $(model_s b4), want bin/model's pipelined $pipe"
near "$(model_s b1)" "$onepull" || t_fail "1 bucket: model_s $(model_s b1), want bin/model's one-pull $onepull"
near "$pipe" "$onepull" && t_fail "the two models agree ($pipe): this case cannot tell them apart"
t_end

t_case ps-model-s-1.2 "2 separate servers, colocated K = 2, colocated-even K = 3 + 1: model_s is bin/model's pipelined, placement's flags"
run s2 2 --servers 2 --worker-args "--bucket-size 16K"
want=$("$PSR_BIN/model" --algo ps $Q --servers 2 --quantity pipelined --bucket 16K)
near "$(model_s s2)" "$want" || t_fail "S = 2: model_s $(model_s s2), want $want"
run co 2 --colocated-servers --worker-args "--bucket-size 16K"
want=$("$PSR_BIN/model" --algo ps $Q --placement colocated --quantity pipelined --bucket 16K)
[ "$(csv_awk 'FNR == 2 { print $c["placement"] }' "$T_TMP/co.csv")" = colocated ] || t_fail "co: not colocated"
near "$(model_s co)" "$want" || t_fail "colocated: model_s $(model_s co), want $want"
run ev 3 --colocated-servers --servers 1 --even-split --worker-args "--bucket-size 16K"
Q3="--K 3 --bytes $N --bw 200Mbit --latency 100us --placement colocated --servers 1"
want=$("$PSR_BIN/model" --algo ps $Q3 --even-split --quantity pipelined --bucket 16K)
theorem=$("$PSR_BIN/model" --algo ps $Q3 --quantity pipelined --bucket 16K)
[ "$(csv_awk 'FNR == 2 { print $c["placement"] }' "$T_TMP/ev.csv")" = colocated-even ] || t_fail "ev: not colocated-even"
near "$(model_s ev)" "$want" || t_fail "colocated-even: model_s $(model_s ev), want $want"
near "$want" "$theorem" && t_fail "equal shards and Theorem 1's split give the same pipelined model ($want) at K = 3, k = 1"
t_end

t_case ps-model-s-1.3 "bin/model --quantity pipelined = max(t_opt, push phase of n + pull phase of a bucket) + 2a, every placement; one bucket = the one-pull time"
# pl PLACEMENT-FLAGS...: checks bin/model's pipelined against its own
# parts; the pipelined value in $a.
pl() {
    P="--algo ps --K 5 --bw 1Gbit $*"
    a=$("$PSR_BIN/model" $P --bytes 1M --latency 50us --quantity pipelined --bucket 64K)
    t=$("$PSR_BIN/model" $P --bytes 1M --latency 0 --quantity t_opt)
    i=$("$PSR_BIN/model" $P --bytes 1M --latency 0 --quantity ingress)
    e=$("$PSR_BIN/model" $P --bytes 64K --latency 0 --quantity egress)
    want=$(awk -v t="$t" -v i="$i" -v e="$e" 'BEGIN { m = i + e; if (t > m) m = t; printf "%.12g", m + 2 * 50e-6 }')
    near "$a" "$want" || t_fail "$*: pipelined $a, want max($t, $i + $e) + 2a = $want"
    one=$("$PSR_BIN/model" $P --bytes 1M --latency 50us --quantity pipelined --bucket 1M)
    tm=$("$PSR_BIN/model" $P --bytes 1M --latency 50us --quantity time)
    near "$one" "$tm" || t_fail "$*: one bucket $one, the one-pull time $tm"
}
pl --servers 1
pl --servers 3
pl --servers 5
pl --placement colocated
for k in 1 2; do
    pl --placement colocated --servers $k --even-split
    ev=$a
    pl --placement colocated --servers $k
    th=$a
    near "$ev" "$th" && t_fail "k = $k: --even-split does not change the pipelined model ($ev)"
done
t_end

t_case ps-model-s-1.4 "records: buckets without bucket_bytes refused by the merge, buckets 1 not a record line, an older record (no keys) the one-pull model"
d=$T_TMP/b4
grep -v '^bucket_bytes' "$d/rec.worker.1" >"$T_TMP/half.1"
job 10 "$PSR_BIN/psr_merge" "$d/rec.server.0" "$d/rec.worker.0" "$T_TMP/half.1"
expect_rc 1
expect_grep err "buckets and bucket_bytes go together"
sed 's/^buckets 4$/buckets 1/' "$d/rec.worker.1" >"$T_TMP/one.1"
job 10 "$PSR_BIN/psr_merge" "$d/rec.server.0" "$d/rec.worker.0" "$T_TMP/one.1"
expect_rc 1
expect_grep err "one.1:.*not a psring record line"
for r in 0 1; do grep -v '^bucket' "$d/rec.worker.$r" >"$T_TMP/old.$r"; done
job 10 "$PSR_BIN/psr_merge" "$d/rec.server.0" "$T_TMP/old.0" "$T_TMP/old.1"
expect_rc 0
cp "$T_TMP/out" "$T_TMP/old.csv"
near "$(model_s old)" "$onepull" || t_fail "a record without buckets: model_s $(model_s old), want the one-pull $onepull"
t_end
t_exit
