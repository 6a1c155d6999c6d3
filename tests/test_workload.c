/* test_workload.c -- workload determinism, the synthetic closed form, the
 * batch split, linreg's and the mlp's gradients against finite
 * differences, the layer callbacks, the mlp training, the EMULATED
 * backward time, and the workload's command-line flags. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "train/cli_common.h"
#include "cli_line.h"
#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/mlp.h"
#include "base/rng.h"
#include "train/sgd.h"
#include "base/vec.h"
#include "train/workload.h"

static struct workload make(int kind, int dtype, uint64_t params, uint64_t batch, uint64_t seed)
{
    struct workload w;
    struct workload_cfg c = { .kind = kind, .dtype = dtype, .seed = seed,
                              .params = params, .batch = batch };
    int rc = workload_create(&w, &c);
    if (rc != 0) {
        printf("workload_create failed: %s\n", err_str(rc));
        exit(1);
    }
    return w;
}

/* The K-way split of [0, total) covers it exactly, in order. */
static int split_covers(uint64_t total, int parts, const double *weights)
{
    uint64_t next = 0;
    for (int k = 0; k < parts; k++) {
        uint64_t lo, hi;
        workload_split(total, parts, k, weights, &lo, &hi);
        if (lo != next || hi < lo)
            return 0;
        next = hi;
    }
    return next == total;
}

static void test_split(void)
{
    uint64_t lo, hi;
    double wts[4] = { 3, 1, 1, 1 };
    struct rng r;

    T_CASE("workload-1.1", "equal split is numpy's array_split");
    workload_split(10, 3, 0, NULL, &lo, &hi);
    T_EQ_U(lo, 0); T_EQ_U(hi, 4);
    workload_split(10, 3, 1, NULL, &lo, &hi);
    T_EQ_U(lo, 4); T_EQ_U(hi, 7);
    workload_split(10, 3, 2, NULL, &lo, &hi);
    T_EQ_U(lo, 7); T_EQ_U(hi, 10);
    workload_split(4096, 8, 7, NULL, &lo, &hi);
    T_EQ_U(hi - lo, 512);
    workload_split(2, 4, 3, NULL, &lo, &hi);    /* more parts than rows */
    T_EQ_U(hi - lo, 0);

    T_CASE("workload-1.2", "weighted split is proportional and covers the batch");
    workload_split(600, 4, 0, wts, &lo, &hi);
    T_EQ_U(lo, 0); T_EQ_U(hi, 300);
    workload_split(600, 4, 3, wts, &lo, &hi);
    T_EQ_U(lo, 500); T_EQ_U(hi, 600);
    workload_split(7, 4, 0, wts, &lo, &hi);     /* 3.5 -> 3 or 4 */
    T_TRUE(hi - lo == 3 || hi - lo == 4);
    T_TRUE(split_covers(7, 4, wts));

    T_CASE("workload-1.3", "splits cover every total; weighted parts within one row of their share");
    rng_seed(&r, 1);
    for (int it = 0; it < 2000; it++) {
        int parts = 1 + (int)(rng_next(&r) % 40);
        uint64_t total = rng_next(&r) % 5000;
        double w[40];
        for (int k = 0; k < parts; k++)
            w[k] = 0.1 + rng_uniform(&r) * 10;
        double wsum = 0.0;
        for (int k = 0; k < parts; k++)
            wsum += w[k];
        for (int k = 0; k < parts; k++) {
            workload_split(total, parts, k, w, &lo, &hi);
            if (!(fabs((double)(hi - lo) - (double)total * w[k] / wsum) < 1.0)) {
                T_TRUE(!"a weighted part is more than one row off its share");
                printf("     total %llu part %d of %d: %llu rows\n", (unsigned long long)total,
                       k, parts, (unsigned long long)(hi - lo));
                it = 2000;
                break;
            }
        }
        if (!split_covers(total, parts, NULL) || !split_covers(total, parts, w)) {
            T_TRUE(!"split does not cover");
            printf("     total %llu parts %d\n", (unsigned long long)total, parts);
            break;
        }
    }
    T_END();
}

/* Sum the synthetic gradients of an arbitrary contiguous partition of the
 * batch, in a random order, and compare with the closed form F(0, B). */
static void synth_partition_check(int dtype, uint64_t batch, int parts, uint64_t seed,
                                  int *exact)
{
    struct workload w = make(WORKLOAD_SYNTHETIC, dtype, 1000, batch, seed);
    size_t es = dtype_size(dtype);
    char *want = calloc(w.n, es), *got = calloc(w.n, es), *part = calloc(w.n, es);
    uint64_t *cut = calloc((size_t)parts + 1, sizeof *cut);
    int *order = calloc((size_t)parts, sizeof *order);
    struct rng r;

    rng_seed(&r, seed * 31 + (uint64_t)parts);
    workload_grad_add(&w, NULL, 5, 0, batch, want, NULL);
    /* random cut points, sorted */
    cut[0] = 0;
    cut[parts] = batch;
    for (int k = 1; k < parts; k++)
        cut[k] = rng_next(&r) % (batch + 1);
    for (int k = 1; k < parts; k++)
        for (int j = k + 1; j < parts; j++)
            if (cut[j] < cut[k]) { uint64_t t = cut[j]; cut[j] = cut[k]; cut[k] = t; }
    for (int k = 0; k < parts; k++)
        order[k] = k;
    for (int k = parts - 1; k > 0; k--) {
        int j = (int)(rng_next(&r) % (uint64_t)(k + 1)), t = order[k];
        order[k] = order[j]; order[j] = t;
    }
    for (int k = 0; k < parts; k++) {
        vec_zero(part, w.n, dtype);
        workload_grad_add(&w, NULL, 5, cut[order[k]], cut[order[k] + 1], part, NULL);
        vec_add(got, part, w.n, dtype);
    }
    *exact = memcmp(want, got, w.n * es) == 0;
    free(want); free(got); free(part); free(cut); free(order);
    workload_destroy(&w);
}

