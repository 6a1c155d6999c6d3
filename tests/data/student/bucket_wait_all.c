/* bucket_wait_all.c -- a broken bucket_student.c (tests/t_student_bucket.sh):
 * the project's buckets, in the right order, but every one started after
 * the backward pass: the layers are only collected while it runs. The
 * sums and the bytes are right; nothing overlaps. grade.sh --code must
 * name it. */
#include "train/bucket_student.h"

#define MAX_BUCKETS 64

static size_t bfirst[MAX_BUCKETS], bcount[MAX_BUCKETS], nb;

int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count)
{
    struct bs_bucket *o = bs_open(b);

    (void)layer;
    o->first = first;
    o->count += count;
    o->bytes += (uint64_t)count * bs_elem_size(b);
    if (o->bytes >= bs_bucket_bytes(b) && nb < MAX_BUCKETS) {
        bfirst[nb] = o->first;          /* kept for later: not started */
        bcount[nb++] = o->count;
        *o = (struct bs_bucket){ 0, 0, 0 };
    }
    return 0;
}

int student_backward_done(struct bstudent *b)
{
    struct bs_bucket *o = bs_open(b);
    int rc = 0;

    if (o->count > 0 && nb < MAX_BUCKETS) {
        bfirst[nb] = o->first;
        bcount[nb++] = o->count;
    }
    for (size_t i = 0; i < nb && rc == 0; i++)
        rc = bs_start(b, bfirst[i], bcount[i]);
    nb = 0;
    *o = (struct bs_bucket){ 0, 0, 0 };
    return rc;
}
