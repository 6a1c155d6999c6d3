# t_ps_cli.sh -- bad command lines for ps_worker, reference and
# experiments/launch.sh (RELIABILITY.md, "Bad input to try against the
# command line"): each is refused before anything runs, with status 64 and
# one line naming the flag; and bin/reference's output format, which the
# multi-process tests compare against. No server needed: the quick tier.
. "$PSR_TESTS/lib.sh"
launch="$PSR_TESTS/../experiments/launch.sh"

# usage_error WHAT PATTERN CMD...: status 64, one stderr line matching.
usage_error() {
    what=$1 pat=$2
    shift 2
    job 20 "$@"
    [ "$rc" = 64 ] || t_fail "$what: exit status $rc, want 64; stderr: $(head -c 300 "$T_TMP/err")"
    n=$(grep -c . "$T_TMP/err")
    [ "$n" = 1 ] || t_fail "$what: $n lines on stderr, want 1: $(head -c 300 "$T_TMP/err")"
    grep -q -e "$pat" "$T_TMP/err" || t_fail "$what: stderr lacks /$pat/: $(head -c 300 "$T_TMP/err")"
}

W="$PSR_BIN/ps_worker"
t_case ps-cli-1.1 "ps_worker: bad --server lists and missing flags are usage errors"
usage_error "no --server" '--server' "$W" --timeout 1
usage_error "no port" '--server' "$W" --server 127.0.0.1 --timeout 1
usage_error "port 0" '--server.*port 0' "$W" --server 127.0.0.1:0 --timeout 1
usage_error "port 65536" '--server' "$W" --server 127.0.0.1:65536 --timeout 1
usage_error "empty entry" '--server.*empty' "$W" --server 127.0.0.1:5000,,127.0.0.1:5001 --timeout 1
usage_error "IPv6 without brackets" '--server.*brackets' "$W" --server ::1:5000 --timeout 1
usage_error "more servers than parameters" '2 servers for 1 parameters' \
    "$W" --server 127.0.0.1:5000,127.0.0.1:5001 --workload synthetic --params 1 --timeout 1
usage_error "synthetic without --params" '--params' "$W" --server 127.0.0.1:5000 --workload synthetic
usage_error "rank >= world" '--rank' "$W" --server 127.0.0.1:5000 --rank 4 --world 4
usage_error "world without rank" '--rank' "$W" --server 127.0.0.1:5000 --world 4
usage_error "weights-out in a missing folder" '--weights-out' \
    "$W" --server 127.0.0.1:5000 --weights-out "$T_TMP/no/such/w"
t_end

t_case ps-cli-1.2 "reference: '# step loss' columns, loss going down, --weights-out PATH.0"
job 30 "$PSR_BIN/reference" --steps 5 --weights-out "$T_TMP/ref"
expect_rc 0
expect_grep out '^# step loss$'
[ "$(grep -vc '^#' "$T_TMP/out")" = 5 ] || t_fail "want 5 step lines: $(cat "$T_TMP/out")"
awk '!/^#/ { if (NF != 2 || $1 != n++ || (n > 1 && $2 + 0 >= prev)) bad = 1; prev = $2 + 0 }
     END { exit bad }' "$T_TMP/out" || t_fail "not steps 0..4 with a falling loss: $(cat "$T_TMP/out")"
[ "$(grep -c . "$T_TMP/ref.0")" = 12 ] || t_fail "ref.0: want 12 weights (linreg d = 12)"
[ ! -e "$T_TMP/ref" ] || t_fail "wrote PATH itself, not PATH.0"
usage_error "reference: synthetic without --params" '--params' "$PSR_BIN/reference" --workload synthetic
usage_error "reference: bad --lr" '--lr' "$PSR_BIN/reference" --lr nan
t_end

t_case ps-cli-1.3 "launch.sh: --help, and its own bad arguments are refused before starting anything"
job 20 "$launch" --help
expect_rc 0
expect_grep out 'usage'
usage_error "no arguments" 'MODE and K' "$launch"
usage_error "bad mode" "MODE tree: not ps or ring" "$launch" tree 4
usage_error "K = 0" "K 0: not a worker count" "$launch" ps 0
usage_error "K not a number" "K x: not a worker count" "$launch" ps x
usage_error "--csv" '--csv-out' "$launch" ps 2 --csv x.csv
usage_error "--rank" '--rank' "$launch" ps 2 --rank 1
usage_error "--servers 0" '--servers' "$launch" ps 2 --servers 0
usage_error "--servers for the ring" '--servers' "$launch" ring 2 --servers 2
usage_error "--time-limit abc" '--time-limit' "$launch" ps 2 --time-limit abc
usage_error "--csv-out in a missing folder" '--csv-out' "$launch" ps 2 --csv-out "$T_TMP/no/such/x.csv"
mkdir "$T_TMP/empty"
job 20 env PSR_BIN="$T_TMP/empty" "$launch" ps 2
[ "$rc" = 1 ] || t_fail "no binaries: exit status $rc, want 1"
expect_grep err 'no ps_server in'
t_end
t_exit
