/* a2a.h -- all-to-all by pairwise exchange over a full mesh of
 * connections (a2a_plan), over any transport (xport.h), with the skew of
 * MoE routing as an option. The algorithm is in a2a.c's opening comment.
 *
 * THE SPLIT (struct a2a_split). Every rank sends n elements in all, cut
 * into K blocks, block d for rank d (its own block included). Every rank
 * cuts the same way, so rank d receives K blocks of a2a_count(sp, d)
 * elements, one from each rank:
 *   imbalance F = 1 (balanced): the blocks are ring_chunk's (sizes differ by
 *                 at most one; the bench rounds n to a multiple of K, as
 *                 nccl-tests does, so they are equal there);
 *   imbalance F in (1, K]: the HOT rank (--root) gets h = floor(F n / K)
 *                 elements from every rank: F times the average share n/K
 *                 (one popular expert); the other K-1 ranks share the
 *                 remaining n - h as ring_chunk cuts n - h into K-1.
 * F = K sends everything to the hot rank. The hot rank then receives
 * (K-1) h from the wire, F times a balanced rank's (K-1) n / K: the
 * collective waits for its link (model.h, model_coll).
 *
 * BUFFERS (caller's, not overlapping): send holds n elements, block d at
 * a2a_offset(sp, d); recv holds K * a2a_count(sp, rank) elements, block s
 * (from rank s) at s * a2a_count(sp, rank). Nothing is allocated per call.
 *
 * K = 1: the own block is copied; no transport.
 *
 * ERRORS. 0, or the transport's negative err.h code with its one line in
 * err; ERR_USAGE for a bad dtype or split; ERR_NONFINITE when a received
 * value is NaN or Inf (each block checked as it comes in).
 */
#ifndef A2A_H
#define A2A_H

#include <stddef.h>

#include "xport.h"

#define A2A_WORLD_MAX (XPORT_PEERS_MAX + 1)     /* a connection per other rank */

struct a2a_split {
    size_t n;                   /* elements each rank sends in all */
    int world;
    int hot;                    /* the rank that gets F times the average share */
    double imbalance;           /* F, 1 .. world */
};

/* a2a_split_check: 0, or ERR_USAGE with one line (F outside 1..K, hot
 * outside 0..K-1, K outside 1..A2A_WORLD_MAX). */
int a2a_split_check(const struct a2a_split *sp, char *err);

/* a2a_count: elements every rank sends to rank d; a2a_offset: where block d
 * starts in a send buffer. */
size_t a2a_count(const struct a2a_split *sp, int d);
size_t a2a_offset(const struct a2a_split *sp, int d);

/* a2a_plan: a connection to every other rank (the higher rank dials);
 * fault news flooded. 2 <= world <= A2A_WORLD_MAX. */
void a2a_plan(int rank, int world, struct xport_plan *pl);

/* a2a_alltoall: the exchange (above). a: the algorithm state over a
 * transport opened with a2a_plan. */
int a2a_alltoall(struct xport_algo *a, const void *send, void *recv, const struct a2a_split *sp,
                 int dtype, char *err);

#endif /* A2A_H */
