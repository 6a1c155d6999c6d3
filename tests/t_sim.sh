# t_sim.sh -- bin/psring_sim (sim/, docs/sim.md): the simulated ring's
# weights bit-identical to the real ring's (linreg f64, whose sums are NOT
# exact, so the summation order is checked; ring K = 4 and 8, rd K = 5);
# simulated times against bin/model (a deterministic simulation: within
# 1e-5 relative, the CSV's 6 digits); the PS in simulation, running
# ps_server's protocol (sim-4: its placements and per-bucket pull, weights
# == bin/reference's, each host's link bytes == the model's; sim-10: the
# real frames, headers and all); the
# platforms; bad input exits 64 with one line. Skipped where SimGrid was
# not found at build time (no bin/psring_sim).
# tier: full
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
sim="$PSR_BIN/psring_sim"

if [ ! -x "$sim" ]; then
    t_skip sim "simulated transport" "no psring_sim in $PSR_BIN (SimGrid not found at build time; make deps)"
    t_exit
fi
NET="--link-bw 500Mbit --link-latency 200us"

t_case sim-1.1 "linreg f64, ring K = 4 and 8 and rd K = 5: simulated weights == real ring's, bit for bit"
for spec in "4 ring" "8 ring" "5 rd"; do
    set -- $spec
    job 180 "$launch" ring "$1" --worker-args "--algo $2" --steps 3 --timeout 20 \
        --weights-out "$T_TMP/real$1.w"
    expect_rc 0
    job 60 "$sim" ring "$1" --algo "$2" --steps 3 --payload real $NET --weights-out "$T_TMP/sim$1.w"
    expect_rc 0
    t_ranks_same "$1" "$T_TMP/sim$1.w"
    cmp -s "$T_TMP/real$1.w.0" "$T_TMP/sim$1.w.0" || t_fail "K=$1 $2: simulated weights differ from the real ring's"
done
t_end

t_case sim-1.2 "the PS in simulation (store.c, real payloads) trains to the ring's weights (synthetic f32: exact)"
job 60 "$sim" ring 6 --workload synthetic --params 4099 --dtype f32 --steps 3 $NET \
    --payload real --weights-out "$T_TMP/sr.w"
expect_rc 0
job 60 "$sim" ps 6 --servers 2 --workload synthetic --params 4099 --dtype f32 --steps 3 $NET \
    --payload real --weights-out "$T_TMP/sp.w"
expect_rc 0
t_ranks_same 6 "$T_TMP/sp.w"
cmp -s "$T_TMP/sr.w.0" "$T_TMP/sp.w.0" || t_fail "PS weights differ from the ring's"
t_end

# model_check MODE K ALGO BYTES EXTRA...: psring_sim's time_s within 1e-6
# relative of bin/model's (the CSV prints 6 significant digits); the PS's
# as its server's round-robin egress serves it (model.h, model_ps_sched).
model_check() {
    _m=$1 _k=$2 _a=$3 _b=$4 _q=; shift 4
    [ "$_a" = ps ] && _q="--quantity sched"
    job 60 "$sim" "$_m" "$_k" --bytes "$_b" --steps 2 --payload sizes $NET "$@"
    expect_rc 0
    _got=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/out")
    _want=$("$PSR_BIN/model" --algo "$_a" --K "$_k" --bytes "$_b" --bw 500Mbit --latency 200us $_q)
    awk -v g="$_got" -v w="$_want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-5 * w) }' \
        || t_fail "$_m $_a K=$_k $_b: simulated $_got s, model $_want s"
}

t_case sim-2.1 "star, sizes only: ring, rd and PS at K = 4 and 64 within 1e-5 of bin/model (the CSV's digits)"
for k in 4 64; do
    model_check ring $k ring 4194304 --algo ring
    model_check ring $k rd 1048576 --algo rd
    model_check ps $k ps 65536
done
model_check ring 6 rd 65536 --algo rd
t_end

