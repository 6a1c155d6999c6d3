/* tree_shape.h -- the shape of psring's binary trees and of the schedule
 * that runs them: who is whose parent, the edge colors (the slots of a
 * period), how many swaps the longest chain of that schedule holds, and
 * what it costs as TCP runs it, one wire each way per host (tree_cost).
 *
 * Pure arithmetic on (rank, world, tree), no transport: the trees'
 * all-reduce (common/coll/tree.c, which teaches the trees, the periods and
 * the slots in its opening comment) runs on it, and the cost model
 * (common/measure/model.c, model_tree, model_dbtree) replays it, so the
 * formula and the algorithm read one schedule.
 *
 * Tree j = 0 is the in-order tree (rank 0 the root, rank q's level its
 * lowest set bit); j = 1 the double tree's second, the first mirrored
 * (K-1-r) for even K or shifted by one for odd K.
 */
#ifndef TREE_SHAPE_H
#define TREE_SHAPE_H

/* tree_parent: rank's parent in tree j (0, or 1 the double tree's second)
 * of `world` ranks, -1 for the root; tree_children: its children (0..2,
 * lower rank first) into out[2]; tree_height: the longest way down from
 * rank to a leaf (0 for a leaf); tree_depth: the way up from rank to the
 * root (0 for the root). */
int tree_parent(int rank, int world, int j);
int tree_children(int rank, int world, int j, int *out);
int tree_height(int rank, int world, int j);
int tree_depth(int rank, int world, int j);

/* tree_colors: the slot of every edge, named by its child c in tree j, in
 * color[j * world + c] (the roots' entries -1), for ntrees trees of world
 * ranks: what every rank computes alike at tree_init (tree.c, SLOTS).
 * Returns C, the slots per period, or -ENOMEM. color: ntrees * world. */
int tree_colors(int world, int ntrees, int *color);

/* tree_steps: the swaps on the longest chain of the schedule tree.c runs
 * (tree.c, PERIODS AND SLOTS) for ntrees trees of world ranks, tree j cut
 * into segs[j] segments: period by period, slot by slot, every edge swaps
 * when it carries a segment either way (up: segment q - height of its
 * child; down: q - (D + depth of its child - 1)), each rank's swaps in that
 * order, a swap starting when both its ends are free. When every swap
 * takes the same time (a + m b, m a segment: a step moves one segment each
 * way at once) the all-reduce takes tree_steps of them; this is the
 * model's count (model_tree). *colors (when not NULL) gets C. Returns the
 * count, 0 for world < 2, or -ENOMEM. */
long tree_steps(int world, int ntrees, const long *segs, int *colors);

/* tree_cost: the time of that schedule as psring's TCP transport runs it
 * on the emulated link (docs/link.md; the model's, model_tree). Every host
 * has one egress and one ingress wire, each moving a byte in b seconds; a
 * frame's bytes leave when its sender has reached that swap and its
 * egress is free, arrive a later, and pass the receiver's ingress no
 * faster than the rate, in the receiver's order. A swap sends its frame
 * (seg_bytes, or the header alone, no wire time, when its way is empty)
 * EAGERLY up to `piece` bytes: the header and first piece go into the
 * socket buffer whether or not the other end has reached the swap; the
 * rest once the other end's header is in (xport_tcp.c, tcp_begin; piece
 * 0: the whole frame at once). A rank's swap ends when the other end's
 * whole frame is in; it then goes on to its next swap, in tree.c's order
 * (period, then slot): so a node forwards segment u up once both
 * children's u are in, down once its parent's is.
 *
 * The calls run back to back, each rank's from the end of its last,
 * TREE_CALLS of them, as a benchmark's loop or a training loop does:
 * first is the first call's (every rank enters at 0), time the last's
 * (the pipeline's steady state: the root is done and enters the next call
 * before the leaves have their last segment), each the slowest rank's
 * from its own entry, = lat_terms a + byte_terms b along the path that
 * sets it. util: the link's own utilization of that schedule, the largest
 * rank's egress as link.h records it (UTILIZATION: a frame busy from its
 * start until its last byte lands, a later; a gap idle beyond the lead)
 * over calls 1 .. TREE_CALLS-1, from its entry to its end: the model's
 * own share that a measured link_util is held against (a leaf waits for
 * the broadcast, an inner rank for its children). Returns 0, or -ENOMEM;
 * all zero for world < 2. */
#define TREE_CALLS 4
struct tree_cost {
    double time, first, lat_terms, byte_terms, util;
    int colors;
};
int tree_cost(int world, int ntrees, const long *segs, double seg_bytes, double a, double b,
              double piece, struct tree_cost *out);

#endif /* TREE_SHAPE_H */
