/* bucket_forward.c -- a broken bucket_student.c (tests/t_student_bucket.sh):
 * the buckets cut in FORWARD order, layer 0 first, as the layers sit in
 * the vector. The layers are kept as they finish and cut when the pass
 * is over, because a bucket that starts at layer 0 is complete only then:
 * the sums are right, nothing overlaps. grade.sh --code must name it. */
#include "train/bucket_student.h"

#define MAX_LAYERS 64

static size_t lfirst[MAX_LAYERS], lcount[MAX_LAYERS], nlayers;

int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count)
{
    (void)b;
    if (layer >= MAX_LAYERS)
        return -1;
    lfirst[layer] = first;
    lcount[layer] = count;
    if (layer + 1 > nlayers)
        nlayers = layer + 1;
    return 0;
}

int student_backward_done(struct bstudent *b)
{
    struct bs_bucket *o = bs_open(b);
    int rc = 0;

    for (size_t l = 0; l < nlayers && rc == 0; l++) {    /* layer 0 first */
        if (o->count == 0)
            o->first = lfirst[l];
        o->count += lcount[l];
        o->bytes += (uint64_t)lcount[l] * bs_elem_size(b);
        if (o->bytes >= bs_bucket_bytes(b) || l + 1 == nlayers) {
            rc = bs_start(b, o->first, o->count);
            *o = (struct bs_bucket){ 0, 0, 0 };
        }
    }
    return rc;
}
