# t_plot_columns.sh -- the lab's plots find the CSV's columns by their
# names in the header, never by position: the same CSV with a column
# appended at the end, and with its columns in reverse order, plots the
# same numbers (gnuplot's `set table`: fmt='table' in plots/style.gp); the
# model lines come from bin/model; a CSV without a needed column is
# refused with its name. And the lab's deterministic arithmetic, on
# fabricated rows: bin/fit's fits recover the link from exact-model times,
# the crossover comes from the repeats' medians (experiments/lab_points.awk),
# flagged rows are drawn with their reason's marker and key entry.
. "$PSR_TESTS/lib.sh"

command -v gnuplot >/dev/null || { t_skip plot-columns-1 "plots by column name" "gnuplot not installed"; exit 0; }
[ -x "$PSR_BIN/model" ] || { t_skip plot-columns-1 "plots by column name" "no model in $PSR_BIN"; exit 0; }
plots="$PSR_TESTS/../plots"

# Rows as psr_merge writes them (a lab run's, trimmed): K sweep and sizes.
cat >"$T_TMP/k.csv" <<'CSV'
system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound
ps,,tcp,1,1048576,3,0.0342757,0.0339467,0.0372722,0.0168171,0.0157363,3.05924e+07,3.05924e+07,1048632,1048616,6.25e+07,0.0002,0.0339544,0
ring,ring,tcp,2,1048576,3,0.0181668,0.0180462,0.0184533,,,5.77192e+07,5.77192e+07,1048668,1048668,6.25e+07,0.0002,0.0171772,0
ps,,tcp,2,1048576,3,0.0676633,0.067175,0.0687007,0.0331675,0.0326811,1.5497e+07,3.09939e+07,2097264,2097232,6.25e+07,0.0002,0.0675089,0
ps,,tcp,4,1048576,3,0.141823,0.136743,0.142211,0.0664222,0.0661618,7.39354e+06,2.95742e+07,4194528,4194464,6.25e+07,0.0002,0.134618,1
ring,ring,tcp,4,1048576,3,0.0345039,0.0338698,0.0436437,,,3.03901e+07,4.55851e+07,1573124,1573120,6.25e+07,0.0002,0.0263658,0
CSV
cat >"$T_TMP/s.csv" <<'CSV'
system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound
ps,,tcp,4,4096,4,0.000847169,0.00069824,0.000964026,6.5324e-05,0.000146148,4.83493e+06,1.93397e+07,16608,16544,6.25e+07,0.0002,0.000924288,0
ring,ring,tcp,4,4096,4,0.00213135,0.00182606,0.00418521,,,1.92178e+06,2.88268e+06,6404,6400,6.25e+07,0.0002,0.0012983,0
ring,rd,tcp,4,4096,4,0.000885396,0.000733076,0.00239179,,,4.62618e+06,6.93927e+06,8296,8296,6.25e+07,0.0002,0.000531072,0
ps,,tcp,4,65536,4,0.00742821,0.00736176,0.00753058,0.00348507,0.00345545,8.82259e+06,3.52904e+07,262368,262304,6.25e+07,0.0002,0.00878861,0
ring,ring,tcp,4,65536,4,0.00575099,0.00439962,0.0063196,,,1.13956e+07,1.70934e+07,98564,98560,6.25e+07,0.0002,0.00277286,0
ring,rd,tcp,4,65536,4,0.00460733,0.00436449,0.00758984,,,1.42243e+07,2.13364e+07,131176,131176,6.25e+07,0.0002,0.00249715,0
ps,,tcp,4,1048576,4,0.134603,0.133926,0.141368,0.0675017,0.066104,7.79016e+06,3.11606e+07,4194528,4194464,6.25e+07,0.0002,0.134618,0
ring,ring,tcp,4,1048576,4,0.0402015,0.0296187,0.0526703,,,2.6083e+07,3.91245e+07,1573124,1573120,6.25e+07,0.0002,0.0263658,0
ring,rd,tcp,4,1048576,4,0.0455572,0.0378544,0.0543936,,,2.30167e+07,3.45251e+07,2097256,2097256,6.25e+07,0.0002,0.0339544,0
CSV
# variants NAME: NAME.extra.csv (a column "later" appended, holding junk
# that would break a plot reading it), NAME.rev.csv (columns reversed).
variants() {
    awk -F, -v OFS=, '{ $(NF + 1) = (NR == 1 ? "later" : 999 + NR); print }' "$T_TMP/$1.csv" >"$T_TMP/$1.extra.csv"
    awk -F, -v OFS=, '{ l = $NF; for (i = NF - 1; i >= 1; i--) l = l OFS $i; print l }' "$T_TMP/$1.csv" >"$T_TMP/$1.rev.csv"
}
variants k
variants s
# table PLOT CSV OUT: the numbers PLOT draws from CSV, into OUT; what it
# prints into OUT.txt, and for size bin/fit's lines (the fits and
# crossovers size.gp draws) after them.
table() {
    job 60 gnuplot -e "dir='$plots/'; model='$PSR_BIN/model'; file='$2'; fmt='table'; out='$3'" "$plots/$1.gp"
    cp "$T_TMP/out" "$3.txt"
    if [ "$1" = size ]; then "$PSR_BIN/fit" "$2" >>"$3.txt" 2>&1; fi
}

