/* egress.c -- the round-robin, paced schedule of the weights frames (see
 * egress.h for the model and the picture).
 *
 * State per step: per worker how far down it has been served and the
 * frame in progress, and whether a write is queued; one reserved piece at
 * most; a round-robin cursor. Choosing the next worker is a scan from the
 * cursor for one with bytes to go and no queued write: O(K) at worst,
 * O(1) while nothing is blocked and everything released is still to go.
 */
#include "egress.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/mem.h"
#include "wire/proto.h"

_Static_assert(PROTO_HEADER_SIZE == MODEL_FRAME_HEADER, "the cost model's frame header (measure/model.h)");

int egress_init(struct egress *e, uint32_t world, struct link *link, size_t chunk,
                uint64_t n, size_t es)
{
    memset(e, 0, sizeof *e);
    if (world == 0 || world > PROTO_MAX_WORLD || chunk == 0 || !link || n == 0 || es == 0)
        return ERR_USAGE;
    e->w = calloc(world, sizeof *e->w);
    if (!e->w)
        return -ENOMEM;
    e->world = world;
    e->link = link;
    e->chunk = chunk;
    e->local = -1;
    e->n = n;
    e->es = es;
    return 0;
}

void egress_destroy(struct egress *e)
{
    MEM_FREE(e->w);
    e->active = 0;
}

void egress_release(struct egress *e, uint64_t count, double now)
{
    assert(count > 0 && count <= e->n - (e->active ? e->rel : 0));
    if (!e->active) {
        size_t lp = link_active(e->link) ? link_piece(e->link) : SIZE_MAX;

        memset(e->w, 0, e->world * sizeof *e->w);
        for (uint32_t r = 0; r < e->world; r++)
            e->w[r].ready = now;
        e->piece = lp < e->chunk ? lp : e->chunk;
        e->rel = 0;
        e->active = 1;
        e->left = e->world;
        e->nblocked = 0;
        e->have = 0;
        /* The cursor carries over: the round goes on where the last step
         * left it, so no worker is always first. */
        e->cursor %= e->world;
    } else {
        /* A worker that had sent all there was waits no longer: its next
         * bytes are ready now, not when it last wrote. */
        for (uint32_t r = 0; r < e->world; r++) {
            struct egress_worker *w = &e->w[r];
            if (w->fcount == 0 && w->done == e->rel && !w->blocked)
                w->ready = now;
        }
    }
    e->rel += count;
}

/* frame_bytes: the bytes of a frame of c elements. */
static uint64_t frame_bytes(const struct egress *e, uint64_t c)
{
    return PROTO_HEADER_SIZE + c * e->es;
}

void egress_cancel(struct egress *e)
{
    e->active = 0;
    e->have = 0;
    e->left = 0;
    e->nblocked = 0;
    for (uint32_t r = 0; r < e->world; r++)
        e->w[r].blocked = 0;
}

/* choose: reserve the next piece for the next worker in the round that can
 * take one. 0 if none can (all served, blocked or waiting for more). */
static int choose(struct egress *e)
{
    for (uint32_t i = 0; i < e->world; i++) {
        uint32_t r = (e->cursor + i) % e->world;
        struct egress_worker *w = &e->w[r];
        uint64_t len, fb;

        if (w->blocked)
            continue;
        if (w->fcount == 0) {
            if (w->done >= e->rel)
                continue;
            w->fcount = e->rel - w->done;       /* all there is, in one frame */
            w->foff = 0;
        }
        fb = frame_bytes(e, w->fcount);
        len = fb - w->foff < e->piece ? fb - w->foff : e->piece;
        e->res.rank = r;
        e->res.first = e->n - w->done - w->fcount;
        e->res.count = w->fcount;
        e->res.off = w->foff;
        e->res.len = len;
        /* Without the link a piece is due when it is ready; so is one for
         * the worker on this host, which never crosses the NIC. */
        e->res.due = link_active(e->link) && (int64_t)r != e->local
                         ? link_egress_reserve(e->link, (size_t)len, w->ready)
                         : w->ready;
        e->have = 1;
        e->cursor = (r + 1) % e->world;
        return 1;
    }
    return 0;
}

int egress_next(struct egress *e, double now, struct egress_piece *piece)
{
    struct egress_worker *w;
    uint64_t a, b;

    if (!e->active)
        return EGRESS_DONE;
    if (!e->have && !choose(e)) {
        if (e->rel == e->n && e->left == 0 && e->nblocked == 0) {
            e->active = 0;
            return EGRESS_DONE;
        }
        return EGRESS_BLOCKED;
    }
    *piece = e->res;
    if (e->res.due > now)
        return EGRESS_WAIT;
    e->have = 0;
    w = &e->w[e->res.rank];
    if (w->foff == 0)
        e->frames_out++;
    /* The element bytes in [off, off + len) of the frame. */
    a = e->res.off > PROTO_HEADER_SIZE ? e->res.off : PROTO_HEADER_SIZE;
    b = e->res.off + e->res.len;
    if (b > a)
        e->payload_out += b - a;
    w->foff += e->res.len;
    if (w->foff == frame_bytes(e, w->fcount)) {
        w->done += w->fcount;
        w->fcount = 0;
        w->foff = 0;
        if (w->done == e->n)
            e->left--;
    }
    return EGRESS_WRITE;
}

void egress_blocked(struct egress *e, uint32_t rank)
{
    assert(rank < e->world && !e->w[rank].blocked);
    e->w[rank].blocked = 1;
    e->nblocked++;
}

void egress_unblocked(struct egress *e, uint32_t rank, double now)
{
    assert(rank < e->world && e->w[rank].blocked);
    e->w[rank].blocked = 0;
    e->w[rank].ready = now;
    e->nblocked--;
}

int egress_rank_done(const struct egress *e, uint32_t rank)
{
    return rank < e->world && e->w[rank].done == e->n && !e->w[rank].blocked;
}

int egress_at_boundary(const struct egress *e, uint32_t rank)
{
    return rank >= e->world || e->w[rank].fcount == 0 || e->w[rank].foff == 0;
}

int egress_active(const struct egress *e)
{
    return e->active;
}
