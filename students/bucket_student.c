/* students/bucket_student.c -- write the buckets (docs/lab.md, "Write the
 * buckets"): the part of the step driver that cuts the gradient into
 * buckets while the backward pass produces it, and starts each bucket's
 * all-reduce as soon as the bucket is complete.
 *
 * The backward pass finishes the layers LAST LAYER FIRST (L-1, ..., 1, 0)
 * and calls student_layer_done for each as soon as its gradient is final;
 * then student_backward_done once. Your job, between the two:
 *
 *   1. grow the open bucket (bs_open: first, count, bytes) by each layer
 *      that finishes. The layers arrive from the top of the vector
 *      downwards, so the new layer goes IN FRONT of the bucket: its
 *      first element becomes the bucket's first;
 *   2. as soon as the bucket holds at least bs_bucket_bytes(b) bytes,
 *      start its all-reduce (bs_start) and open an empty one. bs_start
 *      returns at once: the all-reduce runs while the backward pass
 *      computes the layers below. That is the overlap;
 *   3. when the backward pass is over, start what is left.
 *
 * Every element must be started exactly once, each bucket as soon as its
 * last layer is done (not at the end: then nothing overlaps). The grader
 * compares your buckets with the project's own: the same weights, bit for
 * bit, the same bytes, and as much communication finished before the
 * backward pass ended.
 *
 * The calls (common/train/bucket_student.h says all):
 *   bs_bucket_bytes(b)            --bucket-size, in bytes
 *   bs_elem_size(b)               bytes per element
 *   bs_open(b)                    the open bucket (zeroed before each pass)
 *   bs_start(b, first, count)     start the all-reduce of elements
 *                                 [first, first + count); 0 or an error
 *                                 code: return that code at once
 *
 * Indices and counts are in elements, never bytes.
 *
 * Build and run: make, then
 *   experiments/launch.sh ring 2 --worker-args "--bucket-student --bucket-size 64K" \
 *       --workload synthetic --params 64K --dtype f32 --backward-time 400ms --steps 3
 * Check: experiments/grade.sh --code students/bucket_student.c
 */
#include "train/bucket_student.h"

int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count)
{
    (void)b;
    (void)layer;
    (void)first;
    (void)count;
    return BS_NOT_WRITTEN;      /* delete this line and grow the open bucket */
}

int student_backward_done(struct bstudent *b)
{
    (void)b;
    return BS_NOT_WRITTEN;      /* delete this line and start what is left */
}
