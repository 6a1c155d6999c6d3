# t_cli_contract.sh -- every program in bin/ keeps docs/design.md's promises:
# --help on stdout with status 0, --version, and a bad flag answered with
# exactly one line on stderr and status 64.
. "$PSR_TESTS/lib.sh"

n=0
for b in "$PSR_BIN"/*; do
    [ -x "$b" ] || continue
    name=$(basename "$b"); n=$((n + 1))
    t_case "cli-contract-$name" "$name: --help, --version, bad flag"
    job 10 "$b" --help
    expect_rc 0
    [ -s "$T_TMP/out" ] || t_fail "--help printed nothing on stdout"
    expect_grep out '[Uu]sage'
    job 10 "$b" --version
    expect_rc 0
    expect_grep out '[0-9]\.[0-9]'
    job 10 "$b" --no-such-flag
    expect_rc 64
    lines=$(wc -l <"$T_TMP/err")
    [ "$lines" = 1 ] || t_fail "bad flag: $lines lines on stderr, want 1"
    expect_grep err 'no-such-flag'
    # THE USAGE LINE (common/base/cli.h): PROG: --flag VALUE: why; see PROG --help
    expect_grep err "^$name: --no-such-flag: unknown option; see $name --help\$"
    t_end
done
# The scripts of experiments/ that take --help (lib.sh's help_or_version,
# directly or through bench_lib.sh):
# the usage on stdout, status 0.
t_case cli-contract-scripts "experiments/*.sh: --help prints a usage on stdout, status 0"
for f in "$PSR_TESTS"/../experiments/*.sh; do
    case $f in */lib.sh|*/bench_lib.sh) continue ;; esac
    grep -q 'help_or_version\|bench_lib\.sh' "$f" || continue
    job 10 bash "$f" --help
    expect_rc 0
    grep -q '[Uu]sage' "$T_TMP/out" || t_fail "$(basename "$f") --help: no usage on stdout"
done
t_end
[ $n -gt 0 ] || { t_case cli-contract-0 "there are programs to check"; t_fail "no programs in $PSR_BIN"; t_end; }
t_exit
