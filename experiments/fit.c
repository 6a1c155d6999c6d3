/* fit.c -- bin/fit: the size sweep's numbers, fitted and compared with the
 * model: what `make lab` keeps as fit.txt and plots/size.gp draws.
 *
 *     fit [--gnuplot] SIZE_SWEEP.CSV
 *
 * SIZE_SWEEP.CSV is the lab's size sweep (experiments/lab.sh): one row per
 * algorithm and size at one K, the shared columns found by name (system,
 * algo, K, bytes, time_s, link_bw, link_latency, model_s), '#' lines
 * skipped. The three algorithms are the parameter server (system ps), the
 * ring (system ring, algo ring) and recursive doubling (system ring, algo
 * rd). Out come, one line each (fit.txt):
 *
 *   model:      the link's a (link_latency) and 1/b (link_bw) and K, from
 *               the first row with an emulated link, and how the CSV's
 *               model_s compares with common/measure/model.c at that link
 *               (the same code: the ratio should be 1 to the CSV's digits);
 *   fit ALGO:   each algorithm's points fitted INSIDE ITS OWN MODEL FORMULA,
 *                   T(n) = La a + Lb n b,
 *               with the link's a (s) and b (s per byte) as the unknowns;
 *               La and Lb are the algorithm's latency and byte coefficients
 *               at the sweep's K, asked of the model (La = T(a = 1) -
 *               T(a = 0), Lb = T(n = 1, rate 1, a = 0)): PS 2 and 2K, ring
 *               2(K-1) and 2(K-1)/K, rd s and s. So all three estimate the
 *               one link, printed against the configured one. (A free
 *               a + n b line would give the whole operation's slope: for the
 *               PS at K = 4, 8 times the link's b.) Each point weighs by
 *               its own time (relative error), so the small, latency-bound
 *               sizes count as much as the large ones; flagged points too.
 *               The formula is linear in a and b, so the weighted least
 *               squares is solved exactly (the 2 x 2 normal equations), the
 *               optimum gnuplot's fit used to iterate to;
 *   crossover measured:  where the ring and rd cross: the last size at
 *               which ring/rd falls below 1, log-interpolated between the
 *               two sizes around it (noise at the small sizes may dip
 *               earlier; bench_rd.sh does the same);
 *   crossover model:     n* = (2(K-1) - s) a / ((s - 2(K-1)/K) b),
 *               model_crossover.
 *
 * --gnuplot prints the same numbers as gnuplot assignments instead, for
 * plots/size.gp (`load "< fit --gnuplot CSV"`): n_ps, n_ring, n_rd (rows),
 * La_ALGO, Lb_ALGO, a_ALGO, b_ALGO (NaN: no fit), have_model, m_k, m_bw
 * (bytes/s), m_a (s), rd_steps, pow2, nstar, n_x (the measured crossover;
 * NaN: none). Every number is %.17g.
 *
 * Exit status 0; 1 when the CSV cannot be read or lacks a column (one line
 * naming it); 64 for a bad flag.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/err.h"
#include "base/infile.h"
#include "measure/model.h"

enum { PS, RING, RD, NALGO };
static const char *const algo_name[NALGO] = { "ps", "ring", "rd" };
static const enum model_algo algo_model[NALGO] = { MODEL_PS, MODEL_RING, MODEL_RD };

/* The columns read, by name. */
enum { C_SYSTEM, C_ALGO, C_K, C_BYTES, C_TIME, C_BW, C_LAT, C_MODEL, NCOL };
static const char *const col_name[NCOL] = { "system", "algo", "K", "bytes", "time_s",
                                            "link_bw", "link_latency", "model_s" };

struct row {
    int algo;                   /* PS, RING, RD; -1: another system */
    int k;
    double bytes, time, bw, lat, model;     /* NaN where the cell is empty */
};

struct sweep {
    struct row *rows;
    int n;
};

/* One algorithm's fit: a and b (NaN: not fitted), its coefficients, rows. */
struct fit {
    double la, lb, a, b;
    int rows;
    int sizes;                  /* 0, 1, or 2 for two or more */
};

static double cell(const char *s)
{
    char *end;
    double v;

    if (!s || !*s)
        return NAN;
    v = strtod(s, &end);
    return end == s ? NAN : v;
}

