/* gpu_nccl_stub.c -- the NCCL half of gpu.h where NCCL cannot be used:
 * every call fails with -ENODEV and says why (GPU_NCCL_STUB_WHY); the
 * _abort/_destroy calls do nothing. The one copy of these stubs, for two
 * builds (gpu.mk chooses):
 *   - CUDA without nccl.h: gpu.mk compiles this file on its own, instead of
 *     gpu_nccl.c (and says so once); the reason is "built without NCCL",
 *     and the CUDA half (kernels, the CUDA-staged ring) is unaffected;
 *   - no CUDA at all: gpu_stub.c includes this file at its end, having
 *     defined GPU_NCCL_STUB_WHY as its own reason, "built without CUDA".
 */
#include "gpu.h"

#include <errno.h>

#include "gpu_internal.h"

#ifndef GPU_NCCL_STUB_WHY
#define GPU_NCCL_STUB_WHY "built without NCCL (nccl.h not found next to CUDA at build time)"
#endif

const char *gpu_nccl_build_info(void)
{
    return "without NCCL (nccl.h not found)";
}

int gpu_nccl_load(int *version, char *err)
{
    if (version)
        *version = 0;
    return gpu_say(err, -ENODEV, GPU_NCCL_STUB_WHY);
}

int gpu_nccl_unique_id(unsigned char id[GPU_NCCL_ID_BYTES], char *err)
{
    (void)id;
    return gpu_say(err, -ENODEV, GPU_NCCL_STUB_WHY);
}

int gpu_nccl_create(struct gpu_nccl **out, const unsigned char id[GPU_NCCL_ID_BYTES],
                    int rank, int world, double timeout_s, char *err)
{
    (void)id; (void)rank; (void)world; (void)timeout_s;
    *out = NULL;
    return gpu_say(err, -ENODEV, GPU_NCCL_STUB_WHY);
}

int gpu_nccl_all_reduce_start(struct gpu_nccl *c, const void *send, void *recv, size_t n,
                              int dtype, struct gpu_stream *s, char *err)
{
    (void)c; (void)send; (void)recv; (void)n; (void)dtype; (void)s;
    return gpu_say(err, -ENODEV, GPU_NCCL_STUB_WHY);
}

int gpu_nccl_wait(struct gpu_nccl *c, struct gpu_stream *s, char *err)
{
    (void)c; (void)s;
    return gpu_say(err, -ENODEV, GPU_NCCL_STUB_WHY);
}

int gpu_nccl_all_reduce(struct gpu_nccl *c, const void *send, void *recv, size_t n,
                        int dtype, struct gpu_stream *s, char *err)
{
    return gpu_nccl_all_reduce_start(c, send, recv, n, dtype, s, err);
}

int gpu_nccl_collective(struct gpu_nccl *c, int op, const void *send, void *recv, size_t count,
                        int dtype, int root, struct gpu_stream *s, char *err)
{
    (void)c; (void)op; (void)send; (void)recv; (void)count; (void)dtype; (void)root; (void)s;
    return gpu_say(err, -ENODEV, GPU_NCCL_STUB_WHY);
}

int gpu_nccl_alltoall(struct gpu_nccl *c, const void *send, void *recv,
                      const size_t *send_count, const size_t *send_off,
                      const size_t *recv_count, const size_t *recv_off, int dtype,
                      struct gpu_stream *s, char *err)
{
    (void)c; (void)send; (void)recv; (void)send_count; (void)send_off; (void)recv_count;
    (void)recv_off; (void)dtype; (void)s;
    return gpu_say(err, -ENODEV, GPU_NCCL_STUB_WHY);
}

void gpu_nccl_abort(struct gpu_nccl *c)
{
    (void)c;
}

void gpu_nccl_destroy(struct gpu_nccl *c)
{
    (void)c;
}
