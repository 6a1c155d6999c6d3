/* step_gpu.h -- the CUDA device of the training step (struct step_device,
 * step.h): the buffers in GPU memory, the gradient from
 * gpu_workload_grad_add (the twin of workload_grad_add: the same bits,
 * gpu.h), the loss summed in one device double. The ring's GPU path
 * (common/coll/train_cuda.c, on the coll's stream) and the parameter-server
 * worker's (ps_worker/main.c, on its own) both use it.
 *
 * Every copy (put, get) is queued on the stream and waited for, bounded by
 * the timeout; zero and grad_add are only queued, so the gradient of a
 * step follows the previous step's update on the stream.
 *
 * WHY A HEADER. The functions are static inline, compiled into the two
 * programs that use them, rather than a common/step_gpu.c: every program
 * links build/libgpu.a BEFORE build/libcommon.a (the GPU code calls
 * common/), so an object in libcommon.a could not call into libgpu.a.
 *
 * OWNERSHIP. step_gpu_init creates the device workload and the loss
 * doubles; step_gpu_destroy frees them (also after a failed init). The
 * stream is the caller's and must outlive it.
 */
#ifndef STEP_GPU_H
#define STEP_GPU_H

#include <string.h>

#include "base/dtype.h"
#include "gpu.h"
#include "train/step.h"

struct step_gpu {
    struct step_device dev;     /* the ops below, ctx = this struct */
    struct gpu_stream *st;
    double timeout;
    int dtype;
    struct gpu_workload *gw;
    double *dloss;              /* device: the loss sum since zero */
    double *hloss;              /* pinned host: its copy */
};

static inline int step_gpu_alloc(void *ctx, void **p, size_t bytes, char *err)
{
    (void)ctx;
    return gpu_malloc(p, bytes, err);
}

static inline void step_gpu_free(void *ctx, void *p)
{
    (void)ctx;
    gpu_free(p);
}

static inline int step_gpu_copy(void *ctx, void *dst, const void *src, size_t bytes, char *err)
{
    struct step_gpu *g = ctx;
    int rc = gpu_copy_async(dst, src, bytes, g->st, err);

    return rc != 0 ? rc : gpu_stream_wait(g->st, g->timeout, err);
}

static inline int step_gpu_zero(void *ctx, void *grad, size_t n, char *err)
{
    struct step_gpu *g = ctx;
    int rc = gpu_zero_async(grad, n * dtype_size(g->dtype), g->st, err);

    return rc != 0 ? rc : gpu_zero_async(g->dloss, sizeof(double), g->st, err);
}

static inline int step_gpu_grad_add(void *ctx, const void *weights, uint64_t step, uint64_t lo,
                                    uint64_t hi, void *grad, char *err)
{
    struct step_gpu *g = ctx;

    return gpu_workload_grad_add(g->gw, weights, step, lo, hi, grad, g->dloss, g->st, err);
}

static inline int step_gpu_loss(void *ctx, double *loss, char *err)
{
    struct step_gpu *g = ctx;
    int rc = step_gpu_copy(ctx, g->hloss, g->dloss, sizeof(double), err);

    *loss = *g->hloss;
    return rc;
}

/* step_gpu_init: the device side of w on the current device, its work
 * queued on st. 0, or a negative code with one line in err. */
static inline int step_gpu_init(struct step_gpu *g, const struct workload *w,
                                struct gpu_stream *st, double timeout, char *err)
{
    int rc;

    memset(g, 0, sizeof *g);
    g->dev = (struct step_device){ step_gpu_alloc, step_gpu_free, step_gpu_copy, step_gpu_copy,
                                   step_gpu_zero, step_gpu_grad_add, step_gpu_loss, g };
    g->st = st;
    g->timeout = timeout;
    g->dtype = w->dtype;
    if ((rc = gpu_workload_create(&g->gw, w, err)) != 0 ||
        (rc = gpu_malloc((void **)&g->dloss, sizeof(double), err)) != 0)
        return rc;
    return gpu_host_alloc((void **)&g->hloss, sizeof(double), err);
}

static inline void step_gpu_destroy(struct step_gpu *g)
{
    gpu_host_free(g->hloss);
    gpu_free(g->dloss);
    gpu_workload_destroy(g->gw);
    g->gw = NULL;
    g->dloss = g->hloss = NULL;
}

#endif /* STEP_GPU_H */
