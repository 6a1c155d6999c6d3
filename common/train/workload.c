/* workload.c -- linreg, mlp and synthetic gradients, and the batch split.
 *
 * See workload.h for what each workload computes and why the synthetic
 * values are exact in any summation order; the mlp's network itself is
 * mlp.c. Everything here is a pure function of the configuration and seed:
 * every process builds the same dataset on its own, so no data ever crosses
 * the network. The one thing that is not pure is time: the EMULATED
 * backward time (T, and compute.h's straggler, jitter and pause) sleeps,
 * and says so in the log.
 */
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "compute.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "base/mem.h"
#include "mlp.h"
#include "base/rng.h"
#include "base/vec.h"

/* Independent random streams of the mlp, from the one seed. */
#define MLP_SALT_DATA    0x6d6c702d64617461ULL   /* "mlp-data" */
#define MLP_SALT_TEACHER 0x6d6c702d74656163ULL   /* "mlp-teac" */
#define MLP_SALT_INIT    0x6d6c702d696e6974ULL   /* "mlp-init" */
#define MLP_TEACHER_GAIN 1.0
#define MLP_TEACHER_BIAS 0.1
#define MLP_NOISE        0.1

int workload_parse(const char *s, int *out)
{
    if (strcmp(s, "linreg") == 0) { *out = WORKLOAD_LINREG; return 0; }
    if (strcmp(s, "synthetic") == 0) { *out = WORKLOAD_SYNTHETIC; return 0; }
    if (strcmp(s, "mlp") == 0) { *out = WORKLOAD_MLP; return 0; }
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

/* The mlp's data: x ~ N(0, 1), y = teacher(x) + 0.1 N(0, 1), the teacher
 * in w_true; the layer table and the scratch of workload_grad_add (the
 * weights and the gradient in double, then the per-example activations of
 * the largest range, B examples). */
static int make_mlp(struct workload *w, const struct workload_cfg *cfg)
{
    double h1[MLP_H1], h2[MLP_H2];
    struct rng r;
    size_t rows;

    if (cfg->params != 0 || cfg->dim != 0)
        return ERR_USAGE;       /* fixed dims: nothing to resize */
    w->rows = cfg->rows ? cfg->rows : WORKLOAD_MLP_ROWS;
    w->dim = MLP_IN;
    w->n = MLP_PARAMS;
    w->batch = cfg->batch ? cfg->batch : WORKLOAD_MLP_BATCH;
    if (w->rows > (1u << 24) || w->batch > WORKLOAD_MLP_MAX_BATCH)
        return ERR_USAGE;
    rows = (size_t)w->rows;
    w->x = malloc(rows * MLP_IN * sizeof *w->x);
    w->y = malloc(rows * sizeof *w->y);
    w->w_true = malloc(MLP_PARAMS * sizeof *w->w_true);
    w->work = malloc((2 * (size_t)MLP_PARAMS + (size_t)w->batch * MLP_WORK_PER_EXAMPLE)
                     * sizeof *w->work);
    w->layer_off = malloc((MLP_LAYERS + 1) * sizeof *w->layer_off);
    if (!w->x || !w->y || !w->w_true || !w->work || !w->layer_off)
        return -ENOMEM;
    w->nlayers = MLP_LAYERS;
    mlp_layer_table(w->layer_off);

    mlp_init(w->w_true, cfg->seed ^ MLP_SALT_TEACHER, MLP_TEACHER_GAIN, MLP_TEACHER_BIAS);
    rng_seed(&r, cfg->seed ^ MLP_SALT_DATA);
    for (size_t i = 0; i < rows * MLP_IN; i++)
        w->x[i] = rng_normal(&r);
    for (size_t i = 0; i < rows; i++)
        w->y[i] = mlp_forward(w->w_true, w->x + i * MLP_IN, h1, h2) + MLP_NOISE * rng_normal(&r);
    return 0;
}

/* The EMULATED backward time per example, T over this rank's share, and
 * the compute-time model (compute.h) with its one log line. */
static int set_backward(struct workload *w, const struct workload_cfg *cfg)
{
    uint64_t lo = 0, hi = w->batch;
    char model[256], how[128];

    compute_model_init(&w->compute);
    if (cfg->compute)
        w->compute = *cfg->compute;
    w->compute.base = cfg->backward_time;
    w->compute.seed = cfg->seed;
    if (cfg->backward_time == 0)
        return 0;
    if (!(cfg->backward_time > 0) || !isfinite(cfg->backward_time))
        return ERR_USAGE;
    if (cfg->world > 0) {
        if (cfg->rank < 0 || cfg->rank >= cfg->world)
            return ERR_USAGE;
        workload_split(w->batch, cfg->world, cfg->rank, cfg->shard_weights, &lo, &hi);
        w->rank = cfg->rank;
    }
    if (hi > lo)
        w->backward_per_example = cfg->backward_time / (double)(hi - lo);
    compute_describe(&w->compute, model, sizeof model);
    if (w->kind == WORKLOAD_SYNTHETIC)
        snprintf(how, sizeof how, "a sleep across %zu layers, last first; the CPU stays free",
                 w->nlayers);
    else
        snprintf(how, sizeof how, "%s: a sleep ADDED on top of its real compute, across %zu "
                 "layer%s, last first", workload_name(w->kind), w->nlayers,
                 w->nlayers == 1 ? "" : "s");
    log_msg("EMULATED backward time: %.6g s per step over this worker's %llu examples (%s)%s%s",
            cfg->backward_time, (unsigned long long)(hi - lo), how,
            model[0] ? "; EMULATED compute model: " : "", model);
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
        if (rc == 0)
            rc = make_layers(w, 1);
        break;
    case WORKLOAD_SYNTHETIC:
        if (cfg->params < 1 || cfg->params > ((uint64_t)1 << 40))
            return ERR_USAGE;
        w->n = (size_t)cfg->params;
        w->batch = cfg->batch ? cfg->batch : WORKLOAD_SYNTH_BATCH;
        rc = w->batch <= WORKLOAD_SYNTH_MAX_BATCH ? 0 : ERR_USAGE;
        if (rc == 0)
            rc = make_layers(w, cfg->layers > 0 ? (size_t)cfg->layers : WORKLOAD_SYNTH_LAYERS);
        break;
    case WORKLOAD_MLP:
        rc = make_mlp(w, cfg);
        break;
    default:
        return ERR_USAGE;
    }
    if (rc == 0)
        rc = set_backward(w, cfg);
    if (rc != 0)
        workload_destroy(w);
    return rc;
}

