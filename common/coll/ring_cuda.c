/* ring_cuda.c -- ring.c's all-reduce for a vector in GPU memory, staged
 * through pinned host memory over the TCP transport (ring_cuda.h says what
 * it promises).
 *
 * THE SCHEDULE is ring.c's, step for step (read its opening comment: the
 * picture, the step table, the cost): K-1 reduce-scatter steps, then K-1
 * all-gather steps, in each of which a rank sends one chunk to the right
 * and receives one from the left. ring_chunk() cuts the chunks, so the two
 * rings agree on every byte. What changes is where the bytes are: the
 * vector is in GPU memory, the socket reads and writes host memory, so
 * every chunk crosses PCIe twice per phase, once each way.
 *
 * THE PIPELINE. Two pinned host buffers of one chunk each, H0 and H1: in a
 * step one is being sent (complete since the step began, xport.h) while
 * the other receives; then they swap roles. A reduce-scatter step receives
 * the left's partial sum in pieces (--piece) and, for each piece p, queues
 * three operations on three streams, ordered by events, without the host
 * waiting for any of them:
 *
 *     host  recv p -> H[p]      recv p+1 -> H[p+1]      recv p+2 ...
 *     h2d         H[p] -> S[p]           H[p+1] -> S[p+1]
 *     add                buf[p] += S[p]           buf[p+1] += S[p+1]
 *     d2h                        buf[p] -> H[p]            buf[p+1] -> H[p+1]
 *
 * S is the device staging buffer. The sum goes back into the very bytes of
 * H it was computed from (the copy out waits for the add, which waited for
 * the copy in), so when the step ends the receive buffer holds this rank's
 * new partial sum of the chunk: exactly what ring.c sends in the next step.
 * The host waits once per step, for the last piece's copy back, before the
 * next step sends that buffer. So the network (the host's recv), the two
 * copies and the reduction of successive pieces overlap, and the only tail
 * is one piece. The all-gather needs no reduction and no copy out: a
 * received piece is copied straight into buf, and the same host buffer is
 * what the next step sends (finished chunks travel round unchanged).
 *
 * The host writes into a pinned buffer only after the GPU has finished
 * with it: last[i] is recorded after the last GPU operation queued on H_i,
 * and a step waits for it before receiving into H_i.
 *
 * ALIGNMENT. gpu_vec_add runs its 16-byte path when acc and x share their
 * address modulo 16. buf comes from cudaMalloc (256-byte aligned), so a
 * chunk starting at element lo sits at (lo * size) mod 16; the staged piece
 * is put at the same offset inside S (hence S's 16 spare bytes).
 *
 * SIMPLIFICATION. Each piece is copied to the device before the add
 * (the "staged" of the issue); gpu_vec_add could instead read the pinned
 * buffer directly over PCIe (it is mapped), which saves the copy's launch
 * but makes the add as slow as PCIe. Not measured here.
 */
#include "ring_cuda.h"

#include <errno.h>
#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"
#include "gpu.h"
#include "ring.h"

#define STAGE_SLACK 16          /* bytes: S's room to match a chunk's alignment */

