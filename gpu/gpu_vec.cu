/* gpu_vec.cu -- the reduction (acc += x) and the SGD step, on the GPU.
 *
 * Both are elementwise, so bit-identity with common/base/vec.c and common/train/sgd.c
 * only asks that each element see the same IEEE operations in the same
 * order: one add for the reduction; for SGD a divide, a multiply and a
 * subtract in double, then one rounding to the dtype. nvcc would fuse that
 * multiply and subtract into one FMA (a different rounding); gpu.mk builds
 * with -fmad=false, which forbids it, and keeps IEEE division and
 * denormals (no --use_fast_math).
 *
 * The reduction is memory-bound: 2 reads and 1 write per element, nothing
 * else. It moves 16-byte vectors (float4, double2) when acc and x share
 * their alignment modulo 16, with VEC_UNROLL vectors per thread per round
 * so that each thread has 2 * VEC_UNROLL loads in flight before its first
 * add; a head of at most 3 elements before the first aligned vector and a
 * tail after the last are done one by one. Chunks of a ring start at any
 * element, so when the two pointers are misaligned relative to each
 * other, a plain one-element-per-thread loop does it (correct, slower).
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>

extern "C" {
#include "base/dtype.h"
#include "base/err.h"
#include "gpu.h"
#include "train/optim.h"
}
#include "gpu_internal.h"

#define VEC_UNROLL 4

/* ---------------------------------------------------------------- reduce-add */

template <typename T> struct vec16;
template <> struct vec16<float> { typedef float4 type; static const int lanes = 4; };
template <> struct vec16<double> { typedef double2 type; static const int lanes = 2; };

__device__ static inline void add16(float4 &a, const float4 &b)
{
    a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
}

__device__ static inline void add16(double2 &a, const double2 &b)
{
    a.x += b.x; a.y += b.y;
}

/* acc[i] += x[i] for i < n, where acc + head and x + head are 16-byte
 * aligned and nvec vectors follow them; fewer than `lanes` elements remain
 * before (the head) and after (the tail). */
template <typename T>
__global__ void vec_add_kernel(T *acc, const T *x, size_t n, size_t head, size_t nvec)
{
    typedef typename vec16<T>::type V;
    const size_t lanes = (size_t)vec16<T>::lanes;
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    V *av = reinterpret_cast<V *>(acc + head);
    const V *xv = reinterpret_cast<const V *>(x + head);
    size_t i = tid;

    for (; i + (VEC_UNROLL - 1) * stride < nvec; i += VEC_UNROLL * stride) {
        V a[VEC_UNROLL], b[VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; u++) {
            a[u] = av[i + u * stride];
            b[u] = xv[i + u * stride];
        }
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; u++) {
            add16(a[u], b[u]);
            av[i + u * stride] = a[u];
        }
    }
    for (; i < nvec; i += stride) {
        V a = av[i];
        add16(a, xv[i]);
        av[i] = a;
    }
    if (tid < head)
        acc[tid] += x[tid];
    if (tid < lanes && head + nvec * lanes + tid < n)
        acc[head + nvec * lanes + tid] += x[head + nvec * lanes + tid];
}

/* The same, one element per thread: for pointers misaligned to each other. */
template <typename T>
__global__ void vec_add_scalar_kernel(T *acc, const T *x, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
        acc[i] += x[i];
}

template <typename T>
static int launch_vec_add(T *acc, const T *x, size_t n, cudaStream_t s, char *err)
{
    const size_t lanes = (size_t)vec16<T>::lanes;
    const uintptr_t ma = (uintptr_t)acc % 16, mx = (uintptr_t)x % 16;
    unsigned blocks;
    int rc;

    if (ma == mx && ma % sizeof(T) == 0) {
        size_t head = ma ? (16 - ma) / sizeof(T) : 0;
        if (head > n)
            head = n;
        const size_t nvec = (n - head) / lanes;
        if ((rc = gpu_grid_size(nvec, GPU_THREADS, &blocks, err)) != 0)
            return rc;
        vec_add_kernel<T><<<blocks, GPU_THREADS, 0, s>>>(acc, x, n, head, nvec);
        CUDA_LAUNCHED(vec_add_kernel);
    } else {
        if ((rc = gpu_grid_size(n, GPU_THREADS, &blocks, err)) != 0)
            return rc;
        vec_add_scalar_kernel<T><<<blocks, GPU_THREADS, 0, s>>>(acc, x, n);
        CUDA_LAUNCHED(vec_add_scalar_kernel);
    }
out:
    return rc;
}

extern "C" int gpu_vec_add(void *acc, const void *x, size_t n, int dtype,
                           struct gpu_stream *s, char *err)
{
    int rc = gpu_check_dtype(dtype, "gpu_vec_add", err);

    if (rc != 0 || n == 0)
        return rc;
    if (dtype == DTYPE_F32)
        return launch_vec_add((float *)acc, (const float *)x, n, (cudaStream_t)s, err);
    return launch_vec_add((double *)acc, (const double *)x, n, (cudaStream_t)s, err);
}

