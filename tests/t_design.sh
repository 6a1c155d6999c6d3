# t_design.sh -- docs/design.md kept true by the tree: the layer table
# (its "Layers" section) against the folders and every #include, and the
# command-line table (its "Command-line contract" section) against each
# program's --help, and the size limits (its "Size exceptions"): no C file
# over 700 lines, at most three functions over 120, each listed with its
# reason. Reads files and runs --help only; no jobs.
. "$PSR_TESTS/lib.sh"
root=$(cd "$PSR_TESTS/.." && pwd)
design=$root/docs/design.md

# The layer table: "FOLDER<TAB>MAY INCLUDE<TAB>FILES", backquotes dropped.
awk -F'|' '/^## Layers/ { on = 1; next } /^## / { on = 0 }
    on && /^\| `/ {
        for (i = 2; i <= 5; i++) { gsub(/`/, "", $i); gsub(/^ +| +$/, "", $i) }
        print $2 "\t" $4 "\t" $5 }' "$design" >"$T_TMP/layers"

# Every C, CUDA and header source file outside tests/ that git tracks (or,
# without git, that find lists).
if git -C "$root" rev-parse >/dev/null 2>&1; then
    (cd "$root" && git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cu') |
        grep -v '^tests/' >"$T_TMP/src"
else
    (cd "$root" && find common gpu ps_server ps_worker ring_worker sim experiments \
        -name '*.[ch]' -o -name '*.cu' | sed 's|^\./||') >"$T_TMP/src"
fi

t_case design-1.1 "docs/design.md's layer table names every source file's folder, and every file"
[ -s "$T_TMP/layers" ] || t_fail "no layer table under '## Layers' in docs/design.md"
while read -r f; do
    d=${f%/*} stem=${f##*/}; stem=${stem%.*}
    row=$(awk -F'\t' -v d="$d" '$1 == d' "$T_TMP/layers")
    if [ -z "$row" ]; then t_fail "$f: its folder $d is not in the layer table"
    else
        case " $(printf '%s' "$row" | cut -f3) " in
            *" $stem "*) ;;
            *) t_fail "$f: '$stem' is not in the files of $d's row" ;;
        esac
    fi
done <"$T_TMP/src"
t_end

# The include graph between folders: "FILE_FOLDER TARGET_FOLDER INCLUDE".
# "layer/x.h" is common/layer; a bare name is the file's own folder, except
# gpu/'s headers (found with -Igpu) and tests/' own.
while read -r f; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$f" |
    while read -r inc; do
        d=${f%/*}
        case $inc in
            */*) t=common/${inc%%/*} ;;
            gpu.h|gpu_internal.h|step_gpu.h) t=gpu ;;
            *) t=$d ;;
        esac
        [ "$t" = "$d" ] || echo "$d $t $f:$inc"
    done
done <"$T_TMP/src" >"$T_TMP/edges"

t_case design-1.2 "every #include across folders is an edge the layer table allows"
[ -s "$T_TMP/edges" ] || t_fail "no include between folders found: the scan is broken"
while read -r d t where; do
    allowed=$(awk -F'\t' -v d="$d" '$1 == d { print $2 }' "$T_TMP/layers")
    case " $allowed " in
        *" $t "*) ;;
        *) t_fail "$where: $d may not include $t (docs/design.md allows: ${allowed:--})" ;;
    esac
done <"$T_TMP/edges"
t_end

t_case design-1.3 "the layer table's folders exist and 'may include' names only its folders"
while IFS="$(printf '\t')" read -r d allowed files; do
    [ -d "$root/$d" ] || t_fail "$d: in the layer table, not in the tree"
    for a in $allowed; do
        [ "$a" = - ] && continue
        awk -F'\t' -v a="$a" '$1 == a { ok = 1 } END { exit !ok }' "$T_TMP/layers" ||
            t_fail "$d may include $a, which is not a row of the table"
    done
done <"$T_TMP/layers"
t_end

# The command-line table: each program's row, the common flags' paragraph
# where the row says "yes", and the section's opening (--help, --version,
# --name VALUE) must name every flag its --help prints.
awk '/^## Command-line contract/ { on = 1; next } /^## / { on = 0 } on' "$design" >"$T_TMP/cli"
awk '/^\| binary/ { exit } { print }' "$T_TMP/cli" >"$T_TMP/cli.intro"
awk '/^\*\*The common flags\*\*/ { on = 1 } on && /^$/ { exit } on' "$T_TMP/cli" >"$T_TMP/cli.common"

t_case design-1.4 "every flag a program's --help prints is in docs/design.md's command-line table"
n=0
for b in "$PSR_BIN"/*; do
    [ -x "$b" ] && [ -f "$b" ] || continue
    name=${b##*/}
    "$b" --help >"$T_TMP/help" 2>&1 || { t_fail "$name --help exited non-zero"; continue; }
    n=$((n + 1))
    grep "^| \`bin/$name\` " "$T_TMP/cli" >"$T_TMP/row" ||
        { t_fail "bin/$name has no row in the command-line table"; continue; }
    cat "$T_TMP/row" "$T_TMP/cli.intro" >"$T_TMP/text"
    grep -q '| yes |$' "$T_TMP/row" && cat "$T_TMP/cli.common" >>"$T_TMP/text"
    for f in $(grep -o -- '--[a-z][a-z0-9-]*' "$T_TMP/help" | sort -u); do
        grep -q -- "$f\([^a-z0-9-]\|\$\)" "$T_TMP/text" ||
            t_fail "bin/$name: $f (from its --help) is not in its row or the common flags"
    done
