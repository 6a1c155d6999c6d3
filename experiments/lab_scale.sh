#!/bin/sh
# experiments/lab_scale.sh -- the lab's numbers beside a real cluster's
# (docs/lab.md, exercise 0): the lab's links are thousands of times slower
# than a cluster's and its gradients thousands of times smaller, but what
# the bottleneck argument is about is dimensionless, and carries over:
#
#   n/bw      one gradient over one link, in seconds (the unit of time)
#   a bw/n    one message's latency, in gradients' transfer times (how
#             much latency weighs against bytes)
#   K         the workers
#
# With T1 = n/bw and L = a bw/n, the alpha-beta model (common/measure/
# model.h) says
#   ring all-reduce   T1 (2(K-1)/K + 2(K-1) L)
#   PS ingress        T1 (K + L)
# so the ring's time over the PS's depends on K and L alone. The table
# puts the lab's values (from a `make lab` folder's manifest, or flags)
# beside the cluster's (default: exercise 1's 4 GB gradient on 25 GB/s
# links with 5 us latency) and prints both systems' model times in both
# settings, then runs the simulator (bin/psring_sim, where it is built) at
# the cluster's numbers: seconds on this machine, SIMULATED time.
#
#   experiments/lab_scale.sh [RESULTS_DIR] [--bytes N] [--link-bw RATE]
#       [--link-latency TIME] [--K K] [--cluster-bytes N] [--cluster-bw RATE]
#       [--cluster-latency TIME] [--no-sim] [--html FILE]
#
# RESULTS_DIR: a `make lab` folder (default: the newest results/2*/ with a
# manifest.txt); its manifest gives the lab's rate, latency and the K
# sweep's n and largest K; flags override them, and with all three of
# --bytes, --link-bw and --link-latency no folder is needed. --html FILE
# writes the same table as an HTML fragment (lab_html.sh's panel).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
prog=lab_scale.sh

usage() {
    cat <<'EOF'
usage: experiments/lab_scale.sh [RESULTS_DIR] [--bytes N] [--link-bw RATE]
           [--link-latency TIME] [--K K] [--cluster-bytes N] [--cluster-bw RATE]
           [--cluster-latency TIME] [--no-sim] [--html FILE]
The lab's scale beside a real cluster's (docs/lab.md, exercise 0): n/bw, a bw/n
and K, the ring's and the parameter server's model times in both settings, and
the simulator (bin/psring_sim, SIMULATED time) at the cluster's numbers.

  RESULTS_DIR            a `make lab` folder (default: the newest results/2*/);
                         its manifest gives the lab's link and the K sweep's n
  --bytes N              the lab's gradient n in bytes (64K, 1M, 1048576)
  --link-bw RATE         the lab's link rate (8Mbit, 100Mbit, 12.5MB)
  --link-latency TIME    the lab's one-way latency (1ms, 200us)
  --K K                  workers (default: the K sweep's largest, else 8)
  --cluster-bytes N      the cluster's gradient (default 4e9: 2e9 two-byte parameters)
  --cluster-bw RATE      the cluster's link rate (default 25GB = 25e9 bytes/s)
  --cluster-latency TIME the cluster's one-way latency (default 5us)
  --no-sim               no simulator runs (the model only)
  --html FILE            also the table as an HTML fragment in FILE
EOF
}
help_or_version "$@"

dir="" lab_n="" lab_bw="" lab_a="" k="" cn=4e9 cbw=25GB ca=5us sim=1 html=""
while [ $# -gt 0 ]; do
    case $1 in
    --bytes | --link-bw | --link-latency | --K | --cluster-bytes | --cluster-bw | \
    --cluster-latency | --html | --bytes=* | --link-bw=* | --link-latency=* | --K=* | \
    --cluster-bytes=* | --cluster-bw=* | --cluster-latency=* | --html=*)
        opt_value "$@"
        case $name in
        --bytes) lab_n=$val ;;
        --link-bw) lab_bw=$val ;;
        --link-latency) lab_a=$val ;;
        --K) k=$val ;;
        --cluster-bytes) cn=$val ;;
        --cluster-bw) cbw=$val ;;
        --cluster-latency) ca=$val ;;
        --html) html=$val ;;
        esac
        shift $((1 + extra)) ;;
    --no-sim) sim=0; shift ;;
    -*) die_usage "$1: unknown option" ;;
    *)
        [ -z "$dir" ] || die_usage "$1: one results folder only (already $dir)"
        [ -d "$1" ] || usage_error RESULTS_DIR "$1" "not a folder"
        dir=$1; shift ;;
    esac
