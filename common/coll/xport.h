/* xport.h -- how bytes move between ranks: the one interface every
 * all-reduce algorithm (ring.c, rd.c, ring_cuda.c) calls and every
 * transport (xport_tcp.c) implements.
 *
 * An algorithm is a sequence of STEPS. In a step a rank sends one frame to
 * one rank while it receives one frame from one rank, both at once (links
 * are full duplex):
 *
 *     ring             to = right, from = left     (send right, receive left)
 *     recursive dbl.   to = from = partner         (a swap with one partner)
 *
 * The algorithm decides who talks to whom, which bytes go and what is done
 * with the bytes that come (added, copied); the transport decides how they
 * travel: framing and checks (TCP: CHUNK frames, proto.h), pacing through
 * the emulated link, and what happens on a fault.
 *
 * THE PEER TABLE (struct xport_plan). Before any step, the algorithm says
 * which ranks it will ever name in a step, and the transport connects to
 * exactly those at open: ring_plan gives (right, dialled) and (left,
 * accepted) -- with K = 2 that is two connections to the same rank, one
 * per direction; rd_plan gives one connection per partner (the lower rank
 * dials). A step sends on the connection to `to` (the dialled one when
 * there are two) and receives on the one from `from` (the accepted one).
 * The plan also says how fault news travels, a property of the exchange
 * pattern, not of the wire:
 *     XPORT_NEWS_RELAY  along the ring: the ABORT goes downstream (to the
 *                       dialled peer) and is relayed rank by rank; a rank
 *                       listens until its upstream peer closes
 *     XPORT_NEWS_FLOOD  to every peer of the table at once; a rank with
 *                       a certain claim does not wait for better news
 * (xport_tcp.h, FAULTS, has the whole protocol.)
 *
 * THE STEP CALLS.
 *   begin(step)  to, from, the tags (the outgoing frame's aux and the aux
 *                the incoming one must carry: the ring's chunk index, rd's
 *                round), the outgoing bytes (sbuf, sbytes; 0 is an empty
 *                frame, still sent; untouched until end, but see recv) and
 *                the incoming size rbytes; patience: the step may wait that
 *                many --timeouts without a byte (0 means 1).
 *   recv(dst, len)  the next len incoming bytes into dst. It returns only
 *                when the outgoing frame has also been sent at least as far
 *                as the incoming one has been received, so an algorithm
 *                that sends the very bytes it adds into (rd) may overwrite
 *                sbuf up to there. The lens of one step add up to rbytes.
 *   end()        the rest of the outgoing frame; the step is complete.
 *   abort(why)   this rank fails for a reason of its own (a NaN, a wrong
 *                sum): the peers are told as the plan says; later steps
 *                fail. Returns 0.
 *   close()      close every connection and free the transport.
 * Calls are made in that order by one thread. On failure begin, recv and
 * end return a negative err.h code with one line in err naming the rank
 * lost; the transport is then failed, and every later call returns the
 * same code and line. ERR_USAGE for a rank not in the plan or calls out of
 * order.
 *
 * THE CLOCK. x->clock is the time the transport runs on: clock_real for
 * TCP, virtual time for a simulated transport. Everything above the
 * transport (ring.c, rd.c, coll.c, bench.c) reads time through
 * xport_clock(x), which gives clock_real when there is no transport
 * (world = 1), never through clock_now directly.
 *
 * ADDING A TRANSPORT (say, SimGrid actors): one file that defines a state
 * struct starting with `struct xport base`, fills an xport_ops with the
 * five calls, sets base.clock to its own clock_src, and an open function
 * that takes the plan and returns the struct xport *. It must keep recv's
 * promise above and report faults as one line naming the rank lost.
 * Nothing else changes: ring.c, rd.c and coll.c only see struct xport.
 *
 * ADDING AN ALGORITHM (a reduce-scatter alone, Rabenseifner, a tree): one
 * file with a *_plan function (the ranks it talks to, dial or accept, and
 * RELAY or FLOOD) and the algorithm, which holds a struct xport_algo
 * (below: the transport, its rank, one staging piece) and calls
 * xport_begin / xport_recv / xport_end step by step. main's set-up opens
 * the transport with that plan; coll.c gets one more case. No transport
 * changes.
 */