void workload_destroy(struct workload *w)
{
    MEM_FREE(w->x);
    MEM_FREE(w->y);
    MEM_FREE(w->w_true);
    MEM_FREE(w->layer_off);
    MEM_FREE(w->work);
}

void workload_init_weights(const struct workload *w, void *weights)
{
    double p[MLP_PARAMS];

    if (w->kind != WORKLOAD_MLP) {
        vec_zero(weights, w->n, w->dtype);
        return;
    }
    mlp_init(p, w->seed ^ MLP_SALT_INIT, 1.0, 0.0);
    for (size_t i = 0; i < MLP_PARAMS; i++)
        vec_set(weights, i, w->dtype, p[i]);
}

/* ------------------------------------------------- emulated backward time */

double workload_backward_time(const struct workload *w, uint64_t step)
{
    if (w->backward_per_example == 0)
        return 0;
    return compute_step_time(&w->compute, w->rank, step);
}

/* call_time: the EMULATED seconds of a call for [lo, hi) of step `step`:
 * t(r, s) * (hi - lo) / b, with T / b = backward_per_example (so without
 * the model's extras this is exactly the per-example time times the
 * examples). */
static double call_time(const struct workload *w, uint64_t step, uint64_t lo, uint64_t hi)
{
    if (w->backward_per_example == 0 || hi <= lo)
        return 0;
    return w->backward_per_example * (double)(hi - lo) *
           (compute_step_time(&w->compute, w->rank, step) / w->compute.base);
}

/* sleep_on_top: sleep t seconds from now on the workload's clock (the mlp
 * and linreg: added to the real compute). */