t_case plot-columns-1.1 "k_time, k_bytes, size: the same numbers with a column appended or the columns reversed"
for p in k_time:k k_bytes:k size:s; do
    plot=${p%%:*} csv=${p#*:}
    for v in "" .extra .rev; do
        table "$plot" "$T_TMP/$csv$v.csv" "$T_TMP/$plot$v.tab"
        expect_rc 0
        [ -s "$T_TMP/$plot$v.tab" ] || t_fail "$plot on $csv$v.csv: no table"
    done
    for v in .extra .rev; do
        cmp -s "$T_TMP/$plot.tab" "$T_TMP/$plot$v.tab" || t_fail "$plot: $csv$v.csv plots other numbers: $(diff "$T_TMP/$plot.tab" "$T_TMP/$plot$v.tab" | head -n 6)"
        cmp -s "$T_TMP/$plot.tab.txt" "$T_TMP/$plot$v.tab.txt" || t_fail "$plot: $csv$v.csv prints other lines"
    done
done
t_end

t_case plot-columns-1.2 "the model lines are bin/model's: K n, 2(K-1)/K n, a + K n/bw, the crossover"
# k_bytes's "K n" line at K = 4, n = 1 MiB: 4 MiB; "2(K-1)/K n" at 4: 1.5.
awk '/Curve title: "K n"/ { on = 1; next } /Curve title/ { on = 0 } on && $1 == 4 { print $2 }' \
    "$T_TMP/k_bytes.tab" | grep -qx 4 || t_fail "k_bytes: K n at K = 4 is not 4 MiB"
awk '/Curve title: "2\(K-1\)\/K n"/ { on = 1 } on && $1 == 4 { print $2; exit }' "$T_TMP/k_bytes.tab" |
    grep -qx 1.5 || t_fail "k_bytes: 2(K-1)/K n at K = 4 is not 1.5 MiB"
# k_time's PS ingress model at K = 2: (a + K n / bw) in ms = 0.2 + 2 x 1048576 / 62500 = 33.7544 ms.
awk '/Curve title: "PS ingress model/ { on = 1 } on && $1 == 2 { print $2; exit }' "$T_TMP/k_time.tab" |
    awk '{ exit !($1 > 33.7543 && $1 < 33.7545) }' || t_fail "k_time: PS ingress model at K = 2 is not 33.7544 ms"
# size: the crossover at K = 4 on 500 Mbit/s, 200 us: 8 a / b = 100000 bytes.
grep -q '^crossover model: .*: 100000 bytes' "$T_TMP/size.tab.txt" || t_fail "size: no model crossover at 100000 bytes"
grep -q "model_s / the lines drawn: 0.99999[0-9] to 1.00000[0-9] over 9 rows" "$T_TMP/size.tab.txt" ||
    t_fail "size: the CSV's model_s and bin/model disagree: $(grep lines "$T_TMP/size.tab.txt")"
t_end

t_case plot-columns-1.3 "a CSV without a column the plot needs is refused, naming it"
cut -d, -f1-6,8- "$T_TMP/k.csv" >"$T_TMP/k.cut.csv"     # no time_s
table k_time "$T_TMP/k.cut.csv" "$T_TMP/cut.tab"
[ "$rc" != 0 ] || t_fail "k_time plotted a CSV without time_s"
expect_grep err 'no column time_s'
t_end

t_case plot-columns-1.4 "bin/fit (size.gp's numbers) recovers the link's a and b from exact-model times (each algorithm in its own formula)"
# Rows whose time_s is bin/model's for a known link (100 Mbit/s = 12.5 MB/s,
# 500 us), at K = 4 and 6 (rd folds at 6), 4 KiB to 16 MiB.
for k in 4 6; do
    head -n 1 "$T_TMP/s.csv" >"$T_TMP/exact$k.csv"
    for n in 4096 32768 262144 2097152 16777216; do
        for alg in ps ring rd; do
            t=$("$PSR_BIN/model" --algo $alg --K $k --bytes $n --bw 100Mbit --latency 500us)
            case $alg in ps) sa=ps, ;; ring) sa=ring,ring ;; rd) sa=ring,rd ;; esac
            echo "$sa,tcp,$k,$n,3,$t,$t,$t,,,1,1,$n,$n,1.25e+07,0.0005,$t,0" >>"$T_TMP/exact$k.csv"
        done
    done
    table size "$T_TMP/exact$k.csv" "$T_TMP/exact$k.tab"
    expect_rc 0
    for alg in ps ring rd; do
        line=$(grep "^fit $alg: " "$T_TMP/exact$k.tab.txt")
        echo "$line" | awk '{ for (i = 1; i < NF; i++) { if ($i == "a" && $(i + 1) == "=" && !a) a = $(i + 2) + 0
                                                       if ($i == "1/b" && $(i + 1) == "=" && !b) b = $(i + 2) + 0 } }
                            END { exit !(a > 0.000495 && a < 0.000505 && b > 12.375 && b < 12.625) }' ||
            t_fail "K = $k, $alg: the fit is not the link (500 us, 12.5 MB/s) within 1%: $line"
    done
