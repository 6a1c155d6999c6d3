/* compress.c -- the compressors of compress.h: none, fp16, bf16 (top-k
 * and sign: compress_sparse.c), the table, --compress's parser.
 *
 * The conversions are the textbook bit manipulations: move the exponent
 * from one bias to the other and round the dropped mantissa bits to
 * nearest, ties to even (rem > half, or rem == half and the kept last bit
 * odd, rounds up; a carry out of the mantissa lands in the exponent, which
 * is exactly the next binade). Decoding is exact. Simplification said out
 * loud: the codecs loop one element at a time; the compiler may vectorize
 * the bf16 ones, the fp16 ones stay scalar (their branches).
 */
#include "compress.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dtype.h"
#include "err.h"
#include "powersgd.h"
#include "vec.h"

static uint32_t f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static float bits_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

uint16_t compress_f32_to_f16(float f)
{
    uint32_t x = f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;

    if (ax > 0x7f800000u)                       /* NaN: quiet, top payload bits kept */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u)                      /* >= 65520 (halfway past 65504), Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {                     /* below 2^-14: an fp16 subnormal or 0 */
        if (ax <= 0x33000000u)                  /* <= 2^-25: ties to even, 0 */
            return (uint16_t)sign;
        uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e;               /* value / 2^-24 = m >> shift; 14..24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;                                /* may become 0x400: the least normal */
        return (uint16_t)(sign | r);
    }
    uint32_t r = ax - 0x38000000u;              /* exponent bias 127 -> 15 */
    uint32_t rem = r & 0x1fffu;
    r >>= 13;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1)))
        r++;
    return (uint16_t)(sign | r);
}

float compress_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;

    if (e == 0x1f)                              /* Inf, NaN (payload kept) */
        return bits_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) {                               /* 0 or subnormal: m * 2^-24, exact */
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t compress_f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);

    if ((x & 0x7fffffffu) > 0x7f800000u)        /* NaN: quiet */
        return (uint16_t)((x >> 16) | 0x0040u);
    x += 0x7fffu + ((x >> 16) & 1);             /* ties to even; overflow -> Inf */
    return (uint16_t)(x >> 16);
}

float compress_bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

/* ------------------------------------------------------------ the codecs */

static float src_f32(const void *src, size_t i, int dtype)
{
    return dtype == DTYPE_F32 ? ((const float *)src)[i] : (float)((const double *)src)[i];
}

static void put16(unsigned char *w, size_t i, uint16_t h)
{
    w[2 * i] = (unsigned char)(h & 0xff);
    w[2 * i + 1] = (unsigned char)(h >> 8);
}

static uint16_t get16(const unsigned char *w, size_t i)
{
    return (uint16_t)(w[2 * i] | (w[2 * i + 1] << 8));
}

#define CODEC(NAME, TO, FROM)                                                          \
    static void NAME##_encode(void *wire, const void *src, size_t n, int dtype,        \
                              void *state)                                             \
    {                                                                                  \
        (void)state;                                                                   \
        for (size_t i = 0; i < n; i++)                                                 \
            put16(wire, i, TO(src_f32(src, i, dtype)));                                \
    }                                                                                  \
    static void NAME##_decode(void *dst, const void *wire, size_t n, int dtype)        \
    {                                                                                  \
        for (size_t i = 0; i < n; i++)                                                 \
            vec_set(dst, i, dtype, (double)FROM(get16(wire, i)));                      \
    }                                                                                  \
    static int NAME##_add_finite(void *acc, const void *wire, size_t n, int dtype,     \
                                 size_t *bad)                                          \
    {                                                                                  \
        int ok = 1;                                                                    \
        if (dtype == DTYPE_F32) {                                                      \
            float *a = acc;                                                            \
            for (size_t i = 0; i < n; i++) {                                           \
                a[i] += FROM(get16(wire, i));                                          \
                ok &= isfinite(a[i]) != 0;                                             \
            }                                                                          \
        } else {                                                                       \
            double *a = acc;                                                           \
            for (size_t i = 0; i < n; i++) {                                           \
                a[i] += (double)FROM(get16(wire, i));                                  \
                ok &= isfinite(a[i]) != 0;                                             \
            }                                                                          \
        }                                                                              \
        return ok ? 0 : vec_check_finite(acc, n, dtype, bad);                          \
    }

CODEC(f16, compress_f32_to_f16, compress_f16_to_f32)
CODEC(bf16, compress_f32_to_bf16, compress_bf16_to_f32)

static void none_encode(void *wire, const void *src, size_t n, int dtype, void *state)
{
    (void)state;
    memcpy(wire, src, n * dtype_size(dtype));
}

