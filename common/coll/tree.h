/* tree.h -- the pipelined binary tree (ring_worker --algo tree) and NCCL's
 * double binary tree (--algo dbtree): a reduce up a tree and a broadcast
 * down it, segment by segment, over a transport (xport.h) opened with
 * tree_plan. The algorithm is taught in tree.c's opening comment.
 *
 * BUFFERS. tree_allreduce works in place in the caller's buffer of n
 * elements of dtype: in, rank r's vector; out, the element-wise SUM over
 * the K ranks, bit-identical on every rank (the root's sum, copied down).
 * Besides the buffer it uses one staging piece (tree_init's piece_bytes)
 * and the schedule (a few edges), allocated once by tree_init and freed by
 * tree_destroy: nothing is allocated per call.
 *
 * K = 1 (and n = 0): the call returns at once and the transport may be
 * NULL. Any K >= 2 works (tree.c, TREES).
 *
 * ERRORS. 0, or the transport's negative err.h code with its one line in
 * err (the rank lost); ERR_USAGE for a dtype that is not one; -ENOMEM;
 * ERR_NONFINITE when a sum or a copied value is NaN or Inf ("element I is
 * X after round R from child rank C", or "from parent rank P").
 */
#ifndef TREE_H
#define TREE_H

#include <stddef.h>
#include <stdint.h>

#include "base/tree_shape.h"
#include "xport.h"

#define TREE_PIECE_DEFAULT (1u << 20)       /* bytes added between two receives */
#define TREE_SEG_BYTES     (128u << 10)     /* a segment, the unit of the pipeline */
#define TREE_EDGES_MAX     8                /* edges of one rank, both trees */

/* One edge of this rank in one tree, and when it is used (tree.c). */
struct tree_edge {
    int tree;           /* 0, or 1 for the double tree's second */
    int peer;           /* the rank at the other end */
    int to_parent;      /* 1: peer is this rank's parent (this rank is the child) */
    int color;          /* the slot of a period the edge is used in */
    int height;         /* the child's height: up segment u goes in period u + height */
    int down_at;        /* down segment w goes in period w + down_at */
};

struct tree {
    struct xport_algo a;      /* the transport (xport.h), this rank, the staging piece */
    int ntrees;               /* 1 (tree) or 2 (dbtree) */
    int colors, depth;        /* C slots per period; D, the trees' depth */
    int nedges;
    struct tree_edge e[TREE_EDGES_MAX];     /* sorted by color */
};

/* tree_init: ntrees (1: --algo tree, 2: --algo dbtree) among `world`
 * ranks seen from `rank`, moving bytes through x (which must outlive it,
 * opened with tree_plan for the same ntrees). piece_bytes: the staging
 * piece, at least 8 bytes (0: TREE_PIECE_DEFAULT). ERR_USAGE or -ENOMEM. */
int tree_init(struct tree *t, struct xport *x, int rank, int world, int ntrees,
              size_t piece_bytes);
void tree_destroy(struct tree *t);

/* tree_plan: the peer table (xport.h): a connection per neighbour in any of
 * the trees (one for a pair that is an edge of both), the higher rank
 * dialling; fault news flooded to every neighbour. */
void tree_plan(int rank, int world, int ntrees, struct xport_plan *pl);

/* tree_parent, tree_children, tree_height, tree_depth, tree_colors (the
 * trees' shape and slots), tree_steps and tree_cost (the schedule's cost):
 * base/tree_shape.h, which the cost model reads too. */

/* tree_segments: S, the segments a tree's part of `elems` elements of
 * `es` bytes is cut into (TREE_SEG_BYTES each, at most one per element;
 * 0 for an empty part). */
size_t tree_segments(size_t elems, size_t es);

int tree_allreduce(struct tree *t, void *buf, size_t n, int dtype, char *err);
/* tree_allreduce_raw: tree_allreduce without the finite check, for
 * coll_gather's doubles, which may be NaN on purpose (ring.h). */
int tree_allreduce_raw(struct tree *t, void *buf, size_t n, int dtype, char *err);

#endif /* TREE_H */
