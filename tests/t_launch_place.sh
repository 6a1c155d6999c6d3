# t_launch_place.sh -- experiments/launch.sh's parameter-server placements
# (common/measure/model.h, PLACEMENTS): a shard colocated on each worker's host
# (--colocated-servers, the host's EMULATED link shared through
# --link-host), BytePS's mix with extra servers, the equal-shard stopgap
# (--even-split): the weights are the big batch's exactly (synthetic
# workload), the split is printed, the CSV's servers and placement
# columns say what ran and model_s is the model of that placement
# (bin/model). Usage errors exit 64 with one line.
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need launch-place "launch.sh placements" ps_server ps_worker psr_merge model reference

csv_awk() {
    awk -F, "FNR == 1 { split(\"\", c); for (i = 1; i <= NF; i++) c[\$i] = i } $1" "$2"
}
# near A B: within 1e-6 relative (model_s is printed with %.6g)
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-5 * b) }'; }

SYN="--workload synthetic --params 1200 --dtype f32 --batch 600 --steps 5 --lr 0.25 --timeout 10"
LINK="--link-bw 1Gbit --link-latency 100us"
t_reference syn $SYN
# workers_exact K PREFIX: every worker's weights are the reference's, bit for bit.
workers_exact() { t_ranks_exact "$1" "$2" "$T_TMP/syn.ref.0"; }

t_case launch-place-1.1 "colocated, K = 3: one shard on each worker's host, host links, exact weights, CSV"
job 120 "$launch" ps 3 --colocated-servers $SYN $LINK --weights-out "$T_TMP/c.w" --out "$T_TMP/c" \
    --csv-out "$T_TMP/c.csv"
expect_rc 0
workers_exact 3 "$T_TMP/c.w"
expect_grep err 'placement colocated: K = 3 workers, 0 extra servers, 3 servers'
expect_grep err '^launch.sh:   colocated 2 800 400 '
expect_grep err '^server2| '
# the worker and its shard shared host 2's link file
[ -s "$T_TMP/c/host.2" ] || t_fail "no host link file host.2"
[ -e "$T_TMP/c/host.3" ] && t_fail "a host.3 for K = 3"
got=$(csv_awk 'FNR == 2 { print $c["servers"] ":" $c["placement"] ":" $c["model_s"] }' "$T_TMP/c.csv")
want=$("$PSR_BIN/model" --algo ps --placement colocated --K 3 --bytes 4800 --bw 1Gbit --latency 100us)
[ "${got%:*}" = "3:colocated" ] || t_fail "servers:placement '${got%:*}', want 3:colocated"
near "${got##*:}" "$want" || t_fail "model_s ${got##*:}, want bin/model's $want"
t_end

t_case launch-place-1.2 "--even-split, K = 2 + 1 extra: 3 equal shards (--shard I/3), exact weights, colocated-even"
job 120 "$launch" ps 2 --colocated-servers --servers 1 --even-split $SYN $LINK --weights-out "$T_TMP/e.w" \
    --csv-out "$T_TMP/e.csv"
expect_rc 0
workers_exact 2 "$T_TMP/e.w"
expect_grep err '^launch.sh:   extra 0 800 400 '
got=$(csv_awk 'FNR == 2 { print $c["servers"] ":" $c["placement"] ":" $c["model_s"] }' "$T_TMP/e.csv")
want=$("$PSR_BIN/model" --algo ps --placement colocated --even-split --servers 1 --K 2 --bytes 4800 --bw 1Gbit --latency 100us)
[ "${got%:*}" = "3:colocated-even" ] || t_fail "servers:placement '${got%:*}', want 3:colocated-even"
near "${got##*:}" "$want" || t_fail "model_s ${got##*:}, want bin/model's $want"
t_end

t_case launch-place-1.3 "k >= K extra servers: Theorem 1 leaves the colocated shards nothing: the separate PS"
job 120 "$launch" ps 2 --colocated-servers --servers 2 $SYN --weights-out "$T_TMP/s.w" --csv-out "$T_TMP/s.csv"
expect_rc 0
workers_exact 2 "$T_TMP/s.w"
expect_grep err 'this is the separate PS with S = 2'
got=$(csv_awk 'FNR == 2 { print $c["servers"] ":" $c["placement"] }' "$T_TMP/s.csv")
[ "$got" = "2:separate" ] || t_fail "servers:placement '$got', want 2:separate"
t_end

