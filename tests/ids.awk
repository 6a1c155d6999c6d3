# tests/ids.awk -- the test ids written in the test sources, and every id
# that two of them share (t_ids.sh runs it; so can you:
#     awk -f tests/ids.awk tests/*.c tests/t_*.sh
# prints nothing and exits 0 when every id is unique; with -v list=1 it
# also lists every id it found, where).
#
# An id is what a case prints after "ok   " or "FAIL " ("proto-1.4"); it
# must name one case in the whole suite. Where ids are written:
#   C (tests/*.c): as string literals, "name-1.2" or "name-1.x": in
#     T_CASE("id", ...), t_skip("id", ...), in the tables of bad cases that
#     a loop hands to T_CASE(bc->id, ...), and as the first argument of a
#     helper that calls T_CASE(id, ...) (happy("ps-worker-1.1", ...)). Every such
#     literal is taken for an id (none of the tests has another string of
#     that shape), comment lines excepted.
#   shell (tests/t_*.sh): the first word after t_case or t_skip, or after
#     the tests/lib.sh helpers that print one (t_need: a skip; t_gpu_usable:
#     a case), quoted or not; a $variable in it ("cli-contract-$name")
#     stands for any text, so the id is a pattern that no other file's id
#     may match.
# The rules:
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

# A shell id with $var or ${var} in it becomes a regular expression.
function pattern(id,    re) {
    re = id
    gsub(/\./, "[.]", re)
    gsub(/\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*/, ".*", re)
    return "^" re "$"
}

FNR == 1 { c = (FILENAME ~ /\.c$/) }

c && /^[ \t]*(\/\*|\*|\/\/)/ { next }

c {
    line = $0
    kind = (line ~ /t_skip\(/) ? "skip" : "case"
    while (match(line, /"[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*-[0-9]+(\.[0-9x]+)*"/)) {
        add(substr(line, RSTART + 1, RLENGTH - 2), kind, FILENAME ":" FNR)
        line = substr(line, RSTART + RLENGTH)
    }
    next
}

/^[ \t]*#/ { next }

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
    exit ndup > 0
}
