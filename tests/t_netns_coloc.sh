# t_netns_coloc.sh -- the parameter server's colocated placements on other
# hosts (issue 15): launch.sh --colocated-servers --wrap starts the shard
# of worker r's host through `CMD exec worker r`, at the address `CMD addr
# worker r` gives, and the extra servers as server 0 .. k-1 (checked with
# a wrap that runs everything here, no namespaces needed); and across
# network namespaces (experiments/netns_cluster.sh --colocated-servers),
# where shard r lives in worker r's namespace and shares its veth: K = 3
# colocated, and K = 2 plus one extra server (Theorem 1's uneven split,
# ps_server --range), each worker's weights bit-identical to bin/reference
# (synthetic workload). The namespace cases skip with one line where
# namespaces cannot be made here (netns_cluster.sh's own needs: root with
# CAP_NET_ADMIN or unprivileged user namespaces, ip, tc, unshare, nsenter).
# tier: full
. "$PSR_TESTS/lib.sh"
root=$PSR_TESTS/..
ns=$root/experiments/netns_cluster.sh
launch=$root/experiments/launch.sh

t_need netns-coloc-2 "colocated servers on other hosts" ps_server ps_worker psr_merge model reference

csv_awk() {
    awk -F, "FNR == 1 { split(\"\", c); for (i = 1; i <= NF; i++) c[\$i] = i } $1" "$2"
}
SYN="--workload synthetic --params 1200 --dtype f32 --batch 600 --steps 5 --lr 0.25 --timeout 10"
t_reference syn $SYN
# workers_exact K PREFIX: every worker's weights are the reference's, bit for bit.
workers_exact() { t_ranks_exact "$1" "$2" "$T_TMP/syn.ref.0"; }
# row_is FILE SERVERS PLACEMENT: the row's servers and placement columns.
row_is() {
    got=$(csv_awk '!/^#/ && FNR == 2 { print $c["servers"] ":" $c["placement"] }' "$1")
    [ "$got" = "$2:$3" ] || t_fail "servers:placement '$got', want $2:$3"
}

t_case netns-coloc-2.1 "launch.sh --colocated-servers --wrap: shard r through 'exec worker r', extra servers as 'server J', exact weights"
t_loopback_wrap
job 120 "$launch" ps 2 --colocated-servers --servers 1 --wrap "$T_TMP/wrap.sh" $SYN \
    --link-bw 1Gbit --weights-out "$T_TMP/w.w" --csv-out "$T_TMP/w.csv"
expect_rc 0
workers_exact 2 "$T_TMP/w.w"
row_is "$T_TMP/w.csv" 3 colocated
for r in 0 1; do
    grep -q "^addr worker $r\$" "$T_TMP/wrap.log" || t_fail "no 'addr worker $r' asked"
    grep -q "^exec worker $r -- .*/ps_server .*--local-worker $r " "$T_TMP/wrap.log" ||
        t_fail "shard $r not started on worker $r's host: $(grep ps_server "$T_TMP/wrap.log" | head -c 400)"
    grep -q "^exec worker $r -- .*/ps_worker --rank $r .*--local-server $r " "$T_TMP/wrap.log" ||
        t_fail "worker $r not started through 'exec worker $r' with --local-server $r"
done
# the third server (launch.sh's server2) is the one extra: server 0, no host shared
grep -q '^addr server 0$' "$T_TMP/wrap.log" || t_fail "no 'addr server 0' asked for the extra server"
grep -q '^exec server 0 -- .*/ps_server .*--range ' "$T_TMP/wrap.log" ||
    t_fail "the extra server not started as server 0 with its --range"
grep '^exec server' "$T_TMP/wrap.log" | grep -q -- '--local-worker' && t_fail "the extra server shares a worker's host"
[ "$(grep -c '^exec server' "$T_TMP/wrap.log")" = 1 ] || t_fail "want one 'exec server', got: $(grep '^exec server' "$T_TMP/wrap.log" | head -c 300)"
t_end

t_case netns-coloc-2.2 "netns_cluster.sh --colocated-servers: on the ring, or with a bad --servers, exit 64 with one line"
job 10 bash "$ns" ring 2 --colocated-servers
expect_rc 64
expect_grep err 'the ring has no servers'
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "want one line: $(cat "$T_TMP/err")"
job 10 bash "$ns" ps 2 --colocated-servers --servers x
expect_rc 64
expect_grep err '0..256 extra servers'
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "want one line: $(cat "$T_TMP/err")"
t_end

# ---------------------------------------------------------------- namespaces
why=$(t_netns_why)
if [ -n "$why" ]; then
    t_skip netns-coloc-2.3 "colocated servers across network namespaces" "namespaces cannot be made here: $why"
    t_exit
fi

# nsjob LIMIT ARGS...: netns_cluster.sh ARGS as a job, its state folder under $T_TMP/st.
nsjob() {
    _lim=$1
    shift
    mkdir -p "$T_TMP/st"
    job "$_lim" env TMPDIR="$T_TMP/st" bash "$ns" "$@"
}

t_case netns-coloc-2.3 "netns, colocated K = 3: 3 hosts, shard r in worker r's namespace, weights == reference bit for bit"
nsjob 120 ps 3 --colocated-servers --rate 200mbit $SYN --weights-out "$T_TMP/c3.w" --csv-out "$T_TMP/c3.csv"
expect_rc 0
workers_exact 3 "$T_TMP/c3.w"
row_is "$T_TMP/c3.csv" 3 colocated
grep -q '^# netns mode=ps K=3 hosts=3 ' "$T_TMP/c3.csv" || t_fail "note: $(grep '^# netns' "$T_TMP/c3.csv")"
expect_grep err '3 hosts 10\.77\.0\.1-10\.77\.0\.3 '
for r in 0 1 2; do
    expect_grep err "server$r| .*listening on 10\\.77\\.0\\.$((r + 1)):"
done
expect_grep err 'worker 2 joined from 10\.77\.0\.3:'
t_end

t_case netns-coloc-2.4 "netns, K = 2 + 1 extra server (Theorem 1's split, --range): 3 hosts, weights == reference bit for bit"
nsjob 120 ps 2 --colocated-servers --servers 1 --rate 200mbit $SYN --weights-out "$T_TMP/m.w" --csv-out "$T_TMP/m.csv"
expect_rc 0
workers_exact 2 "$T_TMP/m.w"
row_is "$T_TMP/m.csv" 3 colocated
grep -q '^# netns mode=ps K=2 hosts=3 ' "$T_TMP/m.csv" || t_fail "note: $(grep '^# netns' "$T_TMP/m.csv")"
# host 0 is the extra server's (launch.sh's server2), hosts 1 and 2 the workers' and their shards'
expect_grep err 'server2| .*listening on 10\.77\.0\.1:'
expect_grep err 'server0| .*listening on 10\.77\.0\.2:'
expect_grep err 'server1| .*listening on 10\.77\.0\.3:'
t_end
t_exit