done
[ "$n" -gt 0 ] || t_fail "no program in $PSR_BIN"
t_end
# The size limits, measured as design.md's "Size exceptions" says: the C
# sources outside tests/.
grep -E '\.(c|h|cu)$' "$T_TMP/src" | grep -v '^tests/' >"$T_TMP/csrc"

t_case design-1.5 "no C file outside tests/ is over 700 lines"
(cd "$root" && xargs wc -l <"$T_TMP/csrc") | awk '$2 != "total" && $1 > 700 { print $2 ": " $1 " lines" }' >"$T_TMP/big"
[ -s "$T_TMP/big" ] && t_fail "$(cat "$T_TMP/big")"
t_end

t_case design-1.6 "at most three functions over 120 lines, each in design.md's table with its reason"
(cd "$root" && xargs awk '
    /^[A-Za-z_].*\(/ { sig = $0; at = FNR }
    /^\{/ { start = at; match(sig, /[A-Za-z_][A-Za-z0-9_]*\(/)
            name = substr(sig, RSTART, RLENGTH - 1) }
    /^\}/ && start { if (FNR - start + 1 > 120) print name, FILENAME, FNR - start + 1; start = 0 }
    FNR == 1 { start = 0 }' <"$T_TMP/csrc") >"$T_TMP/long"
awk '/^## Size exceptions/ { on = 1 } on && /^\| [0-9]+ \| `/ {
        split($0, c, "|"); f = c[3]; gsub(/[` ]/, "", f); split(f, p, ","); print p[1], p[2] }' \
    "$design" >"$T_TMP/long.listed"
[ "$(wc -l <"$T_TMP/long")" -le 3 ] || t_fail "more than three functions over 120 lines: $(cat "$T_TMP/long" | tr '\n' ';')"
while read -r fn file n; do
    grep -qx "$fn $file" "$T_TMP/long.listed" ||
        t_fail "$file: $fn is $n lines and not in design.md's table of functions over 120 lines"
done <"$T_TMP/long"
t_end

# The server's protocol (common/ps/ but the worker's side, client.c,
# frames.c and client_io.c, its TCP transport, and the checkpoint file's codec and writer, checkpoint.c, whose
# before-rename test hook is the file writer's) reaches the machine only
# through struct server_io and its struct server_machine (server.h): its
# clock, CPU time, load, peak RSS and the test hook's SIGKILL are the
# transport's (ps_server/main.c; sim/ps_server.c in the simulation).
t_case design-1.7 "the server's protocol in common/ps/ reads no clock, load, rusage or environment and raises no signal itself"
for f in "$root"/common/ps/*.c; do
    case ${f##*/} in client.c|client_io.c|frames.c|checkpoint.c) continue ;; esac
    grep -nE '(^|[^a-z_])(clock_now|clock_cpu_seconds|clock_gettime|gettimeofday|time|hostload_sample_read|getrusage|raise|kill|getenv|uv_[a-z_]+)\(|#include *<(uv|signal|sys/resource|sys/time)\.h>' "$f" |
        sed "s|^|${f#"$root"/}:|" >>"$T_TMP/direct"
done
[ -s "$T_TMP/direct" ] && t_fail "not through srv->io: $(tr '\n' ';' <"$T_TMP/direct")"
t_end
t_exit
