/* xchg.c -- one exchange with a partner, the fold, the halving and
 * doubling (xchg.h). */
#include "xchg.h"

#include <stdint.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"
#include "rd.h"
#include "ring.h"

int xchg_step(struct xport_algo *a, const struct xchg *e, int dtype, char *err)
{
    size_t es = dtype_size(dtype), piece = a->piece_bytes / es, bad = 0, i = 0;
    struct xport_step s = {
        .to = e->peer, .from = e->peer, .send_tag = (uint32_t)e->round,
        .recv_tag = (uint32_t)e->round, .sbuf = e->sbuf, .sbytes = e->sn * es,
        .rbytes = e->take != XCHG_NONE ? e->rn * es : 0, .patience = e->patience,
    };
    int rc = xport_begin(a->x, &s, err);

    /* A copy is received whole, then checked (ring.c, PIECES, says why). */
    if (rc == 0 && e->take == XCHG_COPY && e->rn > 0 &&
        (rc = xport_recv(a->x, e->rbuf, e->rn * es, err)) == 0 && e->check)
        rc = vec_check_finite(e->rbuf, e->rn, dtype, &bad);
    for (; rc == 0 && e->take == XCHG_ADD && i < e->rn; i += piece) {
        size_t m = e->rn - i < piece ? e->rn - i : piece;
        /* In place (swing-lat sends the very vector it adds into): the
         * transport has sent ours at least this far (xport.h, recv). */
        if ((rc = xport_recv(a->x, a->stage, m * es, err)) == 0)
            rc = vec_add_ordered(e->rbuf + i * es, a->stage, m, dtype, a->rank < e->peer,
                                 e->check, &bad);
        if (rc == ERR_NONFINITE)
            break;
    }
    if (rc == ERR_NONFINITE)
        err_say(err, "element %zu is %g after round %d from partner rank %d",
                e->first + i + bad, vec_get(e->rbuf, i + bad, dtype), e->round, e->peer);
    if (rc == 0)
        rc = xport_end(a->x, err);
    return rc;
}

size_t xchg_at(size_t n, int p, int c)
{
    size_t lo, hi;

    if (c >= p)
        return n;
    ring_chunk(n, p, c, &lo, &hi);
    return lo;
}

int xchg_cube_of(int rank, int extra)
{
    if (rank < 2 * extra)
        return rank % 2 ? -1 : rank / 2;
    return rank - extra;
}

int xchg_rank_of(int cube, int extra)
{
    return cube < extra ? 2 * cube : cube + extra;
}

/* fold: THE FOLD around body (xchg_allreduce). */
static int fold(struct xport_algo *a, const struct xchg_cube *q, int rounds,
                int (*body)(void *ctx, const struct xchg_cube *q, char *err), void *ctx,
                char *err)
{
    unsigned char *v = q->v;
    size_t n = q->n;
    int rank = a->rank, pair = rank < 2 * q->extra, rc = 0, dtype = q->dtype, check = q->check;

    if (pair && rank % 2) {
        struct xchg in = { .peer = rank - 1, .round = 0, .patience = 1, .sbuf = v, .sn = n,
                           .take = XCHG_NONE };
        struct xchg out = { .peer = rank - 1, .round = rounds + 1, .patience = 2 * q->l + 1,
                            .check = check, .rbuf = v, .rn = n, .take = XCHG_COPY };
        rc = xchg_step(a, &in, dtype, err);
        return rc != 0 ? rc : xchg_step(a, &out, dtype, err);
    }
    if (pair) {
        struct xchg in = { .peer = rank + 1, .round = 0, .patience = 1, .check = check,
                           .rbuf = v, .rn = n, .take = XCHG_ADD };
        rc = xchg_step(a, &in, dtype, err);
    }
    if (rc == 0)
        rc = body(ctx, q, err);
    if (rc == 0 && pair) {
        struct xchg out = { .peer = rank + 1, .round = rounds + 1, .patience = 1, .sbuf = v,
                            .sn = n, .take = XCHG_NONE };
        rc = xchg_step(a, &out, dtype, err);
    }
    return rc;
}

