/* xport.c -- the transport-independent part of xport.h: the calls that
 * accept a missing transport (world = 1), and the state every algorithm
 * holds (the transport, its place, one staging piece).
 */
#include "xport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/mem.h"

#define STAGE_ALIGN 64

int xport_abort(struct xport *x, const char *why)
{
    return x ? x->ops->abort(x, why) : 0;
}

void xport_close(struct xport *x)
{
    if (x)
        x->ops->close(x);
}

const struct clock_src *xport_clock(const struct xport *x)
{
    return x && x->clock ? x->clock : &clock_real;
}

int xport_algo_init(struct xport_algo *a, struct xport *x, int rank, int world,
                    size_t piece_bytes, size_t dflt)
{
    memset(a, 0, sizeof *a);
    if (world < 1 || rank < 0 || rank >= world || (world > 1 && !x))
        return ERR_USAGE;
    if (piece_bytes == 0)
        piece_bytes = dflt;
    if (piece_bytes < 8)
        return ERR_USAGE;
    piece_bytes = (piece_bytes + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN;
    a->stage = aligned_alloc(STAGE_ALIGN, piece_bytes);
    if (!a->stage)
        return -ENOMEM;
    a->x = x;
    a->rank = rank;
    a->world = world;
    a->piece_bytes = piece_bytes;
    return 0;
}

void xport_algo_destroy(struct xport_algo *a)
{
    MEM_FREE(a->stage);
}

void xport_plan_partners(struct xport_plan *pl, int rank, const int *partners, int n)
{
    memset(pl, 0, sizeof *pl);
    pl->npeers = n;
    for (int i = 0; i < n; i++)
        pl->peer[i] = (struct xport_plan_peer){ partners[i], partners[i] < rank, "partner" };
    pl->news = XPORT_NEWS_FLOOD;
    pl->tag = "round";
    pl->tag_of = "in round";
}