done
grep -q '^fit ring: T = 6 a + 1.5 n b: ' "$T_TMP/exact4.tab.txt" || t_fail "fit.txt does not name the ring's formula: $(grep '^fit ring' "$T_TMP/exact4.tab.txt")"
grep -q '(link: a = 0.0005 s, 1/b = 12.5 MB/s)' "$T_TMP/exact4.tab.txt" || t_fail "fit.txt does not give the configured link"
t_end

t_case plot-columns-1.5 "the crossover comes from the repeats' medians (lab_points.awk, then bin/fit)"
# Three runs per point. The first runs alone put the crossover between
# 4 KiB and 64 KiB (ring 3 ms against rd 5 ms at 64 KiB: one fast outlier);
# the medians (ring 9 ms) put it between 64 KiB and 1 MiB.
{
    head -n 1 "$T_TMP/s.csv"
    for r in "4096 0.004 0.0041 0.0042 0.001 0.001 0.001" "65536 0.003 0.009 0.0095 0.005 0.005 0.005" \
             "1048576 0.030 0.031 0.029 0.050 0.050 0.051"; do
        set -- $r
        n=$1; shift
        for t in $1 $2 $3; do echo "ring,ring,tcp,4,$n,3,$t,$t,$t,,,1,1,1,1,6.25e+07,0.0002,0.001,0"; done
        for t in $4 $5 $6; do echo "ring,rd,tcp,4,$n,3,$t,$t,$t,,,1,1,1,1,6.25e+07,0.0002,0.001,0"; done
    done
} >"$T_TMP/runs.csv"
awk -f "$PSR_TESTS/../experiments/lab_points.awk" "$T_TMP/runs.csv" >"$T_TMP/points.csv"
[ "$(awk 'NR > 1' "$T_TMP/points.csv" | wc -l)" = 6 ] || t_fail "lab_points.awk: not one row per point: $(cat "$T_TMP/points.csv")"
grep -q '^ring,ring,tcp,4,65536,3,0.009,0.003,0.0095,.*,3,0.003,0.0095,0.7222$' "$T_TMP/points.csv" ||
    t_fail "lab_points.awk: ring at 64 KiB is not median 0.009, min 0.003, max 0.0095, spread 0.7222: $(grep '^ring,ring,tcp,4,65536' "$T_TMP/points.csv")"
table size "$T_TMP/points.csv" "$T_TMP/points.tab"
expect_rc 0
grep -q '^crossover measured (ring vs rd, K = 4): .* between 65536 and 1048576' "$T_TMP/points.tab.txt" ||
    t_fail "the crossover is not between 64 KiB and 1 MiB: $(grep '^crossover measured' "$T_TMP/points.tab.txt")"
# Five runs: the one farthest from the median is forgiven.
printf '%s\n' "$(head -n 1 "$T_TMP/s.csv")" ps,,tcp,4,4096,3,1.00,1,1,,,1,1,1,1,1,0,1,0 ps,,tcp,4,4096,3,1.02,1,1,,,1,1,1,1,1,0,1,0 \
    ps,,tcp,4,4096,3,1.01,1,1,,,1,1,1,1,1,0,1,0 ps,,tcp,4,4096,3,1.03,1,1,,,1,1,1,1,1,0,1,0 ps,,tcp,4,4096,3,2.0,1,1,,,1,1,1,1,1,0,1,0 |
    awk -f "$PSR_TESTS/../experiments/lab_points.awk" | grep -q ',5,1,2,0.0294$' ||
    t_fail "lab_points.awk: five runs with one outlier: spread is not (1.03 - 1.00) / 1.02"
