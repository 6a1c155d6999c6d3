/* test_sgd.c -- the optimizer step divides by the global batch, and the
 * typed vector helpers every combine step uses. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "dtype.h"
#include "err.h"
#include "sgd.h"
#include "vec.h"

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

    T_CASE("vec-1.1", "add, zero, get, set in both dtypes");
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

    T_CASE("vec-1.2", "NaN, +Inf, -Inf are found with their index; subnormals pass");
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

    T_CASE("vec-1.3", "finite values whose sum overflows become Inf and are then caught");
    a[0] = 1.5e308;
    b[0] = 1.5e308;
    vec_add(a, b, 1, DTYPE_F64);
    T_EQ_I(vec_check_finite(a, 1, DTYPE_F64, NULL), ERR_NONFINITE);
    T_END();
}

static void test_dtype(void)
{
    int dt = 0;
    T_CASE("dtype-1.1", "names and sizes");
    T_EQ_I(dtype_parse("f32", &dt), 0);
    T_EQ_I(dt, DTYPE_F32);
    T_EQ_I(dtype_parse("f64", &dt), 0);
    T_EQ_U(dtype_size(dt), 8);
    T_EQ_I(dtype_parse("f16", &dt), ERR_USAGE);
    T_EQ_U(dtype_size(0), 0);
    T_STR(dtype_name(DTYPE_F32), "f32");
    T_END();
}

int main(void)
{
    test_sgd();
    test_vec();
    test_dtype();
    return t_done();
}
