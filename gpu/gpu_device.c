/* gpu_device.c -- finding and choosing a CUDA device, and its memory.
 *
 * Plain C against the CUDA runtime API (cuda_runtime_api.h), built with cc;
 * the runtime itself is linked statically (gpu.mk), so these calls work or
 * fail with a reason on a machine with no CUDA libraries at all: there the
 * first call answers cudaErrorInsufficientDriver (the runtime found no
 * driver, libcuda.so.1), which we report as "no CUDA device".
 *
 * Also here: gpu_cuda_fail, the CUDA half of the error lines behind
 * CUDA_CHECK (gpu_internal.h; the rest is gpu_err.c), and the
 * multiprocessor count the kernels size their grids with.
 */
#include "gpu.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>

#include "base/err.h"
#include "gpu_internal.h"

#define MAX_DEVICES 64

#ifdef __SANITIZE_ADDRESS__
/* The CUDA driver maps memory where AddressSanitizer keeps its shadow gap;
 * without this, every CUDA call under ASan fails with "out of memory". In
 * this file because every program using a GPU links it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "protect_shadow_gap=0";
}
#endif

int gpu_cuda_fail(char *err, const char *file, int line, const char *call, int cuda_error)
{
    cudaError_t e = (cudaError_t)cuda_error;
    int rc = -EIO;

    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        rc = -ENODEV;
    else if (e == cudaErrorMemoryAllocation)
        rc = -ENOMEM;
    return gpu_say(err, rc, "%s:%d: %s: %s (%s)", file, line, call,
                   cudaGetErrorName(e), cudaGetErrorString(e));
}

const char *gpu_build_info(void)
{
    static char line[160];

    snprintf(line, sizeof line, "CUDA %d.%d (%s), %s", CUDART_VERSION / 1000,
             CUDART_VERSION % 1000 / 10, GPU_CUDA_TARGETS, gpu_nccl_build_info());
    return line;
}

int gpu_device_count(int *count, char *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);

    *count = 0;
    if (e == cudaErrorInsufficientDriver)
        return gpu_say(err, -ENODEV, "no CUDA device: cudaGetDeviceCount: %s "
                       "(no NVIDIA driver, or one older than this CUDA %d.%d runtime)",
                       cudaGetErrorName(e), CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    if (e != cudaSuccess)
        return gpu_say(err, -ENODEV, "no CUDA device: cudaGetDeviceCount: %s (%s)",
                       cudaGetErrorName(e), cudaGetErrorString(e));
    *count = n;
    return 0;
}

int gpu_available(char *err)
{
    int n, rc = gpu_device_count(&n, err);

    if (rc == 0 && n < 1)
        rc = gpu_say(err, -ENODEV, "no CUDA device: cudaGetDeviceCount found none");
    return rc;
}

int gpu_device_select(int local_rank, int *device, char *err)
{
    int n, dev, rc;

    if (local_rank < 0)
        return gpu_say(err, ERR_USAGE, "gpu: local rank %d is negative", local_rank);
    if ((rc = gpu_available(err)) != 0)
        return rc;
    (void)gpu_device_count(&n, NULL);
    dev = local_rank % n;
    CUDA_CHECK(cudaSetDevice(dev));
    if (device)
        *device = dev;
out:
    return rc;
}

int gpu_device_describe(char *buf, size_t len, char *err)
{
    struct cudaDeviceProp p;
    int dev = 0, rc = 0;

    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    snprintf(buf, len, "%d: %s, sm_%d%d, %d SMs, %.1f GiB", dev, p.name, p.major, p.minor,
             p.multiProcessorCount, (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
out:
    return rc;
}

int gpu_grid_size(size_t items, int threads, unsigned *blocks, char *err)
{
    static int sms[MAX_DEVICES];    /* 0: not read yet */
    int dev = 0, rc = 0;
    size_t want, cap;

    CUDA_CHECK(cudaGetDevice(&dev));
    if (dev >= 0 && dev < MAX_DEVICES && sms[dev] == 0)
        CUDA_CHECK(cudaDeviceGetAttribute(&sms[dev], cudaDevAttrMultiProcessorCount, dev));
    cap = (size_t)(dev >= 0 && dev < MAX_DEVICES ? sms[dev] : 132) * GPU_BLOCKS_PER_SM;
    want = (items + (size_t)threads - 1) / (size_t)threads;
    *blocks = (unsigned)(want < 1 ? 1 : want < cap ? want : cap);
out:
    return rc;
}

/* alloc: device memory (host = 0, cudaMalloc) or pinned host memory
 * mapped into the device's address space (host = 1, cudaHostAlloc); 0
 * bytes allocate nothing; *p is NULL unless the call succeeded. */
static int alloc(void **p, size_t bytes, int host, char *err)
{
    int rc = 0;

    *p = NULL;
    if (bytes == 0)
        return 0;
    if (host)
        CUDA_CHECK(cudaHostAlloc(p, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
    else
        CUDA_CHECK(cudaMalloc(p, bytes));
out:
    if (rc != 0)
        *p = NULL;
    return rc;
}

int gpu_malloc(void **p, size_t bytes, char *err)
{
    return alloc(p, bytes, 0, err);
}

void gpu_free(void *p)
{
    if (p)
        (void)cudaFree(p);
}

int gpu_host_alloc(void **p, size_t bytes, char *err)
{
    return alloc(p, bytes, 1, err);
}

void gpu_host_free(void *p)
{
    if (p)
        (void)cudaFreeHost(p);
}