t_case sim-2.2 "fat-tree:4 and racks:4:100Mbit: the PS slower across racks than on the star, the ring at most 5x (one flow per 5x slower uplink)"
# sim_time MODE PLATFORM: time_s of a K = 64, 1 MiB job on PLATFORM.
sim_time() {
    job 60 "$sim" "$1" 64 --bytes 1MiB --steps 2 --payload sizes $NET --platform "$2" \
        --platform-out "$T_TMP/plat.xml"
    expect_rc 0
    awk -F, 'NR == 2 { print $7 }' "$T_TMP/out"
}
ps_star=$(sim_time ps star)
ps_fat=$(sim_time ps fat-tree:4)
ps_racks=$(sim_time ps racks:4:100Mbit)
grep -q '<zoneRoute' "$T_TMP/plat.xml" || t_fail "racks platform has no uplink routes"
ring_star=$(sim_time ring star)
ring_racks=$(sim_time ring racks:4:100Mbit)
awk -v s="$ps_star" -v r="$ps_racks" 'BEGIN { exit !(r > s * 1.5) }' \
    || t_fail "PS on racks:4:100Mbit $ps_racks s, star $ps_star s"
awk -v s="$ps_star" -v f="$ps_fat" 'BEGIN { exit !(f >= s * 0.999999) }' \
    || t_fail "PS on fat-tree:4 $ps_fat s, faster than star $ps_star s"
awk -v s="$ring_star" -v r="$ring_racks" 'BEGIN { exit !(r > s && r <= s * 5.01) }' \
    || t_fail "ring on racks:4:100Mbit $ring_racks s, star $ring_star s"
t_end

t_case sim-4.1 "the PS in simulation, placements and buckets: every worker's weights == bin/reference's, bit for bit (synthetic f32)"
SYN="--workload synthetic --params 1200 --dtype f32 --batch 600 --steps 5 --lr 0.25"
if [ -x "$PSR_BIN/reference" ]; then
    t_reference syn $SYN
    for pl in "--servers 2" "--servers 3 --bucket-size 400" "--colocated-servers" \
              "--colocated-servers --servers 1" "--colocated-servers --servers 2 --bucket-size 800" \
              "--colocated-servers --servers 4"; do
        rm -f "$T_TMP"/pl.w.*
        job 60 "$sim" ps 3 $pl $SYN $NET --payload real --weights-out "$T_TMP/pl.w"
        expect_rc 0
        for r in 0 1 2; do
            cmp -s "$T_TMP/pl.w.$r" "$T_TMP/syn.ref.0" || t_fail "ps 3 $pl: worker $r's weights are not bin/reference's"
        done
    done
else
    t_fail "no bin/reference"
fi
t_end

# host_check K PLACEMENT BYTES: every host's --host-bytes counters (in and
# out, 3 steps) are exactly 3 x bin/model's bytes for its role.
host_check() {
    _k=$1 _pl=$2 _b=$3; shift 3
    job 60 "$sim" ps "$_k" $_pl --bytes "$_b" --steps 3 --payload "$1" $NET --host-bytes "$T_TMP/hb" \
        --csv-out "$T_TMP/hb.csv"
    expect_rc 0
}

t_case sim-4.2 "placements: each host's link bytes (--host-bytes) equal the model's exactly, as launch-place-1.6 checks the real one"
# colocated K = 4, n = 160000 bytes: every host 2(K-1)/K n = 240000 per step and direction
want=$("$PSR_BIN/model" --algo ps --placement colocated --K 4 --bytes 160000 --quantity bytes_in)
[ "$want" = 240000 ] || t_fail "model: colocated K = 4 moves $want bytes, want 240000"
for mode in real sizes; do
    host_check 4 --colocated-servers 160000 $mode
    awk -v w="$want" '!/^#/ { n++; if ($2 != 3 * w || $3 != 3 * w) bad = bad " " $0 } END { if (n != 4 || bad != "") { print n " hosts:" bad; exit 1 } }' \
        "$T_TMP/hb" >"$T_TMP/why" || t_fail "colocated K = 4 ($mode): $(cat "$T_TMP/why")"
done
grep -q ',colocated,' "$T_TMP/hb.csv" || t_fail "the CSV row does not say colocated"
# BytePS's mix, K = 4, k = 2: x = 0.1, y = 0.3 (1000 f32): worker and extra hosts alike 1.2 n
want=$("$PSR_BIN/model" --algo ps --placement colocated --servers 2 --K 4 --bytes 4000 --quantity bytes_in)
[ "$want" = 4800 ] || t_fail "model: mix K = 4 + 2 moves $want bytes, want 4800"
host_check 4 "--colocated-servers --servers 2" 4000 real
awk -v w="$want" '!/^#/ { n++; if ($2 != 3 * w || $3 != 3 * w) bad = bad " " $0 } END { if (n != 6 || bad != "") { print n " hosts:" bad; exit 1 } }' \
    "$T_TMP/hb" >"$T_TMP/why" || t_fail "mix K = 4 + 2: $(cat "$T_TMP/why")"
