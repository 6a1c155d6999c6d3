/* client_psgd.c -- POWERSGD PUSHES, the worker's half (client.h,
 * ps_client_psgd; the server's: store_psgd.c, server_psgd.c). For each
 * server in turn:
 *
 *   PUSH(step s, aux lo)  round 0: P_i and the raw elements of [lo, hi),
 *                         with the count and loss
 *   WEIGHTS(s, lo)        round 0's sum, the same length; every worker
 *                         orthonormalizes it alike (psgd_encode_q)
 *   PUSH(s, lo)           round 1: Q_i, count and loss 0
 *   WEIGHTS(s, lo)        round 1's sum: decoded (P^ Q^T, the residual,
 *                         the warm start kept)
 *
 * then the step's weights come as always (ps_client_pull). Every sum is
 * checked finite on arrival, as weights are: a server that holds the
 * secret may still be hostile.
 */
#include "client.h"

#include <stdio.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/powersgd.h"
#include "base/vec.h"
#include "frames.h"

/* round: round r of [k->lo, k->hi) in ps->round[r] to server k, its sum
 * back into the same buffer. */
static int round_trip(struct ps_conn *k, struct psgd *ps, uint64_t step, int r,
                      const struct proto_push_meta *meta, char *err)
{
    struct ps_client *c = k->owner;
    size_t len = psgd_round_len(ps, (size_t)k->lo, (size_t)(k->hi - k->lo), r);
    size_t bytes = len * c->elem, bad = 0;
    double idle = FRAMES_PULL_IDLE_FACTOR * c->timeout;
    char ctx[48], tmp[ERR_LEN];
    int rc;

    snprintf(ctx, sizeof ctx, "step %llu PowerSGD round %d", ull(step), r);
    proto_push_meta_encode(meta, k->out + PROTO_HEADER_SIZE);
    if ((rc = frames_send_head(k, ctx, PROTO_PUSH, step, k->lo, PROTO_PUSH_META + bytes,
                               PROTO_PUSH_META, err)) != 0)
        return rc;
    if ((rc = c->io->send(c->io_ctx, k, ps->round[r], bytes, c->timeout, PS_IO_ELEMENTS,
                          tmp)) != 0) {
        err_say(err, "%s: %s", ctx, tmp);
        return rc;
    }
    k->clean = 1;
    /* The sum comes when every worker has pushed the round: as the
     * weights' wait (frames.c, PULL WAIT), with the link's time for K
     * pushes of it. */
    if (c->link_bw > 0.0)
        idle += (double)c->world * (double)bytes / c->link_bw + c->link_latency;
    if ((rc = frames_expect(k, ctx, idle, PROTO_WEIGHTS, step, k->lo, bytes, err)) != 0)
        return rc;
    if ((rc = c->io->recv(c->io_ctx, k, ps->round[r], bytes, c->timeout,
                          PS_IO_ELEMENTS | PS_IO_FRAME, tmp)) != 0) {
        err_say(err, "%s: %s", ctx, tmp);
        return rc;
    }
    if (vec_check_finite(ps->round[r], len, c->dtype, &bad) != 0) {
        err_say(err, "%s: %s sent sum element %zu = %g (NaN or Inf); the step fails", ctx,
                k->name, bad, vec_get(ps->round[r], bad, c->dtype));
        return ERR_NONFINITE;
    }
    return 0;
}

int ps_client_psgd(struct ps_client *c, struct psgd *ps, uint64_t step,
                   const struct proto_push_meta *meta, const void *grad, void *scratch,
                   char *err)
{
    size_t bad = 0;
    int rc;

    for (int i = 0; i < c->nservers; i++) {
        struct ps_conn *k = &c->conns[i];
        size_t lo = (size_t)k->lo, cnt = (size_t)(k->hi - k->lo);

        if (psgd_round_len(ps, lo, cnt, 1) == 0) {      /* no compressed matrix */
            if ((rc = frames_push(k, step, meta, grad, lo, cnt, err)) != 0)
                return rc;
            continue;
        }
        psgd_encode_p(ps, grad, lo, cnt);
        if ((rc = round_trip(k, ps, step, 0, meta, err)) != 0)
            return rc;
        psgd_encode_q(ps, lo, cnt);
        if ((rc = round_trip(k, ps, step, 1, &frames_no_meta, err)) != 0)
            return rc;
        if (psgd_decode(ps, scratch, lo, cnt, (int)c->world, &bad) != 0) {
            err_say(err, "step %llu: %s: P^ Q^T element %zu is not finite", ull(step),
                    k->name, lo + bad);
            return ERR_NONFINITE;
        }
    }
    return 0;
}