static void test_synthetic(void)
{
    struct workload a = make(WORKLOAD_SYNTHETIC, DTYPE_F32, 4096, 0, 11);
    struct workload b = make(WORKLOAD_SYNTHETIC, DTYPE_F32, 4096, 0, 11);
    struct workload c = make(WORKLOAD_SYNTHETIC, DTYPE_F32, 4096, 0, 12);
    float *ga = calloc(4096, 4), *gb = calloc(4096, 4), *gc = calloc(4096, 4);
    int exact, nonzero = 0;

    T_CASE("workload-2.1", "synthetic is a pure function of seed, step, range");
    workload_grad_add(&a, NULL, 3, 100, 300, ga, NULL);
    workload_grad_add(&b, NULL, 3, 100, 300, gb, NULL);
    workload_grad_add(&c, NULL, 3, 100, 300, gc, NULL);
    T_TRUE(memcmp(ga, gb, 4096 * 4) == 0);
    T_TRUE(memcmp(ga, gc, 4096 * 4) != 0);
    for (int i = 0; i < 4096; i++)
        nonzero += ga[i] != 0.0f;
    T_LE(4000, nonzero);      /* values vary, not a constant vector */
    T_EQ_U(a.batch, WORKLOAD_SYNTH_BATCH);
    T_EQ_U(a.nlayers, WORKLOAD_SYNTH_LAYERS);
    T_EQ_U(a.layer_off[a.nlayers], 4096);
    {
        /* --layers L: L equal layers (at most n); the gradient does not change */
        struct workload_cfg lc = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F32, .seed = 11,
                                   .params = 4096, .layers = 100 };
        struct workload l100;
        float *gl = calloc(4096, 4);
        T_EQ_I(workload_create(&l100, &lc), 0);
        T_EQ_U(l100.nlayers, 100);
        T_EQ_U(l100.layer_off[1], 41);          /* 4096 = 96 x 41 + 4 x 40: sizes differ by 1 */
        T_EQ_U(l100.layer_off[100], 4096);
        workload_grad_add(&l100, NULL, 3, 100, 300, gl, NULL);
        T_TRUE(memcmp(ga, gl, 4096 * 4) == 0);
        workload_destroy(&l100);
        lc.params = 10;
        T_EQ_I(workload_create(&l100, &lc), 0);
        T_EQ_U(l100.nlayers, 10);               /* no more layers than elements */
        workload_destroy(&l100);
        free(gl);
    }

    T_CASE("workload-2.2", "values are multiples of 1/16 (dyadic)");
    for (int i = 0; i < 4096; i++)
        if (ga[i] * 16.0f != floorf(ga[i] * 16.0f)) {
            T_TRUE(!"not a multiple of 1/16");
            printf("     element %d = %.9g\n", i, ga[i]);
            break;
        }

    T_CASE("workload-2.3", "any partition, any order, sums to the closed form exactly (f32)");
    for (int parts = 1; parts <= 64; parts *= 2) {
        synth_partition_check(DTYPE_F32, WORKLOAD_SYNTH_MAX_BATCH, parts, 3, &exact);
        T_TRUE(exact);
        synth_partition_check(DTYPE_F32, 1000, parts + 1, 4, &exact);
        T_TRUE(exact);
    }

    T_CASE("workload-2.4", "the same holds in f64");
    for (int parts = 1; parts <= 64; parts *= 4) {
        synth_partition_check(DTYPE_F64, WORKLOAD_SYNTH_MAX_BATCH, parts, 5, &exact);
        T_TRUE(exact);
    }

    T_CASE("workload-2.6", "synthetic values are workload.h's hash formula, bit for bit");
    {
        /* The formula spelled out the long way (twelve mixes an element, as
         * before the key was hoisted; gpu/gpu_workload.cu must agree too). */
        struct workload w = make(WORKLOAD_SYNTHETIC, DTYPE_F64, 1000, 0, 99);
        double *g = calloc(1000, sizeof *g);
        const uint64_t step = 7, lo = 13, hi = 500;
        int same = 1;
        workload_grad_add(&w, NULL, step, lo, hi, g, NULL);
        for (uint64_t i = 0; i < 1000 && same; i++) {
            uint64_t h[3], x[3] = { UINT64_MAX, hi, lo };
            double d[3];
            for (int k = 0; k < 3; k++) {
                h[k] = rng_mix(rng_mix(rng_mix(99 ^ 0x5053524755ULL) ^ step) ^ i) ^ rng_mix(x[k]);
                d[k] = (double)((int)(h[k] % 17) - 8) / 16.0;
            }
            if (g[i] != (double)(hi - lo) * d[0] + d[1] - d[2]) {
                printf("     element %llu = %.17g, want %.17g\n", (unsigned long long)i, g[i],
                       (double)(hi - lo) * d[0] + d[1] - d[2]);
                same = 0;
            }
        }
        T_TRUE(same);
        free(g);
        workload_destroy(&w);
    }

    T_CASE("workload-2.7", "the synthetic gradient's AVX-512 loop (where the CPU has one) gives "
           "the scalar loop's bits: seeds, steps, ranges, odd sizes, f32 and f64, added to "
           "what grad held");
    {
        const uint64_t seeds[] = { 1, 99, 0x8000000000000005ULL }, steps[] = { 0, 7, 1ULL << 40 };
        const uint64_t sizes[] = { 1, 17, 1000, 4099 };
        const uint64_t ranges[][2] = { { 0, 1 }, { 13, 500 }, { 0, WORKLOAD_SYNTH_MAX_BATCH },
                                       { 777, 778 } };
        int same = 1, cases = 0;
        printf("     the AVX-512 loop: %s\n", workload_synth_wide(1) ? "in use" : "none here");
        for (int dt = 0; dt < 2; dt++)
            for (size_t sd = 0; sd < 3; sd++)
                for (size_t z = 0; z < 4; z++)
                    for (size_t r = 0; r < 4; r++) {
                        const int dtype = dt ? DTYPE_F64 : DTYPE_F32;
                        const size_t n = (size_t)sizes[z], es = dtype_size(dtype);
                        struct workload w = make(WORKLOAD_SYNTHETIC, dtype, n, 0, seeds[sd]);
                        unsigned char *g0 = malloc(n * es), *g1 = malloc(n * es);
                        for (size_t i = 0; i < n; i++)
                            vec_set(g0, i, dtype, (double)(i % 5) * 0.25 - 0.5);
                        memcpy(g1, g0, n * es);
                        workload_synth_wide(0);
                        workload_grad_add(&w, NULL, steps[(z + r) % 3], ranges[r][0],
                                          ranges[r][1], g0, NULL);
                        workload_synth_wide(1);
                        workload_grad_add(&w, NULL, steps[(z + r) % 3], ranges[r][0],
                                          ranges[r][1], g1, NULL);
                        if (memcmp(g0, g1, n * es) != 0 && same) {
                            printf("     differ: dtype %d seed %llu n %zu range %llu..%llu\n",
                                   dtype, (unsigned long long)seeds[sd], n,
                                   (unsigned long long)ranges[r][0],
                                   (unsigned long long)ranges[r][1]);
                            same = 0;
                        }
                        cases++;
                        free(g0);
                        free(g1);
                        workload_destroy(&w);
                    }
        T_TRUE(same);
        T_EQ_I(cases, 96);
    }

    T_CASE("workload-2.8", "workload_synth_compare: F(lo, hi) itself compares equal (f32 and "
           "f64, sizes across its blocks, with and without the vector loop); one element off "
           "names it and the value wanted; -0 for 0 differs in bytes only (bad = n)");
    for (int dt = 0; dt < 2; dt++)
        for (int wide = 0; wide < 2; wide++) {
            const int dtype = dt ? DTYPE_F64 : DTYPE_F32;
            const size_t n = 5000, es = dtype_size(dtype);
            struct workload w = make(WORKLOAD_SYNTHETIC, dtype, n, 0, 3);
            unsigned char *f = calloc(n, es), *ref = calloc(n, es);
            size_t bad = 7, zero = n;
            double want;
            workload_synth_wide(wide);
            workload_grad_add(&w, NULL, 5, 0, w.batch, f, NULL);
            T_EQ_I(workload_synth_compare(&w, 5, 0, w.batch, f, ref, &bad), 0);
            T_EQ_U(bad, n);
            want = vec_get(f, 4321, dtype);
            vec_set(f, 4321, dtype, want + 0.0625);
            T_EQ_I(workload_synth_compare(&w, 5, 0, w.batch, f, ref, &bad), 1);
            T_EQ_U(bad, 4321);
            T_NEAR(vec_get(ref, 4321, dtype), want, 0.0);
            vec_set(f, 4321, dtype, want);
            T_EQ_I(workload_synth_compare(&w, 6, 0, w.batch, f, ref, &bad), 1); /* another step */
            T_TRUE(bad < n);
            for (size_t i = 0; i < n && zero == n; i++)
                if (vec_get(f, i, dtype) == 0.0)
                    zero = i;
            T_TRUE(zero < n);
            vec_set(f, zero, dtype, -0.0);
            T_EQ_I(workload_synth_compare(&w, 5, 0, w.batch, f, ref, &bad), 1);
            T_EQ_U(bad, n);
            free(f);
            free(ref);
            workload_destroy(&w);
        }
    workload_synth_wide(1);

    T_CASE("workload-2.5", "batch beyond the exact range is refused");
    {
        struct workload w;
        struct workload_cfg cfg = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F32,
                                    .params = 10, .batch = WORKLOAD_SYNTH_MAX_BATCH + 1 };
        T_EQ_I(workload_create(&w, &cfg), ERR_USAGE);
        cfg.batch = 0;
        cfg.params = 0;
        T_EQ_I(workload_create(&w, &cfg), ERR_USAGE);
        cfg.params = 10;
        cfg.dtype = 7;
        T_EQ_I(workload_create(&w, &cfg), ERR_USAGE);
    }
    T_END();
    free(ga); free(gb); free(gc);
    workload_destroy(&a); workload_destroy(&b); workload_destroy(&c);
}

