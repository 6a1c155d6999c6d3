/* bucket_student.h -- the student track's second part (docs/lab.md, "Write
 * the buckets"): the part of the step driver that cuts the gradient into
 * buckets as the backward pass produces them and starts each bucket's
 * all-reduce the moment it is complete, written by a student in
 * students/bucket_student.c, run by `ring_worker --bucket-student` and
 * checked by `experiments/grade.sh --code FILE` against the project's own
 * bucketed run (common/train/buckets.c, backward.c, step.c's overlap).
 *
 * WHAT THE STUDENT WRITES. Two functions, which the step driver calls
 * through its hook (step_student.c) on the rank's own thread while the
 * backward pass runs:
 *
 *     int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count);
 *         the backward pass has finished layer `layer`: its gradient,
 *         elements [first, first + count) of the vector, is final. Layers
 *         finish LAST LAYER FIRST: L-1, L-2, ..., 0.
 *     int student_backward_done(struct bstudent *b);
 *         the backward pass is over (after layer 0).
 *
 * Between them they must start every element's all-reduce exactly once,
 * in buckets of whole layers cut the project's way (buckets.h): fill a
 * bucket from the last layer backwards, add layers while it holds fewer
 * than bs_bucket_bytes bytes, start it as soon as it holds at least that
 * many, and start what is left when the pass ends. Each bucket is started
 * as soon as its last layer is done, not later: that is the OVERLAP (the
 * all-reduce runs on the communication thread while the backward pass
 * computes the layers below). Return 0, or bs_start's code at once.
 *
 * THE CALLS.
 *   bs_bucket_bytes(b)     --bucket-size, in bytes
 *   bs_elem_size(b)        bytes per element (4 for f32, 8 for f64)
 *   bs_open(b)             the bucket being filled: a struct bs_bucket the
 *                          driver zeroes before each backward pass and
 *                          otherwise leaves to the student
 *   bs_start(b, first, count)
 *                          start the all-reduce of elements [first, first +
 *                          count) on the communication thread; returns at
 *                          once (0), the all-reduce goes on while the
 *                          backward pass does. Refused (an error code, a
 *                          line naming the elements): a range past the
 *                          vector, one holding an element of a layer the
 *                          pass has not finished, one overlapping an
 *                          earlier start of this pass, more starts than
 *                          layers. Every rank must start the same ranges
 *                          in the same order (they are all-reduced in
 *                          the order started).
 * Indices and counts are in elements, never bytes.
 *
 * When the pass is over the driver checks that every element was started
 * ("elements [a, b) (layers i..j) were never all-reduced") and adds the
 * count-and-loss all-reduce, as its own path does.
 *
 * THE TEMPLATE (students/bucket_student.c as shipped) returns
 * BS_NOT_WRITTEN; ring_worker then stops with "not written yet" (exit 1).
 */
#ifndef BUCKET_STUDENT_H
#define BUCKET_STUDENT_H

#include <stddef.h>
#include <stdint.h>

#define BS_NOT_WRITTEN 4343     /* the template's return value */

struct bstudent;

/* The bucket being filled (bs_open): the student's to use. */
struct bs_bucket {
    size_t first, count;        /* elements [first, first + count) */
    uint64_t bytes;             /* count * bs_elem_size */
};

uint64_t bs_bucket_bytes(const struct bstudent *b);
size_t bs_elem_size(const struct bstudent *b);
struct bs_bucket *bs_open(struct bstudent *b);
int bs_start(struct bstudent *b, size_t first, size_t count);

/* What the student writes (students/bucket_student.c). */
int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count);
int student_backward_done(struct bstudent *b);

#endif /* BUCKET_STUDENT_H */
