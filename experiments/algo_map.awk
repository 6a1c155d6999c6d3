# algo_map.awk -- the map of which algorithm wins where (issue 29): for
# each cell (K, n), the candidate with the least time_s, the runner-up and
# the margin (runner-up / winner - 1).
#
#   awk -F, -v source=measured [-v names="ps ps-S ..."] -f algo_map.awk ROWS.csv ... > map.csv
#       ROWS: CSVs of the shared schema (docs/design.md; a header line
#       each, columns found by name: system, algo, K, bytes, time_s,
#       servers, placement). A row's candidate: its algo for the ring
#       system (ring, rd, rabenseifner, tree, dbtree, ...), and for the
#       parameter server `ps` (one server), `ps-S` (S > 1 separate
#       servers) or `ps-coloc` (a shard on every worker's host). The
#       least time of a candidate in a cell counts (the lab's CSV has one
#       row, the median run, per point). Out, one row per cell, K then n
#       ascending:
#         source,K,bytes,winner,winner_s,runner_up,runner_up_s,margin,xi,yi,wi,candidates
#       xi, yi: the cell's column (n's rank) and row (K's rank) from 0; wi:
#       the winner's place in `names` from 1 (0: not there), so a plot
#       colours each candidate the same in every map; candidates: how many
#       ran in the cell. A cell with one candidate has no runner-up
#       (runner_up "none", margin empty).
#   awk -F, -v mode=md -f algo_map.awk MAP.csv ...
#       the maps (this script's output, one source or several) as one
#       markdown table: a row per K, a column per n, each cell "winner
#       +margin%" per source, sources in the order they first appear.
function cand(   s, p) {
    if ($c["system"] != "ps")
        return $c["algo"]
    p = ("placement" in c) ? $c["placement"] : ""
    if (p ~ /^colocated/)
        return "ps-coloc"
    return (("servers" in c) && $c["servers"] > 1) ? "ps-S" : "ps"
}
function size_name(b) {
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) "M"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) "K"
    return b
}
FNR == 1 { split("", c); for (i = 1; i <= NF; i++) c[$i] = i; next }
/^#/ || NF < 2 { next }
mode == "md" {
    if (!($c["source"] in seen_src)) { seen_src[$c["source"]] = 1; srcs[++nsrc] = $c["source"] }
    k = $c["K"] + 0; b = $c["bytes"] + 0
    ks[k] = 1; bs[b] = 1
    cell[$c["source"], k, b] = $c["winner"] ($c["margin"] != "" ? sprintf(" +%.0f%%", 100 * $c["margin"]) : "")
    next
}
{
    t = $c["time_s"]
    if (t == "" || t + 0 <= 0) next
    k = $c["K"] + 0; b = $c["bytes"] + 0; a = cand()
    if (a == "") next
    if (!((k, b, a) in best) || t + 0 < best[k, b, a]) {
        if (!((k, b, a) in best)) { ncand[k, b]++; list[k, b] = list[k, b] SUBSEP a }
        best[k, b, a] = t + 0
    }
    ks[k] = 1; bs[b] = 1
}
# sorted KEYS of arr into out[1..n]; returns n (numbers, ascending).
function sorted(arr, out,   n, x, i, j, v) {
    n = 0
    for (x in arr) out[++n] = x + 0
    for (i = 2; i <= n; i++) { v = out[i]; for (j = i - 1; j >= 1 && out[j] > v; j--) out[j + 1] = out[j]; out[j + 1] = v }
    return n
}
END {
    nk = sorted(ks, K); nb = sorted(bs, B)
    if (mode == "md") {
        printf "| K \\ n |"
        for (j = 1; j <= nb; j++) printf " %s |", size_name(B[j])
        printf "\n|---|"
        for (j = 1; j <= nb; j++) printf "---|"
        printf "\n"
        for (i = 1; i <= nk; i++) {
            printf "| %d |", K[i]
            for (j = 1; j <= nb; j++) {
                s = ""
                for (q = 1; q <= nsrc; q++) {
                    v = ((srcs[q], K[i], B[j]) in cell) ? cell[srcs[q], K[i], B[j]] : "-"
                    s = s (q > 1 ? " / " : "") (nsrc > 1 ? srcs[q] ": " : "") v
                }
                printf " %s |", s
            }
            printf "\n"
        }
        exit 0
    }
    nn = split(names, nm, " ")
    print "source,K,bytes,winner,winner_s,runner_up,runner_up_s,margin,xi,yi,wi,candidates"
    for (i = 1; i <= nk; i++) for (j = 1; j <= nb; j++) {
        k = K[i]; b = B[j]
        if (!((k, b) in ncand)) continue
        w = ""; r = ""
        m = split(substr(list[k, b], 2), cs, SUBSEP)
        for (q = 1; q <= m; q++) {
            a = cs[q]; t = best[k, b, a]
            if (w == "" || t < best[k, b, w]) { r = w; w = a }
            else if (r == "" || t < best[k, b, r]) r = a
        }
        wi = 0
        for (q = 1; q <= nn; q++) if (nm[q] == w) wi = q
        printf "%s,%d,%d,%s,%.6g,%s,%s,%s,%d,%d,%d,%d\n", source, k, b, w, best[k, b, w],
               r == "" ? "none" : r, r == "" ? "" : sprintf("%.6g", best[k, b, r]),
               r == "" ? "" : sprintf("%.4f", best[k, b, r] / best[k, b, w] - 1), j - 1, i - 1, wi, m
    }
}
