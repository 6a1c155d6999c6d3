/* bucket_edge.c -- a broken bucket_student.c (tests/t_student_bucket.sh):
 * a bucket boundary off by one element: each bucket's count is computed
 * from its first and last elements as last - first, which leaves out the
 * last element. The step driver finds elements never all-reduced;
 * grade.sh --code must name the off-by-one edge. */
#include "train/bucket_student.h"

static size_t last;             /* the open bucket's last element */

static int start(struct bstudent *b, struct bs_bucket *o)
{
    int rc = bs_start(b, o->first, last - o->first);    /* the mistake: + 1 missing */

    *o = (struct bs_bucket){ 0, 0, 0 };
    return rc;
}

int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count)
{
    struct bs_bucket *o = bs_open(b);

    (void)layer;
    if (o->count == 0)
        last = first + count - 1;
    o->first = first;
    o->count += count;
    o->bytes += (uint64_t)count * bs_elem_size(b);
    return o->bytes >= bs_bucket_bytes(b) ? start(b, o) : 0;
}

int student_backward_done(struct bstudent *b)
{
    struct bs_bucket *o = bs_open(b);

    return o->count > 0 ? start(b, o) : 0;
}
