# t_hostile_files.sh -- files planted by someone else (issue 28, "Why" 3
# and 5): an output path that is a symlink to a file outside its folder is
# refused in every program, for every output flag (exit 64, one line, the
# victim's content and mode unchanged); a symlink within the folder still
# works; a replaced file keeps its mode; every input flag refuses a FIFO, a
# device and a folder at once (exit 64, one line), under a watchdog so that
# a wait on a FIFO is a failure. Usage-level checks only: no training runs
# but two one-step ones (common/base/outfile.h, common/base/infile.h).
. "$PSR_TESTS/lib.sh"
t_need hostile-files-0 "hostile files" ps_server ps_worker ring_worker reference psr_merge

D="$T_TMP/outdir"         # the output folder a planter can write into
V="$T_TMP/victim"       # the planter's target, outside it
mkdir -p "$D"
printf 'not yours\n' >"$V"
chmod 600 "$V"
vsum=$(cksum <"$V")
RING="$PSR_BIN/ring_worker --world 1 --rank 0 --coordinator 127.0.0.1:0 --workload synthetic --params 1K --steps 1"
SIM=""
[ -x "$PSR_BIN/psring_sim" ] && SIM="$PSR_BIN/psring_sim ring 2 --link-bw 1GB --steps 1"

one_line() {
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$1: want one line on stderr: $(head -c 400 "$T_TMP/err")"
}
victim_intact() {
    [ "$(cksum <"$V")" = "$vsum" ] || t_fail "$1: the victim's content changed: $(head -c 100 "$V")"
    [ "$(stat -c %a "$V")" = 600 ] || t_fail "$1: the victim's mode is now $(stat -c %a "$V")"
}