/* split: the line's comma-separated cells into f[0..max-1] (in place);
 * returns how many. */
static int split(char *line, char **f, int max)
{
    int n = 0;

    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max;) {
        f[n++] = p;
        if (!(p = strchr(p, ',')))
            break;
        *p++ = '\0';
    }
    return n;
}

/* sweep_read: the CSV's rows; 0, or -1 having said why on stderr
 * (ERR_USAGE: a FIFO, a device or a folder, refused unread, infile.h).
 * The rows are malloc'd: the caller frees sw->rows. */
static int sweep_read(const char *path, struct sweep *sw)
{
    enum { MAXF = 256 };
    char *line = NULL, *f[MAXF];
    size_t cap = 0;
    int col[NCOL], nf, cap_rows = 0, header = 1, rc = -1;
    char err[ERR_LEN];
    FILE *in = infile_fopen("SIZE_SWEEP.CSV", path, &rc, err);

    sw->rows = NULL;
    sw->n = 0;
    if (!in) {
        fprintf(stderr, "fit: %s\n", err);
        return rc == ERR_USAGE ? rc : -1;
    }
    rc = -1;
    while (getline(&line, &cap, in) > 0) {
        if (line[0] == '#')
            continue;
        nf = split(line, f, MAXF);
        if (header) {
            for (int c = 0; c < NCOL; c++) {
                col[c] = -1;
                for (int i = 0; i < nf; i++)
                    if (strcmp(f[i], col_name[c]) == 0)
                        col[c] = i;
                if (col[c] < 0) {
                    fprintf(stderr, "fit: %s: no column %s in its header (docs/design.md)\n",
                            path, col_name[c]);
                    goto out;
                }
            }
            header = 0;
            continue;
        }
        if (sw->n == cap_rows) {
            struct row *r = realloc(sw->rows, (size_t)(cap_rows = cap_rows * 2 + 16) * sizeof *r);
            if (!r) {
                fprintf(stderr, "fit: out of memory\n");
                goto out;
            }
            sw->rows = r;
        }
        const char *v[NCOL];
        for (int c = 0; c < NCOL; c++)
            v[c] = col[c] < nf ? f[col[c]] : "";
        struct row *r = &sw->rows[sw->n++];
        r->algo = strcmp(v[C_SYSTEM], "ps") == 0 ? PS
                : strcmp(v[C_SYSTEM], "ring") != 0 ? -1
                : strcmp(v[C_ALGO], "rd") == 0 ? RD : RING;
        r->k = atoi(v[C_K]);
        r->bytes = cell(v[C_BYTES]);
        r->time = cell(v[C_TIME]);
        r->bw = cell(v[C_BW]);
        r->lat = cell(v[C_LAT]);
        r->model = cell(v[C_MODEL]);
    }
    rc = 0;
out:
    free(line);
    fclose(in);
    return rc;
}

/* fit_algo: the weighted least squares of T = la a + lb n b over the
 * algorithm's rows, each weighing 1 / T^2 (a 5% error on each, as
 * gnuplot's fit was given, scales out): the normal equations of
 * u a + v b = 1, u = la / T, v = lb n / T. No fit (NaN) with fewer than
 * two sizes. */
static struct fit fit_algo(const struct sweep *sw, int algo, int k)
{
    struct fit f = { NAN, NAN, NAN, NAN, 0, 0 };
    double suu = 0, suv = 0, svv = 0, su = 0, sv = 0, first = NAN;
    enum model_algo m = algo_model[algo];

    if (k >= 1) {
        f.lb = model_query(m, MODEL_TIME, k, 1, 1, 1, 0);
        f.la = model_query(m, MODEL_TIME, k, 1, 1, 1, 1) - f.lb;
    }
    for (int i = 0; i < sw->n; i++) {
        const struct row *r = &sw->rows[i];
        if (r->algo != algo)
            continue;
        f.rows++;
        if (!(r->time > 0) || isnan(r->bytes))
            continue;
        if (isnan(first))
            first = r->bytes;
        f.sizes = (f.sizes == 2 || r->bytes != first) ? 2 : 1;
        double u = f.la / r->time, v = f.lb * r->bytes / r->time;
        suu += u * u, suv += u * v, svv += v * v, su += u, sv += v;
    }
    double det = suu * svv - suv * suv;
    if (f.sizes >= 2 && det != 0 && isfinite(det)) {
        f.a = (su * svv - sv * suv) / det;
        f.b = (suu * sv - suv * su) / det;
    }
    return f;
}

