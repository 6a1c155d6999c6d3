# lab_points.awk -- the lab's repeats folded into one row per point.
#
#   awk -F, -f experiments/lab_points.awk RUNS.CSV > POINTS.CSV
#
# RUNS.CSV is the shared CSV (docs/design.md) with one row per run: the
# lab runs every point (one system, algorithm, K, n, link and, where the
# CSV has them, servers and placement) several
# times, and each run's time_s is already the median over its steps. Out
# comes one row per point, in the order the points first appear, with
#   time_s       the MEDIAN over the runs of their time_s (the mean of the
#                middle two for an even count);
#   time_min_s,  the fastest and slowest single step over all the runs;
#   time_max_s
#   algbw, busbw rescaled to the median time;
#   every other column from the run whose time_s is nearest the median
#                (the earlier one on a tie): its byte counters, its model_s,
#                its host_bound and, where the CSV has it, its bound_by;
# and four columns appended at the end (after whatever the runs carried):
#   runs         how many runs the point had;
#   run_min_s,   the fastest and slowest run's time_s;
#   run_max_s
#   spread       the repeat rule's measure: (max - min) / median over the
#                runs, where with 4 or more runs the one run farthest from
#                the median is left out first (one outlier is forgiven;
#                experiments/lab.sh repeats a point until spread <= 5%).
# Lines starting with '#' are dropped; columns are found by name.

function key(   k) { return $c["system"] "," $c["algo"] "," $c["transport"] "," $c["K"] "," $c["bytes"] "," \
                            $c["link_bw"] "," $c["link_latency"] \
                            ("servers" in c ? "," $c["servers"] "," $c["placement"] : "") }

function sort_num(a, n,   i, j, t) {       # insertion sort, a[1..n]
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}

function abs(x) { return x < 0 ? -x : x }

BEGIN { FS = OFS = "," }
/^#/ { next }
NR == 1 || hdr == "" { hdr = $0; for (i = 1; i <= NF; i++) c[$i] = i; next }
$0 == hdr { next }                           # a header repeated by a concatenation
{
    k = key()
    if (!(k in nrun)) order[++npoints] = k
    m = ++nrun[k]
    row[k, m] = $0; t[k, m] = $c["time_s"] + 0
    if (!((k, "lo") in ext) || $c["time_min_s"] + 0 < ext[k, "lo"]) ext[k, "lo"] = $c["time_min_s"] + 0
    if (!((k, "hi") in ext) || $c["time_max_s"] + 0 > ext[k, "hi"]) ext[k, "hi"] = $c["time_max_s"] + 0
}
END {
    print hdr, "runs", "run_min_s", "run_max_s", "spread"
    for (p = 1; p <= npoints; p++) {
        k = order[p]; m = nrun[k]
        split("", v); for (i = 1; i <= m; i++) v[i] = t[k, i]
        sort_num(v, m)
        med = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
        lo = 1; hi = m                       # one outlier forgiven from 4 runs on
        if (m >= 4) { if (abs(v[1] - med) > abs(v[m] - med)) lo = 2; else hi = m - 1 }
        spread = med > 0 ? (v[hi] - v[lo]) / med : 0
        rep = 1
        for (i = 2; i <= m; i++) if (abs(t[k, i] - med) < abs(t[k, rep] - med)) rep = i
        n = split(row[k, rep], f, ",")
        scale = med > 0 ? f[c["time_s"]] / med : 1
        f[c["time_s"]] = sprintf("%.6g", med)
        f[c["time_min_s"]] = sprintf("%.6g", ext[k, "lo"])
        f[c["time_max_s"]] = sprintf("%.6g", ext[k, "hi"])
        if (f[c["algbw"]] != "") f[c["algbw"]] = sprintf("%.6g", f[c["algbw"]] * scale)
        if (f[c["busbw"]] != "") f[c["busbw"]] = sprintf("%.6g", f[c["busbw"]] * scale)
        line = f[1]; for (i = 2; i <= n; i++) line = line OFS f[i]
        print line, m, sprintf("%.6g", v[1]), sprintf("%.6g", v[m]), sprintf("%.4f", spread)
    }
}
