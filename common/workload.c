/* workload.c -- linreg and synthetic gradients, and the batch split.
 *
 * See workload.h for what each workload computes and why the synthetic
 * values are exact in any summation order. Everything here is a pure
 * function of the configuration and seed: every process builds the same
 * dataset on its own, so no data ever crosses the network.
 */
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "err.h"
#include "rng.h"
#include "vec.h"

int workload_parse(const char *s, int *out)
{
    if (strcmp(s, "linreg") == 0) { *out = WORKLOAD_LINREG; return 0; }
    if (strcmp(s, "synthetic") == 0) { *out = WORKLOAD_SYNTHETIC; return 0; }
    return ERR_USAGE;
}

const char *workload_name(int kind)
{
    switch (kind) {
    case WORKLOAD_LINREG: return "linreg";
    case WORKLOAD_SYNTHETIC: return "synthetic";
    case WORKLOAD_MLP: return "mlp";
    default: return "?";
    }
}

/* Equal contiguous layers, sizes differing by at most one. */
static int make_layers(struct workload *w, size_t nlayers)
{
    if (nlayers > w->n)
        nlayers = w->n;
    w->nlayers = nlayers;
    w->layer_off = malloc((nlayers + 1) * sizeof *w->layer_off);
    if (!w->layer_off)
        return -ENOMEM;
    for (size_t j = 0; j <= nlayers; j++) {
        uint64_t lo, hi;
        workload_split(w->n, (int)nlayers, (int)(j < nlayers ? j : nlayers - 1), NULL, &lo, &hi);
        w->layer_off[j] = j < nlayers ? (size_t)lo : (size_t)hi;
    }
    return 0;
}

/* The seed's data: X, w_true ~ N(0, 1); y = X w_true + 0.1 N(0, 1). */
static int make_linreg(struct workload *w, const struct workload_cfg *cfg)
{
    struct rng r;
    size_t rows, dim;

    w->rows = cfg->rows ? cfg->rows : WORKLOAD_LINREG_ROWS;
    w->dim = cfg->dim ? cfg->dim : WORKLOAD_LINREG_DIM;
    if (w->dim < 1 || w->dim > 4096 || w->rows > (1u << 24))
        return ERR_USAGE;
    rows = (size_t)w->rows;
    dim = (size_t)w->dim;
    w->n = dim;
    w->batch = cfg->batch ? cfg->batch : w->rows;
    w->x = malloc(rows * dim * sizeof *w->x);
    w->y = malloc(rows * sizeof *w->y);
    w->w_true = malloc(dim * sizeof *w->w_true);
    if (!w->x || !w->y || !w->w_true)
        return -ENOMEM;

    rng_seed(&r, cfg->seed);
    for (size_t i = 0; i < rows * dim; i++)
        w->x[i] = rng_normal(&r);
    for (size_t k = 0; k < dim; k++)
        w->w_true[k] = rng_normal(&r);
    for (size_t i = 0; i < rows; i++) {
        double dot = 0.0;
        for (size_t k = 0; k < dim; k++)
            dot += w->x[i * dim + k] * w->w_true[k];
        w->y[i] = dot + 0.1 * rng_normal(&r);
    }
    return 0;
}

int workload_create(struct workload *w, const struct workload_cfg *cfg)
{
    int rc;

    memset(w, 0, sizeof *w);
    w->kind = cfg->kind;
    w->dtype = cfg->dtype;
    w->seed = cfg->seed;
    if (dtype_size(cfg->dtype) == 0)
        return ERR_USAGE;

    switch (cfg->kind) {
    case WORKLOAD_LINREG:
        rc = make_linreg(w, cfg);
        break;
    case WORKLOAD_SYNTHETIC:
        if (cfg->params < 1 || cfg->params > ((uint64_t)1 << 40))
            return ERR_USAGE;
        w->n = (size_t)cfg->params;
        w->batch = cfg->batch ? cfg->batch : WORKLOAD_SYNTH_BATCH;
        rc = w->batch <= WORKLOAD_SYNTH_MAX_BATCH ? 0 : ERR_USAGE;
        break;
    default:
        return ERR_USAGE;
    }
    if (rc == 0)
        rc = make_layers(w, w->kind == WORKLOAD_LINREG ? 1 : WORKLOAD_SYNTH_LAYERS);
    if (rc != 0)
        workload_destroy(w);
    return rc;
}

void workload_destroy(struct workload *w)
{
    free(w->x);
    free(w->y);
    free(w->w_true);
    free(w->layer_off);
    w->x = w->y = w->w_true = NULL;
    w->layer_off = NULL;
}

