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

/* THE CHECK, vectorized. A value s is finite exactly when s - s is 0
 * (NaN - NaN and Inf - Inf are NaN), and NaN stays NaN under +. So the
 * loops keep z += s - s in four 16-byte vector accumulators (GCC's and
 * clang's vector extension, SSE2 on x86-64: 4 floats or 2 doubles a
 * register), registers, not memory, so that no store-to-load chain sets
 * the pace: all zero at the end means every element was finite. Left to
 * GCC's -O2 cost model, a loop like this stays scalar or keeps its
 * accumulators on the stack. Only a failure pays for a second, scalar pass
 * (first_bad) to find the index. The adds of vec_add_finite are the same
 * adds as vec_add's, element by element (a vector add is lane-wise IEEE),
 * so the bits are the same. */
typedef float vec_f32x4 __attribute__((vector_size(16)));
typedef double vec_f64x2 __attribute__((vector_size(16)));

/* first_bad: the first non-finite element of v[0..n) (there is one). */
static size_t first_bad(const void *v, size_t n, int dtype)
{
    size_t i = 0;

    while (i < n && isfinite(vec_get(v, i, dtype)))
        i++;
    return i;
}

/* The loops by type, as macros: T the element, V its vector, W elements
 * per vector. A vector is moved in and out with memcpy (unaligned, no
 * aliasing question; compiled to one movups). ADD: acc += x, checked; a
 * constant, so the branch not taken (and its cast) compiles away.
 * Four vectors a round, written out: GCC -O2 does not unroll a loop over
 * them, and then keeps the accumulators in memory. */
#define ONE(T, V, W, a, b, ADD, k, z)                                         \
    do {                                                                      \
        V u_, w_;                                                             \
        memcpy(&u_, (a) + i + (k) * (W), sizeof u_);                          \
        if (ADD) {                                                            \
            memcpy(&w_, (b) + i + (k) * (W), sizeof w_);                      \
            u_ = u_ + w_;                                                     \
            memcpy((T *)(a) + i + (k) * (W), &u_, sizeof u_);                 \
        }                                                                     \
        z += u_ - u_;                                                         \
    } while (0)

#define LOOP(T, V, W, a, b, n, ADD)                                           \
    do {                                                                      \
        V z0 = { 0 }, z1 = { 0 }, z2 = { 0 }, z3 = { 0 };                     \
        T zs = 0;                                                             \
        size_t i = 0;                                                         \
        for (; i + 4 * (W) <= (n); i += 4 * (W)) {                            \
            ONE(T, V, W, a, b, ADD, 0, z0);                                   \
            ONE(T, V, W, a, b, ADD, 1, z1);                                   \
            ONE(T, V, W, a, b, ADD, 2, z2);                                   \
            ONE(T, V, W, a, b, ADD, 3, z3);                                   \
        }                                                                     \
        for (; i < (n); i++) {                                                \
            T s_ = (a)[i];                                                    \
            if (ADD) {                                                        \
                s_ = s_ + (b)[i];                                             \
                ((T *)(a))[i] = s_;                                           \
            }                                                                 \
            zs += s_ - s_;                                                    \
        }                                                                     \
        z0 += z1 + z2 + z3;                                                   \
        for (int j = 0; j < (W); j++)                                         \
            zs += z0[j];                                                      \
        return zs == 0;                                                       \
    } while (0)

static int add_finite_f32_sse(float *restrict a, const float *restrict b, size_t n)
{
    LOOP(float, vec_f32x4, 4, a, b, n, 1);
}

static int add_finite_f64_sse(double *restrict a, const double *restrict b, size_t n)
{
    LOOP(double, vec_f64x2, 2, a, b, n, 1);
}

static int all_finite_f32_sse(const float *restrict a, size_t n)
{
    const float *b = NULL;
    LOOP(float, vec_f32x4, 4, a, b, n, 0);
}

static int all_finite_f64_sse(const double *restrict a, size_t n)
{
    const double *b = NULL;
    LOOP(double, vec_f64x2, 2, a, b, n, 0);
}

/* AVX2, where the CPU has it (x86-64; chosen at run time, once): the same
 * loops on 32-byte vectors, 8 floats or 4 doubles a register, so half the
 * instructions. The adds are the same lane-wise IEEE adds (no FMA:
 * -ffp-contract=off, and none is written), so the sums are bit for bit
 * the SSE loops' and the scalar vec_add's; only the order in which the
 * check's s - s terms are summed differs, and that sum is 0 or NaN either
 * way. Measured on the 2-core VM (Xeon, AVX-512), 128 Ki floats in L2:
 * 16-18 us SSE, 12-13 us AVX2 for the add. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
typedef float vec_f32x8 __attribute__((vector_size(32)));
typedef double vec_f64x4 __attribute__((vector_size(32)));
#define AVX2 __attribute__((target("avx2")))

AVX2 static int add_finite_f32_avx2(float *restrict a, const float *restrict b, size_t n)
{
    LOOP(float, vec_f32x8, 8, a, b, n, 1);
}

AVX2 static int add_finite_f64_avx2(double *restrict a, const double *restrict b, size_t n)
{
    LOOP(double, vec_f64x4, 4, a, b, n, 1);
}

AVX2 static int all_finite_f32_avx2(const float *restrict a, size_t n)
{
    const float *b = NULL;
    LOOP(float, vec_f32x8, 8, a, b, n, 0);
}

AVX2 static int all_finite_f64_avx2(const double *restrict a, size_t n)
{
    const double *b = NULL;
    LOOP(double, vec_f64x4, 4, a, b, n, 0);
}

/* have_avx2: the CPU's answer, asked once (a benign race: every thread
 * that asks first gets the same answer). */
static int have_avx2(void)
{
    static int known = -1;

    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return known;
}
#define PICK(name, ...) (have_avx2() ? name##_avx2(__VA_ARGS__) : name##_sse(__VA_ARGS__))
#else
#define PICK(name, ...) name##_sse(__VA_ARGS__)
#endif

static int add_finite_f32(float *restrict a, const float *restrict b, size_t n)
{
    return PICK(add_finite_f32, a, b, n);
}

static int add_finite_f64(double *restrict a, const double *restrict b, size_t n)
{
    return PICK(add_finite_f64, a, b, n);
}

static int all_finite_f32(const float *restrict a, size_t n)
{
    return PICK(all_finite_f32, a, n);
}

static int all_finite_f64(const double *restrict a, size_t n)
{
    return PICK(all_finite_f64, a, n);
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

int vec_add_ordered(void *acc, void *x, size_t n, int dtype, int mine_is_lower, int check,
                    size_t *bad)
{
    int rc = 0;

    if (mine_is_lower) {                            /* acc = mine + theirs */
        if (check)
            return vec_add_finite(acc, x, n, dtype, bad);
        vec_add(acc, x, n, dtype);
        return 0;
    }
    if (check)                                      /* x = theirs + mine */
        rc = vec_add_finite(x, acc, n, dtype, bad);
    else
        vec_add(x, acc, n, dtype);
    memcpy(acc, x, n * dtype_size(dtype));
    return rc;
}