/* crossover: the measured ring/rd crossover in *at (NaN: none) and the
 * sizes around it in *lo, *hi; returns "at", or why there is none: "rd"
 * (rd faster at the largest size), "ring" (the ring faster at every
 * size), "none" (no size has both). A size with two rows of one
 * algorithm counts the later. */
static const char *crossover(const struct sweep *sw, double *at, double *lo, double *hi)
{
    int n = 0, c = 0;
    double *x = malloc((size_t)(sw->n + 1) * sizeof *x), *q = malloc((size_t)(sw->n + 1) * sizeof *q);

    *at = *lo = *hi = NAN;
    if (!x || !q) {
        free(x);
        free(q);
        return "none";
    }
    /* the sizes with an rd and a ring time, ascending */
    for (int i = 0; i < sw->n; i++) {
        const struct row *r = &sw->rows[i];
        double ring = NAN, rd = NAN;
        int seen = 0;

        if (r->algo != RD || !(r->time > 0))
            continue;
        for (int j = 0; j < n; j++)
            seen |= x[j] == r->bytes;
        if (seen)
            continue;
        for (int j = 0; j < sw->n; j++) {
            const struct row *s = &sw->rows[j];
            if (s->bytes == r->bytes && s->time > 0 && s->algo == RING)
                ring = s->time;
            if (s->bytes == r->bytes && s->time > 0 && s->algo == RD)
                rd = s->time;
        }
        if (isnan(ring))
            continue;
        int j = n++;
        for (; j > 0 && x[j - 1] > r->bytes; j--)
            x[j] = x[j - 1], q[j] = q[j - 1];
        x[j] = r->bytes;
        q[j] = ring / rd;
    }
    for (int i = 1; i < n; i++)
        if (q[i - 1] >= 1 && q[i] < 1)
            c = i;
    const char *kind = c ? "at" : n == 0 ? "none" : q[n - 1] >= 1 ? "rd" : "ring";
    if (c) {
        double f = log(q[c - 1]) / (log(q[c - 1]) - log(q[c]));
        *at = exp(log(x[c - 1]) + f * (log(x[c]) - log(x[c - 1])));
        *lo = x[c - 1];
        *hi = x[c];
    }
    free(x);
    free(q);
    return kind;
}

/* g: a number as gnuplot reads it (NaN is its name for nan). */
static void g(const char *name, double v)
{
    if (isnan(v))
        printf("%s = NaN\n", name);
    else
        printf("%s = %.17g\n", name, v);
}

