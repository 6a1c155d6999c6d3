/* test_sgd.c -- the optimizer step divides by the global batch; the
 * optimizers with state (optim.h: momentum and Adam, their formulas, their
 * state, a shard updated in pieces); and the typed vector helpers every
 * combine step uses. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/optim.h"
#include "train/sgd.h"
#include "base/vec.h"

static void test_sgd(void)
{
    double w[3] = { 1.0, -2.0, 0.5 }, g[3] = { 64.0, -32.0, 0.0 };
    float wf[3] = { 1.0f, -2.0f, 0.5f }, gf[3] = { 64.0f, -32.0f, 0.0f };
    double w0[3];

    T_CASE("sgd-1.1", "update is w - lr * g_sum / B (B the global batch)");
    T_EQ_I(sgd_step(w, g, 3, DTYPE_F64, 0.5, 16), 0);
    T_EQ_D(w[0], 1.0 - 0.5 * 4.0);
    T_EQ_D(w[1], -2.0 + 0.5 * 2.0);
    T_EQ_D(w[2], 0.5);

    T_CASE("sgd-1.2", "f32 weights get the same step, rounded once");
    T_EQ_I(sgd_step(wf, gf, 3, DTYPE_F32, 0.5, 16), 0);
    T_EQ_D(wf[0], -1.0);
    T_EQ_D(wf[1], -1.0);

    T_CASE("sgd-1.3", "dividing by K instead of B would differ (the rule is tested, not assumed)");
    memcpy(w0, (double[]){ 0, 0, 0 }, sizeof w0);
    /* 4 workers, 16 examples in all: the sum over B differs from over K. */
    T_EQ_I(sgd_step(w0, g, 3, DTYPE_F64, 1.0, 16), 0);
    T_EQ_D(w0[0], -4.0);
    T_TRUE(w0[0] != -64.0 / 4.0);

    T_CASE("sgd-1.4", "batch 0 and non-finite lr are refused, weights untouched");
    w[0] = 3.0;
    T_EQ_I(sgd_step(w, g, 3, DTYPE_F64, 0.5, 0), ERR_USAGE);
    T_EQ_I(sgd_step(w, g, 3, DTYPE_F64, NAN, 4), ERR_USAGE);
    T_EQ_I(sgd_step(w, g, 3, DTYPE_F64, INFINITY, 4), ERR_USAGE);
    T_EQ_I(sgd_step(w, g, 3, 9, 0.5, 4), ERR_USAGE);
    T_EQ_D(w[0], 3.0);
    T_END();
}

static void test_vec(void)
{
    double a[4] = { 1, 2, 3, 4 }, b[4] = { 0.5, 0.5, 0.5, 0.5 };
    float fa[2] = { 1.0f, 2.0f }, fb[2] = { 0.25f, -4.0f };
    size_t bad = 99;

    T_CASE("sgd-3.1", "add, zero, get, set in both dtypes");
    vec_add(a, b, 4, DTYPE_F64);
    T_EQ_D(a[3], 4.5);
    vec_add(fa, fb, 2, DTYPE_F32);
    T_EQ_D(fa[0], 1.25);
    T_EQ_D(vec_get(fa, 1, DTYPE_F32), -2.0);
    vec_set(fa, 1, DTYPE_F32, 0.1);
    T_EQ_D(fa[1], (float)0.1);
    vec_zero(a, 4, DTYPE_F64);
    T_EQ_D(a[0] + a[1] + a[2] + a[3], 0.0);
    T_TRUE(!signbit(a[2]));

    T_CASE("sgd-3.2", "NaN, +Inf, -Inf are found with their index; subnormals pass");
    a[2] = NAN;
    T_EQ_I(vec_check_finite(a, 4, DTYPE_F64, &bad), ERR_NONFINITE);
    T_EQ_U(bad, 2);
    a[2] = 0.0;
    a[0] = -INFINITY;
    T_EQ_I(vec_check_finite(a, 4, DTYPE_F64, &bad), ERR_NONFINITE);
    T_EQ_U(bad, 0);
    a[0] = 4.9e-324;
    T_EQ_I(vec_check_finite(a, 4, DTYPE_F64, NULL), 0);
    fb[1] = INFINITY;
    T_EQ_I(vec_check_finite(fb, 2, DTYPE_F32, &bad), ERR_NONFINITE);
    T_EQ_U(bad, 1);

    T_CASE("sgd-3.3", "finite values whose sum overflows become Inf and are then caught");
    a[0] = 1.5e308;
    b[0] = 1.5e308;
    vec_add(a, b, 1, DTYPE_F64);
    T_EQ_I(vec_check_finite(a, 1, DTYPE_F64, NULL), ERR_NONFINITE);
    T_END();
}