t_end

t_case plot-columns-1.6 "flagged rows are drawn with their reason's marker and key entry (bound_by, or host_bound alone); k_time boxes the PS's ingress too, k_bytes marks no byte count"
# k.csv's PS row at K = 4 has host_bound = 1 and no bound_by: marked
# without a reason. With bound_by: busy there, cpu on the ring at K = 2,
# sw (the link stood idle) on the ring at K = 4.
awk -F, -v OFS=, 'NR == 1 { print $0, "bound_by"; next } { b = $19 == 1 ? "busy" : "link"; if ($1 == "ring" && $4 == 2) b = "cpu"
                                                          if ($1 == "ring" && $4 == 4) b = "sw"; print $0, b }' \
    "$T_TMP/k.csv" >"$T_TMP/kb.csv"
for p in k_time k_scaling; do
    table $p "$T_TMP/kb.csv" "$T_TMP/kb.$p.tab"
    expect_rc 0
    awk '/Curve title: "host-bound: other programs kept the CPUs busy \(busy\)"/ { on = 1; next } /Curve title/ { on = 0 }
         on && $1 == 4 && $3 == "i" { n++ } END { exit n < 1 }' "$T_TMP/kb.$p.tab" ||
        t_fail "$p: the busy row (ps K = 4) is not drawn with the busy marker"
    awk '/Curve title: "host-bound: its own processes filled the cores \(cpu\)"/ { on = 1; next } /Curve title/ { on = 0 }
         on && $1 == 2 && $3 == "i" { n++ } END { exit n < 1 }' "$T_TMP/kb.$p.tab" ||
        t_fail "$p: the cpu row (ring K = 2) is not drawn with the cpu marker"
    awk '/Curve title: "link idle over 5%: the software set the pace \(sw\)"/ { on = 1; next } /Curve title/ { on = 0 }
         on && $1 == 4 && $3 == "i" { n++ } END { exit n < 1 }' "$T_TMP/kb.$p.tab" ||
        t_fail "$p: the sw row (ring K = 4) is not drawn with the sw marker"
done
# k_time: the busy PS row boxed on both its points, the combine and the
# server's ingress (the marks' second curve has no key entry of its own).
# (its ingress, 66.4222 ms, drawn twice: the point and its box)
[ "$(grep -c '^ 4  66.4222  i' "$T_TMP/kb.k_time.tab")" = 2 ] ||
    t_fail "k_time: the busy PS row (K = 4) is not boxed on its ingress point"
# k_bytes: no flag marks (byte counters are exact whatever set the pace)
table k_bytes "$T_TMP/kb.csv" "$T_TMP/kb.k_bytes.tab"
expect_rc 0
grep -q 'host-bound\|link idle' "$T_TMP/kb.k_bytes.tab" && t_fail "k_bytes: flag marks on the byte counts"
awk '/Curve title: "host-bound: the CPU, not the link, set the pace"/ { on = 1; next } /Curve title/ { on = 0 }
     on && $1 == 4 && $3 == "i" { n++ } END { exit n != 2 }' "$T_TMP/k_time.tab" ||
    t_fail "k_time: without bound_by, the host_bound row is not marked (no reason) on its combine and ingress"
grep -q 'busy' "$T_TMP/k_time.tab" && t_fail "k_time: a busy key entry without a bound_by column"
awk -F, -v OFS=, 'NR == 1 { print $0, "bound_by"; next } { b = $19 == 1 ? "busy" : "link"; print $0, b }' "$T_TMP/s.csv" >"$T_TMP/sb.csv"
sed -i 's/^ring,rd,tcp,4,4096,\(.*\),0,link$/ring,rd,tcp,4,4096,\1,1,busy/' "$T_TMP/sb.csv"
table size "$T_TMP/sb.csv" "$T_TMP/sb.tab"
# size.gp's key is tight: the short titles (style.gp's flag_short).
awk '/Curve title: "host-bound: busy"/ { on = 1; next } /Curve title/ { on = 0 }
     on && $1 == 4096 && $3 == "i" { n++ } END { exit n != 1 }' "$T_TMP/sb.tab" || t_fail "size: the busy rd row at 4 KiB is not marked"
t_end
t_exit
