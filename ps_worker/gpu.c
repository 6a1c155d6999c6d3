/* gpu.c -- ps_worker --device cuda: the device of this local rank, its
 * stream, the step's device (step_gpu.h) and the pinned push and pull
 * buffers, and the waited copies between them (main.c's opening comment
 * says how a GPU worker's step goes).
 */
#include "run.h"

#include <stdio.h>

#include "base/err.h"
#include "base/log.h"
#include "gpu.h"

/* stage: copy bytes between the device and pinned memory, waited for;
 * a failure's line names the step. */
int stage(struct run *r, uint64_t step, void *dst, const void *src, size_t bytes,
                 char *err)
{
    int rc = gpu_copy_async(dst, src, bytes, r->stream, err);

    if (rc == 0)
        rc = gpu_stream_wait(r->stream, r->o.timeout, err);
    if (rc != 0) {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "step %llu: %s", (unsigned long long)step, why);
    }
    return rc;
}

/* gpu_setup: the device of this local rank, its stream, the step's device
 * (step_gpu.h) and the pinned push and pull buffers. */
int gpu_setup(struct run *r, char *err)
{
    size_t bytes = r->w.n * r->elem;
    char desc[160];
    int rc;

    if ((rc = gpu_device_select(r->o.local_rank, NULL, err)) != 0 ||
        (rc = gpu_stream_create(&r->stream, err)) != 0)
        return rc;
    r->have_gpu = 1;
    if ((rc = step_gpu_init(&r->gpu, &r->w, r->stream, r->o.timeout, err)) != 0 ||
        (rc = gpu_host_alloc(&r->hweights, bytes, err)) != 0 ||
        (rc = gpu_host_alloc(&r->hgrad, bytes, err)) != 0)
        return rc;
    if (gpu_device_describe(desc, sizeof desc, NULL) == 0)
        log_msg("GPU %s (local rank %d)", desc, r->o.local_rank);
    return 0;
}

/* gpu_teardown: what gpu_setup made (any part of it). */
void gpu_teardown(struct run *r)
{
    if (r->stream)
        (void)gpu_stream_wait(r->stream, r->o.timeout, NULL);
    gpu_host_free(r->hgrad);
    gpu_host_free(r->hweights);
    step_gpu_destroy(&r->gpu);
    gpu_stream_destroy(r->stream);
    r->hgrad = r->hweights = NULL;
}
