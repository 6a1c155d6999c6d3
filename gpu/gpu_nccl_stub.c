/* gpu_nccl_stub.c -- the NCCL half of gpu.h in a CUDA build without
 * nccl.h: every call fails with -ENODEV and says why; the CUDA half
 * (kernels, the CUDA-staged ring) is unaffected. gpu.mk builds this file
 * instead of gpu_nccl.c when it finds nvcc but no nccl.h (it says so once).
 */
#include "gpu.h"

#include <errno.h>

#include "gpu_internal.h"

#define WHY "built without NCCL (nccl.h not found next to CUDA at build time)"

const char *gpu_nccl_build_info(void)
{
    return "without NCCL (nccl.h not found)";
}

int gpu_nccl_load(int *version, char *err)
{
    if (version)
        *version = 0;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_nccl_unique_id(unsigned char id[GPU_NCCL_ID_BYTES], char *err)
{
    (void)id;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_nccl_create(struct gpu_nccl **out, const unsigned char id[GPU_NCCL_ID_BYTES],
                    int rank, int world, double timeout_s, char *err)
{
    (void)id; (void)rank; (void)world; (void)timeout_s;
    *out = NULL;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_nccl_all_reduce_start(struct gpu_nccl *c, const void *send, void *recv, size_t n,
                              int dtype, struct gpu_stream *s, char *err)
{
    (void)c; (void)send; (void)recv; (void)n; (void)dtype; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_nccl_wait(struct gpu_nccl *c, struct gpu_stream *s, char *err)
{
    (void)c; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_nccl_all_reduce(struct gpu_nccl *c, const void *send, void *recv, size_t n,
                        int dtype, struct gpu_stream *s, char *err)
{
    return gpu_nccl_all_reduce_start(c, send, recv, n, dtype, s, err);
}

void gpu_nccl_abort(struct gpu_nccl *c)
{
    (void)c;
}

void gpu_nccl_destroy(struct gpu_nccl *c)
{
    (void)c;
}
