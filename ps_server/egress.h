/* egress.h -- in what order, and when, the parameter server writes the new
 * weights to its K workers; without sockets.
 *
 * After a step is applied every worker gets the same frame, `total` bytes
 * (the WEIGHTS header and the weights, from the one store buffer). The
 * server's single NIC carries all K copies, K * total bytes per step: the
 * egress half of the bottleneck the lab is about. So the frames leave in
 * pieces, ROUND-ROBIN across the workers, so that all K are served at once
 * and share the link, as K flows through one real NIC would:
 *
 *     piece:   1    2    3    4    5    6    7 ...
 *     worker:  0    1    2    0    1    2    0 ...   (K = 3)
 *
 * PACING (link.h). With the emulated link active, a piece is at most
 * link_piece() bytes and is reserved with link_egress_reserve() when it is
 * chosen; egress_next() hands it out only when its deadline has come (the
 * caller waits on a timer till then). The reservation's `now` is the time
 * the piece became ready to go: the moment the step was applied, or, for a
 * worker whose socket was full, the moment it drained. So pieces of one
 * step pipeline on the link (the first arrives after L + piece/B, the last
 * after L + K*total/B), a late timer never delays the ones after it, and
 * a link left idle while every worker's socket was full does not run
 * ahead afterwards (the link has no burst). Without the link, pieces
 * are `chunk` bytes and go as fast as the sockets take them.
 *
 * ONE PIECE AT A TIME. The caller writes the piece it was handed (all of
 * it, or as much as the socket takes, queueing the rest), then asks for
 * the next. A worker whose piece could not be written in full is BLOCKED
 * (egress_blocked) and skipped until its write completes
 * (egress_unblocked); the others go on. At most one piece is reserved and
 * not yet handed out, so a step costs O(1) state besides one small record
 * per worker.
 *
 * OWNERSHIP. egress_init allocates the per-worker records (world entries);
 * egress_destroy frees them. The link is the caller's and must outlive the
 * egress; egress_next advances its egress clock.
 */
#ifndef EGRESS_H
#define EGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "link.h"

enum egress_what {
    EGRESS_DONE = 0,    /* every byte of every frame handed out and written */
    EGRESS_WRITE,       /* write *piece now */
    EGRESS_WAIT,        /* call again at piece->due (the link holds it) */
    EGRESS_BLOCKED,     /* wait for an egress_unblocked */
};

/* A piece: bytes [off, off + len) of worker `rank`'s frame. */
struct egress_piece {
    uint32_t rank;
    uint64_t off, len;
    double due;         /* when it may be written (EGRESS_WAIT: when to call) */
};

struct egress_worker {
    uint64_t sent;      /* bytes of its frame handed out */
    double ready;       /* when its last blocked write completed */
    int blocked;        /* a write is still queued on its socket */
};

struct egress {
    uint32_t world;
    size_t chunk;       /* piece size without pacing */
    struct link *link;  /* the server's NIC (not owned) */
    int64_t local;      /* the worker on this server's host (--local-worker): its
                         * pieces bypass the link; -1 none */
    uint64_t total;     /* bytes of each worker's frame this step */
    size_t piece;       /* bytes per piece this step */
    double t_ready;     /* when the step's frames became ready */
    int active;         /* a step's frames are going out */
    uint32_t cursor;    /* next worker in the round */
    uint32_t left;      /* workers with bytes not yet handed out */
    uint32_t nblocked;  /* workers with a queued write */
    int have;           /* res holds a reserved piece */
    struct egress_piece res;
    struct egress_worker *w;   /* world entries (owned) */
};

/* egress_init: for K = world workers; chunk > 0 is the piece size without
 * pacing. 0 or -ENOMEM / ERR_USAGE. egress_destroy may be called after a
 * failure and twice. */
int egress_init(struct egress *e, uint32_t world, struct link *link, size_t chunk);
void egress_destroy(struct egress *e);

/* egress_start: a new step's frames, `total` bytes each (> 0), ready at
 * `now`. Only between steps (not active). */
void egress_start(struct egress *e, uint64_t total, double now);

/* egress_cancel: the step's frames will not be sent (the server went
 * back to a checkpoint and closed every worker, resume.h); not active
 * after it. */
void egress_cancel(struct egress *e);

/* egress_next: what to do at time `now` (see enum egress_what). For
 * EGRESS_WRITE the piece is handed out: counted as sent. */
int egress_next(struct egress *e, double now, struct egress_piece *piece);

/* egress_blocked: the piece just handed to `rank` was not written in full;
 * its rest is queued on the socket. egress_unblocked: that write completed
 * at `now`. */
void egress_blocked(struct egress *e, uint32_t rank);
void egress_unblocked(struct egress *e, uint32_t rank, double now);

/* egress_rank_done: every byte of rank's frame is written (handed out and
 * not blocked). egress_active: a step's frames are still going out. */
int egress_rank_done(const struct egress *e, uint32_t rank);
int egress_active(const struct egress *e);

#endif /* EGRESS_H */
