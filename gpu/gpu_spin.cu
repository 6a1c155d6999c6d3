/* gpu_spin.cu -- a kernel that waits for the host: the tests' stuck GPU.
 *
 * To test that a host wait times out (gpu_stream_wait, gpu_event_wait)
 * the GPU must be busy for as long as the test wants and then stop when
 * told. This kernel reads an int in pinned host memory until the host
 * writes a non-zero value there, checking the GPU's global timer so that it
 * also ends by itself after max_s seconds: a test that dies half-way never
 * leaves a kernel spinning on the device.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <math.h>

extern "C" {
#include "base/err.h"
#include "gpu.h"
}
#include "gpu_internal.h"

__device__ static inline unsigned long long globaltimer_ns(void)
{
    unsigned long long t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_kernel(const volatile int *flag, unsigned long long max_ns)
{
    const unsigned long long start = globaltimer_ns();

    while (*flag == 0 && globaltimer_ns() - start < max_ns)
        __nanosleep(10000);
}

extern "C" int gpu_spin_async(const volatile int *flag, double max_s, struct gpu_stream *s, char *err)
{
    void *dflag = NULL;
    int rc = 0;

    if (!(max_s > 0 && max_s < 3600))
        return gpu_say(err, ERR_USAGE, "gpu_spin_async: max_s %g not in (0, 3600)", max_s);
    CUDA_CHECK(cudaHostGetDevicePointer(&dflag, (void *)flag, 0));
    spin_kernel<<<1, 1, 0, (cudaStream_t)s>>>((const volatile int *)dflag,
                                              (unsigned long long)(max_s * 1e9));
    CUDA_LAUNCHED(spin_kernel);
out:
    return rc;
}
