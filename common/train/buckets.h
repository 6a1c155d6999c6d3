/* buckets.h -- grouping a gradient into buckets in reverse layer order,
 * and saying when each bucket is ready for the combine step.
 *
 * A backward pass finishes its layers last layer first (workload.h). A
 * bucket is a contiguous element range made of whole layers; the plan fills
 * buckets from the last layer backwards, adding layers to the current
 * bucket while it is smaller than the bucket size, the way PyTorch DDP
 * fills its buckets (bucket_cap_mb): so a bucket reaches the size by its
 * last layer and may pass it by that layer, and a layer larger than the
 * bucket size is never split (it ends up alone in its bucket, or with the
 * smaller layers after it that came first). Splitting would not start any
 * communication earlier: a layer's gradient is ready all at once.
 *
 * Bucket 0 holds the last layer (its range ends at n) and is ready first;
 * bucket count-1 holds layer 0 (it starts at element 0). The combine step
 * hands them on in that order: bucket b is ready when its lowest layer
 * (b's first_layer) is done, because layers finish in reverse order.
 * buckets_layer_done tracks that for any order of the callbacks (it counts
 * the layers still missing per bucket), so a workload that reported layers
 * out of order would delay a bucket, never send it early.
 *
 * Example: layers of 100, 50, 50, 200 elements (offsets 0 100 150 200 400),
 * 8-byte elements, bucket size 800 bytes (100 elements):
 *     bucket 0: layer 3        elements [200, 400)   (200 >= 100: full)
 *     bucket 1: layers 2, 1    elements [100, 200)   (50 < 100, add one)
 *     bucket 2: layer 0        elements [0, 100)
 * A bucket size of 0 is refused; one at least n bytes gives one bucket.
 *
 * OWNERSHIP. buckets_plan allocates the plan's arrays; buckets_free frees
 * them. The plan keeps no pointer to the layer table it was made from.
 */
#ifndef BUCKETS_H
#define BUCKETS_H

#include <stddef.h>
#include <stdint.h>

#define BUCKETS_DEFAULT_BYTES (25ull << 20)     /* --bucket-size default, DDP's */

struct bucket {
    size_t first, count;            /* elements [first, first + count) */
    size_t first_layer, last_layer; /* the layers in it, inclusive */
};

struct buckets {
    size_t count;                   /* number of buckets, >= 1 */
    struct bucket *b;               /* count buckets, b[0] holds the last layer */
    size_t nlayers;
    size_t *layer_bucket;           /* nlayers: the bucket of each layer */
    size_t *missing;                /* count: layers not yet done this pass */
    unsigned char *done;            /* nlayers: reported this pass */
};

/* buckets_plan: the buckets for nlayers layers at offsets layer_off
 * (nlayers + 1 entries, non-decreasing, layer_off[0] == 0) of elem_size
 * bytes each, with bucket_bytes the size (> 0). 0; ERR_USAGE with one line
 * in err (ERR_LEN) for a bad size or table; -ENOMEM. *p is usable for
 * buckets_free whatever happens. */
int buckets_plan(struct buckets *p, const size_t *layer_off, size_t nlayers,
                 size_t elem_size, uint64_t bucket_bytes, char *err);
void buckets_free(struct buckets *p);

/* buckets_reset: start a backward pass: every layer missing. */
void buckets_reset(struct buckets *p);

/* buckets_layer_done: layer `layer` is done; returns the index of the
 * bucket this completes (its last missing layer), else -1 (also for a
 * layer out of range or reported twice in one pass). */
long buckets_layer_done(struct buckets *p, size_t layer);

/* buckets_bytes_max: the largest bucket, in bytes. */
uint64_t buckets_bytes_max(const struct buckets *p, size_t elem_size);

#endif /* BUCKETS_H */