static void none_decode(void *dst, const void *wire, size_t n, int dtype)
{
    memcpy(dst, wire, n * dtype_size(dtype));
}

static const struct compressor table[] = {
    { COMPRESS_NONE, "none", 0, 1, 0, 1, none_encode, none_decode, vec_add_finite, NULL },
    { COMPRESS_FP16, "fp16", 2, 1, 0, 1, f16_encode, f16_decode, f16_add_finite, NULL },
    { COMPRESS_BF16, "bf16", 2, 1, 0, 1, bf16_encode, bf16_decode, bf16_add_finite, NULL },
    /* the factors travel in the dtype; the state is the residual */
    { COMPRESS_POWERSGD, "powersgd", 0, 1, 1, 2, NULL, NULL, NULL, NULL },
    { COMPRESS_TOPK, "topk", 0, 0, 2, 1, NULL, NULL, NULL, &compress_topk_frame },
    { COMPRESS_SIGN, "sign", 0, 0, 1, 1, NULL, NULL, NULL, &compress_sign_frame },
};

/* The names of PowerSGD's settings, static (compress_name's result lives
 * as long as the program): powersgd:R, then powersgd:R:noef. */
#define PSGD_N(r) "powersgd:" #r, "powersgd:" #r ":noef"
static const char *const psgd_names[2 * PSGD_MAX_RANK] = {
    PSGD_N(1), PSGD_N(2), PSGD_N(3), PSGD_N(4), PSGD_N(5), PSGD_N(6), PSGD_N(7), PSGD_N(8),
    PSGD_N(9), PSGD_N(10), PSGD_N(11), PSGD_N(12), PSGD_N(13), PSGD_N(14), PSGD_N(15),
    PSGD_N(16),
};

const struct compressor *compress_get(int kind)
{
    int k = COMPRESS_KIND(kind);
    unsigned param = COMPRESS_PARAM(kind);

    if (kind < 0 || (k == COMPRESS_TOPK ? param < 1 || param > 1000000u
                     : k == COMPRESS_POWERSGD ? param < 1 || param > PSGD_MAX_RANK
                     : param != 0 || ((kind & COMPRESS_NOEF) && k != COMPRESS_SIGN)))
        return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].kind == k)
            return &table[i];
    return NULL;
}

/* noef_tail: "" or ":noef" at s -> 0 and *flag; else -1. */
static int noef_tail(const char *s, int *flag)
{
    *flag = strcmp(s, ":noef") == 0 ? COMPRESS_NOEF : 0;
    return *s == '\0' || *flag ? 0 : -1;
}

int compress_parse(const char *s, int *kind)
{
    int noef;

    for (size_t i = 0; s && i < sizeof table / sizeof table[0]; i++)
        if (table[i].linear && table[i].rounds == 1 && strcmp(s, table[i].name) == 0) {
            *kind = table[i].kind;
            return 0;
        }
    for (int i = 0; s && i < 2 * PSGD_MAX_RANK; i++)
        if (strcmp(s, psgd_names[i]) == 0) {
            *kind = COMPRESS_PSGD(i / 2 + 1, i % 2);
            return 0;
        }
    if (s && strncmp(s, "sign", 4) == 0 && noef_tail(s + 4, &noef) == 0) {
        *kind = COMPRESS_SIGN | noef;
        return 0;
    }
    if (s && strncmp(s, "topk:", 5) == 0 && s[5] >= '0' && s[5] <= '9') {
        char *end;
        double f = strtod(s + 5, &end), ppm = floor(f * 1e6 + 0.5);
        if (noef_tail(end, &noef) == 0 && f > 0 && f <= 1 && ppm >= 1 &&
            fabs(ppm - f * 1e6) < 1e-6) {
            *kind = COMPRESS_TOPK | noef | ((int)ppm << 9);
            return 0;
        }
    }
    return ERR_USAGE;
}

const char *compress_label(int setting, char *buf, size_t len)
{
    const char *noef = (setting & COMPRESS_NOEF) ? ":noef" : "";

    if (COMPRESS_KIND(setting) == COMPRESS_TOPK && compress_get(setting))
        snprintf(buf, len, "topk:%g%s", COMPRESS_PARAM(setting) / 1e6, noef);
    else if (COMPRESS_KIND(setting) == COMPRESS_POWERSGD)
        snprintf(buf, len, "%s", compress_name(setting));   /* its :noef included */
    else
        snprintf(buf, len, "%s%s", compress_name(setting), noef);
    return buf;
}