/* ---------------------------------------------------------------- SGD */

/* sgd_step's arithmetic, element by element: in double, rounded once. */
template <typename T>
__global__ void sgd_kernel(T *w, const T *g, size_t n, double lr, double b)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
        w[i] = (T)((double)w[i] - lr * ((double)g[i] / b));
}

extern "C" int gpu_sgd_step(void *w, const void *g_sum, size_t n, int dtype, double lr,
                            uint64_t batch, struct gpu_stream *s, char *err)
{
    const double b = (double)batch;
    cudaStream_t cs = (cudaStream_t)s;
    unsigned blocks;
    int rc = gpu_check_dtype(dtype, "gpu_sgd_step", err);

    if (rc != 0)
        return rc;
    if (batch == 0 || !isfinite(lr))
        return gpu_say(err, ERR_USAGE, "gpu_sgd_step: batch %llu, lr %g: need batch > 0 and a finite lr",
                       (unsigned long long)batch, lr);
    if (n == 0)
        return 0;
    if ((rc = gpu_grid_size(n, GPU_THREADS, &blocks, err)) != 0)
        return rc;
    if (dtype == DTYPE_F32)
        sgd_kernel<float><<<blocks, GPU_THREADS, 0, cs>>>((float *)w, (const float *)g_sum, n, lr, b);
    else
        sgd_kernel<double><<<blocks, GPU_THREADS, 0, cs>>>((double *)w, (const double *)g_sum, n, lr, b);
    CUDA_LAUNCHED(sgd_kernel);
out:
    return rc;
}

/* ---------------------------------------------------------- optimizers */

/* optim_apply's momentum and Adam, element by element (optim.h: the same
 * double operations in the same order, each store rounded once). */
template <typename T>
__global__ void momentum_kernel(T *w, const T *g_sum, T *m, size_t n, double lr, double mu,
                                double b)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        const double g = (double)g_sum[i] / b;
        m[i] = (T)(mu * (double)m[i] + g);
        w[i] = (T)((double)w[i] - lr * (double)m[i]);
    }
}

template <typename T>
__global__ void adam_kernel(T *w, const T *g_sum, T *m, T *v, size_t n, struct optim_coef k,
                            double b)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        const double g = (double)g_sum[i] / b;
        double mi, vi;
        m[i] = (T)(k.b1 * (double)m[i] + k.one_b1 * g);
        v[i] = (T)(k.b2 * (double)v[i] + k.one_b2 * (g * g));
        mi = (double)m[i];
        vi = (double)v[i];
        w[i] = (T)((double)w[i] - k.lr * ((mi / k.c1) / (sqrt(vi / k.c2) + k.eps)));
    }
}

extern "C" int gpu_optim_update(const struct optim_coef *k, int dtype, void *w, const void *g_sum,
                                void *m, void *v, size_t n, uint64_t batch, struct gpu_stream *s,
                                char *err)
{
    const double b = (double)batch;
    cudaStream_t cs = (cudaStream_t)s;
    unsigned blocks;
    int rc = gpu_check_dtype(dtype, "gpu_optim_update", err);

    if (rc != 0)
        return rc;
    if (k->kind == OPTIM_SGD)
        return gpu_sgd_step(w, g_sum, n, dtype, k->lr, batch, s, err);
    if (batch == 0 || (k->kind != OPTIM_MOMENTUM && k->kind != OPTIM_ADAM) || !m ||
        (k->kind == OPTIM_ADAM && !v))
        return gpu_say(err, ERR_USAGE, "gpu_optim_update: kind %d, batch %llu: need momentum or "
                       "adam with its state and batch > 0", k->kind, (unsigned long long)batch);
    if (n == 0)
        return 0;
    if ((rc = gpu_grid_size(n, GPU_THREADS, &blocks, err)) != 0)
        return rc;
    if (k->kind == OPTIM_MOMENTUM && dtype == DTYPE_F32)
        momentum_kernel<float><<<blocks, GPU_THREADS, 0, cs>>>((float *)w, (const float *)g_sum,
                                                               (float *)m, n, k->lr, k->mu, b);
    else if (k->kind == OPTIM_MOMENTUM)
        momentum_kernel<double><<<blocks, GPU_THREADS, 0, cs>>>((double *)w, (const double *)g_sum,
                                                                (double *)m, n, k->lr, k->mu, b);
    else if (dtype == DTYPE_F32)
        adam_kernel<float><<<blocks, GPU_THREADS, 0, cs>>>((float *)w, (const float *)g_sum,
                                                           (float *)m, (float *)v, n, *k, b);
    else
        adam_kernel<double><<<blocks, GPU_THREADS, 0, cs>>>((double *)w, (const double *)g_sum,
                                                            (double *)m, (double *)v, n, *k, b);
    CUDA_LAUNCHED(optim_kernel);
out:
    return rc;
}