static void test_linreg(void)
{
    struct workload w = make(WORKLOAD_LINREG, DTYPE_F64, 0, 0, 7);
    struct workload w2 = make(WORKLOAD_LINREG, DTYPE_F64, 0, 0, 7);
    double wt[WORKLOAD_LINREG_DIM], g[WORKLOAD_LINREG_DIM] = { 0 }, loss = 0.0;
    double parts[WORKLOAD_LINREG_DIM] = { 0 };
    double maxrel = 0.0, maxdiff = 0.0;
    struct rng r;

    T_CASE("workload-3.1", "linreg defaults follow the seed (N=4096, d=12, B=N)");
    T_EQ_U(w.n, 12);
    T_EQ_U(w.rows, 4096);
    T_EQ_U(w.batch, 4096);
    T_TRUE(memcmp(w.x, w2.x, 4096 * 12 * sizeof(double)) == 0);
    T_TRUE(memcmp(w.y, w2.y, 4096 * sizeof(double)) == 0);

    T_CASE("workload-3.2", "noise is 0.1: residual at w_true has variance ~0.01");
    T_NEAR(workload_loss(&w, w.w_true), 0.01, 0.002);

    T_CASE("workload-3.3", "gradient SUM matches a finite difference of the loss SUM");
    rng_seed(&r, 99);
    for (int k = 0; k < 12; k++)
        wt[k] = rng_normal(&r);
    workload_grad_add(&w, wt, 0, 0, w.batch, g, &loss);
    T_NEAR(loss / 4096.0, workload_loss(&w, wt), 1e-9 * loss);
    for (int k = 0; k < 12; k++) {
        double h = 1e-5, lp = 0.0, lm = 0.0, dummy[12] = { 0 };
        double save = wt[k];
        wt[k] = save + h;
        workload_grad_add(&w, wt, 0, 0, w.batch, dummy, &lp);
        wt[k] = save - h;
        workload_grad_add(&w, wt, 0, 0, w.batch, dummy, &lm);
        wt[k] = save;
        maxrel = fmax(maxrel, fabs((lp - lm) / (2 * h) - g[k]) / fmax(1.0, fabs(g[k])));
    }
    T_LE(maxrel, 1e-5);

    T_CASE("workload-3.4", "the gradient of a split batch is the sum of the parts");
    for (int k = 0; k < 8; k++) {
        uint64_t lo, hi;
        workload_split(w.batch, 8, k, NULL, &lo, &hi);
        workload_grad_add(&w, wt, 0, lo, hi, parts, NULL);
    }
    for (int k = 0; k < 12; k++)
        maxdiff = fmax(maxdiff, fabs(parts[k] - g[k]) / fabs(g[k]));
    T_LE(maxdiff, 1e-13);

    T_CASE("workload-3.5", "a batch smaller than N walks the data, step by step");
    {
        struct workload_cfg c = { .kind = WORKLOAD_LINREG, .dtype = DTYPE_F64, .seed = 7,
                                  .batch = 1000 };
        struct workload s;
        double g1[12] = { 0 }, g5[12] = { 0 }, ref[12] = { 0 };
        T_EQ_I(workload_create(&s, &c), 0);
        workload_grad_add(&s, wt, 1, 0, 1000, g1, NULL);     /* rows 1000..1999 */
        workload_grad_add(&s, wt, 5, 0, 1000, g5, NULL);     /* rows 904..1903 (mod 4096) */
        workload_grad_add(&w, wt, 0, 1000, 2000, ref, NULL); /* the big one's rows 1000..1999 */
        T_TRUE(memcmp(g1, ref, sizeof g1) == 0);
        T_TRUE(memcmp(g1, g5, sizeof g1) != 0);
        workload_destroy(&s);
    }
    T_END();
    workload_destroy(&w);
    workload_destroy(&w2);
}