static void sleep_on_top(const struct workload *w, double t)
{
    const struct clock_src *clk = w->clock ? w->clock : &clock_real;

    if (t > 0)
        clock_src_sleep_until(clk, clock_src_now(clk) + t);
}

/* ------------------------------------------------------------ synthetic */

/* synth_hash(seed, step, i, x) = mix(mix(mix(seed ^ C) ^ step) ^ i) ^ mix(x)
 * and a term is dyadic(h) = (h % 17 - 8) / 16, a multiple of 1/16 in
 * [-1/2, 1/2] (workload.h; gpu/gpu_workload.cu computes the same). The
 * part in i and the part in x are each one mix once the step's key
 * mix(mix(seed ^ C) ^ step) is known, so a call computes the key and the
 * three mix(x) once and then one mix per element, not twelve; and F is
 * summed as 16 F in integers (the -8s of h_i(hi) and h_i(lo) cancel), one
 * conversion instead of three. The values are the same bits (workload-2.6);
 * the hashing was the synthetic step's CPU (docs/link.md, The training
 * path). */
static uint64_t synth_key(uint64_t seed, uint64_t step)
{
    return rng_mix(rng_mix(seed ^ 0x5053524755ULL) ^ step);
}

/* SYNTH_WIDE: on x86-64 with GCC, a copy of the loop for CPUs with
 * AVX-512 (64-bit vector multiplies: the mix), chosen at run time. Its
 * h % 17 folds the 64 bits first, as 2^16 = 1 (mod 17): (h >> 32) + (h &
 * 0xffffffff) < 2^33, then its two 16-bit halves' sum < 2^18, whose
 * 32-bit % 17 a vector unit has (the 64-bit one it has not). The same
 * integers, the same exact conversions, the same additions: the same
 * bits (workload-2.7 compares it with the scalar loop). 1M elements in
 * 1.45 ms against 3.6 on this machine's cores (256-bit vectors: 2.1 ms;
 * in a K = 2 ring job the 512-bit loop's rank used 0.139 of a core
 * against 0.150, five interleaved pairs: docs/link.md). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SYNTH_WIDE 1
static int synth_wide_enabled = 1;      /* workload_synth_wide */

/* rng_mix's body (rng.c), here so that the loop can be vectorized. */
static inline uint64_t rng_mix_inline(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline uint32_t mod17(uint64_t h)
{
    const uint64_t a = (h >> 32) + (h & 0xffffffffu);

    return (uint32_t)((a >> 16) + (a & 0xffffu)) % 17u;
}

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,bmi2"),
               optimize("tree-vectorize")))
static void synth_wide(int dtype, uint64_t key, int32_t count, uint64_t mix_a,
                       uint64_t mix_hi, uint64_t mix_lo, void *out, size_t first, size_t end)
{
    float *g32 = out;
    double *g64 = out;

    if (dtype == DTYPE_F32) {
        for (size_t j = 0; j < end - first; j++) {
            const uint64_t m = rng_mix_inline(key ^ (first + j));
            const int32_t f16 = count * ((int32_t)mod17(m ^ mix_a) - 8) +
                                (int32_t)mod17(m ^ mix_hi) - (int32_t)mod17(m ^ mix_lo);
            g32[j] += (float)((double)f16 / 16.0);
        }
    } else {
        for (size_t j = 0; j < end - first; j++) {
            const uint64_t m = rng_mix_inline(key ^ (first + j));
            const int32_t f16 = count * ((int32_t)mod17(m ^ mix_a) - 8) +
                                (int32_t)mod17(m ^ mix_hi) - (int32_t)mod17(m ^ mix_lo);
            g64[j] += (double)f16 / 16.0;
        }
    }
}

/* synth_wide_ok: the CPU has what synth_wide uses (asked once). */
static int synth_wide_ok(void)
{
    static int ok = -1;

    if (ok < 0)
        ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
    return ok;
}
#endif

int workload_synth_wide(int on)
{
#ifdef SYNTH_WIDE
    synth_wide_enabled = on != 0;
    return synth_wide_enabled && synth_wide_ok();
#else
    (void)on;
    return 0;
#endif
}

