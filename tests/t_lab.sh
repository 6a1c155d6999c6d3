# tier: full
# t_lab.sh -- `make lab`'s driver end to end at toy sizes: the calibration
# resolves --link-bw auto to a rate, every job runs, the CSVs hold one row
# per configuration (the median of its repeats) in the shared schema plus
# the lab's columns (the size sweep: the parameter server, the ring and
# recursive doubling at each size), the plots, the crossover lines and the
# manifest exist; the programs refuse 'auto'. No timing is asserted.
. "$PSR_TESTS/lib.sh"

# json_beside DIR: every CSV under DIR has NAME.json beside it that says
# what it says (tests/json_check.awk; docs/design.md, JSON LINES).
json_beside() {
    _n=0
    for _f in $(find "$1" -name '*.csv'); do
        _n=$((_n + 1))
        awk -f "$PSR_TESTS/json_check.awk" "$_f" "${_f%.csv}.json" >/dev/null 2>"$T_TMP/jchk" ||
            t_fail "${_f#"$1"/}: its JSON: $(cat "$T_TMP/jchk")"
    done
    [ "$_n" -gt 0 ] || t_fail "no CSV under $1"
}

if ! command -v gnuplot >/dev/null; then
    t_skip lab-1 "lab.sh --quick" "gnuplot not installed (make deps)"; exit 0
fi
for b in ps_server ps_worker ring_worker; do
    [ -x "$PSR_BIN/$b" ] || { t_skip lab-1 "lab.sh --quick" "no $b in $PSR_BIN"; exit 0; }
done

t_case lab-1.1 "lab.sh --quick --steps 2: both sweeps (size sweep with ps, ring, rd) with 2 steps, model table, plots, manifest, index.html, NAME.json beside each CSV"
job 170 bash "$PSR_TESTS/../experiments/lab.sh" --quick --steps 2 --out "$T_TMP/lab"
expect_rc 0
expect_grep err 'loopback TCP, unpaced: [0-9]* MB/s'
expect_grep out "results: $T_TMP/lab"
# The shared schema first (columns another module appends after host_bound,
# bound_by say, may follow), the lab's four columns last; the runs' CSVs
# carry the shared schema alone.
hdr='system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound,bound_by,machine_busy,job_busy,run_queue'
for f in k_sweep size_sweep; do
    h=$(head -n 1 "$T_TMP/lab/$f.csv" 2>/dev/null)
    case $h in "$hdr"*",runs,run_min_s,run_max_s,spread") ;; *) t_fail "$f.csv header is not the shared schema plus the lab's columns: $h" ;; esac
    case $(head -n 1 "$T_TMP/lab/${f}_runs.csv" 2>/dev/null) in "$hdr"*) ;; *) t_fail "no ${f}_runs.csv in the shared schema" ;; esac
    # --quick caps the repeats at 2: every point ran once or twice, and its
    # row's time_s lies within its runs' min and max.
    awk -F, 'NR > 1 { r = $(NF - 3); if (r < 1 || r > 2 || $7 < $(NF - 2) || $7 > $(NF - 1)) bad = bad " " $0 } END { if (bad != "") { print bad; exit 1 } }' \
        "$T_TMP/lab/$f.csv" >"$T_TMP/reps" || t_fail "$f.csv: runs or the median off: $(cat "$T_TMP/reps")"
