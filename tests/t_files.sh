# t_files.sh -- output files (common/base/outfile.h): every output path is tried
# at start; a FIFO, a device or a folder is never replaced; a full disk says
# "No space left on device" and leaves the old file whole; the bounds of
# the command line (common/base/cli.c, THE BOUNDS) through the real binaries.
# Cases that need mknod or mount skip with one line where they are refused.
. "$PSR_TESTS/lib.sh"
t_need files-0 "output files" ps_server ring_worker

D="$T_TMP/d"
mkdir -p "$D"
RING="$PSR_BIN/ring_worker --world 1 --rank 0 --coordinator 127.0.0.1:0 --workload synthetic"
mounts=""
cleanup() { for m in $mounts; do umount "$m" 2>/dev/null; done; rm -rf "$T_TMP"; }
trap cleanup EXIT

# one_line: the last job wrote exactly one line on stderr.
one_line() {
    [ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "want one line on stderr: $(cat "$T_TMP/err")"
}

t_case files-1.1 "--port-file on a FIFO: refused at start in one line (ps_server, ring_worker); the FIFO is still there"
mkfifo "$D/fifo"
job 20 "$PSR_BIN/ps_server" --workers 1 --port-file "$D/fifo"
expect_rc 64; one_line; expect_grep err 'port-file: cannot write .*FIFO'
job 20 $RING --port-file "$D/fifo"
expect_rc 64; one_line; expect_grep err 'port-file: cannot write .*FIFO'
[ -p "$D/fifo" ] || t_fail "the FIFO was replaced: $(ls -l "$D/fifo")"
t_end

if mknod "$D/null" c 1 3 2>/dev/null; then
    t_case files-1.2 "--port-file on a device node: refused at start in one line; the device is unchanged"
    before=$(ls -l "$D/null")
    job 20 "$PSR_BIN/ps_server" --workers 1 --port-file "$D/null"
    expect_rc 64; one_line; expect_grep err 'cannot write .*device'
    job 20 $RING --port-file "$D/null"
    expect_rc 64; one_line; expect_grep err 'cannot write .*device'
    job 20 $RING --weights-out "$D/null" --steps 2
    [ -c "$D/null" ] && [ "$(ls -l "$D/null")" = "$before" ] ||
        t_fail "the device changed: $before -> $(ls -l "$D/null")"
    t_end
else
    t_skip files-1.2 "--port-file on a device node" "mknod refused here"
fi

mkdir -p "$D/rw" "$D/ro"
if mount --bind "$D/rw" "$D/ro" 2>/dev/null; then
    mounts="$D/ro $mounts"
    if mount -o remount,bind,ro "$D/ro" 2>/dev/null; then
        t_case files-1.3 "an output folder on a read-only mount: exit at start in one line naming the path and the errno text, before any training"
        for flag in --weights-out --csv --trace --loss-out; do
            job 20 $RING $flag "$D/ro/out" --steps 2
            expect_rc 64; one_line
            expect_grep err "$flag: cannot write $D/ro/out.*Read-only file system"
            grep -q 'step' "$T_TMP/err" && t_fail "$flag: training started"
        done
        for flag in --loss-out --port-file --csv; do
            job 20 "$PSR_BIN/ps_server" --workers 1 $flag "$D/ro/out"
            expect_rc 64; one_line
            expect_grep err "$flag: cannot write $D/ro/out.*Read-only file system"
        done
        t_end
    else
        t_skip files-1.3 "read-only output folder" "remount read-only refused here"
    fi
else
    t_skip files-1.3 "read-only output folder" "mount --bind refused here"
fi

mkdir -p "$D/small"
if mount -t tmpfs -o size=64k tmpfs "$D/small" 2>/dev/null; then
    mounts="$D/small $mounts"
    t_case files-1.4 "ENOSPC: --weights-out on a full tmpfs says 'No space left on device'; the old file is intact, no temp file is left"
    job 60 $RING --params 1K --steps 2 --weights-out "$D/small/w"
    expect_rc 0
    sum0=$(cksum <"$D/small/w.0")
    job 60 $RING --params 64K --steps 2 --weights-out "$D/small/w"
    [ "$rc" != 0 ] || t_fail "a write that did not fit exited 0"
    expect_grep err 'weights-out: cannot write .*No space left on device'
    [ "$(cksum <"$D/small/w.0")" = "$sum0" ] || t_fail "the old weights file changed"
    [ "$(ls -A "$D/small" | wc -l)" = 1 ] || t_fail "files left behind: $(ls -A "$D/small")"
    t_end
else
    t_skip files-1.4 "ENOSPC" "mount -t tmpfs refused here"
fi

t_case files-1.5 "a second run replaces the weights file whole (atomic rename); a second run that fails before writing leaves the first byte for byte"
job 60 $RING --params 1K --steps 2 --weights-out "$D/w"
expect_rc 0
sum0=$(cksum <"$D/w.0")
job 60 $RING --params 1K --steps 3 --weights-out "$D/w"
expect_rc 0
[ "$(wc -l <"$D/w.0")" = 1024 ] || t_fail "the new file has $(wc -l <"$D/w.0") lines, want 1024"
[ "$(cksum <"$D/w.0")" != "$sum0" ] || t_fail "the second run did not replace the file"
sum1=$(cksum <"$D/w.0")
job 60 $RING --params 1K --steps 3 --weights-out "$D/w" --lr nan
expect_rc 64
[ "$(cksum <"$D/w.0")" = "$sum1" ] || t_fail "a refused run touched the weights file"
[ "$(ls -A "$D" | grep -c tmp)" = 0 ] || t_fail "temp files left: $(ls -A "$D")"
t_end

t_case files-1.6 "THE BOUNDS through every training binary: each bad value exits 64 with one line"
for b in ps_server ps_worker ring_worker; do
    for arg in "--timeout 1e19" "--timeout 1e-320" "--link-bw auto" "--link-bw 100" \
               "--link-latency 11" "--steps 1000000001" "--backward-time 3601" "--micro 65537"; do
        job 20 "$PSR_BIN/$b" --workers 1 $arg
        [ "$b" = ps_server ] || job 20 "$PSR_BIN/$b" $arg
        expect_rc 64; one_line
    done
done
t_end
t_exit