# separate, S = 2, K = 4: a worker's host n, a server's K n / S
host_check 4 "--servers 2" 4000 sizes
awk '!/^#/ { n++; w = (n <= 4) ? 4000 : 8000; if ($2 != 3 * w || $3 != 3 * w) bad = bad " " $0 } END { if (n != 6 || bad != "") { print n " hosts:" bad; exit 1 } }' \
    "$T_TMP/hb" >"$T_TMP/why" || t_fail "separate S = 2: $(cat "$T_TMP/why")"
t_end

t_case sim-4.3 "placements, one bucket: time_s is bin/model's for the placement (deterministic: 1e-5; separate servers: their round-robin egress, --quantity sched)"
for spec in "4 --colocated-servers colocated 0" "4 --colocated-servers@--servers@1 colocated 1" "6 --servers@3 separate 3"; do
    set -- $spec
    job 60 "$sim" ps "$1" $(echo "$2" | tr @ ' ') --bytes 1MiB --steps 2 --payload sizes $NET
    expect_rc 0
    got=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/out")
    q=; [ "$3" = separate ] && q="--quantity sched"
    want=$("$PSR_BIN/model" --algo ps --placement "$3" --servers "$4" --K "$1" --bytes 1MiB --bw 500Mbit --latency 200us $q)
    awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-5 * w) }' \
        || t_fail "ps $1 $2: simulated $got s, model $want s"
done
t_end

t_case sim-4.4 "per-bucket pull (store_release): BytePS's mix K = 8 + 2, 64 MiB: 1 MiB buckets shorten the step, never below t_opt"
mix_time() {
    job 120 "$sim" ps 8 --colocated-servers --servers 2 --bytes 64MiB --bucket-size "$1" --steps 2 --payload sizes $NET
    expect_rc 0
    awk -F, 'NR == 2 { print $7 }' "$T_TMP/out"
}
one=$(mix_time 64MiB)
per=$(mix_time 1MiB)
topt=$("$PSR_BIN/model" --algo ps --placement colocated --servers 2 --K 8 --bytes 64MiB --quantity bytes_in |
       awk '{ print $1 / 62500000 }')
awk -v o="$one" -v p="$per" -v t="$topt" 'BEGIN { exit !(o != "" && p != "" && p < 0.9 * o && p >= t) }' \
    || t_fail "one bucket $one s, 1 MiB buckets $per s, t_opt $topt s"
t_end

t_case sim-4.5 "a simulated worker's record says its buckets: a row of several (sizes, the default 25 MiB at 64 MiB) gets the pipelined model_s (the CSV's digits), and its time is that model's within 0.1%"
job 60 "$sim" ps 4 --bytes 64MiB --steps 3 --payload sizes $NET
expect_rc 0
got=$(awk -F, 'NR == 2 { printf "%s %s", $7, $18 }' "$T_TMP/out")     # time_s, model_s
want=$("$PSR_BIN/model" --algo ps --K 4 --bytes 64MiB --bw 500Mbit --latency 200us --quantity pipelined --bucket 25MiB)
one=$("$PSR_BIN/model" --algo ps --K 4 --bytes 64MiB --bw 500Mbit --latency 200us)
awk -v g="$got" -v w="$want" -v o="$one" 'BEGIN { split(g, a, " "); t = a[1]; m = a[2]
    exit !(t != "" && (t - w) ^ 2 <= (1e-3 * w) ^ 2 && (m - w) ^ 2 <= (1e-5 * w) ^ 2 && w < 0.9 * o) }' ||
    t_fail "time_s model_s $got, want the pipelined $want (the one-pull $one)"
t_end

