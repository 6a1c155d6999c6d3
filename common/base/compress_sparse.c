/* compress_sparse.c -- the not-linear compressors of compress.h: top-k and
 * scaled sign, both with error feedback (Seide et al. 2014; Stich et al.
 * 2018; Karimireddy et al. 2019, EF-SignSGD).
 *
 * ERROR FEEDBACK. What a worker does not send it keeps: p = g + e is
 * compressed, and e = p - decode(frame) carries the rest into the next
 * step, so nothing of the gradient is lost, only delayed. Under
 * COMPRESS_NOEF p = g and the residual is dropped (the lesson's contrast).
 *
 * TOP-K. The k = ceil(F n) elements of largest |p|, ties to the lower
 * index: the order "a before b when |p_a| > |p_b|, or equal and a < b" is
 * total (NaN counts as larger than Inf), so the set is the same whatever
 * the selection's path, on every machine. A quickselect over indices (the
 * state's second half) finds the k-th; one pass in index order writes the
 * frame. The values travel exactly, so the residual of a sent element is
 * 0 and of the others p itself.
 *
 *   OFFSET        SIZE      DESCRIPTION (little-endian)
 *   0             4         count: k (the receiver knows n and F: the
 *                           count must be k, no more)
 *   4             4 count   the indices, strictly increasing, < n
 *   4 + 4 count   es count  the values, in the job's dtype (es 4 or 8)
 *
 * SIGN. One scale s = mean |p| over the n elements (summed in double,
 * rounded once to the dtype) and one bit per element: the value is -s when
 * the bit is 1, +s when 0 (0 itself goes as +s; error feedback takes the
 * difference back). The frame: s (es bytes), then ceil(n/8) bytes, element
 * i in bit i % 8 (least significant first) of byte i / 8; the bits past n
 * must be 0.
 *
 * Simplifications said out loud: one scale per frame (per server range on
 * the PS; no per-chunk scales); the quickselect's pivot is the middle
 * element (its worst case is quadratic, its expected case linear).
 */
#include "compress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "err.h"
#include "vec.h"

static void put32(unsigned char *w, uint32_t v)
{
    for (int b = 0; b < 4; b++)
        w[b] = (unsigned char)(v >> (8 * b));
}

static uint32_t get32(const unsigned char *w)
{
    return (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
}

/* prepare: p = src (+ e unless NOEF) into the state's first n elements. */
static void prepare(int setting, void *state, const void *src, size_t n, int dtype)
{
    int ef = !(setting & COMPRESS_NOEF);

    if (dtype == DTYPE_F32) {
        float *p = state;
        const float *g = src;
        for (size_t i = 0; i < n; i++)
            p[i] = ef ? p[i] + g[i] : g[i];
    } else {
        double *p = state;
        const double *g = src;
        for (size_t i = 0; i < n; i++)
            p[i] = ef ? p[i] + g[i] : g[i];
    }
}

/* ---------------------------------------------------------------- top-k */

size_t compress_topk_k(int setting, size_t n)
{
    unsigned long long ppm = COMPRESS_PARAM(setting);
    size_t k = (size_t)(((unsigned long long)n * ppm + 999999u) / 1000000u);

    return n == 0 ? 0 : k < 1 ? 1 : k > n ? n : k;
}

static size_t topk_bytes(int setting, size_t n, int dtype)
{
    return 4 + compress_topk_k(setting, n) * (4 + dtype_size(dtype));
}

static double mag(const void *p, uint32_t i, int dtype)
{
    double v = dtype == DTYPE_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
    return isnan(v) ? INFINITY : fabs(v);
}

/* before: a comes before b in TOP-K's total order. */
static int before(const void *p, uint32_t a, uint32_t b, int dtype)
{
    double ma = mag(p, a, dtype), mb = mag(p, b, dtype);
    return ma > mb || (ma == mb && a < b);
}

/* select_kth: reorders idx[0, n) so that idx[k-1] is the k-th in the
 * order and the ones before it come before it. */
static void select_kth(const void *p, uint32_t *idx, size_t n, size_t k, int dtype)
{
    size_t lo = 0, hi = n - 1;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, store = lo;
        uint32_t piv = idx[mid], t;
        idx[mid] = idx[hi];
        idx[hi] = piv;
        for (size_t i = lo; i < hi; i++)
            if (before(p, idx[i], piv, dtype)) {
                t = idx[i];
                idx[i] = idx[store];
                idx[store++] = t;
            }
        idx[hi] = idx[store];
        idx[store] = piv;
        if (store == k - 1)
            return;
        if (store > k - 1)
            hi = store - 1;
        else
            lo = store + 1;
    }
}

static void topk_encode(int setting, void *frame, const void *src, size_t n, int dtype,
                        void *state)
{
    size_t es = dtype_size(dtype), k = compress_topk_k(setting, n), j = 0;
    unsigned char *f = frame, *vals = f + 4 + 4 * k;
    uint32_t *idx = (uint32_t *)((unsigned char *)state + n * es), kth;
    double km;

    prepare(setting, state, src, n, dtype);
    put32(f, (uint32_t)k);
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        idx[i] = (uint32_t)i;
    select_kth(state, idx, n, k, dtype);
    kth = idx[k - 1];
    km = mag(state, kth, dtype);        /* kept: the loop zeroes what it sends */
    for (uint32_t i = 0; i < n && j < k; i++) {
        double m = mag(state, i, dtype);
        if (m > km || (m == km && i <= kth)) {
            put32(f + 4 + 4 * j, i);
            memcpy(vals + j * es, (unsigned char *)state + i * es, es);
            vec_set(state, i, dtype, 0.0);      /* sent exactly: no residual */
            j++;
        }
    }
}

