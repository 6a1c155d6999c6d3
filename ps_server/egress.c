/* egress.c -- the round-robin, paced schedule of the weights frames (see
 * egress.h for the model and the picture).
 *
 * State per step: per worker the bytes handed out and whether a write is
 * queued; one reserved piece at most; a round-robin cursor. Choosing the
 * next worker is a scan from the cursor for one with bytes left and no
 * queued write: O(K) at worst, O(1) while nothing is blocked.
 */
#include "egress.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "proto.h"

int egress_init(struct egress *e, uint32_t world, struct link *link, size_t chunk)
{
    memset(e, 0, sizeof *e);
    if (world == 0 || world > PROTO_MAX_WORLD || chunk == 0 || !link)
        return ERR_USAGE;
    e->w = calloc(world, sizeof *e->w);
    if (!e->w)
        return -ENOMEM;
    e->world = world;
    e->link = link;
    e->chunk = chunk;
    e->local = -1;
    return 0;
}

void egress_destroy(struct egress *e)
{
    free(e->w);
    e->w = NULL;
    e->active = 0;
}

void egress_start(struct egress *e, uint64_t total, double now)
{
    size_t lp = link_active(e->link) ? link_piece(e->link) : SIZE_MAX;

    assert(!e->active && total > 0);
    for (uint32_t r = 0; r < e->world; r++) {
        e->w[r].sent = 0;
        e->w[r].ready = now;
        e->w[r].blocked = 0;
    }
    e->total = total;
    e->piece = lp < e->chunk ? lp : e->chunk;
    e->t_ready = now;
    e->active = 1;
    e->left = e->world;
    e->nblocked = 0;
    e->have = 0;
    /* The cursor carries over: the round goes on where the last step left
     * it, so no worker is always first. */
    e->cursor %= e->world;
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
 * take one. 0 if every worker with bytes left is blocked (or none has any). */
static int choose(struct egress *e)
{
    for (uint32_t i = 0; i < e->world; i++) {
        uint32_t r = (e->cursor + i) % e->world;
        struct egress_worker *w = &e->w[r];
        uint64_t len;
        double ready;

        if (w->sent >= e->total || w->blocked)
            continue;
        len = e->total - w->sent < e->piece ? e->total - w->sent : e->piece;
        ready = w->ready > e->t_ready ? w->ready : e->t_ready;
        e->res.rank = r;
        e->res.off = w->sent;
        e->res.len = len;
        /* Without the link a piece is due when it is ready; so is one for
         * the worker on this host, which never crosses the NIC. */
        e->res.due = link_active(e->link) && (int64_t)r != e->local
                         ? link_egress_reserve(e->link, (size_t)len, ready)
                         : ready;
        e->have = 1;
        e->cursor = (r + 1) % e->world;
        return 1;
    }
    return 0;
}

int egress_next(struct egress *e, double now, struct egress_piece *piece)
{
    struct egress_worker *w;

    if (!e->active)
        return EGRESS_DONE;
    if (!e->have && !choose(e)) {
        if (e->left == 0 && e->nblocked == 0) {
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
    w->sent += e->res.len;
    if (w->sent == e->total)
        e->left--;
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
    return rank < e->world && e->w[rank].sent >= e->total && !e->w[rank].blocked;
}

int egress_active(const struct egress *e)
{
    return e->active;
}