static void test_names(void)
{
    int k = 0;
    T_CASE("workload-4.1", "names parse and print");
    {
        static const struct { const char *name; int kind; } names[] = {
            { "linreg", WORKLOAD_LINREG }, { "synthetic", WORKLOAD_SYNTHETIC },
            { "mlp", WORKLOAD_MLP },
        };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            k = -1;
            T_EQ_I(workload_parse(names[i].name, &k), 0);
            T_EQ_I(k, names[i].kind);
        }
    }
    T_STR(workload_name(WORKLOAD_MLP), "mlp");
    T_EQ_I(workload_parse("Linreg", &k), ERR_USAGE);
    T_EQ_I(workload_parse("MLP", &k), ERR_USAGE);
    T_EQ_I(workload_parse("", &k), ERR_USAGE);
    T_STR(workload_name(WORKLOAD_SYNTHETIC), "synthetic");
    T_END();
}

/* ------------------------------------------------------------------ mlp */

/* max over i of |a_i - b_i| / max(|b_i|, floor), f64 vectors. */
static double max_rel(const double *a, const double *b, size_t n, double floor_)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]) / fmax(fabs(b[i]), floor_));
    return m;
}

static void test_mlp_shape(void)
{
    struct workload w = make(WORKLOAD_MLP, DTYPE_F64, 0, 0, 7);
    struct workload same = make(WORKLOAD_MLP, DTYPE_F64, 0, 0, 7);
    struct workload other = make(WORKLOAD_MLP, DTYPE_F64, 0, 0, 8);
    struct workload w32 = make(WORKLOAD_MLP, DTYPE_F32, 0, 0, 7);
    struct workload lin = make(WORKLOAD_LINREG, DTYPE_F64, 0, 0, 7);
    struct workload syn = make(WORKLOAD_SYNTHETIC, DTYPE_F64, 100, 0, 7);
    double *a = calloc(MLP_PARAMS, 8), *b = calloc(MLP_PARAMS, 8), *c = calloc(MLP_PARAMS, 8);
    float *f = calloc(MLP_PARAMS, 4);
    double z[100], sum2 = 0.0;
    int zero_w = 0, nonzero_b = 0, f32_ok = 1, zeros_ok = 1;

    T_CASE("workload-5.1", "mlp: 32-64-64-1 in 3 layers (W, b each), B = 256, N = 4096");
    T_EQ_U(w.n, 6337);
    T_EQ_U(w.n, MLP_PARAMS);
    T_EQ_U(w.nlayers, 3);
    T_EQ_U(w.layer_off[0], 0);
    T_EQ_U(w.layer_off[1], 64 * 32 + 64);
    T_EQ_U(w.layer_off[2], 64 * 32 + 64 + 64 * 64 + 64);
    T_EQ_U(w.layer_off[3], 6337);
    T_EQ_U(w.batch, WORKLOAD_MLP_BATCH);
    T_EQ_U(w.batch, 256);
    T_EQ_U(w.rows, 4096);
    T_TRUE(memcmp(w.x, same.x, 4096 * 32 * sizeof(double)) == 0);
    T_TRUE(memcmp(w.y, same.y, 4096 * sizeof(double)) == 0);
    T_TRUE(memcmp(w.y, other.y, 4096 * sizeof(double)) != 0);
    /* The teacher explains the data up to the 0.1 noise (variance 0.01). */
    T_NEAR(workload_loss(&w, w.w_true), 0.01, 0.002);

    T_CASE("workload-5.2", "mlp: --params, --dim and a batch over the cap are refused");
    {
        struct workload t;
        struct workload_cfg cfg = { .kind = WORKLOAD_MLP, .dtype = DTYPE_F64, .params = 10 };
        T_EQ_I(workload_create(&t, &cfg), ERR_USAGE);
        cfg.params = 0;
        cfg.dim = 12;
        T_EQ_I(workload_create(&t, &cfg), ERR_USAGE);
        cfg.dim = 0;
        cfg.batch = WORKLOAD_MLP_MAX_BATCH + 1;
        T_EQ_I(workload_create(&t, &cfg), ERR_USAGE);
        cfg.batch = 1;
        T_EQ_I(workload_create(&t, &cfg), 0);
        workload_destroy(&t);
    }

    T_CASE("workload-5.3", "mlp init: seeded LeCun-normal weights, zero biases; linreg, synthetic 0");
    workload_init_weights(&w, a);
    workload_init_weights(&same, b);
    workload_init_weights(&other, c);
    T_TRUE(memcmp(a, b, MLP_PARAMS * 8) == 0);
    T_TRUE(memcmp(a, c, MLP_PARAMS * 8) != 0);
    for (size_t l = 0; l < 3; l++) {
        size_t fan_out = l == 2 ? 1 : 64, first = w.layer_off[l];
        for (size_t i = first; i < w.layer_off[l + 1]; i++) {
            if (i < first + (w.layer_off[l + 1] - first - fan_out))
                zero_w += a[i] == 0.0;
            else
                nonzero_b += a[i] != 0.0;
        }
    }
    T_EQ_I(zero_w, 0);
    T_EQ_I(nonzero_b, 0);
    for (int i = 0; i < 64 * 32; i++)
        sum2 += a[i] * a[i];
    T_NEAR(sum2 / (64 * 32), 1.0 / 32, 0.15 / 32);     /* variance 1/fan_in */
    workload_init_weights(&w32, f);
    for (int i = 0; i < MLP_PARAMS; i++)
        f32_ok &= f[i] == (float)a[i];
    T_TRUE(f32_ok);
    workload_init_weights(&lin, z);
    for (int i = 0; i < 12; i++)
        zeros_ok &= z[i] == 0.0;
    memset(z, 0xff, sizeof z);
    workload_init_weights(&syn, z);
    for (int i = 0; i < 100; i++)
        zeros_ok &= z[i] == 0.0;
    T_TRUE(zeros_ok);
    T_END();
    free(a); free(b); free(c); free(f);
    workload_destroy(&w); workload_destroy(&same); workload_destroy(&other);
    workload_destroy(&w32); workload_destroy(&lin); workload_destroy(&syn);
}

