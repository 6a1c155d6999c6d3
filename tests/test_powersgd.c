/* test_powersgd.c -- PowerSGD's compressor (common/base/powersgd.c) and
 * its kind in the compressor table (common/base/compress.c), without
 * sockets: K ranks are K psgd states in one process, and the all-reduce
 * between the rounds is a sum in rank order here.
 *
 * Ids: powersgd-1.x the table (parse, names, the parameterized kind, what
 * is refused); powersgd-2.x the math: Gram-Schmidt gives orthonormal
 * columns, a rank-R matrix comes back exact within rounding (one rank and
 * three), which matrices pay, the round lengths (factors plus raw
 * elements); powersgd-3.x error feedback: the residual is M - M^ / K and
 * is added to the next step's gradient (so what was not delivered is
 * delivered later), noef keeps none, raw elements pass bit for bit, and
 * every rank decodes the same bits.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/powersgd.h"
#include "base/vec.h"
#include "check.h"

static void table(void)
{
    int kind = -1;

    T_CASE("powersgd-1.1", "parse powersgd:R and :noef, names round-trip, R out of range refused");
    T_EQ_I(compress_parse("powersgd:2", &kind), 0);
    T_EQ_I(COMPRESS_KIND(kind), COMPRESS_POWERSGD);
    T_EQ_I(COMPRESS_PSGD_RANK(kind), 2);
    T_TRUE(COMPRESS_PSGD_EF(kind));
    T_STR(compress_name(kind), "powersgd:2");
    T_EQ_I(compress_parse("powersgd:16:noef", &kind), 0);
    T_EQ_I(COMPRESS_PSGD_RANK(kind), 16);
    T_TRUE(!COMPRESS_PSGD_EF(kind));
    T_STR(compress_name(kind), "powersgd:16:noef");
    T_EQ_I(compress_parse("powersgd:0", &kind), ERR_USAGE);
    T_EQ_I(compress_parse("powersgd:17", &kind), ERR_USAGE);
    T_EQ_I(compress_parse("powersgd", &kind), ERR_USAGE);
    T_EQ_I(compress_parse("powersgd:2:ef", &kind), ERR_USAGE);

    T_CASE("powersgd-1.2", "compress_get: the kind with R 1..16 only; two rounds, no one-pass codec");
    T_TRUE(compress_get(COMPRESS_POWERSGD) == NULL);            /* R 0 */
    T_TRUE(compress_get(COMPRESS_PSGD(17, 0)) == NULL);
    T_TRUE(compress_get(COMPRESS_FP16 | (2 << 9)) == NULL);     /* fp16 has no R */
    T_TRUE(compress_get(COMPRESS_PSGD(4, 1) | (1 << 20)) == NULL);
    const struct compressor *c = compress_get(COMPRESS_PSGD(4, 1));
    T_TRUE(c && c->rounds == 2 && c->linear && !c->encode && !c->decode && !c->add_finite);
    T_EQ_I(compress_get(COMPRESS_BF16)->rounds, 1);
    T_STR(compress_name(COMPRESS_PSGD(4, 1)), "powersgd:4:noef");
}

/* orth_err: the largest |P^T P - I| entry. */
static double orth_err(const double *p, size_t rows, int r)
{
    double worst = 0;
    for (int a = 0; a < r; a++)
        for (int b = 0; b < r; b++) {
            double s = 0;
            for (size_t x = 0; x < rows; x++)
                s += p[x * (size_t)r + (size_t)a] * p[x * (size_t)r + (size_t)b];
            worst = fmax(worst, fabs(s - (a == b)));
        }
    return worst;
}

/* lowrank: a rows x cols f64 matrix of rank r (a sum of r outer products
 * of seeded vectors), into m. */
static void lowrank(double *m, size_t rows, size_t cols, int r, unsigned seed)
{
    memset(m, 0, rows * cols * sizeof *m);
    for (int k = 0; k < r; k++)
        for (size_t x = 0; x < rows; x++)
            for (size_t c = 0; c < cols; c++) {
                double u = sin((double)(seed + 7 * k + 1) * (double)(x + 1));
                double v = cos((double)(seed + 3 * k + 2) * (double)(c + 1) * 0.7);
                m[x * cols + c] += u * v;
            }
}

/* allreduce_step: one PowerSGD step over K states, each with its own
 * gradient g[r] (n elements of dtype): round 0, the sum, round 1, the sum,
 * decode into g[r]. The sums in rank order, in the dtype. */
static int allreduce_step(struct psgd *ps, void **g, int k, size_t first, size_t count)
{
    size_t n0 = psgd_round_len(&ps[0], first, count, 0);
    size_t n1 = psgd_round_len(&ps[0], first, count, 1), bad = 0;
    int dt = ps[0].dtype, rc = 0;

    for (int r = 0; r < k; r++)
        psgd_encode_p(&ps[r], g[r], first, count);
    for (int r = 1; r < k; r++)
        vec_add(ps[0].round[0], ps[r].round[0], n0, dt);
    for (int r = 1; r < k; r++)
        memcpy(ps[r].round[0], ps[0].round[0], n0 * dtype_size(dt));
    for (int r = 0; r < k; r++)
        psgd_encode_q(&ps[r], first, count);
    for (int r = 1; r < k; r++)
        vec_add(ps[0].round[1], ps[r].round[1], n1, dt);
    for (int r = 1; r < k; r++)
        memcpy(ps[r].round[1], ps[0].round[1], n1 * dtype_size(dt));
    for (int r = 0; r < k; r++)
        rc |= psgd_decode(&ps[r], g[r], first, count, k, &bad);
    return rc;
}

