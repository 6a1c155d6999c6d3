/* rd.h -- the recursive-doubling all-reduce (ring_worker --algo rd): log2 K
 * exchanges of the whole vector, the latency-optimal all-reduce for small
 * messages, over a transport (xport.h) opened with rd_plan. The algorithm is
 * taught in rd.c's opening comment.
 *
 * BUFFERS. rd_allreduce works in place in the caller's buffer of n
 * elements of dtype: in, rank r's vector; out, the element-wise SUM over
 * the K ranks, bit-identical on every rank. Besides the buffer it uses one
 * staging piece (rd_init's piece_bytes), allocated once by rd_init and
 * freed by rd_destroy: nothing is allocated per call.
 *
 * K = 1 (and n = 0): the call returns at once and the transport may be
 * NULL. Any K >= 2 works; when K is not a power of two the ranks above the
 * largest power of two fold in (rd.c, FOLD).
 *
 * ERRORS. 0, or the transport's negative err.h code with its one line in
 * err (the rank lost); ERR_USAGE for a dtype that is not one;
 * ERR_NONFINITE when a sum or a copied value is NaN or Inf ("element I is
 * X after round R from partner rank P": each piece is checked as it comes
 * in, the check fused into the add, vec_add_finite).
 */
#ifndef RD_H
#define RD_H

#include <stddef.h>
#include <stdint.h>

#include "xport.h"

/* Bytes added between two receives. Smaller than the ring's: rd's step
 * moves the whole vector, and a 1 MiB piece received a 256 KiB vector in
 * one transfer, reduced only after its last byte, and slept in ppoll
 * through it (net_busy_poll spins only with 64 KiB or less left each way).
 * 64 KiB pieces add one while the partner's next comes in, and every
 * transfer is one the busy-poll rule covers (unpaced, K = 4, 256 KiB:
 * 560-590 us -> 420 us; docs/rd.md). Local: the frames do not depend on
 * it, so ranks need not agree. */
#define RD_PIECE_DEFAULT (64u << 10)
/* On an emulated link (coll.c passes it when --piece is not given): there
 * the link paces the transfer, so small pieces only cost wake-ups (K = 2,
 * 4 MiB, 500 Mbit/s, 1 ms: cpu_s_per_gb 0.85-0.97 with 64 KiB, 0.51-0.57
 * with 1 MiB, the same time; docs/rd.md). */
#define RD_PIECE_PACED   (1u << 20)
/* SEGMENTS. Unpaced (coll.c sets seg_bytes where there is no emulated
 * link), a step's exchange goes as frames of at most this many bytes, each
 * a step of the transport's own. At K = 2, 1 MiB, one 1 MiB frame each way
 * cost more than twice one of 512 KiB (the ring's 1 MiB frames at 2 MiB
 * likewise), and runs fell into a lockstep where one rank read the
 * partner's whole frame while the other waited (docs/rd.md). 512 KiB:
 * the ring's frame there; 128 KiB frames cost more at 256 KiB (K = 2,
 * 65 -> 77 us) and at K = 4, 1 MiB. Every rank must cut the same way:
 * frame sizes are checked, so ranks that disagree (one with an emulated
 * link, one without) stop at the first frame with a size error. On a link
 * each frame would pay the latency again, so there a step stays one frame. */
#define RD_SEG_UNPACED   (512u << 10)
#define RD_PARTNERS_MAX  17                /* log2(PROTO_MAX_WORLD) doubling + 1 fold */

struct rd {
    struct xport_algo a;      /* the transport (xport.h), this rank, the staging piece */
    size_t seg_bytes;         /* SEGMENTS: frames of at most this (0, rd_init's: one a step) */
};

/* rd_init: recursive doubling among `world` ranks seen from `rank`, moving
 * bytes through x (which must outlive it, opened with rd_plan). piece_bytes:
 * the staging piece, at least 8 bytes (0: RD_PIECE_DEFAULT). ERR_USAGE or
 * -ENOMEM. */
int rd_init(struct rd *r, struct xport *x, int rank, int world, size_t piece_bytes);
void rd_destroy(struct rd *r);

/* rd_partners: the ranks `rank` exchanges with, in the order of its steps
 * (its fold partner first, if it has one; then rank XOR 1, XOR 2, ...), into
 * out[RD_PARTNERS_MAX]; returns how many (0 when world is 1). */
int rd_partners(int rank, int world, int *out);

/* rd_plan: the peer table (xport.h): a connection per partner, the lower
 * rank of a pair accepting; fault news flooded to every partner. */
void rd_plan(int rank, int world, struct xport_plan *pl);

/* rd_pow2_floor: the largest power of two <= k (k >= 1), and its log2 in
 * *log2p: the fold's P (rd, Rabenseifner). */
int rd_pow2_floor(int k, int *log2p);

/* rd_steps: the exchanges one all-reduce takes for K = world: log2 K for
 * a power of two, floor(log2 K) + 2 otherwise (0 for K = 1). */
int rd_steps(int world);

int rd_allreduce(struct rd *r, void *buf, size_t n, int dtype, char *err);
/* rd_allreduce_raw: rd_allreduce without the finite check, for
 * coll_gather's doubles, which may be NaN on purpose (ring.h). */
int rd_allreduce_raw(struct rd *r, void *buf, size_t n, int dtype, char *err);

#endif /* RD_H */