static void test_mlp_grad(void)
{
    struct workload w = make(WORKLOAD_MLP, DTYPE_F64, 0, 0, 7);
    struct workload twin = make(WORKLOAD_MLP, DTYPE_F64, 0, 0, 7);
    struct workload w32 = make(WORKLOAD_MLP, DTYPE_F32, 0, 0, 7);
    const size_t n = MLP_PARAMS;
    double *wt = calloc(n, 8), *g = calloc(n, 8), *g2 = calloc(n, 8), *dummy = calloc(n, 8);
    float *wt32 = calloc(n, 4), *g32 = calloc(n, 4);
    double loss = 0.0, loss2 = 0.0, manual = 0.0, maxrel = 0.0, h1[64], h2[64];
    int checked = 0;
    struct rng r;

    /* Generic weights: the initialisation plus noise on every element, so
     * that the biases (0 at init) are exercised too. */
    workload_init_weights(&w, wt);
    rng_seed(&r, 5);
    for (size_t i = 0; i < n; i++)
        wt[i] += 0.1 * rng_normal(&r);

    T_CASE("workload-5.4", "mlp gradient SUM matches central differences of the loss SUM (f64)");
    workload_grad_add(&w, wt, 2, 3, 19, g, &loss);
    /* Step 2, positions 3..18: rows 2 * 256 + 3 ... */
    for (int j = 3; j < 19; j++) {
        size_t row = (size_t)(2 * 256 + j);
        double res = mlp_forward(wt, w.x + row * 32, h1, h2) - w.y[row];
        manual += res * res;
    }
    T_NEAR(loss, manual, 1e-12 * manual);
    for (size_t i = 0; i < n; i += (i < 6272 ? 37 : 1)) {   /* all of layer 2 */
        double hstep = 1e-5, lp = 0.0, lm = 0.0, save = wt[i];
        wt[i] = save + hstep;
        workload_grad_add(&w, wt, 2, 3, 19, dummy, &lp);
        wt[i] = save - hstep;
        workload_grad_add(&w, wt, 2, 3, 19, dummy, &lm);
        wt[i] = save;
        maxrel = fmax(maxrel, fabs((lp - lm) / (2 * hstep) - g[i]) / fmax(1e-2, fabs(g[i])));
        checked++;
    }
    T_LE(200, checked);
    T_LE(maxrel, 1e-6);

    T_CASE("workload-5.5", "mlp: [0, B) == [0, k) + [k, B) within 1e-12 relative, loss too");
    memset(g, 0, n * 8);
    loss = 0.0;
    workload_grad_add(&w, wt, 1, 0, w.batch, g, &loss);
    {
        /* Relative per element; an element below 1/1000 of the largest is
         * measured against that instead: a sum that cancels to almost 0
         * has no relative accuracy of its own (seen: 5e-13 on an element
         * 3e-5 of the largest, 2e-14 with this floor). */
        static const uint64_t ks[] = { 1, 100, 128, 255 };
        double worst = 0.0, worst_loss = 0.0, floor_ = 0.0;
        for (size_t i = 0; i < n; i++)
            floor_ = fmax(floor_, 1e-3 * fabs(g[i]));
        for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
            memset(g2, 0, n * 8);
            loss2 = 0.0;
            workload_grad_add(&w, wt, 1, 0, ks[t], g2, &loss2);
            workload_grad_add(&w, wt, 1, ks[t], w.batch, g2, &loss2);
            worst = fmax(worst, max_rel(g2, g, n, floor_));
            worst_loss = fmax(worst_loss, fabs(loss2 - loss) / loss);
        }
        /* ... and the 7-way split a worker's micro-batches make */
        memset(g2, 0, n * 8);
        loss2 = 0.0;
        for (int k = 0; k < 7; k++) {
            uint64_t lo, hi;
            workload_split(w.batch, 7, k, NULL, &lo, &hi);
            workload_grad_add(&w, wt, 1, lo, hi, g2, &loss2);
        }
        worst = fmax(worst, max_rel(g2, g, n, floor_));
        worst_loss = fmax(worst_loss, fabs(loss2 - loss) / loss);
        T_LE(worst, 1e-12);
        T_LE(worst_loss, 1e-12);
    }

    T_CASE("workload-5.6", "mlp is deterministic: same seed same bits, the data walks by step");
    memset(g2, 0, n * 8);
    loss2 = 0.0;
    workload_grad_add(&twin, wt, 1, 0, twin.batch, g2, &loss2);
    T_TRUE(memcmp(g, g2, n * 8) == 0);
    T_EQ_D(loss, loss2);
    memset(g2, 0, n * 8);
    loss2 = 0.0;
    workload_grad_add(&w, wt, 1, 0, w.batch, g2, &loss2);      /* the scratch reused */
    T_TRUE(memcmp(g, g2, n * 8) == 0);
    T_EQ_D(loss, loss2);
    memset(g2, 0, n * 8);
    workload_grad_add(&w, wt, 2, 0, w.batch, g2, NULL);         /* other rows */
    T_TRUE(memcmp(g, g2, n * 8) != 0);
    memset(g2, 0, n * 8);
    workload_grad_add(&w, wt, 17, 0, w.batch, g2, NULL);        /* 16 steps = 4096 rows later */
    T_TRUE(memcmp(g, g2, n * 8) == 0);
    memset(g2, 0, n * 8);
    loss2 = 0.0;
    workload_grad_add(&w, wt, 1, 5, 5, g2, &loss2);             /* empty range: adds nothing */
    T_EQ_D(loss2, 0.0);
    T_EQ_D(vec_get(g2, 0, DTYPE_F64), 0.0);

    T_CASE("workload-5.7", "mlp f32: the f64 gradient at the same weights, rounded once");
    for (size_t i = 0; i < n; i++)
        wt32[i] = (float)wt[i];
    for (size_t i = 0; i < n; i++)
        wt[i] = wt32[i];
    memset(g, 0, n * 8);
    workload_grad_add(&w, wt, 1, 0, w.batch, g, NULL);
    workload_grad_add(&w32, wt32, 1, 0, w32.batch, g32, NULL);
    {
        /* The same double arithmetic, then one rounding to f32. */
        size_t bad = n;
        for (size_t i = n; i-- > 0;)
            if (g32[i] != (float)g[i])
                bad = i;
        T_EQ_U(bad, n);
    }
    T_END();
    free(wt); free(g); free(g2); free(dummy); free(wt32); free(g32);
    workload_destroy(&w); workload_destroy(&twin); workload_destroy(&w32);
}