t_case sim-5.1 "--bench --coll NAME: ring_worker's collectives unchanged in simulation, K = 4 and 5: #wrong 0, bytes == bin/model's, ring-phase times == model_s"
for k in 4 5; do
    for spec in "all_reduce f32" "reduce_scatter f64" "all_gather f32" "broadcast@--root@2 f64" \
                "reduce@--root@1 f32" "alltoall f64" "alltoall@--imbalance@2@--root@3 f32"; do
        set -- $spec
        name=${1%%@*}
        rm -f "$T_TMP/b.csv"
        job 60 "$sim" ring $k --bench --coll $(echo "$1" | tr @ ' ') --bytes 12000 --dtype $2 $NET --csv-out "$T_TMP/b.csv"
        expect_rc 0
        expect_grep out '^# out of bounds values : 0 OK'
        awk '!/^#/ && NF == 8 { rows++; if ($NF != 0 || $7 != "-") bad++ } END { exit !(rows == 1 && !bad) }' "$T_TMP/out" \
            || t_fail "K=$k $1: bench table: $(grep -v '^#' "$T_TMP/out" | head -2)"
        # SimGrid's links, not link.h's, carry a simulated rank's bytes, and
        # its CPU is the simulator's: no link_util (no sw), no cpu_s_per_gb.
        lu=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["bound_by"] "|" $c["link_util"] "|" $c["cpu_s_per_gb"] }' "$T_TMP/b.csv")
        [ "$lu" = "link||" ] || t_fail "K=$k $1: bound_by|link_util|cpu_s_per_gb '$lu' in simulation"
        got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["coll"] "|" $c["transport"] "|" $c["bytes_in"] "|" $c["time_s"] "|" $c["model_s"] "|" $c["bytes"] "|" }' "$T_TMP/b.csv")
        spec=$1
        IFS='|'
        set -- $got
        IFS=' 	
'
        set -- "$@" "$spec"
        [ "$1:$2" = "$name:sim" ] || t_fail "K=$k $name: coll:transport '$1:$2'"
        case "$7" in *imbalance*) continue ;; esac
        want=$("$PSR_BIN/model" --coll "$name" --K $k --bytes "$6" --quantity bytes_in)
        [ "$3" = "$want" ] || t_fail "K=$k $name: rank bytes_in $3, bin/model $want"
        case $name in all_reduce | reduce_scatter | all_gather)
            awk -v g="$4" -v w="$5" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && w != "" && d <= 1e-5 * w) }' \
                || t_fail "K=$k $name: simulated $4 s, model_s $5" ;;
        esac
    done
done
t_end