int ring_cuda_init(struct ring_cuda *r, struct xport *x, int rank, int world, size_t max_n,
                   int dtype, size_t piece_bytes, double timeout, char *err)
{
    size_t es = dtype_size(dtype), chunk, bytes;
    int rc = 0;

    memset(r, 0, sizeof *r);
    if (world < 1 || rank < 0 || rank >= world || (world > 1 && !x) || es == 0 || timeout <= 0) {
        err_say(err, "ring_cuda_init: rank %d of %d, dtype %d, timeout %g", rank, world, dtype,
                timeout);
        return ERR_USAGE;
    }
    if (piece_bytes == 0)
        piece_bytes = RING_PIECE_DEFAULT;
    r->x = x;
    r->rank = rank;
    r->world = world;
    r->dtype = dtype;
    r->max_n = max_n;
    r->piece = piece_bytes / es > 0 ? piece_bytes / es : 1;
    r->timeout = timeout;
    if (world == 1)
        return 0;

    chunk = max_n / (size_t)world + 1;          /* >= the largest chunk (ring_chunk) */
    bytes = chunk * es;
    if ((rc = gpu_host_alloc((void **)&r->host[0], bytes, err)) != 0 ||
        (rc = gpu_host_alloc((void **)&r->host[1], bytes, err)) != 0 ||
        (rc = gpu_malloc((void **)&r->stage, bytes + STAGE_SLACK, err)) != 0 ||
        (rc = gpu_stream_create(&r->h2d, err)) != 0 ||
        (rc = gpu_stream_create(&r->add, err)) != 0 ||
        (rc = gpu_stream_create(&r->d2h, err)) != 0 ||
        (rc = gpu_event_create(&r->in, 0, err)) != 0 ||
        (rc = gpu_event_create(&r->added, 0, err)) != 0 ||
        (rc = gpu_event_create(&r->last[0], 0, err)) != 0 ||
        (rc = gpu_event_create(&r->last[1], 0, err)) != 0)
        ring_cuda_destroy(r);
    return rc;
}

void ring_cuda_destroy(struct ring_cuda *r)
{
    struct gpu_stream *s[3] = { r->h2d, r->add, r->d2h };

    /* After a failure work may still be queued on the pinned buffers:
     * let it finish (bounded) before they are freed. */
    for (int i = 0; i < 3; i++)
        if (s[i])
            (void)gpu_stream_wait(s[i], r->timeout, NULL);
    gpu_event_destroy(r->last[1]);
    gpu_event_destroy(r->last[0]);
    gpu_event_destroy(r->added);
    gpu_event_destroy(r->in);
    for (int i = 0; i < 3; i++)
        gpu_stream_destroy(s[i]);
    gpu_free(r->stage);
    gpu_host_free(r->host[1]);
    gpu_host_free(r->host[0]);
    memset(r, 0, sizeof *r);
}

/* mark: last[i] after what s has queued so far (the last GPU use of
 * host[i]); wait != 0: and wait for it. */
static int mark(struct ring_cuda *r, int i, struct gpu_stream *s, int wait, char *err)
{
    int rc = gpu_event_record(r->last[i], s, err);

    if (rc == 0 && wait)
        rc = gpu_event_wait(r->last[i], r->timeout, err);
    return rc;
}

/* reduce_piece: queue h -> stage, acc += stage, acc -> h (m elements),
 * each stream waiting for the one before: the picture above, one column. */
static int reduce_piece(struct ring_cuda *r, unsigned char *acc, unsigned char *stage,
                        unsigned char *h, size_t m, char *err)
{
    size_t bytes = m * dtype_size(r->dtype);
    int rc;

    if ((rc = gpu_copy_async(stage, h, bytes, r->h2d, err)) != 0 ||
        (rc = gpu_event_record(r->in, r->h2d, err)) != 0 ||
        (rc = gpu_stream_wait_event(r->add, r->in, err)) != 0 ||
        (rc = gpu_vec_add(acc, stage, m, r->dtype, r->add, err)) != 0 ||
        (rc = gpu_event_record(r->added, r->add, err)) != 0 ||
        (rc = gpu_stream_wait_event(r->d2h, r->added, err)) != 0)
        return rc;
    return gpu_copy_async(h, acc, bytes, r->d2h, err);
}

/* step: step s of phase ph (ring_schedule). host[*snd] holds the chunk to
 * send; the incoming chunk goes to host[1 - *snd] and then, in the
 * reduce-scatter: added into buf and the sum copied back there; else
 * copied into buf. Swaps *snd. */