# planted NAME FLAG CMD...: NAME in $D is a symlink to the victim; CMD
# (which names $D/... for FLAG) must exit 64 with one line naming FLAG and
# the link, and leave the victim and the link as they were.
planted() {
    _name=$1 _flag=$2; shift 2
    rm -f "$D"/* "$D"/.[!.]*
    ln -s "$V" "$D/$_name"
    job 20 "$@"
    expect_rc 64
    one_line "$_flag"
    grep -q -e "$_flag: cannot write $D/$_name: it is a symlink to .*outside its folder" "$T_TMP/err" ||
        t_fail "$_flag: not named as a symlink out of its folder: $(head -c 300 "$T_TMP/err")"
    victim_intact "$1 $_flag"
    [ -L "$D/$_name" ] || t_fail "$_flag: the link was replaced"
    [ "$(ls -A "$D" | wc -l)" = 1 ] || t_fail "$_flag: files left in the folder: $(ls -A "$D")"
}

t_case hostile-files-1.1 "a symlink to a file outside its folder, for every output flag of every program: exit 64, one line, the victim's content and mode unchanged"
for flag in --port-file --loss-out --checkpoint --csv --loss-time-out; do
    planted p $flag "$PSR_BIN/ps_server" --workers 1 $flag "$D/p"
done
planted p --record "$PSR_BIN/ps_server" --workers 1 --mode async --record "$D/p"
planted p --staleness-out "$PSR_BIN/ps_server" --workers 1 --mode async --staleness-out "$D/p"
planted p.server --weights-out "$PSR_BIN/ps_server" --workers 1 --weights-out "$D/p"
for flag in --csv --loss-time-out; do
    planted p $flag "$PSR_BIN/ps_worker" --server 127.0.0.1:1 $flag "$D/p"
done
for flag in --trace --weights-out; do
    planted p.0 $flag "$PSR_BIN/ps_worker" --server 127.0.0.1:1 $flag "$D/p"
done
for flag in --port-file --loss-out --csv --loss-time-out; do
    planted p $flag $RING $flag "$D/p"
done
for flag in --trace --weights-out; do
    planted p.0 $flag $RING $flag "$D/p"
done
for flag in --loss-out --csv --loss-time-out; do
    planted p $flag "$PSR_BIN/reference" $flag "$D/p"
done
planted p.0 --weights-out "$PSR_BIN/reference" --weights-out "$D/p"
if [ -n "$SIM" ]; then
    for flag in --host-bytes --csv-out --platform-out --csv --loss-time-out; do
        planted p $flag $SIM $flag "$D/p"
    done
    planted p.1 --weights-out $SIM --weights-out "$D/p"     # rank 1's file too
fi
"$PSR_BIN/ring_worker" --world 1 --rank 0 --coordinator 127.0.0.1:0 --workload synthetic \
    --params 1K --steps 1 --csv "$T_TMP/rec" 2>/dev/null || t_fail "the record for psr_merge: not written"
planted p --out "$PSR_BIN/psr_merge" --out "$D/p" "$T_TMP/rec"
t_end

t_case hostile-files-1.2 "a symlink within its own folder is followed: the file it names is replaced (or appended to), keeps its mode, the link stays"
rm -f "$D"/*
printf 'old\n' >"$D/real.0"
chmod 640 "$D/real.0"
ln -s real.0 "$D/w.0"
job 60 $RING --weights-out "$D/w"
expect_rc 0
[ -L "$D/w.0" ] || t_fail "the in-folder link was replaced"
[ "$(wc -l <"$D/real.0")" = 1024 ] || t_fail "the file behind the link holds $(wc -l <"$D/real.0") lines, want 1024"
[ "$(stat -c %a "$D/real.0")" = 640 ] || t_fail "the replaced file's mode is $(stat -c %a "$D/real.0"), want 640"
job 20 "$PSR_BIN/psr_merge" --out "$D/rows.csv" "$T_TMP/rec"
expect_rc 0
chmod 600 "$D/rows.csv"
ln -s "$D/./rows.csv" "$D/csv"
job 20 "$PSR_BIN/psr_merge" --out "$D/csv" "$T_TMP/rec"
expect_rc 0
[ "$(wc -l <"$D/rows.csv")" = 3 ] || t_fail "psr_merge --out: $(wc -l <"$D/rows.csv") lines, want the header and two rows"
[ -L "$D/csv" ] || t_fail "psr_merge --out: the in-folder link was replaced"
[ "$(stat -c %a "$D/rows.csv")" = 600 ] || t_fail "psr_merge --out: mode $(stat -c %a "$D/rows.csv"), want 600"
victim_intact "in-folder links"
t_end

t_case hostile-files-1.3 "a replaced regular file keeps its mode (0600): --loss-out, --csv, --weights-out"
rm -f "$D"/*
for f in loss csv w.0; do printf 'old\n' >"$D/$f"; chmod 600 "$D/$f"; done
job 60 $RING --loss-out "$D/loss" --csv "$D/csv" --weights-out "$D/w"
expect_rc 0
for f in loss csv w.0; do
    [ "$(head -n 1 "$D/$f")" != old ] || t_fail "$f: not replaced"
    [ "$(stat -c %a "$D/$f")" = 600 ] || t_fail "$f: mode $(stat -c %a "$D/$f"), want 600"
done
t_end

# hostile_in FLAG CMD...: CMD must exit 64 at once (a 10 s watchdog: a wait
# on a FIFO is a kill, 137) with one line naming FLAG.
hostile_in() {
    _flag=$1; shift
    job 10 "$@"
    expect_rc 64
    one_line "$_flag $*"
    grep -q -e "$_flag: cannot read .*: it is a \(FIFO\|device\|folder\)" "$T_TMP/err" ||
        t_fail "$_flag: the kind is not named: $(head -c 300 "$T_TMP/err")"
}

mkfifo -m 600 "$T_TMP/fifo"
mkdir -m 700 "$T_TMP/dir"
t_case hostile-files-2.1 "every input flag: a FIFO (mode 0600, no writer), a device, a folder: exit 64 at once, one line naming the kind"
for v in "$T_TMP/fifo" /dev/null "$T_TMP/dir"; do
    hostile_in --secret-file "$PSR_BIN/ps_server" --workers 1 --secret-file "$v"
    hostile_in --secret-file "$PSR_BIN/ps_worker" --server 127.0.0.1:1 --secret-file "$v"
    hostile_in --secret-file $RING --secret-file "$v"
    hostile_in --secret-file "$PSR_BIN/reference" --secret-file "$v"
    hostile_in --resume "$PSR_BIN/ps_server" --workers 1 --resume "$v"
    hostile_in --replay "$PSR_BIN/reference" --replay "$v"
    hostile_in record "$PSR_BIN/psr_merge" "$v"
    [ -x "$PSR_BIN/fit" ] && hostile_in SIZE_SWEEP.CSV "$PSR_BIN/fit" "$v"
    if [ -n "$SIM" ]; then
        hostile_in --platform $SIM --platform "file:$v"
        hostile_in --secret-file $SIM --secret-file "$v"
    fi
done
t_end

t_case hostile-files-2.2 "a FIFO behind a symlink, as --secret-file and --resume: refused the same, not waited on"
ln -s "$T_TMP/fifo" "$T_TMP/fifo-link"
hostile_in --secret-file $RING --secret-file "$T_TMP/fifo-link"
hostile_in --resume "$PSR_BIN/ps_server" --workers 1 --resume "$T_TMP/fifo-link"
t_end
t_exit
