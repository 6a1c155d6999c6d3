/* gpu_workload.cu -- the synthetic and linreg gradients, on the GPU.
 *
 * Twins of common/train/workload.c's workload_grad_add, bit for bit (gpu.h).
 *
 * SYNTHETIC. Element i of the gradient of [lo, hi) at step s is
 *     F = (hi - lo) * a_i + h_i(hi) - h_i(lo)
 * with each term dyadic(synth_hash(seed, s, i, x)) and
 *     synth_hash(seed, s, i, x) = mix(mix(mix(seed ^ C) ^ s) ^ i) ^ mix(x)
 * (mix: splitmix64's finalizer, rng_mix). Everything left of "^ i" is the
 * same for every element, and mix(x) for x in {UINT64_MAX, hi, lo} is the
 * same for every element too: the host computes those four values with
 * rng_mix itself, and each thread does ONE mix (of base ^ i) where the CPU
 * does three. Same integers in, same doubles out: the device copy of mix
 * below must stay identical to common/base/rng.c's (test_gpu checks).
 *
 * LINREG. The CPU sums, for each feature k, 2 * r_j * x_jk over the rows j
 * of [lo, hi) in order, r_j being row j's residual. A parallel sum would
 * change the order, so the GPU keeps it: one kernel computes every r_j (one
 * thread per row, the k-loop in the CPU's order), a second runs one thread
 * per feature k that adds its column in row order, plus one thread that
 * adds the losses r_j^2. Identical operations in identical order: the
 * result is bit-identical, at the price of dim threads looping over the
 * batch (fine for the seeds' problem, d = 12 and B = 4096; a large batch
 * of a narrow problem runs serially per feature, and says so here).
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

extern "C" {
#include "base/dtype.h"
#include "base/err.h"
#include "gpu.h"
#include "base/rng.h"
#include "train/workload.h"
}
#include "gpu_internal.h"

#define SYNTH_SALT 0x5053524755ULL   /* workload.c's synth_hash constant */

struct gpu_workload {
    int kind, dtype;
    size_t n;
    uint64_t seed, batch;
    uint64_t rows;          /* linreg */
    int dim;
    double *x, *y;          /* linreg: rows x dim and rows, on the device */
    double *resid;          /* linreg: batch doubles of scratch */
};

/* ---------------------------------------------------------------- synthetic */

__device__ static inline uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

__device__ static inline double dyadic(uint64_t h)
{
    return (double)((int)(h % 17) - 8) / 16.0;
}

template <typename T>
__global__ void synth_kernel(T *grad, size_t n, uint64_t base, uint64_t mix_a,
                             uint64_t mix_hi, uint64_t mix_lo, double count)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint64_t m = mix(base ^ (uint64_t)i);
        const double a = dyadic(m ^ mix_a);
        const double f = count * a + dyadic(m ^ mix_hi) - dyadic(m ^ mix_lo);
        grad[i] += (T)f;
    }
}

static int synth_grad_add(struct gpu_workload *g, uint64_t step, uint64_t lo, uint64_t hi,
                          void *grad, cudaStream_t s, char *err)
{
    const uint64_t base = rng_mix(rng_mix(g->seed ^ SYNTH_SALT) ^ step);
    const double count = (double)(hi - lo);
    unsigned blocks;
    int rc;

    if ((rc = gpu_grid_size(g->n, GPU_THREADS, &blocks, err)) != 0)
        return rc;
    if (g->dtype == DTYPE_F32)
        synth_kernel<float><<<blocks, GPU_THREADS, 0, s>>>((float *)grad, g->n, base,
            rng_mix(UINT64_MAX), rng_mix(hi), rng_mix(lo), count);
    else
        synth_kernel<double><<<blocks, GPU_THREADS, 0, s>>>((double *)grad, g->n, base,
            rng_mix(UINT64_MAX), rng_mix(hi), rng_mix(lo), count);
    CUDA_LAUNCHED(synth_kernel);
out:
    return rc;
}

/* ---------------------------------------------------------------- linreg */

/* resid[t] = -y[row] + sum_k x[row][k] * w[k], row = (first + lo + t) mod
 * rows, for t < count: the k-sum left to right, as the CPU does it. */
template <typename T>
__global__ void linreg_resid_kernel(const double *x, const double *y, const T *w,
                                    uint64_t rows, int dim, uint64_t start, uint64_t count,
                                    double *resid)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;

    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < count; t += stride) {
        const uint64_t row = (start + t) % rows;
        const double *xr = x + row * (uint64_t)dim;
        double r = -y[row];
        for (int k = 0; k < dim; k++)
            r += xr[k] * (double)w[k];
        resid[t] = r;
    }
}

/* Thread k < dim: grad[k] = grad[k] + sum over t of 2 * resid[t] * x[row_t][k],
 * in t order, added into grad once (rounded to T once). Thread dim: the
 * loss, sum of resid[t]^2 in t order, added into *loss. */