static int step(struct ring_cuda *r, unsigned char *buf, size_t n, enum ring_phase ph, int s,
                int *snd, char *err)
{
    const size_t es = dtype_size(r->dtype);
    struct xport *x = r->x;
    int in = 1 - *snd, reduce = ph == RING_REDUCE_SCATTER, send_chunk, recv_chunk, rc;
    unsigned char *h = r->host[in], *stage;
    size_t slo, shi, rlo, rhi, m = 0;

    ring_schedule(r->rank, r->world, ph, s, &send_chunk, &recv_chunk);
    ring_chunk(n, r->world, send_chunk, &slo, &shi);
    ring_chunk(n, r->world, recv_chunk, &rlo, &rhi);
    stage = r->stage + (rlo * es) % STAGE_SLACK;
    if ((rc = gpu_event_wait(r->last[in], r->timeout, err)) != 0)
        return rc;
    rc = xport_begin(x, &(struct xport_step){
            .to = (r->rank + 1) % r->world, .from = (r->rank + r->world - 1) % r->world,
            .send_tag = (uint32_t)send_chunk, .recv_tag = (uint32_t)recv_chunk,
            .sbuf = r->host[*snd], .sbytes = (shi - slo) * es, .rbytes = (rhi - rlo) * es,
        }, err);
    for (size_t i = rlo; rc == 0 && i < rhi; i += m) {
        size_t off = (i - rlo) * es;
        size_t bad = 0;
        m = rhi - i < r->piece ? rhi - i : r->piece;
        rc = xport_recv(x, h + off, m * es, err);
        /* ring.c's THE CHECK, on the host, before the piece goes to the
         * GPU: what a neighbour sent. A sum that overflows on the device
         * is caught by the next rank that receives it. */
        if (rc == 0 && vec_check_finite(h + off, m, r->dtype, &bad) != 0) {
            err_say(err, "element %zu is %g in chunk %d from the left neighbour (rank %d) at "
                    "%s step %d", i + bad, vec_get(h + off, bad, r->dtype), recv_chunk,
                    (r->rank + r->world - 1) % r->world, reduce ? "reduce-scatter" : "all-gather",
                    s);
            rc = ERR_NONFINITE;
        }
        if (rc == 0 && reduce)
            rc = reduce_piece(r, buf + i * es, stage + off, h + off, m, err);
        else if (rc == 0)
            rc = gpu_copy_async(buf + i * es, h + off, m * es, r->h2d, err);
    }
    if (rc == 0)
        rc = xport_end(x, err);
    /* Reduce-scatter: the sum must be in h before the next step sends it.
     * All-gather: h is only read until a later step receives into it. */
    if (rc == 0)
        rc = mark(r, in, reduce ? r->d2h : r->h2d, reduce, err);
    *snd = in;
    return rc;
}

int ring_cuda_allreduce(struct ring_cuda *r, void *buf, size_t n, char *err)
{
    const size_t es = dtype_size(r->dtype);
    unsigned char *p = buf;
    int k = r->world, snd = 0, first, unused, rc;
    size_t lo, hi;

    if (k == 1)
        return 0;
    if (n > r->max_n) {
        err_say(err, "ring_cuda_allreduce: %zu elements, set up for %zu", n, r->max_n);
        return ERR_USAGE;
    }
    /* The first chunk sent is this rank's own (chunk r-1), as it is. */
    ring_schedule(r->rank, k, RING_REDUCE_SCATTER, 0, &first, &unused);
    ring_chunk(n, k, first, &lo, &hi);
    if ((rc = gpu_copy_async(r->host[0], p + lo * es, (hi - lo) * es, r->d2h, err)) != 0 ||
        (rc = mark(r, 0, r->d2h, 1, err)) != 0)
        return rc;
    for (int s = 0; s < k - 1; s++)
        if ((rc = step(r, p, n, RING_REDUCE_SCATTER, s, &snd, err)) != 0)
            return rc;
    /* host[snd] now holds the finished chunk r, the all-gather's first. */
    for (int s = 0; s < k - 1; s++)
        if ((rc = step(r, p, n, RING_ALL_GATHER, s, &snd, err)) != 0)
            return rc;
    return gpu_stream_wait(r->h2d, r->timeout, err);
}
