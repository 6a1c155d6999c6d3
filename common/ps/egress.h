/* egress.h -- in what order, and when, the parameter server writes the new
 * weights to its K workers; without sockets.
 *
 * PER-BUCKET PULL. The weights of a step become ready part by part, from
 * the top of the server's range down (store.h, RELEASE: a part is ready as
 * soon as every worker has pushed it), and each part goes out at once,
 * while the workers still push the parts below it. Every worker gets the
 * same weights; its stream for a step is a series of WEIGHTS frames (a
 * 40-byte header and a contiguous run of elements), the first ending at
 * the range's end, each next one ending where the one before began, the
 * last starting at the range's start. A frame holds what was released and
 * not yet sent to THAT worker when its first byte was chosen, so a worker
 * that keeps up gets one frame per release and a slow one fewer, larger
 * frames: per worker the state is O(1) (how far down it has been served,
 * and the frame in progress), never a list of releases. With one release
 * per step (store_apply) it is one frame per worker, as before.
 *
 * The server's single NIC carries all K copies, K * n elements per step
 * plus a header per frame: the egress half of the bottleneck the lab is
 * about. So the frames leave in pieces, ROUND-ROBIN across the workers, so
 * that all K are served at once and share the link, as K flows through one
 * real NIC would:
 *
 *     piece:   1    2    3    4    5    6    7 ...
 *     worker:  0    1    2    0    1    2    0 ...   (K = 3)
 *
 * PACING (link.h). With the emulated link active, a piece is at most
 * link_piece() bytes and is reserved with link_egress_reserve() when it is
 * chosen; egress_next() hands it out only when its deadline has come (the
 * caller waits on a timer till then). Every byte written, headers
 * included, is reserved: the link is charged for all of it. The
 * reservation's `now` is the time the piece became ready to go: the
 * release that made it ready (for a worker that was waiting for more), or,
 * for a worker whose socket was full, the moment it drained. So pieces
 * pipeline on the link, a late timer never delays the ones after it, and
 * a link left idle while every worker's socket was full, or while nothing
 * was released, does not run ahead afterwards (the link has no burst).
 * Without the link, pieces are `chunk` bytes and go as fast as the
 * sockets take them.
 *
 * ONE PIECE AT A TIME. The caller writes the piece it was handed (all of
 * it, or as much as the socket takes, queueing the rest), then asks for
 * the next. A worker whose piece could not be written in full is BLOCKED
 * (egress_blocked) and skipped until its write completes
 * (egress_unblocked); the others go on. At most one piece is reserved and
 * not yet handed out.
 *
 * OWNERSHIP. egress_init allocates the per-worker records (world entries);
 * egress_destroy frees them. The link is the caller's and must outlive the
 * egress; egress_next advances its egress clock.
 */
#ifndef EGRESS_H
#define EGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "wire/link.h"

enum egress_what {
    EGRESS_DONE = 0,    /* the step's last frame handed out and written to all */
    EGRESS_WRITE,       /* write *piece now */
    EGRESS_WAIT,        /* call again at piece->due (the link holds it) */
    EGRESS_BLOCKED,     /* nothing to hand out until an egress_unblocked or
                           an egress_release */
};

/* A piece: bytes [off, off + len) of worker `rank`'s current frame, the
 * WEIGHTS frame of elements [first, first + count) (from the range's
 * start): its 40-byte header, then the elements. */
struct egress_piece {
    uint32_t rank;
    uint64_t first, count;
    uint64_t off, len;
    double due;         /* when it may be written (EGRESS_WAIT: when to call) */
};

struct egress_worker {
    uint64_t done;      /* elements handed out, from the top (whole frames) */
    uint64_t fcount;    /* elements of the frame in progress (0: none) */
    uint64_t foff;      /* bytes of that frame handed out */
    double ready;       /* when its next bytes became ready */
    int blocked;        /* a write is still queued on its socket */
};

struct egress {
    uint32_t world;
    size_t chunk;       /* piece size without pacing */
    uint64_t n;         /* elements per step (the server's range) */
    size_t es;          /* bytes per element */
    struct link *link;  /* the server's NIC (not owned) */
    int64_t local;      /* the worker on this server's host (--local-worker): its
                         * pieces bypass the link; -1 none */
    uint64_t rel;       /* elements of this step released, from the top */
    size_t piece;       /* bytes per piece this step */
    int active;         /* a step's frames are going out */
    uint32_t cursor;    /* next worker in the round */
    uint32_t left;      /* workers not yet handed all n elements */
    uint32_t nblocked;  /* workers with a queued write */
    int have;           /* res holds a reserved piece */
    struct egress_piece res;
    struct egress_worker *w;   /* world entries (owned) */
    uint64_t payload_out;      /* element bytes handed out, all steps */
    uint64_t frames_out;       /* frames begun, all steps (headers) */
};

/* egress_init: for K = world workers and a range of n elements of es
 * bytes; chunk > 0 is the piece size without pacing. 0 or -ENOMEM /
 * ERR_USAGE. egress_destroy may be called after a failure and twice. */
int egress_init(struct egress *e, uint32_t world, struct link *link, size_t chunk,
                uint64_t n, size_t es);
void egress_destroy(struct egress *e);

/* egress_release: `count` more elements (count >= 1), below those
 * released before, are ready at `now`. The first release of a step
 * starts it (only between steps: not active); the step's releases add up
 * to n. */
void egress_release(struct egress *e, uint64_t count, double now);

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

/* egress_rank_done: every frame of the step is handed out to rank and
 * written (not blocked); also true between steps, false before the first.
 * egress_at_boundary: rank's stream is between two frames (nothing of a
 * frame handed out, or all of it). egress_active: a step's frames are
 * still going out (or more are to be released). */
int egress_rank_done(const struct egress *e, uint32_t rank);
int egress_at_boundary(const struct egress *e, uint32_t rank);
int egress_active(const struct egress *e);

#endif /* EGRESS_H */