t_case sim-6.1 "--kill RANK@STEP (simulation only): the run ends, exit 1, one line naming the killed rank / worker, never a hang"
# spec: mode K flags... @ the one line's pattern
for spec in "ring 4 --kill 2@1|lost rank 2 (simulated host h2): " \
            "ring 5 --algo rd --kill 0@0|lost rank 0 (simulated host h0): connection closed" \
            "ring 64 --payload sizes --bytes 1MiB --kill 5@1|lost rank 5 (simulated host h5): " \
            "ring 2 --kill 1@2|lost rank 1 (simulated host h1): " \
            "ps 3 --kill 1@2|server 0: step 2: lost worker 1 (simulated host h1): connection closed" \
            "ps 3 --servers 2 --kill 2@0|step 0: lost worker 2 (simulated host h2): connection closed" \
            "ps 4 --colocated-servers --servers 1 --kill 0@1 --payload sizes --bytes 1MiB|step 1: lost worker 0 (simulated host h0): connection closed" \
            "ps 64 --payload sizes --bytes 1MiB --kill 5@1|server 0: step 1: lost worker 5 (simulated host h5): connection closed"; do
    args=${spec%%|*}
    pat=${spec#*|}
    job 60 "$sim" $args $NET --steps 3 --timeout 2s
    expect_rc 1
    n=$(grep -vc '^psring_sim\[' "$T_TMP/err")
    [ "$n" = 1 ] || t_fail "'$args': $n lines besides the ranks' own: $(tail -c 300 "$T_TMP/err")"
    grep -v '^psring_sim\[' "$T_TMP/err" | grep -qF "$pat" || t_fail "'$args': $(tail -c 300 "$T_TMP/err"), want '$pat'"
done
t_end

t_case sim-9.1 "K = 64 ring, rd and PS (sizes) print bin/model's time to the CSV's 6 digits, and --steps 2 and --steps 1 --warmup 0 give the same row (the large-K sweep runs one step); the PS's first step is the seeds' formula, the next its round-robin egress's"
# bin/model's value printed as the CSV prints it (%g: 6 significant
# digits): the simulated time_s is exactly this (sim-2.1 allows 1e-5).
# The PS's workers enter its first step together and every later one
# spread by the egress's last pieces (model.h, model_ps_sched): a first
# step alone is the seeds' 2a + 2 K n / bw, and its row's model_s too
# (metrics.h); the steps after it --quantity sched.
for spec in "ring ring 4194304" "ring rd 1048576" "ps ps 4194304"; do
    set -- $spec
    aflag=; [ "$2" = rd ] && aflag="--algo rd"
    q=; [ "$2" = ps ] && q="--quantity sched"
    job 120 "$sim" "$1" 64 $aflag --bytes "$3" --steps 2 --payload sizes $NET
    expect_rc 0
    cp "$T_TMP/out" "$T_TMP/two.csv"
    got=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/two.csv")
    want=$("$PSR_BIN/model" --algo "$2" --K 64 --bytes "$3" --bw 500Mbit --latency 200us $q | awk '{ printf "%g", $1 }')
    [ -n "$got" ] && [ "$got" = "$want" ] || t_fail "$2 K=64 $3: time_s $got, bin/model $want (6 digits)"
    job 120 "$sim" "$1" 64 $aflag --bytes "$3" --steps 1 --warmup 0 --payload sizes $NET
    expect_rc 0
    if [ "$2" = ps ]; then
        got=$(awk -F, 'NR == 2 { printf "%s %s", $7, $18 }' "$T_TMP/out")
        want=$("$PSR_BIN/model" --algo ps --K 64 --bytes "$3" --bw 500Mbit --latency 200us | awk '{ printf "%g %g", $1, $1 }')
        [ "$got" = "$want" ] || t_fail "ps K=64 first step: time_s model_s $got, want the seeds' $want"
        near=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/two.csv")
        [ "$near" != "$(echo "$got" | cut -d' ' -f1)" ] || t_fail "ps K=64: the first step and the next alike ($near): this case cannot tell them apart"
    else
        # a deterministic simulation: the warm-up step repeats the timed one to the bit
        cmp -s "$T_TMP/out" "$T_TMP/two.csv" || t_fail "$2 K=64: --steps 1 --warmup 0 row differs: $(sed -n 2p "$T_TMP/out") against $(sed -n 2p "$T_TMP/two.csv")"
    fi
done
t_end

t_case sim-10.1 "one PS protocol: the server actor runs common/ps/server.c and the workers send real frames: real payloads pay exactly the headers (K x (56 + 40) bytes on the server's link per step) over sizes mode, which pays none"
# K = 4, 64 KiB, one bucket at 128 Mbit/s: each push is 40 + 16 bytes more,
# each WEIGHTS frame 40; the server's link carries K of each per step. Both
# modes cut the frames with their headers (16000-byte pieces: the last
# 1576 bytes, all elements; model.h, model_ps_tail), so the round-robin
# egress hides as much in each.
for k in 2 4 8; do
    job 60 "$sim" ps $k --workload synthetic --dtype f32 --params 16384 --steps 3 \
        --link-bw 128Mbit --link-latency 20ms
    expect_rc 0
    real=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/out")
    job 60 "$sim" ps $k --bytes 65536 --payload sizes --steps 3 --link-bw 128Mbit --link-latency 20ms
    expect_rc 0
    sizes=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/out")
    awk -v r="$real" -v s="$sizes" -v k=$k 'BEGIN { d = r - s - k * 96 / 16e6; exit !(d < 1e-6 && d > -1e-6) }' ||
        t_fail "K=$k: real $real s, sizes $sizes s: the difference is not K x 96 bytes at 128 Mbit/s"
done
t_end

t_case sim-3.1 "bad input exits 64 with one line (SimGrid's own refusals too: an unknown --sg-cfg key or value, a broken platform file, which abort SimGrid itself; and sim_all.sh's flags, before it writes anything)"
printf '<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">\n' > "$T_TMP/bad.xml"
for bad in "ring 8 --platform torus $NET" "ring 8 --platform fat-tree:0.5 $NET" \
           "ring 8 --platform fat-tree:x $NET" "ring 8 --platform racks:2 $NET" \
           "ring 8 --hosts 4 $NET" "ps 8 --hosts 8 $NET" "mesh 8 $NET" "ring 0 $NET" \
           "ring 8 --payload some $NET" "ring 8" "ring 8 --algo bogus $NET" \
           "ring 8 --servers 2 $NET" "ring 8 --colocated-servers $NET" "ps 8 --servers 0 $NET" \
           "ps 4 --colocated-servers --hosts 3 $NET" "ps 4 --bucket-size 0 $NET" \
           "ring 4 --bench --coll allreduce $NET" "ring 4 --bench --coll broadcast --root 4 $NET" \
           "ring 4 --bench --coll alltoall --imbalance 0.5 $NET" "ring 4 --coll reduce $NET" \
           "ps 4 --bench $NET" "ring 4 --bench --algo rd --coll all_gather $NET" \
           "ring 4 --bench --payload sizes $NET" "ring 4 --kill 4@1 $NET" "ring 4 --kill 1@99999 $NET" \
           "ps 4 --kill 1 $NET" "ps 4 --kill x@1 $NET" \
           "ring 4 --sg-cfg bogus/key:1 $NET" "ring 4 --sg-cfg network/model:XYZ $NET" \
           "ring 4 --sg-cfg contexts/stack-size:abc $NET" "ring 4 --platform file:$T_TMP/bad.xml $NET"; do
    job 20 "$sim" $bad
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "'$bad': $(wc -l <"$T_TMP/err") lines on stderr"
done
# make sim's own flags: refused before anything is written
for bad in "--host-bw fast" "--link-latency 3parsecs" "--large-bw slow" "--out" "--bogus"; do
    job 20 "$PSR_TESTS/../experiments/sim_all.sh" $bad --out "$T_TMP/nosim"
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "sim_all.sh '$bad': $(wc -l <"$T_TMP/err") lines on stderr"
    [ ! -e "$T_TMP/nosim" ] || t_fail "sim_all.sh '$bad': it made its results folder"
done
t_end

# col NAME: column NAME of the CSV row in $T_TMP/out.
col() { awk -F, -v n="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c[n] }' "$T_TMP/out"; }

t_case sim-8.1 "SIMULATED COMPUTE: --backward-time, --straggler, --jitter in sizes mode as in real mode (the workload's sleep): the same step_s and time_s; a straggler's T x F added to the ring's step, K = 4 and 64"
for spec in "ring 4 --algo ring" "ring 5 --algo rd" "ps 4" "ps 4 --servers 2"; do
    for mode in real sizes; do
        job 60 "$sim" $spec --workload synthetic --params 1024 --steps 3 $NET --backward-time 0.1 \
            --straggler 1:3 --jitter 0.2 --payload $mode
        expect_rc 0
        eval "st_$mode=\$(col step_s) ti_$mode=\$(col time_s)"
    done
    # Real mode's frames carry the ring's 3-element trailer: 12 bytes on 4 KiB,
    # 0.2 us of wire a frame, up to 8 frames a step (rd at K = 5: 1 ms in
    # all since time_s is timed from the straggler's entry, LAST ENTRY).
    awk -v a="$st_real" -v b="$st_sizes" -v c="$ti_real" -v d="$ti_sizes" 'BEGIN {
        exit !(a > 0.3 && b > 0.3 && (a - b) ^ 2 <= (1e-4 * a) ^ 2 && (c - d) ^ 2 <= (1e-3 * c + 2e-6) ^ 2) }' ||
        t_fail "$spec: step_s real $st_real, sizes $st_sizes; time_s real $ti_real, sizes $ti_sizes"
done
for k in 4 64; do
    job 60 "$sim" ring $k --bytes 1MiB --steps 2 --payload sizes $NET --backward-time 0.05 --straggler 2:4
    expect_rc 0
    want=$("$PSR_BIN/model" --algo ring --K $k --bytes 1048576 --bw 500Mbit --latency 200us)
    got=$(col step_s)
    awk -v g="$got" -v w="$want" 'BEGIN { exit !(g != "" && (g - w - 0.2) ^ 2 <= (1e-5 * g) ^ 2) }' ||
        t_fail "ring K=$k: step_s $got, want 0.05 x 4 + the model's $want"
done
t_end

t_case sim-8.2 "SIMULATED OVERLAP (xport_sim_exec): the ring's buckets all-reduce on a second actor while the simulated backward pass goes on: step_s falls by more than half the compute; with --no-overlap it is compute + time_s; mlp weights == the real ring's with the same buckets, bit for bit, overlap or not"
F="--workload synthetic --dtype f32 --params 262144 --layers 8 --steps 3 --link-bw 32Mbit --link-latency 1ms --backward-time 200ms --bucket-size 128K"
job 60 "$sim" ring 4 $F
expect_rc 0
ov_step=$(col step_s) ov_time=$(col time_s)
job 60 "$sim" ring 4 $F --no-overlap
expect_rc 0
no_step=$(col step_s) no_time=$(col time_s)
awk -v os="$ov_step" -v ot="$ov_time" -v ns="$no_step" -v nt="$no_time" 'BEGIN {
    exit !(ns != "" && (ns - 0.2 - nt) ^ 2 <= (1e-5 * ns) ^ 2 && os < ns - 0.1 && os >= ot && os >= 0.2) }' ||
    t_fail "overlap: step_s $ov_step (time_s $ov_time); --no-overlap: step_s $no_step (time_s $no_time)"