done
case $k in
'') ;;
*[!0-9]* | 0 | 1) usage_error --K "$k" "workers: a whole number >= 2" ;;
*) [ ${#k} -le 5 ] || usage_error --K "$k" "at most 99999 workers" ;;
esac
[ -x "$PSR_BIN/model" ] || { say "no $PSR_BIN/model: run make first"; exit 1; }

# The lab's values from the folder's manifest, for what the flags left out.
if [ -z "$lab_n" ] || [ -z "$lab_bw" ] || [ -z "$lab_a" ]; then
    if [ -z "$dir" ]; then
        for d in "$root"/results/2*/; do [ -f "$d/manifest.txt" ] && dir=${d%/}; done
        [ -n "$dir" ] || die_usage "no make lab folder in results/: run make lab, or give --bytes, --link-bw and --link-latency"
    fi
    m="$dir/manifest.txt"
    [ -f "$m" ] || usage_error RESULTS_DIR "$dir" "no manifest.txt there (not a make lab folder)"
    # link_bw: 8Mbit (auto, EMULATED, ...; 1e+06 bytes/s) -> the bytes/s
    [ -n "$lab_bw" ] || lab_bw=$(sed -n 's/^link_bw: .*; \([0-9.e+]*\) bytes\/s).*/\1/p' "$m" | head -n 1)
    [ -n "$lab_a" ] || lab_a=$(sed -n 's/^link_latency: \([^ ]*\).*/\1/p' "$m" | head -n 1)
    if [ -z "$lab_n" ]; then
        lab_n=$(sed -n 's/^k_sweep: .*bytes=\([^ ]*\).*/\1/p' "$m" | head -n 1)
        b=$(size_bytes "$lab_n") && lab_n=$b
    fi
    [ -n "$k" ] || k=$(sed -n 's/^k_sweep: ks="\([^"]*\)".*/\1/p' "$m" | awk '{ print $NF }')
    [ -n "$lab_bw" ] && [ -n "$lab_a" ] && [ -n "$lab_n" ] ||
        { say "$m: no link_bw, link_latency or k_sweep line (an older lab folder?); give --bytes, --link-bw and --link-latency"; exit 1; }
fi
case $k in '' | 1) k=8 ;; esac

# Each value checked by bin/model's own parser, the error naming this
# script's flag.
chk() {
    "$PSR_BIN/model" --algo ps --quantity ingress --K 2 --bytes "$1" --bw "$2" --latency "$3" >/dev/null 2>&1
}
chk "$lab_n" 1MB 0 || usage_error --bytes "$lab_n" "not a size (examples: 64K, 1M, 1048576)"
chk 1M "$lab_bw" 0 || usage_error --link-bw "$lab_bw" "not a rate (examples: 8Mbit, 100Mbit, 12.5MB)"
chk 1M 1MB "$lab_a" || usage_error --link-latency "$lab_a" "not a time (examples: 1ms, 200us)"
chk "$cn" 1MB 0 || usage_error --cluster-bytes "$cn" "not a size (examples: 4e9, 1G)"
chk 1M "$cbw" 0 || usage_error --cluster-bw "$cbw" "not a rate (examples: 25GB, 100Gbit)"
chk 1M 1MB "$ca" || usage_error --cluster-latency "$ca" "not a time (examples: 5us, 1ms)"

# model ALGO QUANTITY BYTES BW LAT: bin/model's one number (its usage
# line, exit 64, for a bad value).
model() {
    "$PSR_BIN/model" --algo "$1" --quantity "$2" --K "$k" --bytes "$3" --bw "$4" --latency "$5" ||
        exit 64
}
# Each setting's n (bytes), bw (bytes/s) and a (s), as bin/model reads them.
for side in lab cl; do
    if [ $side = lab ]; then n=$lab_n bw=$lab_bw a=$lab_a; else n=$cn bw=$cbw a=$ca; fi
    ring=$(model ring time "$n" "$bw" "$a") || exit 64
    ing=$(model ps ingress "$n" "$bw" "$a") || exit 64
    # n/bw and a from the model itself: PS ingress at K = 1 with a = 0 is n/bw;
    # the ring at K = 2 with n = 0 would be 2a.
    t1=$("$PSR_BIN/model" --algo ps --quantity ingress --K 1 --bytes "$n" --bw "$bw" --latency 0) || exit 64
    lat=$("$PSR_BIN/model" --algo ps --quantity ingress --K 1 --bytes "$n" --bw "$bw" --latency "$a") || exit 64
    nb=$("$PSR_BIN/model" --algo ps --quantity bytes_in --K 1 --bytes "$n" --bw "$bw" --latency 0) || exit 64
    eval "${side}_ring=\$ring ${side}_ing=\$ing ${side}_t1=\$t1 ${side}_lat=\$lat ${side}_nb=\$nb"
done

table=$(awk -v K="$k" -v ln="$lab_nb" -v lt1="$lab_t1" -v llat="$lab_lat" -v lring="$lab_ring" -v ling="$lab_ing" \
            -v cn="$cl_nb" -v ct1="$cl_t1" -v clat="$cl_lat" -v cring="$cl_ring" -v cing="$cl_ing" '
function sz(b) { return b >= 1e9 ? sprintf("%.3g GB", b / 1e9) : b >= 1048576 ? sprintf("%.3g MiB", b / 1048576) : sprintf("%.3g KiB", b / 1024) }
function t(s) { return s >= 1 ? sprintf("%.3g s", s) : s >= 1e-3 ? sprintf("%.3g ms", s * 1e3) : sprintf("%.3g us", s * 1e6) }
function rate(bps) { return bps * 8 >= 1e9 ? sprintf("%.3g Gbit/s", bps * 8 / 1e9) : sprintf("%.3g Mbit/s", bps * 8 / 1e6) }
function row(what, l, c, r) { printf "%s|%s|%s|%s\n", what, l, c, r }
BEGIN {
    la = llat - lt1; ca = clat - ct1            # the one-way latency a
    lbw = ln / lt1; cbw = cn / ct1
    ll = la / lt1; cl = ca / ct1                # a bw / n
    row("quantity", "this lab", "the cluster", "cluster / lab")
    row("gradient n", sz(ln), sz(cn), sprintf("%.3gx", cn / ln))
    row("link bw (each way)", rate(lbw), rate(cbw), sprintf("%.3gx", cbw / lbw))
    row("latency a (one way)", t(la), t(ca), sprintf("%.3gx", ca / la))
    row("n/bw: one gradient over one link", t(lt1), t(ct1), sprintf("%.3gx", ct1 / lt1))
    row("a bw/n: latency, in gradient transfers", sprintf("%.3g", ll), sprintf("%.3g", cl),
        sprintf("%.3gx (latency weighs %.3gx more here)", cl / ll, ll / cl))
    row(sprintf("ring all-reduce, K = %d (model)", K), t(lring), t(cring), sprintf("%.3gx", cring / lring))
    row(sprintf("  in units of n/bw (2(K-1)/K = %.3g without latency)", 2 * (K - 1) / K),
        sprintf("%.3g", lring / lt1), sprintf("%.3g", cring / ct1), "")
    row(sprintf("  the latency part: 2(K-1) a / ring"), sprintf("%.1f%%", 100 * 2 * (K - 1) * la / lring),
        sprintf("%.3f%%", 100 * 2 * (K - 1) * ca / cring), "")
    row(sprintf("PS ingress, one server, K = %d (model)", K), t(ling), t(cing), sprintf("%.3gx", cing / ling))
    row("  in units of n/bw (K without latency)", sprintf("%.3g", ling / lt1), sprintf("%.3g", cing / ct1), "")
    row("PS ingress / ring: the bottleneck ratio", sprintf("%.3g", ling / lring), sprintf("%.3g", cing / cring), "")
}')

echo "# the lab's scale beside a cluster's (model: common/measure/model.h; lab: ${dir:-flags})"
printf '%s\n' "$table" | awk -F'|' '{ r[NR] = $0; for (i = 1; i <= NF; i++) if (length($i) > w[i]) w[i] = length($i) }
    END { for (j = 1; j <= NR; j++) { n = split(r[j], f, "|"); s = "";
          for (i = 1; i <= n; i++) s = s sprintf(i < n ? "%-" w[i] "s  " : "%s", f[i]); sub(/ +$/, "", s); print s } }'

if [ -n "$html" ]; then
    printf '%s\n' "$table" | awk -F'|' 'BEGIN { print "<table class=\"scale\">" }
        { tag = NR == 1 ? "th" : "td"; printf "<tr>"; for (i = 1; i <= NF; i++) printf "<%s>%s</%s>", tag, $i, tag; print "</tr>" }
        END { print "</table>" }' > "$html" || { say "$html: cannot write"; exit 1; }
fi

if [ $sim = 1 ]; then
    if [ ! -x "$PSR_BIN/psring_sim" ]; then
        echo "# no $PSR_BIN/psring_sim (SimGrid: make deps-sim): the model only"
        exit 0
    fi
    cbytes=$(awk -v b="$cl_nb" 'BEGIN { printf "%.0f", b }')
    echo "# the simulator at the cluster's numbers (SIMULATED time; --payload sizes moves no real bytes)"
    for system in ring ps; do
        extra=""
        [ $system = ps ] && extra="--bucket-size $cbytes"
        # shellcheck disable=SC2086
        "$PSR_BIN/psring_sim" $system "$k" --bytes "$cbytes" --link-bw "$cbw" --link-latency "$ca" \
            --payload sizes --steps 1 --warmup 0 $extra > "${TMPDIR:-/tmp}/lab_scale.$$" ||
            { rm -f "${TMPDIR:-/tmp}/lab_scale.$$"; say "psring_sim $system $k failed"; exit 1; }
        awk -F, -v s=$system 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            { printf "%s K = %s: simulated %s s, model %s s (%s)\n", s, $c["K"],
                $c["time_s"], $c["model_s"], s == "ps" ? "the whole step, push and pull" : "the all-reduce" }' \
            "${TMPDIR:-/tmp}/lab_scale.$$"
        rm -f "${TMPDIR:-/tmp}/lab_scale.$$"
    done
fi