static void math(void)
{
    enum { ROWS = 24, COLS = 16 };
    double p[ROWS * 4], m[ROWS * COLS], *g[1], worst = 0;
    struct psgd ps;
    struct psgd_mat mat = { 0, ROWS, COLS };

    T_CASE("powersgd-2.1", "Gram-Schmidt: orthonormal columns; a dependent column and a zero one become 0");
    for (size_t i = 0; i < ROWS * 4; i++)
        p[i] = sin(1.0 + (double)(i * i) * 0.37) + (i % 4 == 1 ? 3.0 : 0.0);
    psgd_orthonormalize(p, ROWS, 4);
    T_LE(orth_err(p, ROWS, 4), 1e-12);
    for (size_t x = 0; x < ROWS; x++) {
        p[x * 3] = (double)x;
        p[x * 3 + 1] = 2.0 * (double)x;         /* parallel to column 0: nothing left */
        p[x * 3 + 2] = 0;
    }
    psgd_orthonormalize(p, ROWS, 3);
    for (size_t x = 0; x < ROWS; x++)
        worst = fmax(worst, fabs(p[x * 3 + 1]) + fabs(p[x * 3 + 2]));
    T_LE(worst, 1e-12);                         /* rounding's remnant of column 1 at most */

    for (int r = 1; r <= 3; r += 2) {
        T_CASE(r == 1 ? "powersgd-2.2" : "powersgd-2.3", r == 1 ? "a rank-1 24 x 16 matrix at R = 1: P Q^T is M within 1e-12 (f64, K 1)"
                          : "a rank-3 24 x 16 matrix at R = 3: P Q^T is M within 1e-12 (f64, K 1)");
        lowrank(m, ROWS, COLS, r, 5);
        double want[ROWS * COLS], scale = 0;
        memcpy(want, m, sizeof m);
        for (size_t i = 0; i < ROWS * COLS; i++)
            scale = fmax(scale, fabs(want[i]));
        T_EQ_I(psgd_init(&ps, ROWS * COLS, 0, DTYPE_F64, &mat, 1, r, 1, 7), 0);
        g[0] = m;
        T_EQ_I(allreduce_step(&ps, (void **)g, 1, 0, ROWS * COLS), 0);
        worst = 0;
        for (size_t i = 0; i < ROWS * COLS; i++)
            worst = fmax(worst, fabs(m[i] - want[i]));
        T_LE(worst, 1e-12 * scale);
        worst = 0;
        for (size_t i = 0; i < ROWS * COLS; i++)
            worst = fmax(worst, fabs(ps.e[i]));
        T_LE(worst, 1e-12 * scale);             /* nothing left over */
        psgd_destroy(&ps);
    }

    T_CASE("powersgd-2.4", "what pays: (rows + cols) R < rows cols; near-square shapes; round lengths");
    T_TRUE(psgd_pays(64, 32, 2) && psgd_pays(64, 64, 31) && !psgd_pays(64, 64, 32));
    T_TRUE(!psgd_pays(1, 64, 1) && !psgd_pays(3, 4, 2) && psgd_pays(3, 4, 1));
    size_t rr, cc;
    psgd_near_square(12, &rr, &cc);
    T_TRUE(rr == 3 && cc == 4);
    psgd_near_square(6337, &rr, &cc);           /* 6337 = 6337 x 1: prime */
    T_TRUE(rr == 1 && cc == 6337);
    psgd_near_square(4096, &rr, &cc);
    T_TRUE(rr == 64 && cc == 64);
    {   /* the mlp's table (mlp.h) at R = 2, a 3-element trailer behind */
        struct psgd_mat mlp[3] = { { 0, 64, 32 }, { 2112, 64, 64 }, { 6272, 1, 64 } };
        T_EQ_I(psgd_init(&ps, 6337, 3, DTYPE_F32, mlp, 3, 2, 1, 7), 0);
        T_EQ_U(ps.nmat, 2);                     /* W3 1 x 64 does not pay */
        T_EQ_U(psgd_round_len(&ps, 0, 6340, 0), 64 * 2 + 64 * 2 + (6340 - 2048 - 4096));
        T_EQ_U(psgd_round_len(&ps, 0, 6340, 1), 32 * 2 + 64 * 2);
        T_EQ_U(psgd_wire_elems(&ps, 3), 644);
        T_EQ_U(psgd_round_len(&ps, 0, 2112, 1), 64);      /* a bucket of layer 0 only */
        T_EQ_U(psgd_round_len(&ps, 100, 6000, 1), 0);     /* no whole matrix inside */
        psgd_destroy(&ps);
    }
    T_EQ_I(psgd_init(&ps, 10, 0, DTYPE_F32, &mat, 1, 2, 1, 7), ERR_USAGE);  /* past n */
    T_EQ_I(psgd_init(&ps, ROWS * COLS, 0, DTYPE_F32, &mat, 1, 0, 1, 7), ERR_USAGE);
}

