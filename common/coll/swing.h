/* swing.h -- Swing's all-reduce (ring_worker --algo swing-lat|swing-bw; De
 * Sensi et al., NSDI 2024): recursive doubling's and Rabenseifner's step
 * counts with partners at distance rho(s) = 1, -1, 3, -5, 11, ... instead
 * of 1, 2, 4, ..., over a transport (xport.h) opened with swing_plan. The
 * algorithm is taught in swing.c's opening comment.
 *
 *   swing-lat  log2 K exchanges of the whole vector (like rd.c)
 *   swing-bw   a reduce-scatter then an all-gather, 2 log2 K exchanges that
 *              move the ring's bytes (like rabenseifner.c)
 *
 * BUFFERS. swing_allreduce works in place in the caller's buffer of n
 * elements of dtype: in, rank r's vector; out, the element-wise SUM over
 * the K ranks. Besides the buffer it uses one staging piece (swing_init's
 * piece_bytes), allocated once by swing_init and freed by swing_destroy:
 * nothing is allocated per call.
 *
 * BITS. swing-bw: every rank ends bit-identical (each block is added up on
 * one rank, then copied). swing-lat: every rank's sum is a tree of its own
 * (swing.c, DETERMINISM), so ranks agree bit for bit when the sum is exact
 * in any order (integer-valued floats, the gathers' x + 0), and to rounding
 * otherwise; each rank's bits are the same on a rerun.
 *
 * K = 1 (and n = 0): the call returns at once and the transport may be
 * NULL. Any K >= 2 works; when K is not a power of two the first 2r ranks
 * (r = K - 2^floor(log2 K)) pair up and the odd ones fold into the even
 * ones, as Rabenseifner's (swing.c, FOLD).
 *
 * ERRORS. 0, or the transport's negative err.h code with its one line in
 * err (the rank lost); ERR_USAGE for a dtype that is not one;
 * ERR_NONFINITE when a sum or a copied value is NaN or Inf ("element I is
 * X after round R from partner rank P"; vec_add_finite).
 */
#ifndef SWING_H
#define SWING_H

#include <stddef.h>
#include <stdint.h>

#include "xport.h"

#define SWING_PIECE_DEFAULT (1u << 20)     /* bytes added between two receives */
#define SWING_PARTNERS_MAX  17             /* log2(PROTO_MAX_WORLD) steps + 1 fold */

struct swing {
    struct xport_algo a;      /* the transport (xport.h), this rank, the staging piece */
    int bw;                   /* 1: swing-bw; 0: swing-lat */
    int pos;                  /* swing-bw: the block this rank owns (swing_block); -1: none */
};

/* swing_init: Swing among `world` ranks seen from `rank`, bandwidth-optimal
 * when bw is 1, latency-optimal when 0, moving bytes through x (which must
 * outlive it, opened with swing_plan). piece_bytes: the staging piece, at
 * least 8 bytes (0: SWING_PIECE_DEFAULT). ERR_USAGE or -ENOMEM. */
int swing_init(struct swing *w, struct xport *x, int rank, int world, int bw, size_t piece_bytes);
void swing_destroy(struct swing *w);

/* swing_rho: rho(s) = sum_{i<=s} (-2)^i = (1 - (-2)^(s+1)) / 3, s >= 0. */
long long swing_rho(int s);

/* swing_peer: the peer of cube rank c (0..p-1, p a power of two) in step
 * s: c + rho(s) for an even c, c - rho(s) for an odd one, mod p. */
int swing_peer(int c, int s, int p);

/* swing_partners: the ranks `rank` exchanges with, in the order of its
 * steps (its fold partner first, if it has one; then the step-0, 1, ...
 * peers), into out[SWING_PARTNERS_MAX]; returns how many (0 when world is
 * 1). swing-bw's all-gather meets the same peers in the reverse order. */
int swing_partners(int rank, int world, int *out);

/* swing_plan: the peer table (xport.h): a connection per partner, the
 * higher rank of a pair dialling; fault news flooded to every partner. */
void swing_plan(int rank, int world, struct xport_plan *pl);

/* swing_steps: the exchanges one all-reduce takes for K = world: log2 K
 * (swing-lat) or 2 log2 K (swing-bw) for a power of two, 2 more with a
 * fold; 0 for K = 1. */
int swing_steps(int world, int bw);

/* swing_block: the block (0..P-1 of ring_chunk's cut into P =
 * 2^floor(log2 K) blocks) that `rank` holds summed after swing-bw's
 * reduce-scatter; -1 for a folded odd rank. A permutation of 0..P-1 over
 * the cube's ranks (swing.c, BLOCKS). */
int swing_block(int rank, int world);

int swing_allreduce(struct swing *w, void *buf, size_t n, int dtype, char *err);
/* swing_allreduce_raw: without the finite check, for coll_gather's
 * doubles, which may be NaN on purpose (ring.h). */
int swing_allreduce_raw(struct swing *w, void *buf, size_t n, int dtype, char *err);

#endif /* SWING_H */
