/* bucket_missed_last.c -- a broken bucket_student.c (tests/t_student_bucket.sh):
 * the buckets are started as they fill, but what is left in the open
 * bucket when the backward pass ends (layer 0's bucket) is never started.
 * The step driver finds elements never all-reduced; grade.sh --code must
 * name the missed last bucket. */
#include "train/bucket_student.h"

int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count)
{
    struct bs_bucket *o = bs_open(b);
    int rc;

    (void)layer;
    o->first = first;
    o->count += count;
    o->bytes += (uint64_t)count * bs_elem_size(b);
    if (o->bytes < bs_bucket_bytes(b))
        return 0;
    rc = bs_start(b, o->first, o->count);
    *o = (struct bs_bucket){ 0, 0, 0 };
    return rc;
}

int student_backward_done(struct bstudent *b)
{
    (void)b;
    return 0;                   /* the mistake: the open bucket is forgotten */
}
