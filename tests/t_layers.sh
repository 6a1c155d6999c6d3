# t_layers.sh -- the source tree keeps docs/design.md's Layers and Size
# exceptions, read from the sources alone (nothing is built or run):
#   - an #include in common/ and gpu/ points down the layer order
#     base < measure < wire < train < gpu < coll, ps (coll and ps side by
#     side: neither includes the other); a header named without a folder
#     is its own folder's, or gpu/'s (-Igpu);
#   - no library (common/, gpu/) includes a program's folder, and no
#     program includes another program's folder;
#   - no C file outside tests/ is over 700 lines unless design.md's table
#     "Files over 700 lines" lists it.
. "$PSR_TESTS/lib.sh"
root="$PSR_TESTS/.."

t_case layers-1.1 "common/ and gpu/: every #include points down base < measure < wire < train < gpu < coll, ps"
why=$(cd "$root" && awk '
    BEGIN { r["base"] = 0; r["measure"] = 1; r["wire"] = 2; r["train"] = 3; r["gpu"] = 4
            r["coll"] = 5; r["ps"] = 5 }
    function rank(l) { return (l in r) ? r[l] : -1 }
    FNR == 1 { n = split(FILENAME, p, "/"); me = p[1] == "gpu" ? "gpu" : p[2] }
    /^#include "/ {
        h = $2; gsub(/"/, "", h)
        if (index(h, "/")) { split(h, q, "/"); to = q[1] }
        else if (system("test -e " (me == "gpu" ? "gpu" : "common/" me) "/" h) == 0) to = me
        else if (system("test -e gpu/" h) == 0) to = "gpu"
        else next
        if (rank(to) < 0) next
        if (rank(to) > rank(me) || (rank(to) == 5 && to != me))
            printf "%s:%d: %s (%s) includes %s (%s)\n", FILENAME, FNR, me, rank(me), h, to
    }' common/*/*.[ch] gpu/*.[ch] gpu/*.cu 2>&1)
[ -z "$why" ] || t_fail "$(echo "$why" | head -20)"
t_end

t_case layers-1.2 "no library includes a program's folder; no program includes another's"
progs="ps_server ps_worker ring_worker sim"
why=$(cd "$root" && for f in common/*/*.[ch] gpu/*.[ch] gpu/*.cu experiments/*.c; do
          grep -Hn -E "^#include \"(\.\./|($(echo $progs | tr ' ' '|'))/)" "$f"
      done
      for p in $progs; do
          for f in "$p"/*.[ch]; do
              grep -Hn -E "^#include \"(\.\./|($(echo $progs | tr ' ' '\n' | grep -v "^$p\$" |
                                                 tr '\n' '|' | sed 's/|$//'))/)" "$f"
          done
      done)
[ -z "$why" ] || t_fail "$(echo "$why" | head -20)"
t_end

t_case layers-1.3 "no C file outside tests/ over 700 lines but those design.md's Size exceptions list"
listed=$(awk '/^Files over 700 lines/ { on = 1; next } on && /^Functions over/ { exit }
              on && /^\| [0-9]+ \| `/ { f = $4; gsub(/`/, "", f); print f }' "$root/docs/design.md")
[ -n "$listed" ] || t_fail "design.md: no table 'Files over 700 lines' found"
why=$(cd "$root" && wc -l common/*/*.[ch] ps_server/*.[ch] ps_worker/*.[ch] ring_worker/*.[ch] \
          sim/*.[ch] gpu/*.[ch] gpu/*.cu experiments/*.c experiments/peers/*.c 2>/dev/null |
      LISTED=$listed awk 'BEGIN { n = split(ENVIRON["LISTED"], l, "\n")
                                  for (i = 1; i <= n; i++) ok[l[i]] = 1 }
          $2 != "total" && $1 > 700 && !($2 in ok) { print $2 ": " $1 " lines, not in the table" }' 2>&1)
[ -z "$why" ] || t_fail "$why"
t_end
t_exit
