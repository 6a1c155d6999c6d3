/* buckets.c -- the bucket plan and its readiness count (buckets.h says
 * what and why).
 *
 * The plan walks the layers from the last to the first, once, opening a
 * bucket at the first layer that does not fit the open one: a bucket is
 * closed as soon as its bytes reach the size. Readiness is a count of the
 * layers each bucket still misses, so the order of the callbacks cannot
 * make a bucket ready before all its layers are.
 */
#include "buckets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

void buckets_free(struct buckets *p)
{
    free(p->b);
    free(p->layer_bucket);
    free(p->missing);
    free(p->done);
    memset(p, 0, sizeof *p);
}

int buckets_plan(struct buckets *p, const size_t *layer_off, size_t nlayers,
                 size_t elem_size, uint64_t bucket_bytes, char *err)
{
    size_t nb = 0;
    uint64_t open_bytes = 0;
    int rc = 0;

    memset(p, 0, sizeof *p);
    if (bucket_bytes == 0 || elem_size == 0 || nlayers == 0 || layer_off[0] != 0) {
        snprintf(err, ERR_LEN, "bucket plan: %s", bucket_bytes == 0 ?
                 "the bucket size must be at least 1 byte" : "no layers, or a bad layer table");
        return ERR_USAGE;
    }
    for (size_t l = 0; l < nlayers; l++) {
        if (layer_off[l + 1] < layer_off[l]) {
            snprintf(err, ERR_LEN, "bucket plan: layer %zu ends before it starts", l);
            return ERR_USAGE;
        }
    }
    p->b = calloc(nlayers, sizeof *p->b);           /* at most one bucket per layer */
    p->layer_bucket = calloc(nlayers, sizeof *p->layer_bucket);
    p->missing = calloc(nlayers, sizeof *p->missing);
    p->done = calloc(nlayers, 1);
    if (!p->b || !p->layer_bucket || !p->missing || !p->done) {
        rc = -ENOMEM;
        snprintf(err, ERR_LEN, "bucket plan: out of memory for %zu layers", nlayers);
        goto out;
    }
    p->nlayers = nlayers;
    for (size_t l = nlayers; l-- > 0;) {
        uint64_t bytes = (uint64_t)(layer_off[l + 1] - layer_off[l]) * elem_size;
        if (nb == 0 || open_bytes >= bucket_bytes) {
            /* open a new bucket with this layer */
            p->b[nb].first = layer_off[l];
            p->b[nb].count = 0;
            p->b[nb].last_layer = l;
            nb++;
            open_bytes = 0;
        }
        p->b[nb - 1].first = layer_off[l];
        p->b[nb - 1].count += layer_off[l + 1] - layer_off[l];
        p->b[nb - 1].first_layer = l;
        p->layer_bucket[l] = nb - 1;
        open_bytes += bytes;
    }
    p->count = nb;
    buckets_reset(p);
out:
    if (rc != 0)
        buckets_free(p);
    return rc;
}

void buckets_reset(struct buckets *p)
{
    for (size_t i = 0; i < p->count; i++)
        p->missing[i] = p->b[i].last_layer - p->b[i].first_layer + 1;
    memset(p->done, 0, p->nlayers);
}

long buckets_layer_done(struct buckets *p, size_t layer)
{
    size_t i;

    if (layer >= p->nlayers || p->done[layer])
        return -1;
    p->done[layer] = 1;
    i = p->layer_bucket[layer];
    return --p->missing[i] == 0 ? (long)i : -1;
}

uint64_t buckets_bytes_max(const struct buckets *p, size_t elem_size)
{
    uint64_t m = 0;

    for (size_t i = 0; i < p->count; i++)
        if ((uint64_t)p->b[i].count * elem_size > m)
            m = (uint64_t)p->b[i].count * elem_size;
    return m;
}
