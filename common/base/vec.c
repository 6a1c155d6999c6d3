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

int vec_check_finite(const void *v, size_t n, int dtype, size_t *bad)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(vec_get(v, i, dtype))) {
            if (bad)
                *bad = i;
            return ERR_NONFINITE;
        }
    }
    return 0;
}