done
# --link-bw auto (the default) resolved by the calibration to a rate.
grep -Eq '^link_bw: [0-9]+[MG]bit \(auto, ' "$T_TMP/lab/manifest.txt" || t_fail "manifest: --link-bw auto not resolved to a rate: $(grep '^link_bw' "$T_TMP/lab/manifest.txt")"
grep -Eq '^calibration: auto -> [0-9]+[MG]bit ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the calibration"
grep -q '^probe_[0-9]*[MG]bit: .*launch.sh ring 4 --workload synthetic .*--steps 8 ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the calibration probe's command line (the K sweep's largest ring)"
# each probe's line in the calibration says its share, its time against its model and its bound_by
grep -Eq '^calibration: .*[0-9]+[MG]bit: n [0-9]+ B, [0-9.e+-]+ CPU-s a step, share [0-9.]+, [0-9.]+x its model, bound by (link|sw|cpu|busy);' "$T_TMP/lab/manifest.txt" ||
    t_fail "manifest: the calibration does not give each probe's share, ratio and bound_by: $(grep '^calibration' "$T_TMP/lab/manifest.txt")"
grep -q -- '--link-bw auto' "$T_TMP/lab/commands.txt" && t_fail "a job was given --link-bw auto"
# the lab's scale (lab_lib.sh): --quick is below it, and the manifest and
# the report say what fell short; the budget line says the budget
grep -Eq '^scale: BELOW the lab.s \(K = 16, n >= 1 MiB, sizes to 16 MiB, at 100 Mbit/s or more\):.* K up to 4 \(--quick\); n = 256K \(--quick\); sizes up to 64K \(--quick\);' "$T_TMP/lab/manifest.txt" ||
    t_fail "manifest: no scale line saying what --quick fell short of: $(grep '^scale' "$T_TMP/lab/manifest.txt")"
grep -Eq '^budget: [0-9]+ s' "$T_TMP/lab/manifest.txt" || t_fail "manifest: no budget line"
expect_grep out '^scale: BELOW the lab'
grep -q '^repeat: ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the repeat rule"
grep -q '^cut: ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks what the budget cut"
# --steps 2 (after --quick, whose warm-up is 1 and whose sweeps run 3
# steps): 1 timed step in every row of BOTH sweeps (the size sweep used to
# keep its own step count). Fewer steps than --quick's, so that the test
# stays within its watchdog under the sanitizers on a loaded machine.
for f in k_sweep size_sweep; do
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
             $c["steps"] != 1 { print $1, $2, $4, $5, "steps", $c["steps"] }' "$T_TMP/lab/$f.csv" > "$T_TMP/steps" 2>&1
    [ -s "$T_TMP/steps" ] && t_fail "$f.csv: rows not at --steps 2 (1 timed): $(cat "$T_TMP/steps")"
done
grep -q '^size_sweep: .* steps=2 ' "$T_TMP/lab/manifest.txt" || t_fail "manifest: the size sweep's steps are not 2"
[ -s "$T_TMP/lab/index.html" ] || t_fail "no index.html (experiments/lab_html.sh)"
rows=$(awk 'NR > 1' "$T_TMP/lab/k_sweep.csv" 2>/dev/null | wc -l)
[ "$rows" = 4 ] || t_fail "k_sweep.csv has $rows rows, want 4 (2 systems x 2 K)"
rows=$(awk 'NR > 1' "$T_TMP/lab/size_sweep.csv" 2>/dev/null | wc -l)
[ "$rows" = 6 ] || t_fail "size_sweep.csv has $rows rows, want 6 (ps, ring, rd x 4K, 64K)"
# One row per algorithm and size: ps (algo empty), ring,ring and ring,rd, at
# K = 4 and exactly 4096 and 65536 bytes; rd's links carry log2 K = 2 whole
# vectors per step, the ring's 2(K-1)/K n in 2(K-1) = 6 chunks (plus at most
# 64 bytes of frame header per message); every rd row has its own model,
# 2(a + n b).
for want in 'ps,,tcp,4,4096' 'ps,,tcp,4,65536' 'ring,ring,tcp,4,4096' 'ring,ring,tcp,4,65536' \
            'ring,rd,tcp,4,4096' 'ring,rd,tcp,4,65536'; do
    [ "$(grep -c "^$want," "$T_TMP/lab/size_sweep.csv" 2>/dev/null)" = 1 ] ||
        t_fail "size_sweep.csv: not exactly one row $want"
done
awk -F, 'NR > 1 && $2 == "rd" { m = 2 * $5; if ($14 < m || $14 > m + 2 * 64) bad = bad " rd n=" $5 " in=" $14
                                 r = 2 * ($17 + $5 / $16); if ($18 < r * 0.999 || $18 > r * 1.001) bad = bad " rd n=" $5 " model_s=" $18 }
         NR > 1 && $2 == "ring" { m = 1.5 * $5; if ($14 < m || $14 > m + 6 * 64) bad = bad " ring n=" $5 " in=" $14 }
         END { if (bad != "") { print bad; exit 1 } }' "$T_TMP/lab/size_sweep.csv" >"$T_TMP/rdbytes" ||
    t_fail "size sweep's rd/ring rows off the model:$(cat "$T_TMP/rdbytes")"