/* test_vec_fused: vec_add_finite (the add with the finite check fused in:
 * the ring's, rd's and chain's reduce) and the vectorized
 * vec_check_finite, at lengths around the 16-lane (SSE) and 32-lane (AVX2)
 * blocks and their tails
 * (vec.c, THE CHECK), in both dtypes. */
#define FUSED_MAX 67
static void test_vec_fused(void)
{
    static const size_t lens[] = { 0, 1, 2, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, FUSED_MAX };
    static const int dts[] = { DTYPE_F32, DTYPE_F64 };
    double a[FUSED_MAX], b[FUSED_MAX], r[FUSED_MAX];   /* room for either dtype */
    const double bads[] = { NAN, INFINITY, -INFINITY };
    size_t bad;

    T_CASE("sgd-5.1", "vec_add_finite: the same bits as vec_add, 0 when every sum is finite");
    for (size_t d = 0; d < 2; d++)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            size_t n = lens[l];
            for (size_t i = 0; i < n; i++) {
                vec_set(a, i, dts[d], 0.1 * (double)i - 1.7);
                vec_set(b, i, dts[d], 1.0 / (double)(i + 3));
            }
            vec_set(b, 0, dts[d], 4.9e-324);                /* a subnormal (0 in f32) */
            memcpy(r, a, sizeof a);
            vec_add(r, b, n, dts[d]);
            bad = 77;
            T_EQ_I(vec_add_finite(a, b, n, dts[d], &bad), 0);
            T_EQ_U(bad, 77);
            T_EQ_I(memcmp(a, r, n * dtype_size(dts[d])), 0);
            T_EQ_I(vec_check_finite(a, n, dts[d], &bad), 0);
        }

    T_CASE("sgd-5.2", "vec_add_finite: a NaN or +-Inf received at any index is found, first index, all adds made");
    for (size_t d = 0; d < 2; d++)
        for (size_t l = 1; l < sizeof lens / sizeof lens[0]; l++)
            for (size_t k = 0; k < 3; k++)
                for (size_t at = 0; at < lens[l]; at++) {
                    size_t n = lens[l];
                    for (size_t i = 0; i < n; i++) {
                        vec_set(a, i, dts[d], 1.0);
                        vec_set(b, i, dts[d], 2.0);
                    }
                    vec_set(b, at, dts[d], bads[k]);
                    if (at + 3 < n)
                        vec_set(b, n - 1, dts[d], NAN);     /* a later one is not reported */
                    bad = 99;
                    T_EQ_I(vec_add_finite(a, b, n, dts[d], &bad), ERR_NONFINITE);
                    T_EQ_U(bad, at);
                    for (size_t i = 0; i < n; i++)              /* every other add made */
                        if (i != at && !(at + 3 < n && i == n - 1))
                            T_EQ_D(vec_get(a, i, dts[d]), 3.0);
                    bad = 99;
                    T_EQ_I(vec_check_finite(b, n, dts[d], &bad), ERR_NONFINITE);
                    T_EQ_U(bad, at);
                }

    T_CASE("sgd-5.3", "vec_add_finite: finite values whose sum overflows, or a bad value already in acc, are caught");
    for (size_t d = 0; d < 2; d++) {
        double big = dts[d] == DTYPE_F32 ? 3.0e38 : 1.5e308;
        for (size_t i = 0; i < 40; i++) {
            vec_set(a, i, dts[d], 1.0);
            vec_set(b, i, dts[d], 1.0);
        }
        vec_set(a, 21, dts[d], big);
        vec_set(b, 21, dts[d], big);
        T_EQ_I(vec_add_finite(a, b, 40, dts[d], &bad), ERR_NONFINITE);
        T_EQ_U(bad, 21);
        T_TRUE(isinf(vec_get(a, 21, dts[d])));
        vec_set(a, 21, dts[d], 1.0);
        vec_set(b, 21, dts[d], 1.0);
        vec_set(a, 38, dts[d], NAN);
        T_EQ_I(vec_add_finite(a, b, 40, dts[d], NULL), ERR_NONFINITE);
        vec_set(a, 38, dts[d], -0.0);
        T_EQ_I(vec_add_finite(a, b, 40, dts[d], &bad), 0);
    }

    T_CASE("sgd-5.4", "optim_update: an update that overflows a weight is ERR_NONFINITE");
    {
        struct optim o;
        struct optim_cfg c = { OPTIM_SGD, 3e38, OPTIM_DEFAULT_MOMENTUM, OPTIM_DEFAULT_BETA1,
                              OPTIM_DEFAULT_BETA2, OPTIM_DEFAULT_EPS };
        float w[3] = { 1.0f, -3.0e38f, 2.0f }, g[3] = { 0.0f, 2.0f, 0.0f };
        char err[ERR_LEN];
        T_EQ_I(optim_init(&o, &c, DTYPE_F32, 3, err), 0);
        T_EQ_I(optim_update(&o, 1, w, g, 3, 0, 1), ERR_NONFINITE);
        T_TRUE(isinf(w[1]));
        w[1] = 1.0f;
        T_EQ_I(optim_update(&o, 2, w, g, 3, 0, UINT64_C(1) << 62), 0);
        optim_destroy(&o);
    }
    T_END();
}

