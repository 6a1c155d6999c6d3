/* tree_shape.h -- the shape of psring's binary trees and of the schedule
 * that runs them: who is whose parent, the edge colors (the slots of a
 * period), and how many swaps the longest chain of that schedule holds.
 *
 * Pure arithmetic on (rank, world, tree), no transport: the trees'
 * all-reduce (common/coll/tree.c, which teaches the trees, the periods and
 * the slots in its opening comment) runs on it, and the cost model
 * (common/measure/model.c, model_tree, model_dbtree) counts its steps with
 * it, so the formula and the algorithm read one schedule.
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

#endif /* TREE_SHAPE_H */