grep -q '^size_rd_4K: .*launch.sh ring 4 .*--worker-args --algo\\ rd' "$T_TMP/lab/manifest.txt" ||
    t_fail "manifest lacks the rd job's command line"
expect_grep out '^crossover measured (ring vs rd, K = 4): '
# The model's crossover at the rate the calibration chose (a loaded machine
# picks a lower one): bin/model's, to the byte.
bw=$(sed -n 's/^link_bw: \([0-9]*[MG]bit\) .*/\1/p' "$T_TMP/lab/manifest.txt")
lat=$(sed -n 's/^link_latency: \([^ ]*\) .*/\1/p' "$T_TMP/lab/manifest.txt")
[ "$lat" = 1ms ] || t_fail "manifest: link_latency '$lat', want lab.sh's default 1ms"
xo=$("$PSR_BIN/model" --crossover --K 4 --bw "${bw:-none}" --latency "${lat:-none}" 2>/dev/null)
xo=$(printf '%.0f' "${xo:-0}" 2>/dev/null)
expect_grep out "^crossover model: n\\* = .*: $xo bytes"
grep -q '^fit rd: ' "$T_TMP/lab/fit.txt" 2>/dev/null || t_fail "fit.txt lacks rd's fit"
# The K sweep's byte counters: the server's link carries K n each way (plus
# headers), a ring worker's 2(K-1)/K n.
awk -F, 'NR > 1 && $1 == "ps" { if ($14 < $4 * $5 || $14 > $4 * $5 * 1.01) bad = bad " ps K=" $4 " in=" $14 }
         NR > 1 && $1 == "ring" { m = 2 * ($4 - 1) / $4 * $5; if ($14 < m || $14 > m * 1.01) bad = bad " ring K=" $4 " in=" $14 }
         END { if (bad != "") { print bad; exit 1 } }' "$T_TMP/lab/k_sweep.csv" >"$T_TMP/bytes" ||
    t_fail "byte counters off the model:$(cat "$T_TMP/bytes")"
for p in k_time k_bytes k_scaling size; do
    for ext in png svg; do
        [ -s "$T_TMP/lab/$p.$ext" ] || t_fail "plot $p.$ext missing or empty"
    done
done
expect_grep out 'model vs measured'
grep -q '^loopback_MBps: [0-9]' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the loopback rate"
grep -q '^git: ' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the git revision"
grep -q '^jobs_failed: 0' "$T_TMP/lab/manifest.txt" || t_fail "manifest: jobs failed"
grep -q '^k_ps_2: .*launch.sh ps 2 .*--link-bw' "$T_TMP/lab/manifest.txt" || t_fail "manifest lacks the jobs' command lines"
[ -s "$T_TMP/lab/loss.png" ] || t_fail "no loss.png (experiments/lab_loss.sh)"
[ -s "$T_TMP/lab/algo_map_model.png" ] || t_fail "no algo_map_model.png (lab_algorithms.sh: the model's map)"
grep -q ' 512 ' "$T_TMP/lab/model.txt" || t_fail "model.txt lacks the seed's K=512 row"
json_beside "$T_TMP/lab"
t_end

t_case lab-1.2 "lab.sh refuses a bad flag with one line and exit 64 (a bad --link-bw or --link-latency before any job runs)"
job 10 bash "$PSR_TESTS/../experiments/lab.sh" --bogus
expect_rc 64
for bad in "--link-bw abc" "--link-bw 10abc" "--link-latency 5parsecs" "--only servers --link-bw -1Mbit"; do
    job 20 bash "$PSR_TESTS/../experiments/lab.sh" $bad --quick --out "$T_TMP/badlab"
    expect_rc 64
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "'$bad': $(wc -l <"$T_TMP/err") lines on stderr: $(head -c 300 "$T_TMP/err")"
    [ -e "$T_TMP/badlab" ] && t_fail "'$bad': a results folder was made"
