/* store_frame.c -- NOT-LINEAR PUSHES (store.h): a push of --compress
 * topk:F or sign is one frame of the server's whole range, kept whole in
 * the worker's slot of s->frames as it streams in, then validated and
 * added in one go when it ends (a top-k frame's indices and values, or a
 * sign frame's scale and bits, mean nothing piece by piece). The frame's
 * decoder (base/compress.h, compress_frame.add) refuses a hostile frame
 * before it adds anything; a non-finite value or sum fails the step,
 * weights untouched, as an uncompressed push's NaN does.
 */
#include "store.h"
#include "store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"

int store__frame_init(struct store *s, int setting, char *err)
{
    s->setting = setting;
    s->frame_max = compress_frame_bytes(setting, s->n, s->dtype);
    if (s->sizes_only)
        return 0;
    if (!(s->frames = malloc((size_t)s->world * s->frame_max))) {
        err_say(err, "store: out of memory for %u frames of %zu bytes", (unsigned)s->world,
                s->frame_max);
        return -ENOMEM;
    }
    return 0;
}

int store__frame_data(struct store *s, struct store_worker *w, uint32_t rank,
                      const void *bytes, size_t nbytes, char *err)
{
    if (nbytes > s->frame_max - w->have) {
        err_say(err, "worker %u: push for step %llu has %zu bytes left, got %zu more",
                (unsigned)rank, ull(s->step), s->frame_max - w->have, nbytes);
        return ERR_PROTO_SIZE;
    }
    if (s->frames)
        memcpy(s->frames + (size_t)rank * s->frame_max + w->have, bytes, nbytes);
    w->have += nbytes;
    return 0;
}

int store__frame_end(struct store *s, struct store_worker *w, uint32_t rank, char *err)
{
    size_t bad = 0;
    char why[ERR_LEN];
    int rc;

    if (w->have != s->frame_max) {
        err_say(err, "worker %u: push for step %llu ended after %zu of %zu bytes",
                (unsigned)rank, ull(s->step), w->have, s->frame_max);
        return ERR_PROTO_SIZE;
    }
    w->have = 0;
    w->next = w->count;
    if (s->sizes_only)
        return 0;
    rc = s->comp->frame->add(s->setting, store__sum_of(s, w), s->frames +
                             (size_t)rank * s->frame_max, s->frame_max, s->n, s->dtype, &bad, why);
    if (rc == ERR_NONFINITE) {
        err_say(err, "worker %u: push for step %llu: gradient element %llu is not finite "
                "(%s); the step fails, weights untouched", (unsigned)rank, ull(s->step),
                ull(s->offset + bad), s->comp->name);
        return store__fail(s, ERR_NONFINITE, err);
    }
    if (rc != 0)
        err_say(err, "worker %u: push for step %llu refused: %s", (unsigned)rank,
                ull(s->step), why);
    return rc;
}