#ifndef XPORT_H
#define XPORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/clock.h"

#define XPORT_PEERS_MAX 32          /* connections per rank (rd: log2 K + 1 <= 17) */

enum xport_news { XPORT_NEWS_RELAY, XPORT_NEWS_FLOOD };

/* The peer table: the connections an algorithm needs, and how its fault
 * news travels (above). Plain data; an algorithm's *_plan fills it. */
struct xport_plan {
    int npeers;                       /* 1 .. XPORT_PEERS_MAX */
    struct xport_plan_peer {
        int rank;                     /* not this rank */
        int dial;                     /* 1: we connect to it; 0: it connects to us */
        const char *role;             /* in messages: "right neighbour", "partner" */
    } peer[XPORT_PEERS_MAX];
    int news;                         /* enum xport_news */
    const char *tag, *tag_of;         /* the tags in messages: "chunk", "for chunk" */
};

/* xport_plan_partners: the peer table of a pairwise algorithm (rd,
 * Rabenseifner): the n partners' ranks, each dialled by the higher rank
 * of the pair, role "partner"; news flooded (XPORT_NEWS_FLOOD), steps
 * tagged "round". */
void xport_plan_partners(struct xport_plan *pl, int rank, const int *partners, int n);

/* One step (above). */
struct xport_step {
    int to, from;                     /* ranks of the plan */
    uint32_t send_tag, recv_tag;      /* the frames' aux, out and expected in */
    const void *sbuf;
    size_t sbytes, rbytes;
    int patience;                     /* idle allowance in --timeouts (0 means 1) */
};

struct xport;

struct xport_ops {
    int (*begin)(struct xport *x, const struct xport_step *s, char *err);
    int (*recv)(struct xport *x, void *dst, size_t len, char *err);
    int (*end)(struct xport *x, char *err);
    int (*abort)(struct xport *x, const char *why);
    void (*close)(struct xport *x);
};

/* A transport's state starts with this member (the C way to inherit). */
struct xport {
    const struct xport_ops *ops;
    const struct clock_src *clock;    /* the transport's time (above) */
    /* THE FIRST ARRIVAL, a measurement (the ring's wait, ring_worker/
     * train.c; common/measure/metrics.h, WAIT): after xport_arm, the next recv
     * that succeeds notes its return time on x->clock in first_recv_at and
     * disarms. Zero (a transport's calloc) is disarmed. */
    int armed;
    double first_recv_at;
};

static inline int xport_begin(struct xport *x, const struct xport_step *s, char *err)
{
    return x->ops->begin(x, s, err);
}

static inline int xport_recv(struct xport *x, void *dst, size_t len, char *err)
{
    int rc = x->ops->recv(x, dst, len, err);

    if (rc == 0 && x->armed) {
        x->first_recv_at = clock_src_now(x->clock);
        x->armed = 0;
    }
    return rc;
}

/* xport_arm: THE FIRST ARRIVAL above. */
static inline void xport_arm(struct xport *x)
{
    x->armed = 1;
}

static inline int xport_end(struct xport *x, char *err)
{
    return x->ops->end(x, err);
}

/* xport_abort, xport_close: NULL is fine (world = 1). */
int xport_abort(struct xport *x, const char *why);
void xport_close(struct xport *x);

/* xport_clock: x's clock; clock_real when x is NULL. */
const struct clock_src *xport_clock(const struct xport *x);

/* What every algorithm over a transport holds: the transport (not owned;
 * NULL when world == 1; it must outlive the algorithm), this rank's place,
 * and one staging piece of piece_bytes (64-byte aligned, owned), allocated
 * once by xport_algo_init and freed by xport_algo_destroy: nothing is
 * allocated per call. */
struct xport_algo {
    struct xport *x;
    int rank, world;
    size_t piece_bytes;
    void *stage;
};

/* xport_algo_init: piece_bytes 0 means dflt; at least 8. ERR_USAGE for a
 * bad rank or piece, or world > 1 without a transport; -ENOMEM. */
int xport_algo_init(struct xport_algo *a, struct xport *x, int rank, int world,
                    size_t piece_bytes, size_t dflt);
void xport_algo_destroy(struct xport_algo *a);

#endif /* XPORT_H */