done
[ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "stderr is not one line"
t_end

t_case lab-1.3 "the programs refuse --link-bw auto (the lab resolves it) with one line and exit 64"
for b in ps_server ps_worker ring_worker; do
    job 10 "$PSR_BIN/$b" --link-bw auto
    expect_rc 64
    [ "$(wc -l < "$T_TMP/err")" = 1 ] || t_fail "$b: stderr is not one line"
    expect_grep err '--link-bw auto: resolved by experiments/lab.sh'
done
job 10 "$PSR_BIN/model" --algo ring --K 4 --bytes 1 --bw auto
expect_rc 64
t_end
t_case lab-1.4 "the default K sweep stops at 8 ranks per CPU (this machine's nproc: K = 16 on 2), and its latency is 1 ms"
want=""
for k in 1 2 4 8 16; do [ "$k" -le $((8 * $(nproc))) ] && want="$want${want:+ }$k"; done
job 10 bash "$PSR_TESTS/../experiments/lab.sh" --help
expect_rc 0
tr -s ' \n' ' ' < "$T_TMP/out" | grep -Fq "up to 8 per CPU: \"$want\" here)" ||
    t_fail "--help does not give the default ks '$want' for $(nproc) CPUs: $(grep -A1 -- '--ks' "$T_TMP/out" | tr -s ' \n' ' ')"
expect_grep out 'emulated one-way latency (default 1ms)'
t_end
t_case lab-1.5 "^C (SIGINT to the process group, or to lab.sh alone) during a sweep: lab.sh and lab.sh --only servers exit 130 within 2 s, leave no process behind, and the manifest says interrupted and what had finished"
# interrupt TO PATTERN ARGS...: lab.sh ARGS in a session of its own (as a
# terminal's foreground job), SIGINT once PATTERN is on its stderr: to the
# whole group (TO = group: a terminal's ^C) or to lab.sh alone (TO = lab:
# kill PID, where the job it runs gets nothing from the sender); rc its
# status, dt the seconds from the signal to its exit. Left behind: any
# process of the session (launch.sh puts each job in a group of its own).
interrupt() {
    _to=$1 _pat=$2; shift 2
    : >"$T_TMP/err"
    setsid timeout -s KILL 120 bash "$PSR_TESTS/../experiments/lab.sh" "$@" >"$T_TMP/out" 2>"$T_TMP/err" </dev/null &
    _pid=$!
    _i=0
    while [ $_i -lt 600 ] && ! grep -q "$_pat" "$T_TMP/err" 2>/dev/null; do sleep 0.1; _i=$((_i + 1)); done
    grep -q "$_pat" "$T_TMP/err" || t_fail "$*: no '$_pat' on stderr: $(head -c 300 "$T_TMP/err")"
    sleep 0.5
    _t0=$(date +%s.%N)
    if [ "$_to" = group ]; then
        env kill -INT -- "-$_pid" 2>/dev/null
    else
        env kill -INT "$(ps -o pid= --ppid "$_pid" | head -n 1)" 2>/dev/null
    fi
    wait "$_pid"
    rc=$?
    dt=$(awk -v a="$_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    _left=$(ps -eo sid=,pid=,args= | awk -v g="$_pid" '$1 == g && $3 !~ /^\[/')
    [ -z "$_left" ] || { t_fail "$*: left behind: $_left"; ps -o pgid= -p "$(echo "$_left" | awk '{ print $2 }' | paste -sd,)" |
                         while read -r g; do env kill -KILL -- "-$g" 2>/dev/null; done; }
}
# expect_stopped DIR DONE: exit 130 within 2 s (a job that is waited for
# instead runs on for seconds: the K = 8 PS step below is about 2 s), and
# DIR/manifest.txt says interrupted and that DONE had finished.
expect_stopped() {
    expect_rc 130
    awk -v t="$dt" 'BEGIN { exit !(t <= 2) }' || t_fail "lab.sh took $dt s to stop after SIGINT (want at most 2)"
    grep -q '^interrupted: SIGINT' "$1/manifest.txt" 2>/dev/null ||
        t_fail "$1/manifest.txt: no 'interrupted: SIGINT' line: $(head -c 400 "$1/manifest.txt" 2>&1)"
    grep -q "^finished: .*$2" "$1/manifest.txt" 2>/dev/null ||
        t_fail "$1/manifest.txt: '$2' not among the finished: $(grep '^finished' "$1/manifest.txt" 2>&1)"
}
interrupt group 'K sweep pass 1' --quick --link-bw 64Mbit --out "$T_TMP/int"
expect_stopped "$T_TMP/int" k_ps_2
grep -q '^\[3/5\]\|^\[4/5\]' "$T_TMP/err" && t_fail "lab.sh went on after ^C: $(tail -n 3 "$T_TMP/err")"
# SIGINT to lab.sh alone, in a K = 8 PS job of about 8 s (64 KiB each way
# per worker and step at 2 Mbit/s on the server's link)
interrupt lab 'K sweep pass 1: k_ps_2' --quick --ks "2 8" --bytes 64K --link-bw 2Mbit --out "$T_TMP/int_pid"
expect_stopped "$T_TMP/int_pid" k_ps_2
grep -q '^interrupted: .*during k_ps_8' "$T_TMP/int_pid/manifest.txt" 2>/dev/null ||
    t_fail "the manifest does not name k_ps_8 as the job stopped: $(grep '^interrupted' "$T_TMP/int_pid/manifest.txt" 2>&1)"
interrupt group 'servers\] pass 1' --quick --only servers --out "$T_TMP/int_srv"
expect_stopped "$T_TMP/int_srv" servers_ring_
grep -q '^servers at K' "$T_TMP/out" && t_fail "lab.sh --only servers went on after ^C"
t_end
t_case lab-2.1 "lab.sh --quick --only servers: ring and the PS with k = 0, 2, 4 extra servers at K = 4, per-bucket pull, each with its placement's pipelined model, ps_servers.png"
job 170 bash "$PSR_TESTS/../experiments/lab.sh" --quick --only servers --out "$T_TMP/srv"
expect_rc 0
f=$T_TMP/srv/servers.csv
case $(head -n 1 "$f" 2>/dev/null) in *",servers,placement"*",runs,run_min_s,run_max_s,spread") ;;
    *) t_fail "servers.csv header lacks servers, placement and the lab's columns: $(head -n 1 "$f")" ;; esac
