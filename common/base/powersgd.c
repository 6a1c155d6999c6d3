/* powersgd.c -- PowerSGD's factors, orthonormalization and error
 * feedback (the step and the rules: powersgd.h). Pure computation: the
 * caller all-reduces the round buffers between the calls.
 *
 * A range [first, first + count) of the vector holds whole matrices
 * (those of the table that lie entirely inside it: a bucket of whole
 * layers) and raw elements (everything else, the trailer included). The
 * round buffers list the matrices' factors in table order, then the raw
 * elements in vector order, copied bit for bit.
 */
#include "powersgd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dtype.h"
#include "err.h"
#include "rng.h"
#include "vec.h"

/* A column whose norm after the projections is below this share of its
 * norm before them lies in the span of the earlier ones (M's rank is
 * below R, or P is degenerate): what is left is rounding, and
 * normalizing it would add a direction of noise. It becomes 0. */
#define PSGD_DEPENDENT 1e-9
#define PSGD_Q_SEED 0x70737364ull      /* "psgd": Q's start, the same on every rank */

int psgd_pays(size_t rows, size_t cols, int rank)
{
    return rank > 0 && rows > 0 && cols > 0 &&
           (rows + cols) * (size_t)rank < rows * cols;
}

void psgd_near_square(size_t n, size_t *rows, size_t *cols)
{
    size_t r = 1;

    for (size_t d = 1; d * d <= n; d++)
        if (n % d == 0)
            r = d;
    *rows = n ? r : 0;
    *cols = n ? n / r : 0;
}

/* inside: matrix j lies whole in [first, end). */
static int inside(const struct psgd *ps, size_t j, size_t first, size_t end)
{
    const struct psgd_mat *m = &ps->mat[j];
    return m->first >= first && m->first + m->rows * m->cols <= end;
}

/* covering: the matrix of the range that holds element i, or nmat. */
static size_t covering(const struct psgd *ps, size_t i, size_t first, size_t end)
{
    for (size_t j = 0; j < ps->nmat; j++)
        if (inside(ps, j, first, end) && i >= ps->mat[j].first &&
            i < ps->mat[j].first + ps->mat[j].rows * ps->mat[j].cols)
            return j;
    return ps->nmat;
}

size_t psgd_round_len(const struct psgd *ps, size_t first, size_t count, int r)
{
    size_t len = 0, covered = 0, end = first + count;

    for (size_t j = 0; j < ps->nmat; j++) {
        if (!inside(ps, j, first, end))
            continue;
        len += (r == 0 ? ps->mat[j].rows : ps->mat[j].cols) * (size_t)ps->rank;
        covered += ps->mat[j].rows * ps->mat[j].cols;
    }
    return r == 0 ? len + count - covered : len;
}

size_t psgd_wire_elems(const struct psgd *ps, size_t extra)
{
    return psgd_round_len(ps, 0, ps->n + extra, 0) + psgd_round_len(ps, 0, ps->n + extra, 1);
}

void psgd_destroy(struct psgd *ps)
{
    free(ps->mat);
    free(ps->qoff);
    free(ps->poff);
    free(ps->q);
    free(ps->e);
    free(ps->m);
    free(ps->pall);
    free(ps->round[0]);
    free(ps->round[1]);
    memset(ps, 0, sizeof *ps);
}

