/* bucket_append.c -- a broken bucket_student.c (tests/t_student_bucket.sh):
 * each finished layer is added BEHIND the open bucket (its first element
 * kept from the bucket's first layer), as if the layers came in vector
 * order; they come last layer first, so the range runs past the vector
 * (bs_start refuses it). grade.sh --code must say the layer goes in front. */
#include "train/bucket_student.h"

int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count)
{
    struct bs_bucket *o = bs_open(b);
    int rc;

    (void)layer;
    if (o->count == 0)
        o->first = first;               /* the mistake: never moved down */
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
    struct bs_bucket *o = bs_open(b);
    int rc = o->count > 0 ? bs_start(b, o->first, o->count) : 0;

    *o = (struct bs_bucket){ 0, 0, 0 };
    return rc;
}
