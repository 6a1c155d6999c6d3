/* sgd.c -- plain SGD on the global-batch mean (see sgd.h for the rule). */
#include "sgd.h"

#include <math.h>

#include "base/dtype.h"
#include "base/err.h"

int sgd_step(void *w, const void *g_sum, size_t n, int dtype, double lr, uint64_t batch)
{
    const double b = (double)batch;

    if (batch == 0 || !isfinite(lr) || dtype_size(dtype) == 0)
        return ERR_USAGE;
    if (dtype == DTYPE_F32) {
        float *wf = w;
        const float *gf = g_sum;
        for (size_t i = 0; i < n; i++)
            wf[i] = (float)((double)wf[i] - lr * ((double)gf[i] / b));
    } else {
        double *wd = w;
        const double *gd = g_sum;
        for (size_t i = 0; i < n; i++)
            wd[i] = wd[i] - lr * (gd[i] / b);
    }
    return 0;
}
