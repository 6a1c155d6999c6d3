/* bucket_late.c -- a broken bucket_student.c (tests/t_student_bucket.sh):
 * a bucket boundary off by one layer: the bucket is started only when it
 * holds MORE than the bucket size (> where >= is meant), so it takes one
 * layer too many. The sums are right; the buckets, the bytes and the
 * overlap are not the project's. grade.sh --code must name it. */
#include "train/bucket_student.h"

int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count)
{
    struct bs_bucket *o = bs_open(b);
    int rc;

    (void)layer;
    o->first = first;
    o->count += count;
    o->bytes += (uint64_t)count * bs_elem_size(b);
    if (o->bytes <= bs_bucket_bytes(b))         /* the mistake: <= for < */
        return 0;
    rc = bs_start(b, o->first, o->count);
    *o = (struct bs_bucket){ 0, 0, 0 };
    return rc;
}

int student_backward_done(struct bstudent *b)
{
    struct bs_bucket *o = bs_open(b);
    int rc = o->count > 0 ? bs_start(b, o->first, o->count) : 0;

    *o = (struct bs_bucket){ 0, 0, 0 };
    return rc;
}
