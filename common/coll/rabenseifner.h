/* rabenseifner.h -- Rabenseifner's all-reduce (ring_worker --algo
 * rabenseifner): a reduce-scatter by recursive halving, then an all-gather
 * by recursive doubling, 2 log2 K exchanges that move the ring's bytes,
 * over a transport (xport.h) opened with rab_plan. The algorithm is taught
 * in rabenseifner.c's opening comment.
 *
 * BUFFERS. rab_allreduce works in place in the caller's buffer of n
 * elements of dtype: in, rank r's vector; out, the element-wise SUM over
 * the K ranks, bit-identical on every rank. Besides the buffer it uses one
 * staging piece (rab_init's piece_bytes), allocated once by rab_init and
 * freed by rab_destroy: nothing is allocated per call.
 *
 * K = 1 (and n = 0): the call returns at once and the transport may be
 * NULL. Any K >= 2 works; when K is not a power of two the first 2r ranks
 * (r = K - 2^floor(log2 K)) pair up and the odd ones fold into the even
 * ones (rabenseifner.c, FOLD).
 *
 * ERRORS. 0, or the transport's negative err.h code with its one line in
 * err (the rank lost); ERR_USAGE for a dtype that is not one;
 * ERR_NONFINITE when a sum or a copied value is NaN or Inf ("element I is
 * X after round R from partner rank P": each piece is checked as it comes
 * in, the check fused into the add, vec_add_finite).
 */
#ifndef RABENSEIFNER_H
#define RABENSEIFNER_H

#include <stddef.h>
#include <stdint.h>

#include "xport.h"

#define RAB_PIECE_DEFAULT (1u << 20)       /* bytes added between two receives */
#define RAB_PARTNERS_MAX  17               /* log2(PROTO_MAX_WORLD) halving + 1 fold */

struct rab {
    struct xport_algo a;      /* the transport (xport.h), this rank, the staging piece */
};

/* rab_init: Rabenseifner among `world` ranks seen from `rank`, moving
 * bytes through x (which must outlive it, opened with rab_plan).
 * piece_bytes: the staging piece, at least 8 bytes (0: RAB_PIECE_DEFAULT).
 * ERR_USAGE or -ENOMEM. */
int rab_init(struct rab *r, struct xport *x, int rank, int world, size_t piece_bytes);
void rab_destroy(struct rab *r);

/* rab_partners: the ranks `rank` exchanges with, in the order of its
 * reduce-scatter (its fold partner first, if it has one; then the partners
 * at distance P/2, P/4, ..., 1 in the folded numbering), into
 * out[RAB_PARTNERS_MAX]; returns how many (0 when world is 1). The
 * all-gather meets the same partners in the reverse order. */
int rab_partners(int rank, int world, int *out);

/* rab_plan: the peer table (xport.h): a connection per partner, the higher
 * rank of a pair dialling; fault news flooded to every partner. */
void rab_plan(int rank, int world, struct xport_plan *pl);

/* rab_steps: the exchanges one all-reduce takes for K = world: 2 log2 K
 * for a power of two, 2 floor(log2 K) + 2 otherwise (0 for K = 1). */
int rab_steps(int world);

/* rab_block: the block c (0..P-1) of n elements when the vector is cut
 * into P = 2^floor(log2 K) blocks (ring_chunk's cut): [*lo, *hi). After
 * the reduce-scatter the rank numbered c among the P (FOLD) holds block c
 * summed. */
void rab_block(size_t n, int p, int c, size_t *lo, size_t *hi);

int rab_allreduce(struct rab *r, void *buf, size_t n, int dtype, char *err);
/* rab_allreduce_raw: rab_allreduce without the finite check, for
 * coll_gather's doubles, which may be NaN on purpose (ring.h). */
int rab_allreduce_raw(struct rab *r, void *buf, size_t n, int dtype, char *err);

#endif /* RABENSEIFNER_H */