job 120 "$launch" ring 4 --workload mlp --steps 3 --timeout 20 --worker-args "--bucket-size 8K" \
    --weights-out "$T_TMP/mr.w"
expect_rc 0
for ov in "" --no-overlap; do
    job 60 "$sim" ring 4 --workload mlp --steps 3 $NET --bucket-size 8K --backward-time 10ms $ov \
        --weights-out "$T_TMP/ms.w"
    expect_rc 0
    t_ranks_same 4 "$T_TMP/ms.w"
    cmp -s "$T_TMP/mr.w.0" "$T_TMP/ms.w.0" || t_fail "mlp, 8K buckets $ov: simulated weights differ from the real ring's"
done
job 20 "$sim" ring 4 --bytes 1MiB --payload sizes --bucket-size 128K $NET
expect_rc 64
t_end

t_case sim-7.1 "make sim's plots and its output, every line labelled: sim_all.sh --quick --no-real draws sim_validation.png and k_time_sim.png; k_time_sim.gp plots the CSV's times by column name (bin/model's values beside them)"
job 600 "$PSR_TESTS/../experiments/sim_all.sh" --quick --no-real --out "$T_TMP/simall"
expect_rc 0
for f in validation.csv large_k.csv sim_validation.png k_time_sim.png; do
    [ -s "$T_TMP/simall/$f" ] || t_fail "no $f"
