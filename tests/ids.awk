# tests/ids.awk -- the test ids written in the test sources, every id that
# two of them share, and every id that does not begin with its file's name
# (t_ids.sh runs it; so can you:
#     awk -f tests/ids.awk tests/*.c tests/t_*.sh
# prints nothing and exits 0 when every id is unique and named after its
# file; with -v list=1 it also lists every id it found, where).
#
# An id is what a case prints after "ok   " or "FAIL " ("proto-1.4"); it
# must name one case in the whole suite, and it begins with the name of
# the file that prints it: the file name without test_, t_ or fuzz_ and
# without .c or .sh, each _ as -, then "-" and the rest (or nothing more:
# a skip of the whole file):
#     tests/test_ps_frames.c   ps-frames-1.1, ps-frames-watchdog
#     tests/t_ring_faults.sh   ring-faults-1.1, ring-faults (a skip)
#     tests/fuzz_proto.c       proto-fuzz-1 (a fuzz target adds -fuzz, so
#                              that it never meets test_proto.c's ids)
# test_X.c and t_X.sh share the name X, and so the numbers after it: the
# uniqueness check below keeps them apart. The rest is up to the file:
# usually MAJOR.MINOR, a group and a case in it. Where ids are written:
#   C (tests/*.c): as string literals, "name-1.2" or "name-1.x": in
#     T_CASE("id", ...), t_skip("id", ...), in the tables of bad cases that
#     a loop hands to T_CASE(bc->id, ...), and as the first argument of a
#     helper that calls T_CASE(id, ...) (happy("ps-worker-1.1", ...)).
#     Every such literal is taken for an id (none of the tests has another
#     string of that shape), comment lines excepted. A fuzz target's one
#     id is its fuzz_name and "-1" (tests/fuzzdrv.c prints it).
#   both: a line the file prints itself, "FAIL ps-ckpt-0 ..." or
#     "FAIL ps-worker-watchdog ..." in a string (taken as a skip: it may
#     repeat a case's id, as a watchdog's line names the case it stopped).
#   shell (tests/t_*.sh): the first word after t_case or t_skip, or after
#     the tests/lib.sh helpers that print one (t_need: a skip; t_gpu_usable:
#     a case), quoted or not; a $variable in it ("cli-contract-$name")
#     stands for any text, so the id is a pattern that no other file's id
#     may match.
# The rules:
#   - an id begins with its file's name and "-", or is that name;
#   - two files never share an id (a skip in one file and a case in another
#     is a collision too: both land in the same run);
#   - inside one file a case id is written once; a skip may repeat it (the
#     case skipped on one path, run on the other) and may repeat itself
#     (one group skipped on several paths).
# A loop that prints one literal id several times is not seen here: that
# is what tests/run.sh's check over the run's own output catches.

function add(id, kind, where,    k) {
    k = FILENAME SUBSEP id
    if (kind == "case") {
        if (k in casewhere)
            dup[++ndup] = id " written twice in " FILENAME ": " casewhere[k] " and " where
        else
            casewhere[k] = where
    }
    if (!(k in seen)) {
        seen[k] = where
        ids[++nids] = id
        idfile[nids] = FILENAME
        idwhere[nids] = where
    }
}

# The name a file's ids begin with ("" for a file that prints none).
function filename(f,    b) {
    b = f
    sub(/.*\//, "", b)
    if (b ~ /^test_.*\.c$/)       { sub(/^test_/, "", b); sub(/\.c$/, "", b) }
    else if (b ~ /^t_.*\.sh$/)    { sub(/^t_/, "", b); sub(/\.sh$/, "", b) }
    else if (b ~ /^fuzz_.*\.c$/)  { sub(/^fuzz_/, "", b); sub(/\.c$/, "", b); b = b "_fuzz" }
    else return ""
    gsub(/_/, "-", b)
    return b
}

# A shell id with $var or ${var} in it becomes a regular expression.
function pattern(id,    re) {
    re = id
    gsub(/\./, "[.]", re)
    gsub(/\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*/, ".*", re)
    return "^" re "$"
}

FNR == 1 { c = (FILENAME ~ /\.c$/) }

c && /^[ \t]*(\/\*|\*|\/\/)/ { next }
!c && /^[ \t]*#/ { next }

# A line the file prints itself: "FAIL ID ...", "ok   ID ...".
/"(ok   |FAIL |skip )[a-z]/ {
    line = $0
    while (match(line, /"(ok   |FAIL |skip )[a-z][a-z0-9-]*[a-z0-9](\.[0-9x]+)*[ "\\]/)) {
        id = substr(line, RSTART + 6, RLENGTH - 7)
        add(id, "skip", FILENAME ":" FNR)
        line = substr(line, RSTART + RLENGTH)
    }
}

c && /fuzz_name = "/ {
    id = $0
    sub(/.*fuzz_name = "/, "", id)
    sub(/".*/, "", id)
    add(id "-1", "case", FILENAME ":" FNR)
}

c {
    line = $0
    kind = (line ~ /t_skip\(/) ? "skip" : "case"
    while (match(line, /"[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*-[0-9]+(\.[0-9x]+)*"/)) {
        add(substr(line, RSTART + 1, RLENGTH - 2), kind, FILENAME ":" FNR)
        line = substr(line, RSTART + RLENGTH)
    }
    next
}

{
    line = $0
    while (match(line, /(^|[ \t;{(&|!])t_(case|skip|need|gpu_usable)[ \t]+/)) {
        kind = (substr(line, RSTART, RLENGTH) ~ /t_(case|gpu_usable)/) ? "case" : "skip"
        line = substr(line, RSTART + RLENGTH)
        id = line
        if (id ~ /^"/) { id = substr(id, 2); sub(/".*/, "", id) }
        else sub(/[ \t;].*/, "", id)
        if (id != "")
            add(id, kind, FILENAME ":" FNR)
    }
}

END {
    if (list)
        for (i = 1; i <= nids; i++)
            print ids[i] "\t" idwhere[i]
    for (i = 1; i <= nids; i++) {
        name = filename(idfile[i])
        if (name == "" || ids[i] == name || index(ids[i], name "-") == 1)
            continue
        print "id " ids[i] " (" idwhere[i] ") does not begin with its file's name: " \
            "the ids of " idfile[i] " begin with " name "- (or are " name ")"
        nbad++
    }
    for (i = 1; i <= ndup; i++)
        print "duplicate id: " dup[i]
    for (i = 1; i <= nids; i++)
        for (j = i + 1; j <= nids; j++) {
            if (idfile[i] == idfile[j])
                continue
            if (ids[i] == ids[j] || (index(ids[i], "$") && ids[j] ~ pattern(ids[i])) ||
                (index(ids[j], "$") && ids[i] ~ pattern(ids[j]))) {
                print "duplicate id: " ids[i] " (" idwhere[i] ") and " ids[j] " (" idwhere[j] ")"
                ndup++
            }
        }
    if (nids == 0) {
        print "no test ids found"
        exit 1
    }
    exit ndup + nbad > 0
}