/* What a layer callback saw: the order, the ranges, and grad's bytes at
 * that moment. */
struct layer_log {
    const unsigned char *grad, *before;  /* grad now; grad before the call */
    unsigned char *seen;                 /* each layer's bytes at its callback */
    size_t es, layer[64], first[64], count[64];
    double when[64];
    const double *loss;                  /* the call's loss sum */
    double loss_first;                   /* *loss at the first callback */
    int calls, early_touched;
};

static void on_layer(size_t layer, size_t first, size_t count, void *arg)
{
    struct layer_log *lg = arg;
    if (lg->calls < 64) {
        lg->layer[lg->calls] = layer;
        lg->first[lg->calls] = first;
        lg->count[lg->calls] = count;
        lg->when[lg->calls] = clock_now();
    }
    if (lg->calls == 0 && lg->loss)
        lg->loss_first = *lg->loss;
    lg->calls++;
    memcpy(lg->seen + first * lg->es, lg->grad + first * lg->es, count * lg->es);
    /* The layers before this one are not computed yet. */
    if (memcmp(lg->grad, lg->before, first * lg->es) != 0)
        lg->early_touched = 1;
}

/* layers_check: grad_add_layers on [lo, hi) of w calls back once per layer,
 * last first, covering every element once, each with its final values and
 * the earlier layers still untouched; and gives grad_add's bits. */
static int layers_check(const struct workload *w, const void *weights, uint64_t lo,
                        uint64_t hi, struct layer_log *lg)
{
    size_t es = dtype_size(w->dtype), next = w->n;
    unsigned char *grad = malloc(w->n * es), *before = malloc(w->n * es);
    unsigned char *plain = malloc(w->n * es);
    double la = 0.0, lb = 0.0;
    int ok = 1;

    /* Start from non-zero values: the gradient is ADDED. */
    for (size_t i = 0; i < w->n; i++)
        vec_set(before, i, w->dtype, 0.25 * (double)(i % 7));
    memcpy(grad, before, w->n * es);
    memcpy(plain, before, w->n * es);
    memset(lg, 0, sizeof *lg);
    lg->grad = grad;
    lg->before = before;
    lg->es = es;
    lg->seen = calloc(w->n, es);
    lg->loss = &la;
    workload_grad_add_layers(w, weights, 3, lo, hi, grad, &la, on_layer, lg);
    workload_grad_add(w, weights, 3, lo, hi, plain, &lb);

    ok &= lg->calls == (int)w->nlayers;
    for (int k = 0; k < lg->calls && k < 64; k++) {
        size_t l = w->nlayers - 1 - (size_t)k;
        ok &= lg->layer[k] == l;
        ok &= lg->first[k] == w->layer_off[l] && lg->count[k] == w->layer_off[l + 1] - w->layer_off[l];
        ok &= lg->first[k] + lg->count[k] == next;     /* contiguous, downwards */
        next = lg->first[k];
    }
    ok &= next == 0;
    ok &= memcmp(lg->seen, grad, w->n * es) == 0;
    ok &= !lg->early_touched;
    ok &= memcmp(grad, plain, w->n * es) == 0 && la == lb;
    /* the loss is whole by the first callback (sent with the first bucket) */
    ok &= lg->calls == 0 || lg->loss_first == la;
    free(grad); free(before); free(plain); free(lg->seen);
    lg->seen = NULL;
    return ok;
}

