/* vec.c -- typed element-wise operations (see vec.h). */
#include "vec.h"

#include <math.h>
#include <string.h>

#include "dtype.h"
#include "err.h"

void vec_zero(void *v, size_t n, int dtype)
{
    memset(v, 0, n * dtype_size(dtype));
}

void vec_add(void *acc, const void *x, size_t n, int dtype)
{
    if (dtype == DTYPE_F32) {
        float *a = acc;
        const float *b = x;
        for (size_t i = 0; i < n; i++)
            a[i] += b[i];
    } else {
        double *a = acc;
        const double *b = x;
        for (size_t i = 0; i < n; i++)
            a[i] += b[i];
    }
}

double vec_get(const void *v, size_t i, int dtype)
{
    return dtype == DTYPE_F32 ? (double)((const float *)v)[i] : ((const double *)v)[i];
}

void vec_set(void *v, size_t i, int dtype, double x)
{
    if (dtype == DTYPE_F32)
        ((float *)v)[i] = (float)x;
    else
        ((double *)v)[i] = x;
}

/* THE CHECK, vectorizable. A value s is finite exactly when s - s is 0
 * (NaN - NaN and Inf - Inf are NaN), and NaN stays NaN under +. So each of
 * VEC_LANES lanes keeps z[j] += s - s over its elements: all lanes 0 at
 * the end means every element was finite. Lane-wise adds in a fixed-size
 * block are what GCC's -O2 cost model vectorizes (SSE2: 4 floats or 2
 * doubles an instruction); a reduction into one flag, or a loop needing an
 * epilogue, it leaves scalar. Only a failure pays for a second, scalar pass
 * (first_bad) to find the index. The adds of vec_add_finite are the same
 * adds as vec_add's, element by element, so the bits are the same. */
#define VEC_LANES 16

/* first_bad: the first non-finite element of v[0..n) (there is one). */
static size_t first_bad(const void *v, size_t n, int dtype)
{
    size_t i = 0;

    while (i < n && isfinite(vec_get(v, i, dtype)))
        i++;
    return i;
}

#define ADD_FINITE(T, a, b, n, ok)                                            \
    do {                                                                      \
        T z[VEC_LANES] = { 0 };                                               \
        size_t i = 0;                                                         \
        for (; i + VEC_LANES <= (n); i += VEC_LANES)                          \
            for (size_t j = 0; j < VEC_LANES; j++) {                          \
                T s = (a)[i + j] + (b)[i + j];                                \
                (a)[i + j] = s;                                               \
                z[j] += s - s;                                                \
            }                                                                 \
        for (size_t j = 0; i < (n); i++, j++) {                               \
            T s = (a)[i] + (b)[i];                                            \
            (a)[i] = s;                                                       \
            z[j] += s - s;                                                    \
        }                                                                     \
        for (size_t j = 0; j < VEC_LANES; j++)                                \
            (ok) &= z[j] == 0;                                                \
    } while (0)

#define ALL_FINITE(T, a, n, ok)                                               \
    do {                                                                      \
        T z[VEC_LANES] = { 0 };                                               \
        size_t i = 0;                                                         \
        for (; i + VEC_LANES <= (n); i += VEC_LANES)                          \
            for (size_t j = 0; j < VEC_LANES; j++)                            \
                z[j] += (a)[i + j] - (a)[i + j];                              \
        for (size_t j = 0; i < (n); i++, j++)                                 \
            z[j] += (a)[i] - (a)[i];                                          \
        for (size_t j = 0; j < VEC_LANES; j++)                                \
            (ok) &= z[j] == 0;                                                \
    } while (0)

/* The loops by dtype, one function each: GCC vectorizes them apart (not
 * always both when they share one function). */
static int add_finite_f32(float *restrict a, const float *restrict b, size_t n)
{
    int ok = 1;
    ADD_FINITE(float, a, b, n, ok);
    return ok;
}

static int add_finite_f64(double *restrict a, const double *restrict b, size_t n)
{
    int ok = 1;
    ADD_FINITE(double, a, b, n, ok);
    return ok;
}

static int all_finite_f32(const float *restrict a, size_t n)
{
    int ok = 1;
    ALL_FINITE(float, a, n, ok);
    return ok;
}

static int all_finite_f64(const double *restrict a, size_t n)
{
    int ok = 1;
    ALL_FINITE(double, a, n, ok);
    return ok;
}

int vec_add_finite(void *acc, const void *x, size_t n, int dtype, size_t *bad)
{
    if (dtype == DTYPE_F32 ? add_finite_f32(acc, x, n) : add_finite_f64(acc, x, n))
        return 0;
    if (bad)
        *bad = first_bad(acc, n, dtype);
    return ERR_NONFINITE;
}

int vec_check_finite(const void *v, size_t n, int dtype, size_t *bad)
{
    if (dtype == DTYPE_F32 ? all_finite_f32(v, n) : all_finite_f64(v, n))
        return 0;
    if (bad)
        *bad = first_bad(v, n, dtype);
    return ERR_NONFINITE;
}
