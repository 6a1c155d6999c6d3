# t_ids.sh -- every test id names one case in the whole suite and begins
# with its file's name (test_ps_frames.c: ps-frames-...): the ids written
# in tests/*.c and tests/t_*.sh, read by tests/ids.awk (which says how ids
# are found, and the rules). tests/run.sh checks the other half, the ids
# a run actually printed (a loop that prints one id twice); its failure
# lines use the id ids-2.
. "$PSR_TESTS/lib.sh"

t_case ids-1.1 "test ids in tests/*.c and tests/t_*.sh: each begins with its file's name, no id in two files, no case id twice in one"
if ! why=$(cd "$PSR_TESTS/.." && awk -f tests/ids.awk tests/*.c tests/t_*.sh 2>&1); then
    t_fail "$(echo "$why" | sed '2,$s/^/     /')"
fi
t_end
t_exit
