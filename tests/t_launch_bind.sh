# t_launch_bind.sh -- experiments/launch.sh's placement of ring ranks on
# CPUs (docs/link.md, "Unpaced loopback"): an unpaced ring of at most one
# rank a CPU is bound by default, rank r to the r-th CPU the launcher may
# use; --no-bind-cores, a paced link (--link-bw), one rank and more ranks
# than CPUs leave the ranks free; the manifest's "bind:" line says which and why.
# Each rank's own affinity is read from /proc (Cpus_allowed_list) by a
# ring_worker that records it and then execs the real one, so the check
# is of what ran; nothing here depends on binding for its result.
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

t_need launch-bind "launch.sh core binding" ring_worker psr_merge

# A PSR_BIN whose ring_worker writes "RANK CPUS" to $T_TMP/aff.RANK
# (the flag check's run, without --rank, writes nothing) and execs the
# real one; psr_merge is the real one.
real=$PSR_BIN
fake=$T_TMP/bin
mkdir -p "$fake"
ln -s "$real/psr_merge" "$fake/psr_merge"
cat >"$fake/ring_worker" <<EOF
#!/bin/sh
r=
prev=
for a in "\$@"; do
    [ "\$prev" = --rank ] && r=\$a
    prev=\$a
done
if [ -n "\$r" ]; then
    sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status >"$T_TMP/aff.\$r"
fi
exec "$real/ring_worker" "\$@"
EOF
chmod +x "$fake/ring_worker"
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
# The CPUs this shell may use, one a line (the launcher's are the same).
cpus=$(echo "$mine" | tr , '\n' | awk -F- 'NF == 2 { for (c = $1; c <= $2; c++) print c; next } { print }')
ncpu=$(echo "$cpus" | grep -c .)

# run_bind K ARGS...: the ring job with the fake ring_worker; its manifest
# in $T_TMP/m.jsonl, the ranks' affinities in $T_TMP/aff.*.
run_bind() {
    rm -f "$T_TMP"/aff.* "$T_TMP/m.jsonl"
    k=$1
    shift
    PSR_BIN=$fake job 60 "$launch" ring "$k" "$@" --bench -b 4K -e 4K -n 2 -w 1 --timeout 10 \
        --json-out "$T_TMP/m.jsonl"
    expect_rc 0
}
# aff_of R: rank R's Cpus_allowed_list.
aff_of() { cat "$T_TMP/aff.$1" 2>/dev/null; }

t_case launch-bind-1.1 "unpaced ring of 2 on 2+ CPUs: bound by default, rank r on the r-th allowed CPU, manifest says so"
if [ "$ncpu" -ge 2 ]; then
    run_bind 2
    c0=$(echo "$cpus" | sed -n 1p) c1=$(echo "$cpus" | sed -n 2p)
    [ "$(aff_of 0)" = "$c0" ] || t_fail "rank 0: '$(aff_of 0)', want CPU $c0"
    [ "$(aff_of 1)" = "$c1" ] || t_fail "rank 1: '$(aff_of 1)', want CPU $c1"
    grep -q "\"bind\":\"CPUs $c0 $c1 (unpaced, 2 ranks on $ncpu CPUs)\"" "$T_TMP/m.jsonl" ||
        t_fail "manifest: $(grep -o '"bind":"[^"]*"' "$T_TMP/m.jsonl")"
else
    echo "# launch-bind-1.1: one CPU, nothing to part"
fi
t_end

t_case launch-bind-1.2 "--no-bind-cores, --link-bw RATE (paced), K = 1 and K > CPUs: the ranks keep the launcher's CPUs, the manifest says why"
run_bind 2 --no-bind-cores
if [ "$(aff_of 0)" != "$mine" ] || [ "$(aff_of 1)" != "$mine" ]; then
    t_fail "--no-bind-cores: '$(aff_of 0)' '$(aff_of 1)', want '$mine' for both"
fi
grep -q '"bind":"none (--no-bind-cores)"' "$T_TMP/m.jsonl" || t_fail "manifest: $(grep -o '"bind":"[^"]*"' "$T_TMP/m.jsonl")"
run_bind 2 --link-bw 1Gbit
if [ "$(aff_of 0)" != "$mine" ] || [ "$(aff_of 1)" != "$mine" ]; then
    t_fail "paced: '$(aff_of 0)' '$(aff_of 1)', want '$mine' for both"
fi
grep -q '"bind":"none (paced (--link-bw))"' "$T_TMP/m.jsonl" || t_fail "manifest: $(grep -o '"bind":"[^"]*"' "$T_TMP/m.jsonl")"
run_bind 2 --link-bw=0
if [ "$ncpu" -ge 2 ]; then
    grep -q '"bind":"CPUs ' "$T_TMP/m.jsonl" || t_fail "--link-bw=0 is unpaced: $(grep -o '"bind":"[^"]*"' "$T_TMP/m.jsonl")"
fi
run_bind 1
[ "$(aff_of 0)" = "$mine" ] || t_fail "K = 1: '$(aff_of 0)', want '$mine'"
grep -q '"bind":"none (one rank)"' "$T_TMP/m.jsonl" || t_fail "manifest: $(grep -o '"bind":"[^"]*"' "$T_TMP/m.jsonl")"
if [ "$ncpu" -le 3 ]; then
    k=$((ncpu + 1))
    run_bind $k
    for r in $(seq 0 $((k - 1))); do
        [ "$(aff_of "$r")" = "$mine" ] || t_fail "K = $k: rank $r: '$(aff_of "$r")', want '$mine'"
    done
    grep -q "\"bind\":\"none ($k ranks on $ncpu CPUs)\"" "$T_TMP/m.jsonl" ||
        t_fail "manifest: $(grep -o '"bind":"[^"]*"' "$T_TMP/m.jsonl")"
fi
t_end
t_exit