/* F(lo, hi) = (hi - lo) a_i + h_i(hi) - h_i(lo) for elements [first, end),
 * added into out[0, end - first); a_i uses x = UINT64_MAX, a position no
 * batch reaches. Each term and their sum are exact (|16 F| <= 8 B + 16 <
 * 2^24 for B <= 2^20). */
static void synth_grad_add(const struct workload *w, uint64_t step, uint64_t lo,
                           uint64_t hi, void *out, size_t first, size_t end)
{
    const int64_t count = (int64_t)(hi - lo);
    const uint64_t key = synth_key(w->seed, step), mix_a = rng_mix(UINT64_MAX);
    const uint64_t mix_hi = rng_mix(hi), mix_lo = rng_mix(lo);

#ifdef SYNTH_WIDE
    /* 16 F in 32 bits: |16 F| <= 8 count + 16 */
    if (synth_wide_enabled && count >= 0 && count < ((int64_t)1 << 26) && synth_wide_ok()) {
        synth_wide(w->dtype, key, (int32_t)count, mix_a, mix_hi, mix_lo, out, first, end);
        return;
    }
#endif

    for (size_t i = first; i < end; i++) {
        const uint64_t m = rng_mix(key ^ i);
        const int64_t f16 = count * ((int64_t)((m ^ mix_a) % 17) - 8) +
                            (int64_t)((m ^ mix_hi) % 17) - (int64_t)((m ^ mix_lo) % 17);
        const double f = (double)f16 / 16.0;
        if (w->dtype == DTYPE_F32)
            ((float *)out)[i - first] += (float)f;
        else
            ((double *)out)[i - first] += f;
    }
}

int workload_synth_compare(const struct workload *w, uint64_t step, uint64_t lo, uint64_t hi,
                           const void *got, void *ref, size_t *bad)
{
    enum { BLOCK = 2048 };              /* 16 KiB of f64: stays in cache */
    union { float f[BLOCK]; double d[BLOCK]; } blk;
    const int dtype = w->dtype;
    const size_t es = dtype_size(dtype), n = w->n;
    int differ = 0;

    /* As workload_grad_add into zeros, then memcmp, then the first
     * element that differs by value (none: *bad = n), without writing
     * the whole F to memory and reading it back. */
    for (size_t first = 0; first < n; first += BLOCK) {
        const size_t end = first + BLOCK < n ? first + BLOCK : n;
        void *b = dtype == DTYPE_F32 ? (void *)blk.f : (void *)blk.d;
        memset(b, 0, (end - first) * es);
        synth_grad_add(w, step, lo, hi, b, first, end);
        if (!differ && memcmp(b, (const unsigned char *)got + first * es, (end - first) * es) == 0)
            continue;
        differ = 1;
        for (size_t i = first; i < end; i++) {
            if (vec_get(b, i - first, dtype) != vec_get(got, i, dtype)) {
                vec_set(ref, i, dtype, vec_get(b, i - first, dtype));
                *bad = i;
                return 1;
            }
        }
    }
    *bad = n;
    return differ;
}

/* The synthetic backward, last layer first; with a backward time each
 * layer ends at its deadline, t0 + T_call * (elements done so far) / n,
 * so late wake-ups and the hashing never add up beyond T_call. */
static void synth_layers(const struct workload *w, uint64_t step, uint64_t lo, uint64_t hi,
                         void *grad, workload_layer_fn done, void *arg)
{
    const struct clock_src *clk = w->clock ? w->clock : &clock_real;
    const double t_call = call_time(w, step, lo, hi);
    const double t0 = t_call > 0 ? clock_src_now(clk) : 0.0;
    size_t elems_done = 0;

    for (size_t l = w->nlayers; l-- > 0;) {
        size_t first = w->layer_off[l], end = w->layer_off[l + 1];
        synth_grad_add(w, step, lo, hi, (unsigned char *)grad + first * dtype_size(w->dtype),
                       first, end);
        elems_done += end - first;
        if (t_call > 0)
            clock_src_sleep_until(clk, t0 + t_call * ((double)elems_done / (double)w->n));
        if (done)
            done(l, first, end - first, arg);
    }
}

