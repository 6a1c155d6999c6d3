# json_check.awk -- that a JSON Lines file says what its CSV (or record)
# says, field by field (docs/design.md, JSON LINES).
#
#   awk -f tests/json_check.awk FILE.csv FILE.json
#   awk -v record=1 -f tests/json_check.awk RECORD FILE.json
#
# The JSON must open with a {"record":"manifest",...} line. CSV: its k-th
# row is the k-th {"record":"row"} line, with the header's names in order
# (after "record"); an empty field is null, a field in JSON's number
# grammar the number with the same text, anything else a string whose
# unescaped text is the field (RFC 4180 quotes undone). record=1: a
# program's record (common/measure/metrics.h, RECORD FILE): the "process"
# line holds each KEY VALUE line (machine0/1: KEY_total, KEY_busy,
# KEY_running; psring-record as psring_record), and each step line is the
# next "step" line; "-" is null. Says the first difference and exits 1;
# prints "ok N" (rows compared) and exits 0 otherwise.

function fail(msg) {
    print "json_check: " msg > "/dev/stderr"
    bad = 1
    exit 1
}

function isnum(s) {
    return s ~ /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/
}

# split_csv: line into f[1..n], quotes undone; n.
function split_csv(line, f,    n, i, c, v, q) {
    sub(/\r$/, "", line)
    n = 0; v = ""; q = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (q) {
            if (c == "\"" && substr(line, i + 1, 1) == "\"") { v = v "\""; i++ }
            else if (c == "\"") q = 0
            else v = v c
        } else if (c == "\"") q = 1
        else if (c == ",") { f[++n] = v; v = "" }
        else v = v c
    }
    f[++n] = v
    return n
}

# parse_json: one flat object into K[1..n] (names) and T[i] (type: s, n,
# null) and V[i] (the string unescaped, the number's text); n, or -1.
function parse_json(s, K, T, V,    n, i, c, str, tok, key, want) {
    n = 0; i = 1
    if (substr(s, 1, 1) != "{") return -1
    i = 2
    want = "key"
    while (i <= length(s)) {
        c = substr(s, i, 1)
        if (c == "\"") {
            str = ""
            for (i++; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (c == "\\") {
                    i++; c = substr(s, i, 1)
                    if (c == "u") { str = str sprintf("%c", hex(substr(s, i + 1, 4))); i += 4 }
                    else if (c == "n") str = str "\n"
                    else if (c == "t") str = str "\t"
                    else str = str c
                } else if (c == "\"") break
                else str = str c
            }
            i++
            if (want == "key") { key = str; if (substr(s, i, 1) != ":") return -1; i++; want = "val" }
            else { K[++n] = key; T[n] = "s"; V[n] = str; want = "sep" }
        } else if (want == "val") {
            tok = substr(s, i)
            match(tok, /^[^,}]*/)
            tok = substr(tok, 1, RLENGTH)
            i += RLENGTH
            K[++n] = key
            if (tok == "null") { T[n] = "null"; V[n] = "" }
            else if (isnum(tok)) { T[n] = "n"; V[n] = tok }
            else return -1
            want = "sep"
        } else if (want == "sep" && c == ",") { i++; want = "key" }
        else if (want == "sep" && c == "}") return (i == length(s)) ? n : -1
        else return -1
    }
    return -1
}

function hex(h,    i, v, d) {
    v = 0
    for (i = 1; i <= 4; i++) {
        d = index("0123456789abcdef", tolower(substr(h, i, 1))) - 1
        if (d < 0) return 63
        v = v * 16 + d
    }
    return v
}

# same: the JSON member j of this line against name and the field text
# (empty: null).
function same(where, j, name, field) {
    if (JK[j] != name) fail(where ": member " j " is \"" JK[j] "\", the CSV's column is \"" name "\"")
    if (field == "") {
        if (JT[j] != "null") fail(where ": " name ": empty in the CSV, " JT[j] " \"" JV[j] "\" in the JSON")
    } else if (isnum(field)) {
        if (JT[j] != "n" || JV[j] != field) fail(where ": " name ": number " field " in the CSV, " JT[j] " \"" JV[j] "\" in the JSON")
    } else if (JT[j] != "s" || JV[j] != field)
        fail(where ": " name ": string \"" field "\" in the CSV, " JT[j] " \"" JV[j] "\" in the JSON")
}

# next_json: the next JSON line of kind k into JK/JT/JV; its count.
function next_json(k, where,    line, n) {
    while ((getline line < jfile) > 0) {
        jl++
        split("", JK); split("", JT); split("", JV)
        n = parse_json(line, JK, JT, JV)
        if (n < 1 || JK[1] != "record") fail(jfile ":" jl ": not a flat object opening with \"record\"")
        if (jl == 1 && JV[1] != "manifest") fail(jfile ":1: not the manifest line")
        if (JV[1] == k) return n
    }
    fail(where ": no \"" k "\" line left in " jfile)
}

BEGIN { jfile = ARGV[2]; ARGV[2] = ""; jl = 0; rows = 0 }

!record && FNR == 1 { nh = split_csv($0, H); next }
!record && /^\r?$/ { next }
!record {
    n = split_csv($0, F)
    if (n != nh) fail(FILENAME ":" FNR ": " n " fields, header " nh)
    m = next_json("row", FILENAME ":" FNR)
    if (m != nh + 1) fail(FILENAME ":" FNR ": " m - 1 " JSON members, " nh " columns")
    for (c = 1; c <= nh; c++) same(FILENAME ":" FNR, c + 1, H[c], F[c])
    rows++
    next
}

record && $1 != "step" {
    if ($1 == "psring-record") { PN[++np] = "psring_record"; PV[np] = $2; next }
    if (NF == 4) {
        PN[++np] = $1 "_total"; PV[np] = $2; PN[++np] = $1 "_busy"; PV[np] = $3
        PN[++np] = $1 "_running"; PV[np] = $4 == "-" ? "" : $4
        next
    }
    PN[++np] = $1; PV[np] = $2 == "-" ? "" : $2
    next
}
record && $1 == "step" && !proc_done { check_process() }
record && $1 == "step" {
    split("step combine_s ingress_s egress_s bytes_in bytes_out step_s enter_t", SN, " ")
    m = next_json("step", FILENAME ":" FNR)
    if (m != 9) fail(FILENAME ":" FNR ": " m - 1 " step members, want 8")
    for (c = 1; c <= 8; c++) same(FILENAME ":" FNR, c + 1, SN[c], (c + 1 <= NF && $(c + 1) != "-") ? $(c + 1) : "")
    rows++
}

function check_process(    m, c) {
    proc_done = 1
    m = next_json("process", FILENAME " (the process line)")
    if (m != np + 1) fail(FILENAME ": " m - 1 " process members, " np " record values")
    for (c = 1; c <= np; c++) same(FILENAME " (the process line)", c + 1, PN[c], PV[c])
    rows++
}

END {
    if (bad) exit 1
    if (record && !proc_done) check_process()
    if (bad) exit 1
    if (jl == 0) next_json("manifest", jfile)
    while ((getline line < jfile) > 0)
        if (line ~ /"record":"(row|step|process)"/) fail(jfile ": more rows than the CSV")
    print "ok " rows
}