static void test_layers(void)
{
    struct workload m = make(WORKLOAD_MLP, DTYPE_F64, 0, 0, 7),
                    m32 = make(WORKLOAD_MLP, DTYPE_F32, 0, 0, 7),
                    s = make(WORKLOAD_SYNTHETIC, DTYPE_F32, 1003, 0, 7),
                    l = make(WORKLOAD_LINREG, DTYPE_F64, 0, 0, 7);
    double *wm = calloc(MLP_PARAMS, 8), wl[12] = { 0.5 };
    float *wm32 = calloc(MLP_PARAMS, 4);
    struct layer_log lg;

    workload_init_weights(&m, wm);
    workload_init_weights(&m32, wm32);

    T_CASE("workload-5.8", "layer callbacks: last layer first, every element once, values final, loss whole at the first");
    T_TRUE(layers_check(&m, wm, 0, m.batch, &lg));
    T_EQ_I(lg.calls, 3);
    T_TRUE(layers_check(&m32, wm32, 10, 200, &lg));
    T_TRUE(layers_check(&s, NULL, 17, 900, &lg));
    T_EQ_I(lg.calls, WORKLOAD_SYNTH_LAYERS);
    T_TRUE(layers_check(&l, wl, 0, 4096, &lg));
    T_EQ_I(lg.calls, 1);

    T_CASE("workload-5.9", "layer callbacks come for an empty range too");
    T_TRUE(layers_check(&m, wm, 7, 7, &lg));
    T_TRUE(layers_check(&s, NULL, 0, 0, &lg));
    T_END();
    free(wm); free(wm32);
    workload_destroy(&m); workload_destroy(&m32); workload_destroy(&s); workload_destroy(&l);
}

/* train: S steps of plain SGD on the whole batch, as bin/reference does.
 * OUT: full-data loss before and after. */
static void train(int dtype, double lr, int steps, double *before, double *after)
{
    struct workload w = make(WORKLOAD_MLP, dtype, 0, 0, 7);
    size_t es = dtype_size(dtype);
    void *wt = malloc(w.n * es), *g = malloc(w.n * es);

    workload_init_weights(&w, wt);
    *before = workload_loss(&w, wt);
    for (int s = 0; s < steps; s++) {
        vec_zero(g, w.n, dtype);
        workload_grad_add(&w, wt, (uint64_t)s, 0, w.batch, g, NULL);
        if (sgd_step(wt, g, w.n, dtype, lr, w.batch) != 0)
            break;
    }
    *after = workload_loss(&w, wt);
    free(wt); free(g);
    workload_destroy(&w);
}

static void test_mlp_train(void)
{
    struct cli_common c;
    double before, after;

    T_CASE("workload-5.10", "mlp: plain SGD at the default lr (0.05) cuts the loss 4x in 30 steps");
    cli_common_defaults(&c);
    T_EQ_D(c.lr, 0.05);
    train(DTYPE_F64, c.lr, 30, &before, &after);
    T_LE(0.3, before);                 /* a real loss to start from */
    T_LE(after, before / 4);
    T_LE(0.01, after);                 /* not below the noise floor */
    train(DTYPE_F32, c.lr, 30, &before, &after);
    T_LE(after, before / 4);
    T_END();
}

/* ------------------------------------------------------- backward time */

static struct workload make_bt(double t, int world, int rank, const double *shards, uint64_t batch)
{
    struct workload w;
    struct workload_cfg c = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F32, .seed = 3,
                              .params = 1000, .batch = batch, .backward_time = t,
                              .world = world, .rank = rank, .shard_weights = shards };
    int rc = workload_create(&w, &c);
    if (rc != 0) {
        printf("workload_create (backward time %g) failed: %s\n", t, err_str(rc));
        exit(1);
    }
    return w;
}

static void test_backward_time(void)
{
    const double T = 0.2;
    struct workload w = make_bt(T, 0, 0, NULL, 64), plain = make_bt(0, 0, 0, NULL, 64);
    float g[1000] = { 0 }, ref[1000] = { 0 };
    struct layer_log lg;
    double t0, cpu0, elapsed, cpu;
    size_t done_elems = 0;
    unsigned char before[4000] = { 0 }, seen[4000];
    int order_ok = 1, when_ok = 1;

    T_CASE("workload-6.1", "--backward-time T: one process, whole batch: sleeps >= 0.9 T, CPU free");
    memset(&lg, 0, sizeof lg);
    lg.grad = (unsigned char *)g;
    lg.before = before;
    lg.seen = seen;
    lg.es = 4;
    cpu0 = clock_cpu_seconds();
    t0 = clock_now();
    workload_grad_add_layers(&w, NULL, 2, 0, 64, g, NULL, on_layer, &lg);
    elapsed = clock_now() - t0;
    cpu = clock_cpu_seconds() - cpu0;
    T_LE(0.9 * T, elapsed);
    T_LE(cpu, 0.5 * T);                 /* a sleep, not a spin */
    workload_grad_add(&plain, NULL, 2, 0, 64, ref, NULL);
    T_TRUE(memcmp(g, ref, sizeof g) == 0);

    T_CASE("workload-6.2", "--backward-time: layers last first, each after its share of T");
    T_EQ_I(lg.calls, WORKLOAD_SYNTH_LAYERS);
    for (int k = 0; k < lg.calls && k < 64; k++) {
        order_ok &= lg.layer[k] == (size_t)(lg.calls - 1 - k);
        done_elems += lg.count[k];
        /* lower bounds only: the callback of a layer comes no earlier than
         * its part of T, counted in elements from the last layer */
        when_ok &= lg.when[k] - t0 >= 0.9 * T * (double)done_elems / 1000.0;
    }
    T_TRUE(order_ok);
    T_TRUE(when_ok);
    T_EQ_U(done_elems, 1000);

    T_CASE("workload-6.3", "--backward-time is per worker per step, spread over micro-batches");
    {
        /* World 4 of B = 64: rank 1's share is [16, 32), 16 examples, so
         * each example is T/16, and two micro-batches of 8 take T/2 each. */
        struct workload r1 = make_bt(T, 4, 1, NULL, 64);
        double shards[2] = { 3, 1 }, t1, t2;
        struct workload u = make_bt(T, 2, 1, shards, 64);   /* share 16 of 64 */
        struct workload u0 = make_bt(T, 2, 0, shards, 64);  /* share 48 of 64 */
        T_NEAR(r1.backward_per_example, T / 16, 1e-15);
        T_NEAR(u.backward_per_example, T / 16, 1e-15);
        T_NEAR(u0.backward_per_example, T / 48, 1e-15);
        T_NEAR(w.backward_per_example, T / 64, 1e-15);
        t0 = clock_now();
        workload_grad_add(&r1, NULL, 0, 16, 24, g, NULL);
        t1 = clock_now();
        workload_grad_add(&r1, NULL, 0, 24, 32, g, NULL);
        t2 = clock_now();
        T_LE(0.9 * T / 2, t1 - t0);
        T_LE(0.9 * T / 2, t2 - t1);
        T_LE(0.9 * T, t2 - t0);
        workload_destroy(&r1); workload_destroy(&u); workload_destroy(&u0);
    }

    T_CASE("workload-6.4", "--backward-time on every workload (mlp, linreg: on top); bad values and ranks refused");
    {
        struct workload t;
        struct workload_cfg c = { .kind = WORKLOAD_LINREG, .dtype = DTYPE_F64, .backward_time = 1 };
        T_EQ_I(workload_create(&t, &c), 0);
        T_NEAR(t.backward_per_example, 1.0 / WORKLOAD_LINREG_ROWS, 1e-15);
        workload_destroy(&t);
        c.kind = WORKLOAD_MLP;
        T_EQ_I(workload_create(&t, &c), 0);
        T_NEAR(t.backward_per_example, 1.0 / WORKLOAD_MLP_BATCH, 1e-15);
        workload_destroy(&t);
        c.kind = WORKLOAD_SYNTHETIC;
        c.params = 10;
        c.backward_time = -1;
        T_EQ_I(workload_create(&t, &c), ERR_USAGE);
        c.backward_time = NAN;
        T_EQ_I(workload_create(&t, &c), ERR_USAGE);
        c.backward_time = INFINITY;
        T_EQ_I(workload_create(&t, &c), ERR_USAGE);
        c.backward_time = 1;
        c.world = 2;
        c.rank = 2;
        T_EQ_I(workload_create(&t, &c), ERR_USAGE);
        c.rank = 1;
        T_EQ_I(workload_create(&t, &c), 0);
        workload_destroy(&t);
    }
    T_END();
    workload_destroy(&w);
    workload_destroy(&plain);
}