int psgd_init(struct psgd *ps, size_t n, size_t extra, int dtype, const struct psgd_mat *mats,
              size_t nmat, int rank, int ef, uint64_t seed)
{
    size_t es = dtype_size(dtype), qn = 0, pn = 0, prev_end = 0;
    struct rng g;

    memset(ps, 0, sizeof *ps);
    if (es == 0 || rank < 1 || rank > PSGD_MAX_RANK)
        return ERR_USAGE;
    for (size_t j = 0; j < nmat; j++) {
        if (mats[j].first < prev_end || mats[j].rows == 0 || mats[j].cols == 0 ||
            mats[j].first + mats[j].rows * mats[j].cols > n)
            return ERR_USAGE;
        prev_end = mats[j].first + mats[j].rows * mats[j].cols;
    }
    ps->rank = rank;
    ps->ef = ef;
    ps->dtype = dtype;
    ps->n = n;
    ps->mat = calloc(nmat ? nmat : 1, sizeof *ps->mat);
    ps->qoff = calloc(nmat ? nmat : 1, sizeof *ps->qoff);
    ps->poff = calloc(nmat ? nmat : 1, sizeof *ps->poff);
    if (!ps->mat || !ps->qoff || !ps->poff)
        goto nomem;
    for (size_t j = 0; j < nmat; j++) {
        if (!psgd_pays(mats[j].rows, mats[j].cols, rank))
            continue;
        ps->mat[ps->nmat] = mats[j];
        ps->qoff[ps->nmat] = qn;
        ps->poff[ps->nmat] = pn;
        qn += mats[j].cols * (size_t)rank;
        pn += mats[j].rows * (size_t)rank;
        ps->nmat++;
    }
    ps->q = malloc((qn ? qn : 1) * sizeof *ps->q);
    ps->pall = malloc((pn ? pn : 1) * sizeof *ps->pall);
    ps->e = calloc(n ? n : 1, sizeof *ps->e);
    ps->m = calloc(n ? n : 1, sizeof *ps->m);
    ps->round_cap[0] = n + extra;       /* a matrix that pays: rows R < rows cols */
    ps->round_cap[1] = qn;
    ps->round[0] = malloc((ps->round_cap[0] ? ps->round_cap[0] : 1) * es);
    ps->round[1] = malloc((qn ? qn : 1) * es);
    if (!ps->q || !ps->pall || !ps->e || !ps->m || !ps->round[0] || !ps->round[1])
        goto nomem;
    rng_seed(&g, seed ^ PSGD_Q_SEED);
    for (size_t i = 0; i < qn; i++)
        ps->q[i] = rng_normal(&g);
    return 0;
nomem:
    psgd_destroy(ps);
    return -ENOMEM;
}

void psgd_orthonormalize(double *p, size_t rows, int r)
{
    for (int k = 0; k < r; k++) {
        double before = 0;
        for (size_t x = 0; x < rows; x++)
            before += p[x * (size_t)r + (size_t)k] * p[x * (size_t)r + (size_t)k];
        for (int i = 0; i < k; i++) {           /* modified Gram-Schmidt */
            double dot = 0;
            for (size_t x = 0; x < rows; x++)
                dot += p[x * (size_t)r + (size_t)i] * p[x * (size_t)r + (size_t)k];
            for (size_t x = 0; x < rows; x++)
                p[x * (size_t)r + (size_t)k] -= dot * p[x * (size_t)r + (size_t)i];
        }
        double norm = 0;
        for (size_t x = 0; x < rows; x++)
            norm += p[x * (size_t)r + (size_t)k] * p[x * (size_t)r + (size_t)k];
        norm = sqrt(norm);
        if (!(norm > PSGD_DEPENDENT * sqrt(before)))
            norm = 0;                   /* in the span of the columns before: rounding's rest */
        for (size_t x = 0; x < rows; x++)
            p[x * (size_t)r + (size_t)k] = norm > 0 && isfinite(norm)
                                           ? p[x * (size_t)r + (size_t)k] / norm : 0.0;
    }
}

/* raw: copy the range's raw elements between g and the round-0 buffer
 * from offset at, bit for bit (to_wire: g -> buffer). */
static void raw(struct psgd *ps, void *g, size_t first, size_t count, size_t at, int to_wire)
{
    size_t es = dtype_size(ps->dtype), end = first + count;
    unsigned char *v = g, *w = ps->round[0];

    for (size_t i = first; i < end; i++) {
        size_t j = covering(ps, i, first, end);
        if (j < ps->nmat) {
            i = ps->mat[j].first + ps->mat[j].rows * ps->mat[j].cols - 1;
            continue;
        }
        if (to_wire)
            memcpy(w + at * es, v + i * es, es);
        else
            memcpy(v + i * es, w + at * es, es);
        at++;
    }
}

void psgd_encode_p(struct psgd *ps, const void *g, size_t first, size_t count)
{
    size_t at = 0, end = first + count, r = (size_t)ps->rank;

    for (size_t j = 0; j < ps->nmat; j++) {
        const struct psgd_mat *mt = &ps->mat[j];
        double *m = ps->m + mt->first, *q = ps->q + ps->qoff[j];
        if (!inside(ps, j, first, end))
            continue;
        for (size_t x = 0; x < mt->rows * mt->cols; x++)
            m[x] = vec_get(g, mt->first + x, ps->dtype) + (ps->ef ? ps->e[mt->first + x] : 0.0);
        for (size_t x = 0; x < mt->rows; x++)
            for (size_t k = 0; k < r; k++) {
                double s = 0;
                for (size_t c = 0; c < mt->cols; c++)
                    s += m[x * mt->cols + c] * q[c * r + k];
                vec_set(ps->round[0], at + x * r + k, ps->dtype, s);
            }
        at += mt->rows * r;
    }
    raw(ps, (void *)g, first, count, at, 1);
}

