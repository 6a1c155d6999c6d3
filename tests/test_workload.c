/* test_workload.c -- workload determinism, the synthetic closed form, the
 * batch split, and linreg's gradient against a finite difference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dtype.h"
#include "err.h"
#include "rng.h"
#include "vec.h"
#include "workload.h"

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
    T_EQ_I(workload_parse("linreg", &k), 0);
    T_EQ_I(k, WORKLOAD_LINREG);
    T_EQ_I(workload_parse("synthetic", &k), 0);
    T_EQ_I(k, WORKLOAD_SYNTHETIC);
    T_EQ_I(workload_parse("Linreg", &k), ERR_USAGE);
    T_EQ_I(workload_parse("", &k), ERR_USAGE);
    T_STR(workload_name(WORKLOAD_SYNTHETIC), "synthetic");
    T_END();
}

int main(void)
{
    test_split();
    test_synthetic();
    test_linreg();
    test_names();
    return t_done();
}
