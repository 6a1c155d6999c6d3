/* gpu_stream.c -- streams, events, copies, and host waits with a deadline.
 *
 * CUDA's own waits (cudaStreamSynchronize, cudaEventSynchronize) block
 * until the work is done, however long that is: a kernel that never ends,
 * or an NCCL collective whose peer died, holds the host forever (the
 * anti-pattern RELIABILITY.md names). Every host wait here polls instead
 * (cudaStreamQuery / cudaEventQuery) against a deadline and returns
 * ERR_TIMEOUT when it passes, leaving the decision to the caller.
 *
 * Polling: the first POLL_SPIN_S seconds yield the CPU between queries (a
 * pipeline chunk finishes in microseconds, and a sleep would add its
 * wake-up latency to every chunk), then the thread sleeps between queries,
 * doubling from POLL_SLEEP_MIN_S to POLL_SLEEP_MAX_S, so a long wait costs
 * next to no CPU on a machine the ring's other ranks share.
 *
 * The opaque handles of gpu.h are CUDA's own: a struct gpu_stream * is a
 * cudaStream_t (NULL: the default stream), a struct gpu_event * a
 * cudaEvent_t, converted at this boundary and nowhere else.
 */
#include "gpu.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <sched.h>

#include "base/clock.h"
#include "base/err.h"
#include "gpu_internal.h"

#define POLL_SPIN_S      200e-6
#define POLL_SLEEP_MIN_S 10e-6
#define POLL_SLEEP_MAX_S 1e-3

static cudaStream_t cu_stream(struct gpu_stream *s)
{
    return (cudaStream_t)s;
}

static cudaEvent_t cu_event(struct gpu_event *e)
{
    return (cudaEvent_t)e;
}

void gpu_poll_pause(double started, double *sleep_s)
{
    double now = clock_now();

    if (now - started < POLL_SPIN_S) {
        sched_yield();
        return;
    }
    clock_sleep_until(now + *sleep_s);
    *sleep_s = fmin(*sleep_s * 2.0, POLL_SLEEP_MAX_S);
}

/* One query function for streams and events: cudaSuccess when done,
 * cudaErrorNotReady while pending, another error when the work failed. */
typedef cudaError_t (*query_fn)(void *obj);

static cudaError_t query_stream(void *obj)
{
    return cudaStreamQuery((cudaStream_t)obj);
}

static cudaError_t query_event(void *obj)
{
    return cudaEventQuery((cudaEvent_t)obj);
}

static int poll_done(query_fn query, void *obj, double timeout_s, const char *what, char *err)
{
    const double start = clock_now();
    const double deadline = start + (timeout_s > 0 ? timeout_s : 0.0);
    double sleep_s = POLL_SLEEP_MIN_S;
    cudaError_t e;

    for (;;) {
        e = query(obj);
        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady)
            return gpu_cuda_fail(err, __FILE__, __LINE__, what, (int)e);
        if (clock_now() >= deadline)
            break;
        gpu_poll_pause(start, &sleep_s);
    }
    return gpu_say(err, ERR_TIMEOUT, "gpu: %s: work not finished after %.3g s (timeout)",
                   what, timeout_s > 0 ? timeout_s : 0.0);
}

int gpu_stream_create(struct gpu_stream **s, char *err)
{
    cudaStream_t cs = NULL;
    int rc = 0;

    *s = NULL;
    CUDA_CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    *s = (struct gpu_stream *)cs;
out:
    return rc;
}

void gpu_stream_destroy(struct gpu_stream *s)
{
    if (s)
        (void)cudaStreamDestroy(cu_stream(s));
}

int gpu_copy_async(void *dst, const void *src, size_t bytes, struct gpu_stream *s, char *err)
{
    int rc = 0;

    if (bytes == 0)
        return 0;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cu_stream(s)));
out:
    return rc;
}

int gpu_zero_async(void *p, size_t bytes, struct gpu_stream *s, char *err)
{
    int rc = 0;

    if (bytes == 0)
        return 0;
    CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, cu_stream(s)));
out:
    return rc;
}

int gpu_stream_wait(struct gpu_stream *s, double timeout_s, char *err)
{
    return poll_done(query_stream, (void *)cu_stream(s), timeout_s, "cudaStreamQuery", err);
}

int gpu_event_create(struct gpu_event **e, int timing, char *err)
{
    cudaEvent_t ce = NULL;
    int rc = 0;

    *e = NULL;
    CUDA_CHECK(cudaEventCreateWithFlags(&ce, timing ? cudaEventDefault : cudaEventDisableTiming));
    *e = (struct gpu_event *)ce;
out:
    return rc;
}

void gpu_event_destroy(struct gpu_event *e)
{
    if (e)
        (void)cudaEventDestroy(cu_event(e));
}

int gpu_event_record(struct gpu_event *e, struct gpu_stream *s, char *err)
{
    int rc = 0;

    CUDA_CHECK(cudaEventRecord(cu_event(e), cu_stream(s)));
out:
    return rc;
}

int gpu_event_wait(struct gpu_event *e, double timeout_s, char *err)
{
    return poll_done(query_event, (void *)cu_event(e), timeout_s, "cudaEventQuery", err);
}

int gpu_stream_wait_event(struct gpu_stream *s, struct gpu_event *e, char *err)
{
    int rc = 0;

    CUDA_CHECK(cudaStreamWaitEvent(cu_stream(s), cu_event(e), 0));
out:
    return rc;
}

int gpu_event_elapsed(struct gpu_event *start, struct gpu_event *end, double *seconds, char *err)
{
    float ms = 0.0f;
    int rc = 0;

    *seconds = 0.0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, cu_event(start), cu_event(end)));
    *seconds = (double)ms * 1e-3;
out:
    return rc;
}
