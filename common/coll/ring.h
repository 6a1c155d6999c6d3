/* ring.h -- the ring all-reduce: reduce-scatter, all-gather, and their
 * composition, over any transport (xport.h). The algorithm is taught in
 * ring.c's opening comment.
 *
 * BUFFERS. Every call works in place in the caller's buffer of n elements
 * of dtype, cut into K chunks by ring_chunk():
 *   ring_reduce_scatter  in: rank r's vector. out: chunk r holds the SUM
 *                        over all ranks of chunk r; the other chunks hold
 *                        partial sums (scratch).
 *   ring_all_gather      in: chunk r of rank r. out: every chunk c holds
 *                        rank c's chunk c, on every rank.
 *   ring_allreduce       in: rank r's vector. out: the element-wise SUM over
 *                        the K ranks, bit-identical on every rank.
 * Besides the buffer, a ring uses one staging piece (ring_init's
 * piece_bytes), allocated once by ring_init and freed by ring_destroy:
 * nothing is allocated per call.
 *
 * K = 1: every call returns at once (the sum of one vector is itself) and
 * the transport may be NULL.
 *
 * ERRORS. 0, or the transport's negative err.h code with its one line in
 * err (the peer it lost, the step); ERR_USAGE for a dtype that is not one;
 * ERR_NONFINITE when a sum or a received value is NaN or Inf ("element I
 * is X after chunk C from the left neighbour (rank L) at reduce-scatter
 * step S": ring.c, THE CHECK). The caller names the training step.
 */
#ifndef RING_H
#define RING_H

#include <stddef.h>
#include <stdint.h>

#include "xport.h"

#define RING_PIECE_DEFAULT (1u << 20)      /* bytes reduced between two receives */

/* HOOK. A ring may carry an observer of its steps (ring_worker --phases,
 * ring_steps.h): hook->step is called as each step begins (end 0: before
 * its send is queued) and once it has ended (end 1: its chunk received and
 * reduced or copied, its send done), with the phase, the step s, the
 * chunks sent and received and the bytes sent. It runs on the thread that
 * runs the ring, must not fail and must not block; it reads the clock
 * itself, so ring.c reads no OS state. NULL (ring_init's) costs one test
 * per step. A failed step calls no end. */
enum ring_phase { RING_REDUCE_SCATTER, RING_ALL_GATHER };
struct ring_hook {
    void (*step)(void *arg, enum ring_phase ph, int s, int send, int recv, size_t sbytes,
                 int end);
    void *arg;
};

struct ring {
    struct xport_algo a;      /* the transport (xport.h), this rank, the staging piece */
    const struct ring_hook *hook; /* HOOK, or NULL (the default); the caller's */
};

/* ring_init: a ring of `world` ranks seen from `rank`, moving bytes through
 * x (which must outlive the ring, opened with ring_plan). piece_bytes: the
 * staging piece, at least 8 bytes (0: RING_PIECE_DEFAULT). ERR_USAGE or
 * -ENOMEM. */
int ring_init(struct ring *r, struct xport *x, int rank, int world, size_t piece_bytes);
void ring_destroy(struct ring *r);

/* ring_plan: the peer table a ring needs (xport.h): the right neighbour,
 * dialled, and the left one, accepted (with K = 2 the same rank twice, one
 * connection per direction); fault news relayed along the ring. world >= 2. */
void ring_plan(int rank, int world, struct xport_plan *pl);

/* ring_chunk: chunk c (0..world-1) of n elements is [*lo, *hi). Sizes
 * differ by at most one; the first n mod world chunks are the larger ones;
 * chunks may be empty when n < world. */
void ring_chunk(size_t n, int world, int c, size_t *lo, size_t *hi);

/* ring_schedule: at step s (0..world-2) of a phase, `rank` sends chunk
 * *send to the right and receives chunk *recv from the left (ring.c's step
 * table). ring_cuda.c runs the same schedule. */
void ring_schedule(int rank, int world, enum ring_phase phase, int s, int *send, int *recv);

int ring_reduce_scatter(struct ring *r, void *buf, size_t n, int dtype, char *err);
int ring_all_gather(struct ring *r, void *buf, size_t n, int dtype, char *err);
/* ring_all_gather_raw: ring_all_gather without the finite check (ring.c,
 * THE CHECK): for coll_gather's doubles (settings, timings), which may be
 * NaN on purpose and are never applied to weights. */
int ring_all_gather_raw(struct ring *r, void *buf, size_t n, int dtype, char *err);
int ring_allreduce(struct ring *r, void *buf, size_t n, int dtype, char *err);

#endif /* RING_H */