t_case launch-place-1.4 "Theorem 1's uneven split (K = 3, k = 1) goes out as --range FIRST:COUNT"
if "$PSR_BIN/ps_server" --help 2>/dev/null | grep -q -- '--range'; then
    job 120 "$launch" ps 3 --colocated-servers --servers 1 $SYN --weights-out "$T_TMP/u.w" --csv-out "$T_TMP/u.csv"
    expect_rc 0
    workers_exact 3 "$T_TMP/u.w"
    got=$(csv_awk 'FNR == 2 { print $c["servers"] ":" $c["placement"] }' "$T_TMP/u.csv")
    [ "$got" = "4:colocated" ] || t_fail "servers:placement '$got', want 4:colocated"
else
    # before ps_server has --range (issue 15's WELCOME range): refused, saying so
    job 30 "$launch" ps 3 --colocated-servers --servers 1 $SYN
    expect_rc 64
    expect_grep err 'no --range FIRST:COUNT yet'
fi
# K = 3, k = 1: x = 2/10, y = 4/10 of 1200 elements
job 10 "$PSR_BIN/model" --split --K 3 --servers 1 --elements 1200
grep -q '^extra 0 720 480 0.4$' "$T_TMP/out" || t_fail "split: $(cat "$T_TMP/out")"
t_end

t_case launch-place-1.5 "placement usage errors: one line, exit 64"
for bad in "ps 2 --even-split" "ring 2 --colocated-servers" "ps 2 --servers 0" "ps 2 --servers 300 --colocated-servers" \
           "ps 2 --colocated-servers --link-host /tmp/x" "ps 2 --local-server 0" \
           "ps 3 --colocated-servers --servers 1 --workload synthetic"; do
    job 30 "$launch" $bad
    [ "$rc" = 64 ] || t_fail "launch.sh $bad: exit $rc, want 64"
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "launch.sh $bad: stderr not one line: $(cat "$T_TMP/err")"
done
t_end
t_case launch-place-1.6 "colocated, K = 4: each host's NIC bytes (the host link file's counters) are the model's, the ring's, headers aside"
# n = 40000 f32 = 160000 bytes; per step and direction each host moves
# 2(K-1)/K n = 240000 payload bytes (bin/model), as a ring rank does; the
# counters cover the whole job (5 steps), frame headers (40 bytes each) and
# the handshakes: allowed 16 frames a step and 4 KiB. Without the local
# bypass (--local-worker / --local-server) a host would move 2 n = 320000.
job 120 "$launch" ps 4 --colocated-servers --workload synthetic --params 40000 --dtype f32 --steps 5 \
    --link-bw 1Gbit --timeout 10 --out "$T_TMP/hb"
expect_rc 0
want=$("$PSR_BIN/model" --algo ps --placement colocated --K 4 --bytes 160000 --quantity bytes_in)
ring=$("$PSR_BIN/model" --algo ring --K 4 --bytes 160000 --quantity bytes_in)
[ "$want" = 240000 ] && [ "$ring" = 240000 ] || t_fail "model: colocated $want, ring $ring bytes per step, want 240000 both"
r=0
while [ $r -lt 4 ]; do
    set -- $(od -An -tu8 -j40 -N16 "$T_TMP/hb/host.$r" 2>/dev/null)
    for got in "${1-}" "${2-}"; do
        awk -v g="$got" -v w="$want" 'BEGIN { p = 5 * w; exit !(g != "" && g >= p && g <= p + 5 * 16 * 40 + 4096) }' ||
            t_fail "host $r: out/in '${1-}' '${2-}' bytes, want 5 x $want plus headers"
    done
    r=$((r + 1))
done
t_end
t_case launch-place-1.7 "per-bucket pull, colocated + 1 extra (Theorem 1's --range), K = 3, 8 buckets, host links with flow shares: exact weights"
# 1200 f32 in 8 layers of 150 (600 bytes): one bucket per layer, each
# server's part of a bucket in frames of its share (common/ps/client.h),
# pushed from a queue per server and pulled per bucket; the link on, so
# the host links' flow shares pace the pushes.
job 120 "$launch" ps 3 --colocated-servers --servers 1 $SYN --layers 8 $LINK \
    --worker-args "--bucket-size 600" --weights-out "$T_TMP/b.w" --out "$T_TMP/b"
expect_rc 0
workers_exact 3 "$T_TMP/b.w"
expect_grep err '8 buckets'
t_end
t_exit