static void test_dtype(void)
{
    int dt = 0;
    T_CASE("sgd-4.1", "names and sizes");
    T_EQ_I(dtype_parse("f32", &dt), 0);
    T_EQ_I(dt, DTYPE_F32);
    T_EQ_I(dtype_parse("f64", &dt), 0);
    T_EQ_U(dtype_size(dt), 8);
    T_EQ_I(dtype_parse("f16", &dt), ERR_USAGE);
    T_EQ_U(dtype_size(0), 0);
    T_STR(dtype_name(DTYPE_F32), "f32");
    T_END();
}

/* The formulas of optim.h, written out again here for one element. */
static double adam_ref(double w, double *m, double *v, double g, double lr, double b1, double b2,
                       double eps, double t)
{
    const double c1 = 1.0 - pow(b1, t), c2 = 1.0 - pow(b2, t);

    *m = b1 * *m + (1.0 - b1) * g;
    *v = b2 * *v + (1.0 - b2) * (g * g);
    return w - lr * ((*m / c1) / (sqrt(*v / c2) + eps));
}

static void test_optim(void)
{
    char err[ERR_LEN];
    struct optim_cfg mc = { OPTIM_MOMENTUM, 0.1, 0.9, 0.9, 0.999, 1e-8 };
    struct optim_cfg ac = { OPTIM_ADAM, 0.01, 0.9, 0.9, 0.999, 1e-8 };
    struct optim o;
    int k;

    T_CASE("sgd-2.1", "momentum: m = mu m + g, w -= lr m, with g = g_sum / B; two steps");
    {
        double w[2] = { 1.0, -2.0 }, g[2] = { 2.0, 6.0 }, m0 = 0, m1 = 0, w0 = 1.0, w1 = -2.0;
        T_EQ_I(optim_init(&o, &mc, DTYPE_F64, 2, err), 0);
        T_EQ_U(o.state_bytes, 2 * sizeof(double));
        for (uint64_t t = 1; t <= 2; t++) {
            T_EQ_I(optim_update(&o, t, w, g, 2, 0, 2), 0);
            m0 = 0.9 * m0 + 2.0 / 2.0;
            w0 = w0 - 0.1 * m0;
            m1 = 0.9 * m1 + 6.0 / 2.0;
            w1 = w1 - 0.1 * m1;
        }
        T_EQ_D(w[0], w0);
        T_EQ_D(w[1], w1);
        T_EQ_D(((double *)optim_state(&o, 0, 0))[1], m1);
        T_EQ_D(w[0], 1.0 - 0.1 * 1.0 - 0.1 * 1.9);      /* 0.71, by hand */
        T_EQ_U(o.t, 2);
        optim_destroy(&o);
    }

    T_CASE("sgd-2.2", "adam: the moments, the host's bias corrections, sqrt, eps; 3 steps f64");
    {
        double w[3] = { 0.5, -0.25, 0 }, g[3] = { 3.0, -1.5, 0.0 }, rw[3], rm[3] = { 0 },
               rv[3] = { 0 };
        memcpy(rw, w, sizeof rw);
        T_EQ_I(optim_init(&o, &ac, DTYPE_F64, 3, err), 0);
        T_EQ_U(o.state_bytes, 6 * sizeof(double));
        for (uint64_t t = 1; t <= 3; t++) {
            T_EQ_I(optim_update(&o, t, w, g, 3, 0, 3), 0);
            for (int i = 0; i < 3; i++)
                rw[i] = adam_ref(rw[i], &rm[i], &rv[i], g[i] / 3.0, 0.01, 0.9, 0.999, 1e-8,
                                 (double)t);
        }
        for (int i = 0; i < 3; i++)
            T_EQ_D(w[i], rw[i]);
        /* A zero gradient leaves its weight (0 / (0 + eps)). */
        T_NEAR(w[2], 0.0, 0.0);
        T_EQ_D(((double *)optim_state(&o, 1, 0))[0], rv[0]);
        optim_destroy(&o);
    }

    T_CASE("sgd-2.3", "f32: weights and state stored as f32, each rounded once from double");
    {
        float w[2] = { 0.1f, -0.3f }, g[2] = { 0.7f, 0.2f };
        float rw[2] = { 0.1f, -0.3f }, rm[2] = { 0 }, rv[2] = { 0 };
        T_EQ_I(optim_init(&o, &ac, DTYPE_F32, 2, err), 0);
        T_EQ_U(o.state_bytes, 4 * sizeof(float));
        for (uint64_t t = 1; t <= 2; t++) {
            const double c1 = 1.0 - pow(0.9, (double)t), c2 = 1.0 - pow(0.999, (double)t);
            T_EQ_I(optim_update(&o, t, w, g, 2, 0, 5), 0);
            for (int i = 0; i < 2; i++) {
                const double gi = (double)g[i] / 5.0;
                rm[i] = (float)(0.9 * (double)rm[i] + (1.0 - 0.9) * gi);
                rv[i] = (float)(0.999 * (double)rv[i] + (1.0 - 0.999) * (gi * gi));
                rw[i] = (float)((double)rw[i] -
                                0.01 * (((double)rm[i] / c1) / (sqrt((double)rv[i] / c2) + 1e-8)));
            }
        }
        T_TRUE(memcmp(w, rw, sizeof w) == 0);
        T_TRUE(memcmp(optim_state(&o, 0, 0), rm, sizeof rm) == 0);
        T_TRUE(memcmp(optim_state(&o, 1, 0), rv, sizeof rv) == 0);
        optim_destroy(&o);
    }

    T_CASE("sgd-2.4", "a shard updated in pieces (ZeRO) == the whole vector in one call, bit for bit");
    {
        enum { N = 11 };
        double wa[N], wb[N], g[N];
        struct optim a, b;
        for (int i = 0; i < N; i++) {
            wa[i] = wb[i] = 0.1 * i - 0.4;
            g[i] = 0.37 * (i % 4) - 0.5;
        }
        T_EQ_I(optim_init(&a, &ac, DTYPE_F64, N, err), 0);
        T_EQ_I(optim_init(&b, &ac, DTYPE_F64, N, err), 0);
        for (uint64_t t = 1; t <= 4; t++) {
            T_EQ_I(optim_update(&a, t, wa, g, N, 0, 7), 0);
            T_EQ_I(optim_update(&b, t, wb, g, 4, 0, 7), 0);
            T_EQ_I(optim_update(&b, t, wb + 4, g + 4, 5, 4, 7), 0);
            T_EQ_I(optim_update(&b, t, wb + 9, g + 9, 2, 9, 7), 0);
        }
        T_TRUE(memcmp(wa, wb, sizeof wa) == 0);
        T_TRUE(memcmp(a.state, b.state, a.state_bytes) == 0);
        optim_destroy(&a);
        optim_destroy(&b);
    }

    T_CASE("sgd-2.5", "sgd through optim == sgd_step; no state; bad t, batch, range refused");
    {
        struct optim_cfg sc = { OPTIM_SGD, 0.5, 0.9, 0.9, 0.999, 1e-8 };
        double w[3] = { 1, 2, 3 }, w2[3] = { 1, 2, 3 }, g[3] = { 4, -8, 0.5 };
        T_EQ_I(optim_init(&o, &sc, DTYPE_F64, 3, err), 0);
        T_EQ_U(o.state_bytes, 0);
        T_TRUE(optim_state(&o, 0, 0) == NULL);
        T_EQ_I(optim_update(&o, 1, w, g, 3, 0, 16), 0);
        T_EQ_I(sgd_step(w2, g, 3, DTYPE_F64, 0.5, 16), 0);
        T_TRUE(memcmp(w, w2, sizeof w) == 0);
        optim_destroy(&o);
        T_EQ_I(optim_init(&o, &mc, DTYPE_F64, 3, err), 0);
        T_EQ_I(optim_update(&o, 0, w, g, 3, 0, 16), ERR_USAGE);
        T_EQ_I(optim_update(&o, 1, w, g, 3, 0, 0), ERR_USAGE);
        T_EQ_I(optim_update(&o, 1, w, g, 2, 2, 16), ERR_USAGE);
        T_TRUE(memcmp(w, w2, sizeof w) == 0);   /* untouched by the refusals */
        optim_destroy(&o);
    }

    T_CASE("sgd-2.6", "names, slots and the configuration's bounds");
    {
        struct optim_cfg bad = ac;
        T_EQ_I(optim_parse("adam", &k), 0);
        T_EQ_I(k, OPTIM_ADAM);
        T_EQ_I(optim_parse("momentum", &k), 0);
        T_EQ_I(k, OPTIM_MOMENTUM);
        T_EQ_I(optim_parse("Adam", &k), ERR_USAGE);
        T_STR(optim_name(OPTIM_SGD), "sgd");
        T_EQ_I(optim_slots(OPTIM_ADAM), 2);
        T_EQ_U(optim_state_bytes(OPTIM_MOMENTUM, DTYPE_F32, 10), 40);
        bad.beta2 = 1.0;
        T_EQ_I(optim_cfg_check(&bad, err), ERR_USAGE);
        T_HAS(err, "beta2");
        bad = ac;
        bad.eps = 0;
        T_EQ_I(optim_init(&o, &bad, DTYPE_F64, 3, err), ERR_USAGE);
        bad = mc;
        bad.momentum = -0.1;
        T_EQ_I(optim_cfg_check(&bad, err), ERR_USAGE);
        bad.momentum = 0.5;
        bad.lr = NAN;
        T_EQ_I(optim_cfg_check(&bad, err), ERR_USAGE);
        T_EQ_I(optim_cfg_check(&ac, err), 0);
    }

    T_CASE("sgd-2.7", "the scalars: 1 - b^t from the host, once per update");
    {
        struct optim_coef c;
        optim_scalars(&ac, 3, &c);
        T_EQ_D(c.c1, 1.0 - pow(0.9, 3.0));
        T_EQ_D(c.c2, 1.0 - pow(0.999, 3.0));
        T_EQ_D(c.one_b1, 1.0 - 0.9);
        T_EQ_D(c.one_b2, 1.0 - 0.999);
        T_EQ_I(c.kind, OPTIM_ADAM);
    }
    T_END();
}

int main(void)
{
    test_sgd();
    test_optim();
    test_vec();
    test_vec_fused();
    test_dtype();
    return t_done();
}