/* ---------------------------------------------------------- command line */

static void test_cli_flags(void)
{
    struct cli_common c;
    struct workload_cfg cfg;
    char err[ERR_LEN], *help = NULL;
    size_t helplen = 0;
    const struct cli_opt *tables[2];
    FILE *f;

    T_CASE("workload-7.1", "--backward-time TIME and --workload mlp parse; cli_workload_cfg");
    T_EQ_I(cli_line_common("--rank 0 --world 1", &c, err), 0);
    T_EQ_D(c.backward_time, 0);
    cli_common_free(&c);
    T_EQ_I(cli_line_common("--rank 1 --world 2 --workload synthetic --params 10 --backward-time 50ms "
                  "--shard-weights 3,1 --batch 64 --seed 9 --dtype f32", &c, err), 0);
    T_NEAR(c.backward_time, 0.05, 1e-15);
    cli_workload_cfg(&c, &cfg);
    T_EQ_I(cfg.kind, WORKLOAD_SYNTHETIC);
    T_EQ_I(cfg.dtype, DTYPE_F32);
    T_EQ_U(cfg.seed, 9);
    T_EQ_U(cfg.params, 10);
    T_EQ_U(cfg.batch, 64);
    T_EQ_D(cfg.backward_time, c.backward_time);
    T_EQ_I(cfg.world, 2);
    T_EQ_I(cfg.rank, 1);
    T_TRUE(cfg.shard_weights == c.shard_weights);
    {
        struct workload w;
        T_EQ_I(workload_create(&w, &cfg), 0);
        T_NEAR(w.backward_per_example, 0.05 / 16, 1e-15);
        workload_destroy(&w);
    }
    cli_common_free(&c);
    T_EQ_I(cli_line_common("--workload mlp --batch 512", &c, err), 0);
    T_EQ_I(c.workload, WORKLOAD_MLP);
    cli_common_free(&c);

    T_CASE("workload-7.2", "refused: --params or a huge --batch for mlp, a bad --backward-time");
    T_EQ_I(cli_line_common("--backward-time 1s", &c, err), 0);        /* linreg: on top */
    T_EQ_I(cli_line_common("--workload mlp --backward-time 1ms", &c, err), 0);
    T_EQ_I(cli_line_common("--workload mlp --params 100", &c, err), ERR_USAGE);
    T_HAS(err, "--params");
    T_HAS(err, "6337");
    T_EQ_I(cli_line_common("--workload mlp --batch 65537", &c, err), ERR_USAGE);
    T_HAS(err, "--batch");
    T_EQ_I(cli_line_common("--workload synthetic --params 1 --backward-time -1", &c, err), ERR_USAGE);
    T_HAS(err, "--backward-time");
    T_EQ_I(cli_line_common("--workload synthetic --params 1 --backward-time abc", &c, err), ERR_USAGE);
    T_HAS(err, "--backward-time");
    T_EQ_I(cli_line_common("--workload synthetic --params 1 --backward-time 0", &c, err), 0);

    T_CASE("workload-7.3", "--help says EMULATED backward time and lists mlp");
    cli_common_defaults(&c);
    tables[0] = cli_common_opts(&c);
    tables[1] = NULL;
    f = open_memstream(&help, &helplen);
    T_TRUE(f != NULL);
    if (f) {
        cli_usage(f, "test", "[common flags]", tables);
        fclose(f);
        T_HAS(help, "--backward-time");
        T_HAS(help, "EMULATED backward time");
        T_HAS(help, "linreg|synthetic|mlp");
    }
    free(help);
    T_END();
}

int main(void)
{
    test_split();
    test_synthetic();
    test_linreg();
    test_names();
    test_mlp_shape();
    test_mlp_grad();
    test_layers();
    test_mlp_train();
    test_backward_time();
    test_cli_flags();
    return t_done();
}