static int topk_add(int setting, void *acc, const void *frame, size_t bytes, size_t n,
                    int dtype, size_t *bad, char *why)
{
    size_t es = dtype_size(dtype), k = compress_topk_k(setting, n), cnt;
    const unsigned char *f = frame;
    uint32_t prev = 0;

    if (bytes < 4 || (cnt = get32(f)) > k || bytes != 4 + cnt * (4 + es)) {
        err_say(why, "top-k frame of %zu bytes says %u pairs: at most k = %zu of %zu elements, "
                "4 + count x %zu bytes", bytes, bytes < 4 ? 0u : (unsigned)get32(f), k, n,
                4 + es);
        return ERR_PROTO_FIELD;
    }
    for (size_t j = 0; j < cnt; j++) {
        uint32_t i = get32(f + 4 + 4 * j);
        if (i >= n || (j > 0 && i <= prev)) {
            err_say(why, "top-k frame: pair %zu has index %u, %s", j, (unsigned)i,
                    i >= n ? "out of range" : "not above the one before");
            return ERR_PROTO_FIELD;
        }
        prev = i;
    }
    for (size_t pass = 0; pass < 2; pass++)     /* check every value, then add */
        for (size_t j = 0; j < cnt; j++) {
            uint32_t i = get32(f + 4 + 4 * j);
            double v;
            if (dtype == DTYPE_F32) {
                float x;
                memcpy(&x, f + 4 + 4 * cnt + j * es, sizeof x);
                v = x;
            } else {
                memcpy(&v, f + 4 + 4 * cnt + j * es, sizeof v);
            }
            if (pass == 0 && !isfinite(v)) {
                *bad = i;
                return ERR_NONFINITE;
            }
            if (pass == 1 && dtype == DTYPE_F32)
                ((float *)acc)[i] += (float)v;  /* v came from a float: exact */
            else if (pass == 1)
                ((double *)acc)[i] += v;
        }
    return vec_check_finite(acc, n, dtype, bad);
}

const struct compress_frame compress_topk_frame = { topk_bytes, topk_encode, topk_add };

/* ----------------------------------------------------------------- sign */

static size_t sign_bytes(int setting, size_t n, int dtype)
{
    (void)setting;
    return dtype_size(dtype) + (n + 7) / 8;
}

static void sign_encode(int setting, void *frame, const void *src, size_t n, int dtype,
                        void *state)
{
    size_t es = dtype_size(dtype);
    unsigned char *f = frame, *bits = f + es;
    double sum = 0.0, s;

    prepare(setting, state, src, n, dtype);
    for (size_t i = 0; i < n; i++)
        sum += fabs(vec_get(state, i, dtype));
    s = n ? sum / (double)n : 0.0;
    if (dtype == DTYPE_F32) {                   /* rounded once to the dtype */
        float x = (float)s;
        memcpy(f, &x, sizeof x);
        s = x;
    } else {
        memcpy(f, &s, sizeof s);
    }
    memset(bits, 0, (n + 7) / 8);
    for (size_t i = 0; i < n; i++) {
        double p = vec_get(state, i, dtype);
        int neg = p < 0;
        bits[i / 8] |= (unsigned char)(neg << (i % 8));
        vec_set(state, i, dtype, dtype == DTYPE_F32 ? (double)((float)p - (float)(neg ? -s : s))
                                                    : p - (neg ? -s : s));
    }
}

static int sign_add(int setting, void *acc, const void *frame, size_t bytes, size_t n,
                    int dtype, size_t *bad, char *why)
{
    size_t es = dtype_size(dtype);
    const unsigned char *f = frame, *bits = f + es;
    double s;

    if (bytes != sign_bytes(setting, n, dtype)) {
        err_say(why, "sign frame of %zu bytes, %zu expected for %zu elements", bytes,
                sign_bytes(setting, n, dtype), n);
        return ERR_PROTO_FIELD;
    }
    if (n % 8 && (bits[n / 8] >> (n % 8)) != 0) {
        err_say(why, "sign frame: bits set past element %zu", n);
        return ERR_PROTO_FIELD;
    }
    if (dtype == DTYPE_F32) {
        float x;
        memcpy(&x, f, sizeof x);
        s = x;
    } else {
        memcpy(&s, f, sizeof s);
    }
    if (!isfinite(s) || s < 0) {
        *bad = 0;
        if (isfinite(s)) {
            err_say(why, "sign frame: scale %g is negative", s);
            return ERR_PROTO_FIELD;
        }
        return ERR_NONFINITE;
    }
    if (dtype == DTYPE_F32) {
        float *a = acc, fs = (float)s;
        for (size_t i = 0; i < n; i++)
            a[i] += (bits[i / 8] >> (i % 8)) & 1 ? -fs : fs;
    } else {
        double *a = acc;
        for (size_t i = 0; i < n; i++)
            a[i] += (bits[i / 8] >> (i % 8)) & 1 ? -s : s;
    }
    return vec_check_finite(acc, n, dtype, bad);
}

const struct compress_frame compress_sign_frame = { sign_bytes, sign_encode, sign_add };
