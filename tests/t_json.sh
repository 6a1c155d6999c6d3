# t_json.sh -- JSON Lines beside every CSV (docs/design.md, JSON LINES):
# the programs' --json beside their --csv record, psr_merge and
# psring_sim's --json-out and launch.sh's beside --csv-out, the lab's
# NAME.json beside each NAME.csv (bin/psr_json from lib.sh's manifest).
# Each JSON is read back against its CSV or record field by field
# (tests/json_check.awk: the same names in order, empty = null, numbers
# as numbers with the same text, strings unescaped to the same text).
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"
check="$PSR_TESTS/json_check.awk"

t_need json "JSON beside CSV" ring_worker ps_server ps_worker psr_merge psr_json

# same CSV JSON [record]: json_check.awk passes (record: a program's record).
same() {
    awk -v record="${3:-0}" -f "$check" "$1" "$2" >"$T_TMP/chk" 2>&1 ||
        t_fail "$2 does not say what $1 says: $(cat "$T_TMP/chk")"
}

t_case json-1.1 "json_check.awk fails on a JSON that differs: a number as a string, a changed string, a row missing, no manifest line"
printf 'a,b,c\n1,,"x,""y"""\n2,str,1e+06\n' >"$T_TMP/q.csv"
job 10 "$PSR_BIN/psr_json" --out "$T_TMP/q.json" "$T_TMP/q.csv"
expect_rc 0
same "$T_TMP/q.csv" "$T_TMP/q.json"
n=0
for edit in 's/"a":2/"a":"2"/' 's/x,\\"y/x,\\"z/' '$d' '1d' 's/"b":null/"b":""/'; do
    sed "$edit" "$T_TMP/q.json" >"$T_TMP/bad.json"
    awk -f "$check" "$T_TMP/q.csv" "$T_TMP/bad.json" >/dev/null 2>&1 && t_fail "the checker passed after sed '$edit'"
    n=$((n + 1))
done
t_end

t_case json-1.2 "psr_json: quotes, commas, control bytes, empties, numbers and not-numbers (007, 1., nan) keep their text; a commit that reads as a number stays a string; a ragged row is refused"
printf 'name,v,w,x\n"a ""q"", b",-0.5e3,007,\n"tab\there",1.,nan,0\n' >"$T_TMP/t.csv"
job 10 "$PSR_BIN/psr_json" --out "$T_TMP/t.json" "$T_TMP/t.csv"
expect_rc 0
same "$T_TMP/t.csv" "$T_TMP/t.json"
grep -q '"name":"a \\"q\\", b","v":-0.5e3,"w":"007","x":null}' "$T_TMP/t.json" || t_fail "row 1: $(sed -n 2p "$T_TMP/t.json")"
grep -q '"name":"tab\\u0009here","v":"1.","w":"nan","x":0}' "$T_TMP/t.json" || t_fail "row 2: $(sed -n 3p "$T_TMP/t.json")"
# a commit that reads as a number (13e6144, all digits) stays a string
printf 'git: 13e6144\nsteps: 3\n' >"$T_TMP/m.txt"
job 10 "$PSR_BIN/psr_json" --manifest "$T_TMP/m.txt" --out "$T_TMP/m.json" "$T_TMP/t.csv"
expect_rc 0
grep -q '^{"record":"manifest","git":"13e6144","steps":3[,}]' "$T_TMP/m.json" || t_fail "manifest: $(head -c 200 "$T_TMP/m.json")"
printf 'a,b\n1,2,3\n' >"$T_TMP/r.csv"
job 10 "$PSR_BIN/psr_json" --out "$T_TMP/r.json" "$T_TMP/r.csv"
expect_rc 1
expect_grep err 'line 2: 3 fields under a header of 2'
[ -e "$T_TMP/r.json" ] && t_fail "a JSON was written for a ragged CSV"
t_end

t_case json-1.3 "ring_worker --bench --csv F --json J over two sizes: F.SIZE and J.SIZE, each JSON the record's fields (process line, one step line per step)"
job 30 "$PSR_BIN/ring_worker" --coordinator 127.0.0.1:0 --rank 0 --world 1 --bench -b 4K -e 8K -n 3 -w 1 \
    --csv "$T_TMP/b.rec" --json "$T_TMP/b.json"
expect_rc 0
for s in 4096 8192; do
    [ -s "$T_TMP/b.json.$s" ] || t_fail "no $T_TMP/b.json.$s"
    same "$T_TMP/b.rec.$s" "$T_TMP/b.json.$s" 1
    grep -q '^{"record":"manifest","program":"ring_worker",.*"ncpu":[0-9]' "$T_TMP/b.json.$s" ||
        t_fail "no manifest line naming ring_worker: $(head -n 1 "$T_TMP/b.json.$s")"
    [ "$(grep -c '"record":"step"' "$T_TMP/b.json.$s")" = 3 ] || t_fail "want 3 step lines in b.json.$s"
done
t_end

t_case json-1.4 "launch.sh ps 1 --csv-out X --json-out Y, twice, with ps_server and ps_worker --json: Y holds a manifest line (command, git) and the row per job, as X; each program's JSON its record"
for i in 1 2; do
    rm -rf "$T_TMP/d"
    job 60 "$launch" ps 1 --workload synthetic --params 256 --steps 3 --warmup 1 --timeout 10 \
        --out "$T_TMP/d" --csv-out "$T_TMP/x.csv" --json-out "$T_TMP/y.json" \
        --server-args "--json $T_TMP/srv.json" --worker-args "--json $T_TMP/wrk.json"
    expect_rc 0