size_t compress_frame_bytes(int setting, size_t n, int dtype)
{
    const struct compressor *c = compress_get(setting);

    if (!c)
        return n * dtype_size(dtype);
    return c->frame ? c->frame->bytes(setting, n, dtype) : n * compress_wire_size(c, dtype);
}

size_t compress_state_bytes(int setting, size_t n, int dtype)
{
    const struct compressor *c = compress_get(setting);

    return c ? c->state_elems * n * dtype_size(dtype) : 0;
}

const char *compress_name(int kind)
{
    const struct compressor *c = compress_get(kind);

    if (c && c->kind == COMPRESS_POWERSGD)
        return psgd_names[2 * (COMPRESS_PSGD_RANK(kind) - 1) + !COMPRESS_PSGD_EF(kind)];
    return c ? c->name : "?";
}

size_t compress_wire_size(const struct compressor *c, int dtype)
{
    return c->wire_bytes ? c->wire_bytes : dtype_size(dtype);
}

/* cost_op: CPU seconds per element of one operation on n elements:
 * COST_ENC encode src into wire; COST_ADD decode-and-add wire into acc
 * (acc zeroed after each, so the sums stay small and finite); COST_DEC
 * decode wire into acc (linear codecs); COST_CHECK the finite check of
 * acc. Repeated for at least 15 ms of CPU time (clock_cpu_seconds). */
enum cost_op { COST_ENC, COST_ADD, COST_DEC, COST_CHECK };

static double cost_op(const struct compressor *c, int setting, enum cost_op op, unsigned char *src,
                      unsigned char *acc, unsigned char *wire, unsigned char *st, size_t n,
                      size_t fb, int dtype)
{
    double t0 = clock_cpu_seconds(), t = 0;
    size_t bad;
    int reps = 0;
    char why[ERR_LEN];

    while (reps < 2 || t < 0.015) {
        if (op == COST_ENC && c->frame)
            c->frame->encode(setting, wire, src, n, dtype, st);
        else if (op == COST_ENC)
            c->encode(wire, src, n, dtype, c->state_elems ? st : NULL);
        else if (op == COST_ADD && c->frame)
            (void)c->frame->add(setting, acc, wire, fb, n, dtype, &bad, why);
        else if (op == COST_ADD)
            (void)c->add_finite(acc, wire, n, dtype, &bad);
        else if (op == COST_DEC)
            c->decode(acc, wire, n, dtype);
        else
            (void)vec_check_finite(acc, n, dtype, &bad);
        if (op == COST_ADD)
            memset(acc, 0, n * dtype_size(dtype));
        reps++;
        t = clock_cpu_seconds() - t0;
    }
    return t / ((double)reps * (double)n);
}

/* compress_cost: a codec's own CPU seconds per element of each operation,
 * measured apart here on n elements (capped at 2^22) of dtype (cost_op);
 * the buffers are allocated before the clocks start. A framed codec
 * (top-k, sign) has no plain decode: dec 0. All 0 for none and PowerSGD
 * (psgd_cost measures that); 0, or a negative error code when out of
 * memory. Which operations an algorithm runs, and how often: model_codec. */
int compress_cost(int setting, size_t n, int dtype, struct compress_costs *cc)
{
    const struct compressor *c = compress_get(setting);
    size_t es = dtype_size(dtype), cap = (size_t)1 << 22, fb;
    unsigned char *src = NULL, *acc = NULL, *wire = NULL, *st = NULL;
    int r = -ENOMEM;

    *cc = (struct compress_costs){ 0, 0, 0, 0 };
    n = n < cap ? (n ? n : 1) : cap;
    if (!c || c->kind == COMPRESS_NONE || c->rounds != 1 || es == 0)
        return 0;
    fb = compress_frame_bytes(setting, n, dtype);
    src = malloc(n * es);
    acc = calloc(n, es);
    wire = malloc(fb ? fb : 1);
    st = calloc(c->state_elems ? c->state_elems * n : 1, es);
    if (!src || !acc || !wire || !st)
        goto out;
    for (size_t i = 0; i < n; i++)
        vec_set(src, i, dtype, sin((double)i) * 1e-3);
    cc->enc = cost_op(c, setting, COST_ENC, src, acc, wire, st, n, fb, dtype);
    cc->dec_add = cost_op(c, setting, COST_ADD, src, acc, wire, st, n, fb, dtype);
    cc->dec = c->frame ? 0 : cost_op(c, setting, COST_DEC, src, acc, wire, st, n, fb, dtype);
    cc->check = cost_op(c, setting, COST_CHECK, src, acc, wire, st, n, fb, dtype);
    r = 0;
out:
    free(src);
    free(acc);
    free(wire);
    free(st);
    return r;
}
