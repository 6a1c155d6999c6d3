/* chain.h -- broadcast and reduce (to a root) as a pipelined chain along
 * the ring's connections (ring_plan), over any transport (xport.h). The
 * algorithm and its step table are in chain.c's opening comment.
 *
 * BUFFERS. Both work in place in the caller's buffer of n elements of
 * dtype:
 *   chain_broadcast  in: the root's vector (the others' buffers are
 *                    overwritten). out: every rank holds the root's bytes.
 *   chain_reduce     in: rank r's vector. out: on the root, the element-wise
 *                    SUM over the K ranks, summed in a fixed order (rank
 *                    root+1 first, then root+2, ..., the root last); on the
 *                    other ranks, partial sums (scratch).
 * The segment (a pipeline stage's unit) is the algorithm state's staging
 * piece, a->piece_bytes rounded down to whole elements (reduce receives a
 * segment there and adds it in; broadcast receives straight into buf).
 * Nothing is allocated per call.
 *
 * K = 1: both return at once (the transport may be NULL).
 *
 * ERRORS. 0, or the transport's negative err.h code with its one line in
 * err; ERR_USAGE for a dtype that is not one or a root outside 0..K-1;
 * ERR_NONFINITE when a received value or a sum is NaN or Inf (each
 * segment checked as it comes in, fused into the add: vec_add_finite).
 */
#ifndef CHAIN_H
#define CHAIN_H

#include <stddef.h>

#include "xport.h"

/* chain_steps: the transport steps one call makes, P + K - 2 for P =
 * ceil(n / seg) segments of seg elements (0 when n or K - 1 is 0). */
size_t chain_steps(size_t n, int world, size_t seg);

/* chain_segment: the segment in elements of dtype for staging piece_bytes. */
size_t chain_segment(size_t piece_bytes, int dtype);

int chain_broadcast(struct xport_algo *a, void *buf, size_t n, int dtype, int root, char *err);
int chain_reduce(struct xport_algo *a, void *buf, size_t n, int dtype, int root, char *err);

#endif /* CHAIN_H */