void workload_init_weights(const struct workload *w, void *weights)
{
    vec_zero(weights, w->n, w->dtype);
}

/* A multiple of 1/16 in [-1/2, 1/2], from a 64-bit hash. */
static double dyadic(uint64_t h)
{
    return (double)((int)(h % 17) - 8) / 16.0;
}

static uint64_t synth_hash(uint64_t seed, uint64_t step, uint64_t i, uint64_t x)
{
    return rng_mix(rng_mix(rng_mix(seed ^ 0x5053524755ULL) ^ step) ^ i) ^ rng_mix(x);
}

/* F(lo, hi) = (hi - lo) a_i + h_i(hi) - h_i(lo); a_i uses x = UINT64_MAX,
 * a position no batch reaches. Each term and their sum are exact. */
static void synth_grad_add(const struct workload *w, uint64_t step, uint64_t lo,
                           uint64_t hi, void *grad)
{
    const double count = (double)(hi - lo);

    for (size_t i = 0; i < w->n; i++) {
        double a = dyadic(synth_hash(w->seed, step, i, UINT64_MAX));
        double f = count * a + dyadic(synth_hash(w->seed, step, i, hi)) -
                   dyadic(synth_hash(w->seed, step, i, lo));
        if (w->dtype == DTYPE_F32)
            ((float *)grad)[i] += (float)f;
        else
            ((double *)grad)[i] += f;
    }
}

/* Squared-error gradient SUM 2 X^T (X w - y) over the rows of [lo, hi),
 * accumulated in double, added into grad once at the end. */
static void linreg_grad_add(const struct workload *w, const void *weights,
                            uint64_t step, uint64_t lo, uint64_t hi,
                            void *grad, double *loss)
{
    enum { DMAX = 4096 };
    double wd[DMAX], g[DMAX], l = 0.0;
    const size_t dim = (size_t)w->dim;
    const uint64_t first = (step * w->batch) % w->rows;

    for (size_t k = 0; k < dim; k++) {
        wd[k] = vec_get(weights, k, w->dtype);
        g[k] = 0.0;
    }
    for (uint64_t j = lo; j < hi; j++) {
        const double *xr = w->x + ((first + j) % w->rows) * dim;
        double r = -w->y[(first + j) % w->rows];
        for (size_t k = 0; k < dim; k++)
            r += xr[k] * wd[k];
        for (size_t k = 0; k < dim; k++)
            g[k] += 2.0 * r * xr[k];
        l += r * r;
    }
    for (size_t k = 0; k < dim; k++)
        vec_set(grad, k, w->dtype, vec_get(grad, k, w->dtype) + g[k]);
    if (loss)
        *loss += l;
}

void workload_grad_add(const struct workload *w, const void *weights,
                       uint64_t step, uint64_t lo, uint64_t hi,
                       void *grad, double *loss)
{
    if (w->kind == WORKLOAD_LINREG)
        linreg_grad_add(w, weights, step, lo, hi, grad, loss);
    else
        synth_grad_add(w, step, lo, hi, grad);
}

double workload_loss(const struct workload *w, const void *weights)
{
    double l = 0.0;
    const size_t dim = (size_t)w->dim;

    if (w->kind != WORKLOAD_LINREG)
        return 0.0;
    for (uint64_t i = 0; i < w->rows; i++) {
        double r = -w->y[i];
        for (size_t k = 0; k < dim; k++)
            r += w->x[i * dim + k] * vec_get(weights, k, w->dtype);
        l += r * r;
    }
    return l / (double)w->rows;
}

void workload_split(uint64_t total, int parts, int index, const double *weights,
                    uint64_t *lo, uint64_t *hi)
{
    if (!weights) {
        uint64_t base = total / (uint64_t)parts, extra = total % (uint64_t)parts;
        uint64_t i = (uint64_t)index;
        *lo = i * base + (i < extra ? i : extra);
        *hi = *lo + base + (i < extra ? 1 : 0);
        return;
    }

    /* Cumulative rounding: part k is [round(total * W_<k / W),
     * round(total * W_<=k / W)). The cut points only grow, the last is
     * total, so the parts are contiguous and cover the batch; each size is
     * its exact share rounded up or down. O(parts) per call. */
    double sum = 0.0, before = 0.0;
    for (int k = 0; k < parts; k++) {
        sum += weights[k];
        if (k < index)
            before += weights[k];
    }
    *lo = (uint64_t)floor((double)total * (before / sum) + 0.5);
    *hi = index == parts - 1 ? total
        : (uint64_t)floor((double)total * ((before + weights[index]) / sum) + 0.5);
}
