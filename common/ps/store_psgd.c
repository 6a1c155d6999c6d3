/* store_psgd.c -- POWERSGD PUSHES (store.h): each worker's two pushes of
 * a step, round 0 (P and the raw elements, with the count and loss) and
 * round 1 (Q), each kept whole in the worker's slot as it streams in and
 * handed to the rounds' state (psgd_server.h) at its end, which checks it
 * whole (the size, every value finite) and refuses it, nothing kept, with
 * the worker named. store_psgd_reply sums a complete round in rank order;
 * after round 1 it decodes the step's gradient sum into the accumulator,
 * and store_release applies that like any sum: the counts, B, the
 * optimizer, the buffers' swap are the store's own.
 */
#include "store.h"
#include "store_int.h"
#include "psgd_server.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"

int store__psgd_init(struct store *s, const struct store_cfg *cfg, char *err)
{
    struct psgd_server *p;
    size_t big;
    int rc;

    if (COMPRESS_KIND(cfg->compress) != COMPRESS_POWERSGD || s->sizes_only)
        return 0;
    if (!cfg->psgd_w || s->per_worker || s->per_step != 1 || s->average) {
        err_say(err, "store: PowerSGD pushes take a workload, the sync mode, one push per "
                "step and no --sync-every");
        return ERR_USAGE;
    }
    if (!(p = calloc(1, sizeof *p))) {
        err_say(err, "store: out of memory for PowerSGD's state");
        return -ENOMEM;
    }
    if ((rc = psgd_server_init(p, cfg->psgd_w, (size_t)s->offset, s->n, cfg->compress,
                               s->dtype, s->world, err)) != 0) {
        free(p);
        return rc;
    }
    if (psgd_server_frame_bytes(p, 1) == 0) {   /* no compressed matrix: plain pushes */
        psgd_server_destroy(p);
        free(p);
        return 0;
    }
    s->psgd = p;
    big = psgd_server_frame_bytes(p, 0) > psgd_server_frame_bytes(p, 1)
          ? psgd_server_frame_bytes(p, 0) : psgd_server_frame_bytes(p, 1);
    s->frame_max = big;
    if (!(s->frames = malloc((size_t)s->world * big))) {
        err_say(err, "store: out of memory for %u PowerSGD frames of %zu bytes",
                (unsigned)s->world, big);
        return -ENOMEM;
    }
    return 0;
}

void store__psgd_destroy(struct store *s)
{
    if (s->psgd) {
        psgd_server_destroy(s->psgd);
        free(s->psgd);
        s->psgd = NULL;
    }
}

int store__psgd_begin(struct store *s, struct store_worker *w, uint32_t rank, uint64_t step,
                      const struct proto_push_meta *meta, uint64_t first, uint64_t count,
                      char *err)
{
    int r = (int)w->pushes;     /* 0: P, 1: Q */
    size_t want = r < 2 ? psgd_server_frame_bytes(s->psgd, r) / s->elem_size : 0;

    if (step != s->step) {
        err_say(err, "worker %u: push for step %llu while the server is at step %llu (%s)",
                (unsigned)rank, ull(step), ull(s->step), step < s->step ? "stale" : "future");
        return ERR_PROTO_FIELD;
    }
    if (w->phase != STORE_W_WAITING || r > 1 || (r == 1 && s->psgd->round != 1)) {
        err_say(err, "worker %u: PowerSGD push %d for step %llu out of turn (%s)",
                (unsigned)rank, r + 1, ull(step), w->phase == STORE_W_RECEIVING
                ? "the one before still arriving" : r > 1 ? "both rounds pushed"
                : "round 1 before round 0's sum was sent");
        return ERR_PROTO_FIELD;
    }
    if (first != s->offset || count != want) {
        err_say(err, "worker %u: PowerSGD round %d for step %llu carries %llu elements from "
                "%llu, not the round's %zu from %llu", (unsigned)rank, r, ull(step),
                ull(count), ull(first), want, ull(s->offset));
        return first != s->offset ? ERR_PROTO_FIELD : ERR_PROTO_SIZE;
    }
    if (!isfinite(meta->loss) || (r == 1 && (meta->examples != 0 || meta->loss != 0.0))) {
        err_say(err, "worker %u: PowerSGD round %d for step %llu: %s", (unsigned)rank, r,
                ull(step), r == 1 ? "round 1 carries no count and no loss"
                : "a non-finite loss");
        return r == 1 ? ERR_PROTO_FIELD : ERR_NONFINITE;
    }
    if (s->batch && meta->examples > s->count_max) {
        err_say(err, "worker %u: push for step %llu counts %llu examples, more than the "
                "whole batch %llu; the step fails, weights untouched", (unsigned)rank,
                ull(step), ull(meta->examples), ull(s->count_max));
        return store__fail(s, ERR_PROTO_FIELD, err);
    }
    w->phase = STORE_W_RECEIVING;
    w->examples += meta->examples;
    w->loss += meta->loss;
    w->first = 0;
    w->count = (size_t)count;
    w->next = 0;
    w->have = 0;
    return 0;
}

int store__psgd_data(struct store *s, struct store_worker *w, uint32_t rank,
                     const void *bytes, size_t nbytes, char *err)
{
    size_t left = w->count * s->elem_size - w->have;

    if (nbytes > left) {
        err_say(err, "worker %u: PowerSGD push for step %llu has %zu bytes left, got %zu more",
                (unsigned)rank, ull(s->step), left, nbytes);
        return ERR_PROTO_SIZE;
    }
    memcpy(s->frames + (size_t)rank * s->frame_max + w->have, bytes, nbytes);
    w->have += nbytes;
    return 0;
}

int store__psgd_end(struct store *s, struct store_worker *w, uint32_t rank, char *err)
{
    int r = (int)w->pushes, rc;

    rc = psgd_server_put(s->psgd, rank, s->step, r, s->frames + (size_t)rank * s->frame_max,
                         w->have, err);
    if (rc != 0) {              /* refused whole: the push never happened */
        if (r == 0) {           /* round 0 is the step's first push: its count goes */
            w->examples = 0;
            w->loss = 0.0;
        }
        w->phase = STORE_W_WAITING;
        w->have = 0;
        return rc;
    }
    s->payload_in += w->have;
    w->have = 0;
    w->next = w->count;
    w->pushes++;
    if (r == 0) {
        w->phase = STORE_W_WAITING;
        return 0;
    }
    w->phase = STORE_W_DONE;
    s->done++;
    return 0;
}

int store_psgd_reply(struct store *s, const void **sum, size_t *count, int *round, char *err)
{
    int r, rc;

    if (!s->psgd || s->fail_code || !psgd_server_ready(s->psgd))
        return 0;
    r = s->psgd->round;
    if ((rc = psgd_server_sum(s->psgd, sum, err)) != 0)
        return store__fail(s, rc, err);
    *count = psgd_server_frame_bytes(s->psgd, r) / s->elem_size;
    *round = r;
    if (r == 1) {
        if ((rc = psgd_server_decode(s->psgd, s->acc, err)) != 0)
            return store__fail(s, rc, err);
        s->psgd_decoded = 1;
    }
    return 1;
}