int xchg_allreduce(struct xport_algo *a, void *buf, size_t n, int dtype, int check, int steps,
                   int (*body)(void *ctx, const struct xchg_cube *q, char *err), void *ctx,
                   char *err)
{
    struct xchg_cube q = { .v = buf, .n = n, .dtype = dtype, .check = check };

    if (dtype_size(dtype) == 0)
        return ERR_USAGE;
    if (a->world == 1 || n == 0)
        return 0;
    q.p = rd_pow2_floor(a->world, &q.l);
    q.extra = a->world - q.p;
    q.c = xchg_cube_of(a->rank, q.extra);
    q.wait = q.extra > 0 ? 2 : 1;
    return fold(a, &q, steps * q.l, body, ctx, err);
}

void xchg_cube_peers(int c, int p, int l, int extra, xchg_peer_fn peer, int *out)
{
    for (int s = 0; s < l; s++)
        out[s] = xchg_rank_of(peer(c, s, p), extra);
}

int xchg_partners(int rank, int world, xchg_peer_fn peer, int *out)
{
    int l, p = rd_pow2_floor(world < 1 ? 1 : world, &l), extra = world - p, c, n = 0;

    if (world < 2)
        return 0;
    if ((c = xchg_cube_of(rank, extra)) < 0) {
        out[0] = rank - 1;                  /* an odd rank of a pair: its fold partner only */
        return 1;
    }
    if (rank < 2 * extra)
        out[n++] = rank + 1;                /* an even rank of a pair: the odd one folds in */
    xchg_cube_peers(c, p, l, extra, peer, out + n);
    return n + l;
}

int xchg_halve_double(struct xport_algo *a, const struct xchg_cube *q, int pos,
                      xchg_peer_fn peer, char *err)
{
    unsigned char *v = q->v;
    size_t n = q->n, es = dtype_size(q->dtype);
    int p = q->p, blo = 0, bhi = p, rc = 0, round = 1, to[XCHG_STEPS_MAX];

    xchg_cube_peers(q->c, p, q->l, q->extra, peer, to);
    for (int s = 0; rc == 0 && s < q->l; s++) {         /* halving: [blo, bhi) halves */
        int d = p >> (s + 1), mid = blo + d, lower = (pos & d) == 0;
        int klo = lower ? blo : mid, khi = lower ? mid : bhi;     /* kept */
        int slo = lower ? mid : blo, shi = lower ? bhi : mid;     /* sent */
        size_t k0 = xchg_at(n, p, klo), s0 = xchg_at(n, p, slo);
        struct xchg e = {
            .peer = to[s], .round = round++, .patience = q->wait, .check = q->check,
            .sbuf = v + s0 * es, .sn = xchg_at(n, p, shi) - s0, .rbuf = v + k0 * es,
            .rn = xchg_at(n, p, khi) - k0, .first = k0, .take = XCHG_ADD,
        };
        rc = xchg_step(a, &e, q->dtype, err);
        blo = klo;
        bhi = khi;
    }
    for (int s = q->l - 1; rc == 0 && s >= 0; s--) {    /* doubling: [blo, bhi) doubles */
        int d = p >> (s + 1), lower = (pos & d) == 0, olo = lower ? bhi : blo - d, ohi = olo + d;
        size_t m0 = xchg_at(n, p, blo), o0 = xchg_at(n, p, olo);
        struct xchg e = {
            .peer = to[s], .round = round++, .patience = q->wait, .check = q->check,
            .sbuf = v + m0 * es, .sn = xchg_at(n, p, bhi) - m0, .rbuf = v + o0 * es,
            .rn = xchg_at(n, p, ohi) - o0, .first = o0, .take = XCHG_COPY,
        };
        rc = xchg_step(a, &e, q->dtype, err);
        blo = lower ? blo : olo;
        bhi = lower ? ohi : bhi;
    }
    return rc;
}