done
same "$T_TMP/x.csv" "$T_TMP/y.json"
[ "$(grep -c '^{"record":"manifest","command":"experiments/launch.sh ps 1 .*"git":"' "$T_TMP/y.json")" = 2 ] ||
    t_fail "want 2 manifest lines with the launcher's command and git: $(cut -c1-200 "$T_TMP/y.json")"
[ "$(grep -c '^{"record":"row","system":"ps",' "$T_TMP/y.json")" = 2 ] || t_fail "want 2 ps rows"
same "$T_TMP/d/rec.server.0" "$T_TMP/srv.json" 1
same "$T_TMP/d/rec.worker.0" "$T_TMP/wrk.json" 1
t_end

t_case json-1.5 "the lab's writer (lib.sh manifest): NAME.json beside each NAME.csv, lab_points.awk's too, the nearest manifest.txt's lines (git, command) in the manifest line"
lab=$T_TMP/lab
mkdir -p "$lab/runs" "$lab/netns"
cp "$T_TMP/x.csv" "$lab/runs/p.csv"
awk -f "$PSR_TESTS/../experiments/lab_points.awk" "$lab/runs/p.csv" >"$lab/k_sweep.csv"
cp "$T_TMP/q.csv" "$lab/netns/k_sweep.csv"
echo "command: experiments/lab.sh --netns" >"$lab/netns/manifest.txt"
job 30 bash -c '. "$1/../experiments/lib.sh"; echo "k_sweep: ks=1" | manifest "$2" " (test)" "experiments/lab.sh --test"' \
    sh "$PSR_TESTS" "$lab"
expect_rc 0
for f in runs/p k_sweep netns/k_sweep; do
    [ -s "$lab/$f.json" ] || { t_fail "no $f.json beside $f.csv"; continue; }
    same "$lab/$f.csv" "$lab/$f.json"
done
grep -q '^{"record":"manifest","command":"experiments/lab.sh --test","date":"[0-9T:-]*Z","git":"[^"]*","cpu":"[^"]*","k_sweep":"ks=1",' "$lab/k_sweep.json" ||
    t_fail "k_sweep.json's manifest line: $(head -n 1 "$lab/k_sweep.json")"
grep -q '^{"record":"manifest","command":"experiments/lab.sh --netns",' "$lab/netns/k_sweep.json" ||
    t_fail "netns/k_sweep.json's manifest is not netns/manifest.txt's: $(head -n 1 "$lab/netns/k_sweep.json")"
t_end

t_case json-1.6 "bad --json / --json-out: a folder, a missing folder, --manifest alone, --json to the launcher or the simulator: exit 64, one line"
job 10 "$PSR_BIN/ring_worker" --coordinator 127.0.0.1:0 --rank 0 --world 1 --bench -b 4K -e 4K --json "$T_TMP"
expect_rc 64
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "ring_worker --json FOLDER: $(cat "$T_TMP/err")"
expect_grep err -- '--json'
job 10 "$PSR_BIN/psr_merge" --manifest "$T_TMP/q.csv" "$T_TMP/d/rec.worker.0"
expect_rc 64
expect_grep err -- '--manifest .*: only with --json-out; see psr_merge --help'
job 10 "$PSR_BIN/psr_merge" --json-out "$T_TMP/nope/y.json" "$T_TMP/d/rec.worker.0"
expect_rc 64
expect_grep err -- '--json-out'
job 10 "$launch" ring 2 --bench --json-out "$T_TMP/nope/y.json"
expect_rc 64
expect_grep err -- '--json-out .*nope/y.json.*folder'
job 10 "$launch" ring 2 --bench --json "$T_TMP/y.json"
expect_rc 64
expect_grep err -- '--json: the launcher gives each process its own record; use --json-out FILE'
if [ -x "$PSR_BIN/psring_sim" ]; then
    job 10 "$PSR_BIN/psring_sim" ring 2 --bytes 4096 --link-bw 1GB --json "$T_TMP/s.json"
    expect_rc 64
    expect_grep err -- '--json: the simulator writes its row as JSON with --json-out FILE'
fi
t_end

if [ -x "$PSR_BIN/psring_sim" ]; then
    t_case json-1.7 "psring_sim --csv-out X --json-out Y, twice: the rows as X, a manifest line naming psring_sim before each"
    for i in 1 2; do
        job 30 "$PSR_BIN/psring_sim" ring 2 --bytes 4096 --link-bw 1GB --steps 2 --warmup 0 \
            --csv-out "$T_TMP/s.csv" --json-out "$T_TMP/s.json"
        expect_rc 0
    done
    same "$T_TMP/s.csv" "$T_TMP/s.json"
    [ "$(grep -c '^{"record":"manifest","program":"psring_sim",' "$T_TMP/s.json")" = 2 ] ||
        t_fail "want 2 manifest lines naming psring_sim: $(cut -c1-200 "$T_TMP/s.json")"
    t_end
else
    t_skip json-1.7 "psring_sim --json-out" "no psring_sim in $PSR_BIN (SimGrid)"
fi
t_exit
