/* gpu_stub.c -- gpu.h in a build without CUDA (nvcc not found).
 *
 * Every call that would need a GPU fails with -ENODEV and the line "built
 * without CUDA (nvcc not found)", so ring_worker and ps_worker link and run
 * their CPU paths unchanged and refuse --device cuda / --transport nccl
 * with that reason; no caller needs an #ifdef. Functions that cannot fail
 * (the _free/_destroy ones) do nothing. gpu_nccl_fit is real in every
 * build (gpu_fit.c). The NCCL calls are gpu_nccl_stub.c's, included at the
 * end with this file's reason.
 */
#include "gpu.h"

#include <errno.h>
#include <stddef.h>

#include "gpu_internal.h"

#define WHY "built without CUDA (nvcc not found)"

const char *gpu_build_info(void)
{
    return WHY;
}

int gpu_available(char *err)
{
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_device_count(int *count, char *err)
{
    *count = 0;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_device_select(int local_rank, int *device, char *err)
{
    (void)local_rank;
    if (device)
        *device = -1;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_device_describe(char *buf, size_t len, char *err)
{
    if (len > 0)
        buf[0] = '\0';
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_malloc(void **p, size_t bytes, char *err)
{
    (void)bytes;
    *p = NULL;
    return gpu_say(err, -ENODEV, WHY);
}

void gpu_free(void *p)
{
    (void)p;
}

int gpu_host_alloc(void **p, size_t bytes, char *err)
{
    (void)bytes;
    *p = NULL;
    return gpu_say(err, -ENODEV, WHY);
}

void gpu_host_free(void *p)
{
    (void)p;
}

int gpu_stream_create(struct gpu_stream **s, char *err)
{
    *s = NULL;
    return gpu_say(err, -ENODEV, WHY);
}

void gpu_stream_destroy(struct gpu_stream *s)
{
    (void)s;
}

int gpu_copy_async(void *dst, const void *src, size_t bytes, struct gpu_stream *s, char *err)
{
    (void)dst; (void)src; (void)bytes; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_zero_async(void *p, size_t bytes, struct gpu_stream *s, char *err)
{
    (void)p; (void)bytes; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_stream_wait(struct gpu_stream *s, double timeout_s, char *err)
{
    (void)s; (void)timeout_s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_event_create(struct gpu_event **e, int timing, char *err)
{
    (void)timing;
    *e = NULL;
    return gpu_say(err, -ENODEV, WHY);
}

void gpu_event_destroy(struct gpu_event *e)
{
    (void)e;
}

int gpu_event_record(struct gpu_event *e, struct gpu_stream *s, char *err)
{
    (void)e; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_event_wait(struct gpu_event *e, double timeout_s, char *err)
{
    (void)e; (void)timeout_s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_stream_wait_event(struct gpu_stream *s, struct gpu_event *e, char *err)
{
    (void)s; (void)e;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_event_elapsed(struct gpu_event *start, struct gpu_event *end, double *seconds, char *err)
{
    (void)start; (void)end;
    *seconds = 0.0;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_vec_add(void *acc, const void *x, size_t n, int dtype, struct gpu_stream *s, char *err)
{
    (void)acc; (void)x; (void)n; (void)dtype; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_sgd_step(void *w, const void *g_sum, size_t n, int dtype, double lr,
                 uint64_t batch, struct gpu_stream *s, char *err)
{
    (void)w; (void)g_sum; (void)n; (void)dtype; (void)lr; (void)batch; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_optim_update(const struct optim_coef *k, int dtype, void *w, const void *g_sum, void *m,
                     void *v, size_t n, uint64_t batch, struct gpu_stream *s, char *err)
{
    (void)k; (void)dtype; (void)w; (void)g_sum; (void)m; (void)v; (void)n; (void)batch; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_workload_create(struct gpu_workload **out, const struct workload *w, char *err)
{
    (void)w;
    *out = NULL;
    return gpu_say(err, -ENODEV, WHY);
}

void gpu_workload_destroy(struct gpu_workload *g)
{
    (void)g;
}

int gpu_workload_grad_add(struct gpu_workload *g, const void *weights, uint64_t step,
                          uint64_t lo, uint64_t hi, void *grad, double *loss,
                          struct gpu_stream *s, char *err)
{
    (void)g; (void)weights; (void)step; (void)lo; (void)hi; (void)grad; (void)loss; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

int gpu_spin_async(const volatile int *flag, double max_s, struct gpu_stream *s, char *err)
{
    (void)flag; (void)max_s; (void)s;
    return gpu_say(err, -ENODEV, WHY);
}

/* NCCL: the same answer, from gpu_nccl_stub.c's one copy of the NCCL
 * stubs (also built on its own in a CUDA build without nccl.h), told to
 * give this file's reason. */
#define GPU_NCCL_STUB_WHY WHY
#include "gpu_nccl_stub.c"