/* --------------------------------------------------------------- linreg */

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

/* ------------------------------------------------------------------ mlp */

struct mlp_call {
    const struct workload *w;
    double t_call;          /* EMULATED seconds of this call, spread by size */
    void *grad;
    workload_layer_fn done;
    void *arg;
};

/* mlp_grad's layer callback: add the layer's double sum into grad's
 * dtype, then tell the caller. */
static void mlp_layer_ready(int layer, const double *g, void *arg)
{
    const struct mlp_call *c = arg;
    const struct workload *w = c->w;
    size_t first = w->layer_off[layer], end = w->layer_off[layer + 1];

    for (size_t i = first; i < end; i++)
        vec_set(c->grad, i, w->dtype, vec_get(c->grad, i, w->dtype) + g[i]);
    sleep_on_top(w, c->t_call * ((double)(end - first) / (double)w->n));
    if (c->done)
        c->done((size_t)layer, first, end - first, c->arg);
}

static void mlp_grad_add(const struct workload *w, const void *weights, uint64_t step,
                         uint64_t lo, uint64_t hi, void *grad, double *loss,
                         workload_layer_fn done, void *arg)
{
    double *p = w->work, *g = w->work + MLP_PARAMS, *acts = w->work + 2 * MLP_PARAMS;
    const uint64_t first = ((step * w->batch) % w->rows + lo) % w->rows;
    struct mlp_call c = { w, call_time(w, step, lo, hi), grad, done, arg };

    for (size_t i = 0; i < MLP_PARAMS; i++)
        p[i] = vec_get(weights, i, w->dtype);
    mlp_grad(p, w->x, w->y, w->rows, first, hi - lo, g, acts, loss, mlp_layer_ready, &c);
}

/* ------------------------------------------------------------ dispatch */

void workload_grad_add_layers(const struct workload *w, const void *weights,
                              uint64_t step, uint64_t lo, uint64_t hi,
                              void *grad, double *loss, workload_layer_fn done, void *arg)
{
    switch (w->kind) {
    case WORKLOAD_LINREG:
        linreg_grad_add(w, weights, step, lo, hi, grad, loss);
        sleep_on_top(w, call_time(w, step, lo, hi));
        if (done)
            done(0, 0, w->n, arg);
        break;
    case WORKLOAD_MLP:
        mlp_grad_add(w, weights, step, lo, hi, grad, loss, done, arg);
        break;
    default:
        synth_layers(w, step, lo, hi, grad, done, arg);
        break;
    }
}

void workload_grad_add(const struct workload *w, const void *weights,
                       uint64_t step, uint64_t lo, uint64_t hi,
                       void *grad, double *loss)
{
    workload_grad_add_layers(w, weights, step, lo, hi, grad, loss, NULL, NULL);
}

double workload_loss(const struct workload *w, const void *weights)
{
    double l = 0.0;
    const size_t dim = (size_t)w->dim;

    if (w->kind == WORKLOAD_MLP) {
        double p[MLP_PARAMS], h1[MLP_H1], h2[MLP_H2];
        for (size_t i = 0; i < MLP_PARAMS; i++)
            p[i] = vec_get(weights, i, w->dtype);
        for (uint64_t i = 0; i < w->rows; i++) {
            double r = mlp_forward(p, w->x + i * MLP_IN, h1, h2) - w->y[i];
            l += r * r;
        }
        return l / (double)w->rows;
    }
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

int workload_matrix(const struct workload *w, size_t layer, size_t *first, size_t *rows,
                    size_t *cols)
{
    static const size_t fan[MLP_LAYERS][2] = {
        { MLP_H1, MLP_IN }, { MLP_H2, MLP_H1 }, { 1, MLP_H2 },
    };

    *first = w->layer_off[layer];
    if (w->kind == WORKLOAD_MLP && layer < MLP_LAYERS) {
        *rows = fan[layer][0];
        *cols = fan[layer][1];
        return 1;
    }
    *rows = w->layer_off[layer + 1] - w->layer_off[layer];
    *cols = 1;
    return 0;
}