static void feedback(void)
{
    enum { K = 3, ROWS = 12, COLS = 10, N = ROWS * COLS + 5, STEPS = 200 };   /* 5 raw elements behind */
    struct psgd ps[K], ref;
    struct psgd_mat mat = { 0, ROWS, COLS };
    double g[K][N], orig[K][N], prev_e[K][N];
    void *gp[K];

    T_CASE("powersgd-3.1", "K 3, R 1, full-rank gradients: every rank decodes the same bits; "
           "e = M - M^/K; the raw tail is the exact sum");
    for (int r = 0; r < K; r++) {
        T_EQ_I(psgd_init(&ps[r], N, 0, DTYPE_F64, &mat, 1, 1, 1, 7), 0);
        gp[r] = g[r];
        for (size_t i = 0; i < N; i++)
            orig[r][i] = g[r][i] = sin(0.3 * (double)(i + 1) * (double)(r + 2)) + 0.01 * (double)r;
    }
    T_EQ_I(allreduce_step(ps, gp, K, 0, N), 0);
    T_TRUE(memcmp(g[0], g[1], sizeof g[0]) == 0 && memcmp(g[0], g[2], sizeof g[0]) == 0);
    double worst = 0, sum_e = 0, miss = 0;
    for (size_t i = 0; i < ROWS * COLS; i++) {
        double msum = 0, esum = 0;
        for (int r = 0; r < K; r++) {
            worst = fmax(worst, fabs(ps[r].e[i] - (orig[r][i] - g[r][i] / K)));
            msum += orig[r][i];
            esum += ps[r].e[i];
        }
        sum_e = fmax(sum_e, fabs(esum - (msum - g[0][i])));   /* sum e = sum M - M^ */
        miss = fmax(miss, fabs(esum));
    }
    T_LE(worst, 1e-15);
    T_LE(sum_e, 1e-12);
    T_TRUE(miss > 1e-3);                        /* rank 1 of a full-rank sum: a residual */
    for (size_t i = ROWS * COLS; i < N; i++)
        T_EQ_D(g[0][i], (orig[0][i] + orig[1][i]) + orig[2][i]);

    T_CASE("powersgd-3.2", "the residual is added to the next step's gradient; with noef it is not");
    T_EQ_I(psgd_init(&ref, N, 0, DTYPE_F64, &mat, 1, 1, 0, 7), 0);      /* noef */
    for (int r = 0; r < K; r++) {
        memcpy(prev_e[r], ps[r].e, sizeof prev_e[r]);
        for (size_t i = 0; i < N; i++)
            g[r][i] = 0;                        /* a zero gradient: M is the residual alone */
    }
    psgd_encode_p(&ps[0], g[0], 0, N);
    worst = 0;
    for (size_t i = 0; i < ROWS * COLS; i++)
        worst = fmax(worst, fabs(ps[0].m[i] - prev_e[0][i]));
    T_EQ_D(worst, 0.0);
    psgd_encode_p(&ref, g[0], 0, N);
    worst = 0;
    for (size_t i = 0; i < ROWS * COLS; i++)
        worst = fmax(worst, fabs(ref.m[i]) + fabs(ref.e[i]));
    T_EQ_D(worst, 0.0);
    psgd_destroy(&ref);

    T_CASE("powersgd-3.3", "error feedback delivers over steps: 200 steps of the same full-rank "
           "gradient at R 1 deliver its sum within 2% (noef: misses it by more than 10%)");
    for (int ef = 1; ef >= 0; ef--) {
        double delivered[N] = { 0 }, want = 0, err2 = 0;
        for (int r = 0; r < K; r++) {
            psgd_destroy(&ps[r]);
            T_EQ_I(psgd_init(&ps[r], N, 0, DTYPE_F64, &mat, 1, 1, ef, 7), 0);
        }
        for (int s = 0; s < STEPS; s++) {
            for (int r = 0; r < K; r++)
                memcpy(g[r], orig[r], sizeof g[r]);
            T_EQ_I(allreduce_step(ps, gp, K, 0, N), 0);
            for (size_t i = 0; i < ROWS * COLS; i++)
                delivered[i] += g[0][i];
        }
        for (size_t i = 0; i < ROWS * COLS; i++) {
            double one = (orig[0][i] + orig[1][i]) + orig[2][i];
            want += (STEPS * one) * (STEPS * one);
            err2 += (delivered[i] - STEPS * one) * (delivered[i] - STEPS * one);
        }
        printf("     ef %d: %g\n", ef, sqrt(err2 / want));
        if (ef)
            T_LE(sqrt(err2 / want), 0.02);
        else
            T_TRUE(sqrt(err2 / want) > 0.1);
    }
    for (int r = 0; r < K; r++)
        psgd_destroy(&ps[r]);
}

int main(void)
{
    table();
    math();
    feedback();
    return t_done();
}