template <typename T>
__global__ void linreg_sum_kernel(const double *x, uint64_t rows, int dim, uint64_t start,
                                  uint64_t count, const double *resid, T *grad, double *loss)
{
    const size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

    if (k < (size_t)dim) {
        uint64_t row = start % rows;
        double g = 0.0;
        for (uint64_t t = 0; t < count; t++) {
            g += 2.0 * resid[t] * x[row * (uint64_t)dim + k];
            if (++row == rows)
                row = 0;
        }
        grad[k] = (T)((double)grad[k] + g);
    } else if (k == (size_t)dim && loss) {
        double l = 0.0;
        for (uint64_t t = 0; t < count; t++)
            l += resid[t] * resid[t];
        *loss += l;
    }
}

template <typename T>
static int linreg_launch(struct gpu_workload *g, const T *w, uint64_t start, uint64_t count,
                         T *grad, double *loss, cudaStream_t s, char *err)
{
    unsigned blocks, sum_blocks = (unsigned)((g->dim + 1 + GPU_THREADS - 1) / GPU_THREADS);
    int rc;

    if ((rc = gpu_grid_size(count, GPU_THREADS, &blocks, err)) != 0)
        return rc;
    linreg_resid_kernel<T><<<blocks, GPU_THREADS, 0, s>>>(g->x, g->y, w, g->rows, g->dim,
                                                          start, count, g->resid);
    CUDA_LAUNCHED(linreg_resid_kernel);
    linreg_sum_kernel<T><<<sum_blocks, GPU_THREADS, 0, s>>>(g->x, g->rows, g->dim, start,
                                                            count, g->resid, grad, loss);
    CUDA_LAUNCHED(linreg_sum_kernel);
out:
    return rc;
}

static int linreg_grad_add(struct gpu_workload *g, const void *weights, uint64_t step,
                           uint64_t lo, uint64_t hi, void *grad, double *loss,
                           cudaStream_t s, char *err)
{
    /* The CPU's row of batch position j is (first + j) mod rows. */
    const uint64_t first = (step * g->batch) % g->rows;
    const uint64_t start = first + lo;      /* first < rows <= 2^24: no wrap */

    if (!weights)
        return gpu_say(err, ERR_USAGE, "gpu_workload_grad_add: linreg needs the weights");
    if (g->dtype == DTYPE_F32)
        return linreg_launch(g, (const float *)weights, start, hi - lo, (float *)grad, loss, s, err);
    return linreg_launch(g, (const double *)weights, start, hi - lo, (double *)grad, loss, s, err);
}

/* ---------------------------------------------------------------- lifecycle */

extern "C" int gpu_workload_create(struct gpu_workload **out, const struct workload *w, char *err)
{
    struct gpu_workload *g;
    size_t xbytes, ybytes;
    int rc = 0;

    *out = NULL;
    if ((rc = gpu_check_dtype(w->dtype, "gpu_workload_create", err)) != 0)
        return rc;
    if (w->kind != WORKLOAD_SYNTHETIC && w->kind != WORKLOAD_LINREG)
        return gpu_say(err, ERR_USAGE, "gpu_workload_create: workload %s has no GPU version",
                       workload_name(w->kind));
    g = (struct gpu_workload *)calloc(1, sizeof *g);
    if (!g)
        return gpu_say(err, -ENOMEM, "gpu_workload_create: out of host memory");
    g->kind = w->kind;
    g->dtype = w->dtype;
    g->n = w->n;
    g->seed = w->seed;
    g->batch = w->batch;
    if (w->kind == WORKLOAD_LINREG) {
        g->rows = w->rows;
        g->dim = w->dim;
        xbytes = (size_t)w->rows * (size_t)w->dim * sizeof(double);
        ybytes = (size_t)w->rows * sizeof(double);
        if ((rc = gpu_malloc((void **)&g->x, xbytes, err)) != 0 ||
            (rc = gpu_malloc((void **)&g->y, ybytes, err)) != 0 ||
            (rc = gpu_malloc((void **)&g->resid, (size_t)(w->batch ? w->batch : 1) * sizeof(double), err)) != 0)
            goto out;
        /* Set-up, once: a plain blocking copy from the host's dataset. */
        CUDA_CHECK(cudaMemcpy(g->x, w->x, xbytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(g->y, w->y, ybytes, cudaMemcpyHostToDevice));
    }
    *out = g;
    g = NULL;
out:
    gpu_workload_destroy(g);
    return rc;
}

extern "C" void gpu_workload_destroy(struct gpu_workload *g)
{
    if (!g)
        return;
    gpu_free(g->x);
    gpu_free(g->y);
    gpu_free(g->resid);
    free(g);
}

extern "C" int gpu_workload_grad_add(struct gpu_workload *g, const void *weights, uint64_t step,
                                     uint64_t lo, uint64_t hi, void *grad, double *loss,
                                     struct gpu_stream *s, char *err)
{
    if (lo > hi || hi > g->batch)
        return gpu_say(err, ERR_USAGE, "gpu_workload_grad_add: range [%llu, %llu) not within "
                       "the batch of %llu", (unsigned long long)lo, (unsigned long long)hi,
                       (unsigned long long)g->batch);
    if (g->kind == WORKLOAD_LINREG)
        return linreg_grad_add(g, weights, step, lo, hi, grad, loss, (cudaStream_t)s, err);
    return synth_grad_add(g, step, lo, hi, grad, (cudaStream_t)s, err);
}