int main(int argc, char **argv)
{
    int gp = 0;
    const struct cli_opt table[] = {
        { "gnuplot", CLI_BOOL, &gp, NULL, "the numbers as gnuplot assignments (plots/size.gp loads them)", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *const tables[] = { table, NULL };
    const char *path = NULL;
    struct sweep sw;
    int rc;

    /* The flags first, then the CSV: the last argument unless it is a flag. */
    if (argc >= 2 && argv[argc - 1][0] != '-')
        path = argv[--argc];
    cli_main_parse("fit", "[--gnuplot] SIZE_SWEEP.CSV\n"
                   "The lab's size sweep fitted: each algorithm's a and 1/b inside its own model formula,\n"
                   "the ring/rd crossover measured and in the model (fit.txt; plots/size.gp draws them).",
                   argc, argv, tables);
    if (!path) {
        fprintf(stderr, "fit: no CSV given (fit [--gnuplot] SIZE_SWEEP.CSV); see fit --help\n");
        return CLI_EXIT_USAGE;
    }
    if ((rc = sweep_read(path, &sw)) != 0)
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;

    /* The model's link: the first row that had an emulated one. */
    int f_k = sw.n ? sw.rows[0].k : 0, m_k = 0, have_model = 0;
    double m_bw = NAN, m_a = NAN;
    for (int i = 0; i < sw.n; i++)
        if (sw.rows[i].bw > 0) {
            have_model = 1;
            m_k = sw.rows[i].k, m_bw = sw.rows[i].bw;
            m_a = isnan(sw.rows[i].lat) ? 0 : sw.rows[i].lat;
            break;
        }
    int pow2 = m_k >= 1 && (m_k & (m_k - 1)) == 0;
    int rd_steps = m_k >= 1 ? model_rd_steps(m_k) : 0;
    double nstar = have_model ? model_crossover(m_k, m_bw, m_a) : NAN;
    struct fit fits[NALGO];
    for (int a = 0; a < NALGO; a++)
        fits[a] = fit_algo(&sw, a, f_k);
    double n_x, x_lo, x_hi;
    const char *xo = crossover(&sw, &n_x, &x_lo, &x_hi);

    if (gp) {
        char name[32];
        for (int a = 0; a < NALGO; a++) {
            const char *what[] = { "n", "La", "Lb", "a", "b" };
            double v[] = { fits[a].rows, fits[a].la, fits[a].lb, fits[a].a, fits[a].b };
            for (int j = 0; j < 5; j++) {
                snprintf(name, sizeof name, "%s_%s", what[j], algo_name[a]);
                g(name, v[j]);
            }
        }
        g("have_model", have_model);
        g("m_k", m_k);
        g("m_bw", m_bw);
        g("m_a", m_a);
        g("rd_steps", rd_steps);
        g("pow2", pow2);
        g("nstar", nstar);
        g("n_x", n_x);
        free(sw.rows);
        return 0;
    }

    if (have_model) {
        double lo = INFINITY, hi = -INFINITY;
        int n = 0;
        for (int i = 0; i < sw.n; i++) {
            const struct row *r = &sw.rows[i];
            double m = model_query(algo_model[r->algo == PS ? PS : r->algo == RD ? RD : RING],
                                   MODEL_TIME, m_k, 1, r->bytes, m_bw, m_a);
            double q = r->model / m;
            if (isnan(q) || isinf(q))
                continue;
            lo = q < lo ? q : lo, hi = q > hi ? q : hi, n++;
        }
        printf("model: K = %d, a = %.4g s (link_latency), 1/b = %.4g MB/s (link_bw); ps 2(a + K n b), "
               "ring 2(K-1) a + 2(K-1)/K n b, rd %s (a + n b) = %d (a + n b)\n",
               m_k, m_a, 1e-6 * m_bw, pow2 ? "log2 K" : "(floor(log2 K) + 2)", rd_steps);
        printf("model: the CSV's model_s / the lines drawn: %.6f to %.6f over %d rows\n", lo, hi, n);
    } else {
        printf("model: no row has an emulated link (link_bw), so no model is drawn\n");
    }
    for (int a = 0; a < NALGO; a++) {
        const struct fit *f = &fits[a];
        char label[8];
        snprintf(label, sizeof label, "%s:", algo_name[a]);
        if (isnan(f->a)) {
            printf("fit %-5s %s\n", label, f->rows == 0 ? "no rows" : "one size only: nothing to fit");
            continue;
        }
        printf("fit %-5s T = %g a + %g n b: a = %.6g s, 1/b = %.6g MB/s", label, f->la, f->lb, f->a,
               1e-6 / f->b);
        if (have_model)
            printf(" (link: a = %.6g s, 1/b = %.6g MB/s)", m_a, 1e-6 * m_bw);
        printf("\n");
    }
    if (!isnan(n_x))
        printf("crossover measured (ring vs rd, K = %d): %.0f bytes (%.1f KiB), between %.0f and %.0f: "
               "rd faster below, the ring above\n", m_k, n_x, n_x / 1024, x_lo, x_hi);
    else
        printf("crossover measured (ring vs rd, K = %d): none within the sizes run (%s)\n", m_k,
               strcmp(xo, "rd") == 0 ? "rd still faster at the largest size"
               : strcmp(xo, "ring") == 0 ? "the ring faster at every size"
               : "no size has both a ring and an rd row");
    if (!isnan(nstar))
        printf("crossover model: n* = (2(K-1) - s) a / ((s - 2(K-1)/K) b), s = %s = %d: %.0f bytes (%.1f KiB)\n",
               pow2 ? "log2 K" : "floor(log2 K) + 2", rd_steps, nstar, nstar / 1024);
    else
        printf("crossover model: none (K = %d: rd is never slower than the ring in the model, or no model)\n",
               m_k);
    free(sw.rows);
    return 0;
}