# one row per point: the ring, then k = 0 (colocated S = K: 4 servers), k = 2
# (6 servers: Theorem 1's split, or equal shards until ps_server has
# --range), k = 4 (the separate PS with S = 4)
got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
               { printf "%s:%s:%s:%s ", $c["system"], $c["K"], $c["servers"], $c["placement"] }' "$f")
case $got in
"ring:4:: ps:4:4:colocated ps:4:6:colocated ps:4:4:separate " | "ring:4:: ps:4:4:colocated ps:4:6:colocated-even ps:4:4:separate ") ;;
*) t_fail "rows (system:K:servers:placement): '$got'" ;;
esac
# each PS row's model_s is bin/model's pipelined one for its placement:
# per-bucket pull, buckets of n / 16 (the manifest's bucket=)
bucket=$(sed -n 's/^servers: .* bucket=\([0-9][0-9]*\) .*/\1/p' "$T_TMP/srv/manifest.txt")
[ "$bucket" = 4096 ] || t_fail "manifest: bucket '$bucket', want 4096 (n = 64 KiB in 16 layers)"
bad=$(awk -F, -v model="$PSR_BIN/model" -v b="$bucket" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["system"] == "ps" { p = $c["placement"]; k = p == "separate" ? $c["servers"] : $c["servers"] - $c["K"]
        q = p == "separate" ? "--servers " k : "--placement colocated --servers " k (p == "colocated-even" ? " --even-split" : "")
        cmd = sprintf("\"%s\" --algo ps %s --K %d --bytes %s --bw %s --latency %s --quantity pipelined --bucket %s", model, q, $c["K"], $c["bytes"], $c["link_bw"], $c["link_latency"], b)
        m = ""; cmd | getline m; close(cmd)
        d = m - $c["model_s"]; if (d < 0) d = -d
        if (m == "" || d > 1e-5 * m) print p, k, $c["model_s"], m }' "$f")
[ -z "$bad" ] || t_fail "model_s is not bin/model's for the placement: $bad"
[ -s "$T_TMP/srv/ps_servers.png" ] || t_fail "no ps_servers.png"
[ -s "$T_TMP/srv/ps_servers.svg" ] || t_fail "no ps_servers.svg"
grep -q '^split: ' "$T_TMP/srv/manifest.txt" || t_fail "manifest lacks the split"
json_beside "$T_TMP/srv"
grep -q 'launch.sh ps 4 .*--colocated-servers --servers 2 --layers 16 --worker-args --bucket-size=4096' "$T_TMP/srv/commands.txt" ||
    t_fail "no k = 2 job with 16 layers and 4 KiB buckets in commands.txt"
expect_grep out 'servers at K = 4'
job 10 bash "$PSR_TESTS/../experiments/lab.sh" --only nothing
expect_rc 64
t_end
t_case lab-2.2 "ps_servers.gp reads columns by name: the same numbers with the columns reversed; t_opt is bin/model's; no placement column is refused"
# rows of a K = 8 run (experiments/lab.sh --only servers, 64 Mbit/s, 200 us, n = 1 MiB)
cat >"$T_TMP/srv.csv" <<'CSV'
system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,model_s,host_bound,bound_by,machine_busy,job_busy,run_queue,servers,placement
ring,ring,tcp,8,1048576,4,0.469221,0.406855,0.683452,,,2.23472e+06,3.91076e+06,1835588,1835584,8e+06,0.0002,0.232176,1,busy,1,0.22802,24.5,,
ps,,tcp,8,1048576,4,0.423223,0.293536,0.685593,0.242286,0.127833,2.47759e+06,1.98207e+07,8392192,8391168,8e+06,0.0002,0.229776,1,busy,1,0.553272,27.5,8,colocated
ps,,tcp,8,1048576,4,0.396563,0.337446,0.628575,0.2243,0.104579,2.64416e+06,2.11533e+07,8393088,8391808,8e+06,0.0002,0.23633,1,busy,1,0.502395,28,10,colocated-even
ps,,tcp,8,1048576,4,0.371233,0.29019,0.64286,0.22737,0.0910153,2.82457e+06,2.25966e+07,8393984,8392448,8e+06,0.0002,0.240699,1,busy,1,0.430908,37,12,colocated-even
ps,,tcp,8,1048576,4,0.389568,0.309427,0.789564,0.180114,0.13406,2.69164e+06,2.15331e+07,8392192,8391168,8e+06,0.0002,0.262544,1,busy,1,0.589891,31,8,separate
CSV
awk -F, -v OFS=, '{ l = $NF; for (i = NF - 1; i >= 1; i--) l = l OFS $i; print l }' "$T_TMP/srv.csv" >"$T_TMP/srv.rev.csv"
for v in "" .rev; do
    job 60 gnuplot -e "dir='$PSR_TESTS/../plots/'; model='$PSR_BIN/model'; file='$T_TMP/srv$v.csv'; fmt='table'; out='$T_TMP/srv$v.tab'" \
        "$PSR_TESTS/../plots/ps_servers.gp"
    expect_rc 0
done
[ -s "$T_TMP/srv.tab" ] || t_fail "no table"
cmp -s "$T_TMP/srv.tab" "$T_TMP/srv.rev.tab" || t_fail "reversed columns plot other numbers: $(diff "$T_TMP/srv.tab" "$T_TMP/srv.rev.tab" | head -n 4)"
# the t_opt curve at k = 2, in ms: bin/model's 0.193158736842 s
awk '/Curve title: "t\\_opt/ { on = 1; next } /Curve title/ { on = 0 } on && $1 == 2 { print $2; exit }' "$T_TMP/srv.tab" |
    awk '{ exit !($1 > 193.158 && $1 < 193.160) }' || t_fail "t_opt at k = 2 is not bin/model's 193.159 ms"
# the measured points sit at k = 0, 2, 4 (colocated: servers - K) and 8 (separate: servers)
got=$(awk '/Curve title: "PS, measured/ { on = 1; next } /Curve title/ { on = 0 } on && $1 ~ /^[0-9]/ { printf "%s ", $1 }' "$T_TMP/srv.tab")
[ "$got" = "0 2 4 8 " ] || t_fail "PS points at k = '$got', want 0 2 4 8"
cut -d, -f1-24 "$T_TMP/srv.csv" >"$T_TMP/srv.cut.csv"
job 60 gnuplot -e "dir='$PSR_TESTS/../plots/'; model='$PSR_BIN/model'; file='$T_TMP/srv.cut.csv'; fmt='table'; out='$T_TMP/srv.cut.tab'" \
    "$PSR_TESTS/../plots/ps_servers.gp"
[ "$rc" != 0 ] || t_fail "plotted a CSV without placement"
expect_grep err 'no servers or placement column'
t_end
t_exit