done
grep -q 'gnuplot failed' "$T_TMP/out" "$T_TMP/err" && t_fail "sim_all.sh: gnuplot failed"
# make sim's output labelled: every stdout line a part's heading or a
# labelled line (it printed GNU time's lines and bare CSV rows)
bad=$(grep -v '^== [1-4]\. \|^model vs sim: \|^real vs sim: \|^large-K sweep, whole: \|^seed K table: ' "$T_TMP/out")
[ -z "$bad" ] || t_fail "sim_all.sh: unlabelled lines on stdout: $(echo "$bad" | head -n 3)"
[ "$(grep -c '^== [1-4]\. ' "$T_TMP/out")" = 4 ] || t_fail "sim_all.sh: not 4 part headings: $(grep '^==' "$T_TMP/out")"
# The plotted numbers ('table'): the star ring's point at K = 2 is the CSV's time_s there.
job 60 gnuplot -e "dir='$PSR_TESTS/../plots/'; file='$T_TMP/simall/large_k.csv'; fmt='table'; out='$T_TMP/k.tab'" \
    "$PSR_TESTS/../plots/sim_k_time.gp"
expect_rc 0
want=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                $c["platform"] == "star" && $c["system"] == "ring" && $c["K"] == 2 { print $c["time_s"] }' "$T_TMP/simall/large_k.csv")
got=$(awk '/Curve title: "ring, star"/ { on = 1; next } /Curve title/ { on = 0 } on && $1 == 2 { print $2; exit }' "$T_TMP/k.tab")
[ -n "$want" ] && awk -v a="$got" -v b="$want" 'BEGIN { exit !(a + 0 > 0 && a == b + 0) }' ||
    t_fail "k_time_sim: the ring's K = 2 point is '$got', the CSV says '$want'"
t_end

t_exit