void psgd_encode_q(struct psgd *ps, size_t first, size_t count)
{
    size_t at0 = 0, at1 = 0, end = first + count, r = (size_t)ps->rank;

    for (size_t j = 0; j < ps->nmat; j++) {
        const struct psgd_mat *mt = &ps->mat[j];
        double *m = ps->m + mt->first, *p = ps->pall + ps->poff[j], *q = ps->q + ps->qoff[j];
        if (!inside(ps, j, first, end))
            continue;
        for (size_t x = 0; x < mt->rows * r; x++)
            p[x] = vec_get(ps->round[0], at0 + x, ps->dtype);
        psgd_orthonormalize(p, mt->rows, ps->rank);
        /* Q_i = M^T P^ row by row of M (the warm start in q is spent:
         * step 2 used it), summed over x in order for each (c, k). */
        memset(q, 0, mt->cols * r * sizeof *q);
        for (size_t x = 0; x < mt->rows; x++)
            for (size_t c = 0; c < mt->cols; c++)
                for (size_t k = 0; k < r; k++)
                    q[c * r + k] += m[x * mt->cols + c] * p[x * r + k];
        for (size_t x = 0; x < mt->cols * r; x++)
            vec_set(ps->round[1], at1 + x, ps->dtype, q[x]);
        at0 += mt->rows * r;
        at1 += mt->cols * r;
    }
}

int psgd_decode(struct psgd *ps, void *g, size_t first, size_t count, int world, size_t *bad)
{
    size_t at0 = 0, at1 = 0, end = first + count, r = (size_t)ps->rank;

    for (size_t j = 0; j < ps->nmat; j++) {
        const struct psgd_mat *mt = &ps->mat[j];
        double *m = ps->m + mt->first, *p = ps->pall + ps->poff[j], *q = ps->q + ps->qoff[j];
        if (!inside(ps, j, first, end))
            continue;
        for (size_t x = 0; x < mt->cols * r; x++)
            q[x] = vec_get(ps->round[1], at1 + x, ps->dtype);
        for (size_t x = 0; x < mt->rows; x++)
            for (size_t c = 0; c < mt->cols; c++) {
                size_t i = mt->first + x * mt->cols + c;
                double s = 0;
                for (size_t k = 0; k < r; k++)
                    s += p[x * r + k] * q[c * r + k];
                vec_set(g, i, ps->dtype, s);
                if (ps->ef)     /* what was delivered: the value in dtype */
                    ps->e[i] = m[x * mt->cols + c] - vec_get(g, i, ps->dtype) / world;
            }
        at0 += mt->rows * r;
        at1 += mt->cols * r;
    }
    raw(ps, g, first, count, at0, 0);
    return vec_check_finite((unsigned char *)g + first * dtype_size(ps->dtype), count, ps->dtype,
                            bad);
}

double psgd_cost(size_t n, int rank, int dtype)
{
    size_t cap = (size_t)1 << 22, es = dtype_size(dtype);
    struct psgd_mat mat = { 0, 0, 0 };
    struct psgd ps;
    unsigned char *g;
    double t0, t = 0;
    int reps = 0;

    psgd_near_square(n < cap ? n : cap, &mat.rows, &mat.cols);
    n = mat.rows * mat.cols;
    if (es == 0 || !psgd_pays(mat.rows, mat.cols, rank))
        return 0;
    if (psgd_init(&ps, n, 0, dtype, &mat, 1, rank, 1, 1) != 0 || !(g = malloc(n * es))) {
        psgd_destroy(&ps);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        vec_set(g, i, dtype, sin((double)i));
    t0 = clock_cpu_seconds();
    while (reps < 2 || t < 0.05) {      /* each decode's M^ is the next step's gradient */
        size_t bad;
        psgd_encode_p(&ps, g, 0, n);        /* K = 1: round 0 is its own sum */
        psgd_encode_q(&ps, 0, n);
        (void)psgd_decode(&ps, g, 0, n, 1, &bad);
        reps++;
        t = clock_cpu_seconds() - t0;
    }
    free(g);
    psgd_destroy(&ps);
    return t / ((double)reps * (double)n);
}
