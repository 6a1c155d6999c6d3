# t_sim.sh -- bin/psring_sim (sim/, docs/sim.md): the simulated ring's
# weights bit-identical to the real ring's (linreg f64, whose sums are NOT
# exact, so the summation order is checked; ring K = 4 and 8, rd K = 5);
# simulated times against bin/model (a deterministic simulation: within
# 1e-5 relative, the CSV's 6 digits); the PS on store.c in simulation; the
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
# relative of bin/model's (the CSV prints 6 significant digits).
model_check() {
    _m=$1 _k=$2 _a=$3 _b=$4; shift 4
    job 60 "$sim" "$_m" "$_k" --bytes "$_b" --steps 2 --payload sizes $NET "$@"
    expect_rc 0
    _got=$(awk -F, 'NR == 2 { print $7 }' "$T_TMP/out")
    _want=$("$PSR_BIN/model" --algo "$_a" --K "$_k" --bytes "$_b" --bw 500Mbit --latency 200us)
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

t_case sim-3.1 "bad input exits 64 with one line"
for bad in "ring 8 --platform torus $NET" "ring 8 --platform fat-tree:0.5 $NET" \
           "ring 8 --platform fat-tree:x $NET" "ring 8 --platform racks:2 $NET" \
           "ring 8 --hosts 4 $NET" "ps 8 --hosts 8 $NET" "mesh 8 $NET" "ring 0 $NET" \
           "ring 8 --payload some $NET" "ring 8" "ring 8 --algo tree $NET"; do
    job 20 "$sim" $bad
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "'$bad': $(wc -l <"$T_TMP/err") lines on stderr"
done
t_end

t_exit
