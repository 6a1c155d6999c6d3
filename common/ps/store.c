/* store.c -- in-place summation of streamed pushes and the step barrier
 * (see store.h for the contract and the state machine).
 *
 * Payload bytes arrive at any alignment and may end inside an element, so
 * every piece is walked in three parts: the carried start of a split
 * element completed from the piece's first bytes, then whole elements,
 * then a trailing partial element saved in the worker's part[]. Whole
 * elements are copied through a small aligned buffer on the stack before
 * they are checked or added: casting the network buffer to double * would
 * be undefined behaviour (and trap under UBSan) when it is misaligned, and
 * the copy costs far less than the bytes' trip through the kernel.
 *
 * A piece is walked twice: first only to check that every complete element
 * in it is finite, then to add. So a piece with a NaN adds nothing of
 * itself; the store still FAILS, because earlier pieces of the same push
 * are already in the accumulator and cannot be taken out exactly.
 *
 * A release (store.h, RELEASE) writes the new weights over the released
 * part of the accumulator: the old weights are staged on the stack, updated
 * there by optim_apply itself (so the arithmetic is the one update of
 * optim.h, bit for bit, whatever the cuts) and copied into the accumulator.
 * The weights buffer is never written during a step; the step's last
 * release swaps the two buffers.
 *
 * The modes' own calls (store_apply_some, store_drop, store_clock: PER-WORKER
 * BUFFERS) are store_modes.c's; the helpers both files use, store_int.h's.
 */
#include "store.h"
#include "store_int.h"
#include "psgd_server.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/mem.h"
#include "train/optim.h"
#include "base/vec.h"

/* Elements staged per vec_add/vec_check_finite call: 2 KiB of stack. */
#define STAGE_BYTES 2048

int store__fail(struct store *s, int code, const char *err)
{
    assert(code < 0 && s->fail_code == 0);
    s->fail_code = code;
    snprintf(s->fail_msg, sizeof s->fail_msg, "%s", err);
    return code;
}

int store__failed_again(const struct store *s, uint32_t rank, char *err)
{
    if (rank == PROTO_RANK_SERVER)      /* not about one worker: store_apply */
        err_say(err, "step %llu already failed: %s", ull(s->step), s->fail_msg);
    else
        err_say(err, "worker %u: step %llu already failed: %s", (unsigned)rank,
            ull(s->step), s->fail_msg);
    return s->fail_code;
}

int store__rank_in(const struct store *s, uint32_t rank, const char *what, const char *at,
                   uint64_t step, char *err)
{
    if (rank < s->world)
        return 0;
    err_say(err, "worker %u: %s %s %llu refused: rank not below K = %u", (unsigned)rank, what,
        at, ull(step), (unsigned)s->world);
    return ERR_PROTO_RANK;
}

int store_init(struct store *s, const struct store_cfg *cfg, char *err)
{
    size_t es = dtype_size(cfg->dtype);
    int rc = 0;

    memset(s, 0, sizeof *s);
    if (cfg->n == 0 || es == 0 || cfg->world == 0 || cfg->world > PROTO_MAX_WORLD ||
        !isfinite(cfg->lr) || cfg->n > SIZE_MAX / es ||
        cfg->offset > UINT64_MAX - cfg->n || cfg->pushes_per_step > STORE_MAX_PUSHES ||
        (cfg->per_worker && cfg->n > SIZE_MAX / es / cfg->world)) {
        err_say(err, "store: bad configuration (n %zu, offset %llu, dtype %d, K %u, lr %g, "
            "%u pushes per step)", cfg->n, ull(cfg->offset), cfg->dtype,
            (unsigned)cfg->world, cfg->lr, (unsigned)cfg->pushes_per_step);
        return ERR_USAGE;
    }
    s->n = cfg->n;
    s->elem_size = es;
    s->comp = compress_get(cfg->compress);
    if (!s->comp) {
        err_say(err, "store: compress %d is not one", cfg->compress);
        return ERR_USAGE;
    }
    if (COMPRESS_KIND(cfg->compress) == COMPRESS_POWERSGD)
        s->comp = compress_get(COMPRESS_NONE);  /* POWERSGD PUSHES: frames of the dtype */
    s->push_es = compress_wire_size(s->comp, cfg->dtype);
    s->offset = cfg->offset;
    s->dtype = cfg->dtype;
    s->world = cfg->world;
    s->lr = cfg->lr;
    s->per_step = cfg->pushes_per_step > 1 ? cfg->pushes_per_step : 1;
    s->divide_by_one = cfg->divide_by_one != 0;
    s->average = cfg->average != 0;
    s->batch = cfg->batch;
    s->count_max = cfg->count_max ? cfg->count_max : cfg->batch;
    s->batch_what = cfg->batch_what ? cfg->batch_what : "B";
    /* calloc: the accumulator must start at +0, and so do weights when
     * none are given. */
    s->weights = calloc(cfg->n, es);
    s->acc = calloc(cfg->n, es);
    s->workers = calloc(cfg->world, sizeof *s->workers);
    s->per_worker = cfg->per_worker != 0;
    s->sizes_only = cfg->sizes_only != 0;
    if (s->per_worker)
        s->grads = calloc((size_t)cfg->world * cfg->n, es);
    if (!s->weights || !s->acc || !s->workers || (s->per_worker && !s->grads)) {
        store_destroy(s);
        err_say(err, "store: out of memory for %zu elements and %u workers",
            cfg->n, (unsigned)cfg->world);
        return -ENOMEM;
    }
    if ((s->comp->frame && store__frame_init(s, cfg->compress, err) != 0) ||
        (rc = store__psgd_init(s, cfg, err)) != 0) {
        store_destroy(s);
        return rc ? rc : -ENOMEM;
    }
    if (cfg->weights)
        memcpy(s->weights, cfg->weights, cfg->n * es);
    /* The server holds the optimizer state of the elements it owns: a
     * parameter server shards the optimizer by construction (ZeRO-1's
     * idea, docs/design.md). */
    {
        struct optim_cfg oc = { OPTIM_SGD, cfg->lr, OPTIM_DEFAULT_MOMENTUM, OPTIM_DEFAULT_BETA1,
                                OPTIM_DEFAULT_BETA2, OPTIM_DEFAULT_EPS };
        rc = optim_init(&s->opt, cfg->optim ? cfg->optim : &oc, cfg->dtype, cfg->n, err);
        if (rc != 0) {
            store_destroy(s);
            return rc;
        }
    }
    return 0;
}

void store_destroy(struct store *s)
{
    optim_destroy(&s->opt);
    MEM_FREE(s->weights);
    MEM_FREE(s->acc);
    MEM_FREE(s->workers);
    MEM_FREE(s->grads);
    MEM_FREE(s->frames);
    store__psgd_destroy(s);
}

int store_push_begin(struct store *s, uint32_t rank, uint64_t step,
                     const struct proto_push_meta *meta, uint64_t first,
                     uint64_t count, char *err)
{
    struct store_worker *w;
    int rc;

    if (s->fail_code)
        return store__failed_again(s, rank, err);
    if ((rc = store__rank_in(s, rank, "push", "for step", step, err)) != 0)
        return rc;
    w = &s->workers[rank];
    if (s->psgd)
        return store__psgd_begin(s, w, rank, step, meta, first, count, err);
    if (s->per_worker && step != w->clock) {
        err_say(err, "worker %u: push for step %llu while its next step is %llu (%s)",
            (unsigned)rank, ull(step), ull(w->clock),
            step < w->clock ? "stale or duplicate" : "future");
        return ERR_PROTO_FIELD;
    }
    if (!s->per_worker && step != s->step) {
        err_say(err, "worker %u: push for step %llu while the server is at step %llu (%s)",
            (unsigned)rank, ull(step), ull(s->step), step < s->step ? "stale" : "future");
        return ERR_PROTO_FIELD;
    }
    if (w->phase != STORE_W_WAITING) {
        if (s->per_step == 1)
            err_say(err, "worker %u: second push for step %llu (duplicate%s)", (unsigned)rank,
                ull(step), w->phase == STORE_W_RECEIVING ? ", the first still arriving" : "");
        else
            err_say(err, "worker %u: push %u for step %llu, which takes %u per worker "
                "(duplicate%s)", (unsigned)rank, (unsigned)w->pushes + 1 +
                (w->phase == STORE_W_RECEIVING), ull(step), (unsigned)s->per_step,
                w->phase == STORE_W_RECEIVING ? ", the one before still arriving" : "");
        return ERR_PROTO_FIELD;
    }
    if (first < s->offset || first - s->offset >= s->n || count == 0 ||
        count > s->n - (first - s->offset)) {
        err_say(err, "worker %u: push for step %llu carries elements [%llu, %llu), "
            "this server owns [%llu, %llu)", (unsigned)rank, ull(step), ull(first),
            ull(first + count), ull(s->offset), ull(s->offset + s->n));
        return first < s->offset || first - s->offset >= s->n ? ERR_PROTO_FIELD
                                                              : ERR_PROTO_SIZE;
    }
    if (first - s->offset + count != s->n - w->pass_done) {
        err_say(err, "worker %u: push for step %llu carries elements [%llu, %llu); its next "
            "push must end at element %llu (a pass goes from the last element down, each "
            "push ending where the one before began)", (unsigned)rank, ull(step), ull(first),
            ull(first + count), ull(s->offset + s->n - w->pass_done));
        return first == s->offset ? ERR_PROTO_SIZE : ERR_PROTO_FIELD;
    }
    if (!isfinite(meta->loss)) {
        err_say(err, "worker %u: push for step %llu has a non-finite loss (%g)",
            (unsigned)rank, ull(step), meta->loss);
        return ERR_NONFINITE;
    }
    if (meta->examples != 0 && w->pass_done != 0) {
        err_say(err, "worker %u: push for step %llu counts %llu examples but is not the first "
            "push of its pass (the count travels with the push that ends at element %llu)",
            (unsigned)rank, ull(step), ull(meta->examples), ull(s->offset + s->n));
        return ERR_PROTO_FIELD;
    }
    if (meta->examples > UINT64_MAX - w->examples) {
        err_say(err, "worker %u: push %u for step %llu: example counts overflow",
            (unsigned)rank, (unsigned)w->pushes + 1, ull(step));
        return ERR_PROTO_FIELD;
    }
    if (s->batch && w->examples + meta->examples > s->count_max) {
        err_say(err, "worker %u: push for step %llu counts %llu examples%s, more than %s "
            "%llu; the step fails, weights untouched", (unsigned)rank, ull(step),
            ull(meta->examples), w->examples ? " on top of earlier pushes" : "",
            s->count_max == s->batch ? "the whole batch" : "a worker may count,",
            ull(s->count_max));
        return store__fail(s, ERR_PROTO_FIELD, err);
    }
    w->phase = STORE_W_RECEIVING;
    w->examples += meta->examples;     /* 0 at the step's first push */
    w->loss += meta->loss;
    w->first = (size_t)(first - s->offset);
    w->count = (size_t)count;
    w->next = 0;
    w->part_len = 0;
    w->have = 0;
    return 0;
}

/* receiving: the worker of a call that must be inside a push, or NULL with
 * the refusal in err and *rc. */
static struct store_worker *receiving(struct store *s, uint32_t rank, const char *what,
                                      char *err, int *rc)
{
    if (s->fail_code) {
        *rc = store__failed_again(s, rank, err);
        return NULL;
    }
    if ((*rc = store__rank_in(s, rank, what, "at step", s->step, err)) != 0)
        return NULL;
    if (s->workers[rank].phase != STORE_W_RECEIVING) {
        err_say(err, "worker %u: %s at step %llu outside a push", (unsigned)rank, what,
            ull(s->step));
        *rc = ERR_PROTO_FIELD;
        return NULL;
    }
    return &s->workers[rank];
}

unsigned char *store__sum_of(const struct store *s, const struct store_worker *w)
{
    if (!s->per_worker)
        return s->acc;
    return (unsigned char *)s->grads + (size_t)(w - s->workers) * s->n * s->elem_size;
}

/* stage: check (add == 0) or add (add == 1) cnt whole elements, aligned in
 * buf, that are elements [at, at + cnt) of the push, into `into`. A check
 * returns ERR_NONFINITE and the bad element in *bad. */
static int stage(struct store *s, unsigned char *into, const void *buf, size_t at, size_t cnt,
                 int add, size_t *bad)
{
    size_t i;

    if (add) {
        vec_add(into + at * s->elem_size, buf, cnt, s->dtype);
        return 0;
    }
    if (vec_check_finite(buf, cnt, s->dtype, &i) != 0) {
        *bad = at + i;
        return ERR_NONFINITE;
    }
    return 0;
}

/* walk: one pass over a piece (see the opening comment). Only the adding
 * pass changes the worker's state. */
static int walk(struct store *s, struct store_worker *w, const unsigned char *p,
                size_t len, int add, size_t *bad)
{
    double buf[STAGE_BYTES / sizeof(double)];   /* double: aligned for both dtypes */
    const size_t es = s->push_es, per = sizeof buf / s->elem_size;
    size_t at = w->first + w->next;     /* into the accumulator */
    unsigned char *into = store__sum_of(s, w);
    int rc;

    if (w->part_len > 0) {
        size_t need = es - w->part_len;

        if (len < need) {               /* still not a whole element */
            if (add) {
                memcpy(w->part + w->part_len, p, len);
                w->part_len += len;
            }
            return 0;
        }
        unsigned char el[sizeof w->part];
        memcpy(el, w->part, w->part_len);
        memcpy(el + w->part_len, p, need);
        s->comp->decode(buf, el, 1, s->dtype);
        if ((rc = stage(s, into, buf, at, 1, add, bad)) != 0)
            return rc;
        at++;
        p += need;
        len -= need;
    }
    while (len >= es) {
        size_t cnt = len / es < per ? len / es : per;

        s->comp->decode(buf, p, cnt, s->dtype);     /* "none": a copy */
        if ((rc = stage(s, into, buf, at, cnt, add, bad)) != 0)
            return rc;
        at += cnt;
        p += cnt * es;
        len -= cnt * es;
    }
    if (add) {
        memcpy(w->part, p, len);        /* len < es: the start of the next one */
        w->part_len = len;
        w->next = at - w->first;
    }
    return 0;
}

int store_push_data(struct store *s, uint32_t rank, const void *bytes,
                    size_t nbytes, char *err)
{
    struct store_worker *w;
    size_t left, bad = 0;
    int rc = 0;

    if (!(w = receiving(s, rank, "push data", err, &rc)))
        return rc;
    if (s->comp->frame)
        return store__frame_data(s, w, rank, bytes, nbytes, err);
    if (s->psgd)
        return store__psgd_data(s, w, rank, bytes, nbytes, err);
    left = (w->count - w->next) * s->push_es - w->part_len;
    if (nbytes > left) {
        err_say(err, "worker %u: push for step %llu has %zu bytes left, got %zu more",
            (unsigned)rank, ull(s->step), left, nbytes);
        return ERR_PROTO_SIZE;
    }
    if (s->sizes_only) {                /* counted, not read */
        w->next += (w->part_len + nbytes) / s->push_es;
        w->part_len = (w->part_len + nbytes) % s->push_es;
        return 0;
    }
    if (walk(s, w, bytes, nbytes, 0, &bad) != 0) {
        err_say(err, "worker %u: push for step %llu: gradient element %llu is not finite; "
            "the step fails, weights untouched", (unsigned)rank, ull(s->step),
            ull(s->offset + bad));
        return store__fail(s, ERR_NONFINITE, err);
    }
    rc = walk(s, w, bytes, nbytes, 1, &bad);
    assert(rc == 0);
    return 0;
}

int store_push_end(struct store *s, uint32_t rank, char *err)
{
    struct store_worker *w;
    int rc = 0;

    if (!(w = receiving(s, rank, "push end", err, &rc)))
        return rc;
    if (s->psgd)
        return store__psgd_end(s, w, rank, err);
    if (s->comp->frame && (rc = store__frame_end(s, w, rank, err)) != 0)
        return rc;
    if (w->next != w->count) {
        size_t have = w->next * s->push_es + w->part_len;

        err_say(err, "worker %u: push for step %llu ended after %zu of %zu bytes",
            (unsigned)rank, ull(s->step), have, w->count * s->push_es);
        return ERR_PROTO_SIZE;
    }
    assert(w->part_len == 0);
    s->payload_in += s->comp->frame ? s->frame_max : (uint64_t)w->count * s->push_es;
    w->pass_done += w->count;
    if (w->pass_done < s->n) {
        w->phase = STORE_W_WAITING;     /* the next, lower, part of the pass */
        return 0;
    }
    w->pass_done = 0;
    w->pushes++;
    if (w->pushes < s->per_step) {
        w->phase = STORE_W_WAITING;     /* its next push of the same step */
        return 0;
    }
    w->phase = STORE_W_DONE;
    s->done++;
    assert(s->done <= s->world);
    return 0;
}

int store_push_abort(struct store *s, uint32_t rank, char *err)
{
    const struct store_worker *w;

    if (s->fail_code)
        return store__failed_again(s, rank, err);
    w = rank < s->world ? &s->workers[rank] : NULL;
    if (w && w->phase == STORE_W_RECEIVING)
        err_say(err, "worker %u: push for step %llu cut off after %zu of %zu bytes; "
            "the step fails, weights untouched", (unsigned)rank, ull(s->step),
            w->next * s->push_es + w->part_len, w->count * s->push_es);
    else
        err_say(err, "worker %u: lost during step %llu; the step fails, weights untouched",
            (unsigned)rank, ull(s->step));
    return store__fail(s, ERR_EOF, err);
}

int store_step_ready(const struct store *s)
{
    return s->fail_code == 0 && s->done == s->world;
}

/* releasable: how far down every worker's last pass of the step has come
 * (store.h, RELEASE): top = min over workers of top_r. */
static size_t releasable(const struct store *s)
{
    size_t top = s->psgd && !s->psgd_decoded ? 0 : s->n;   /* POWERSGD: whole, decoded */

    for (uint32_t r = 0; r < s->world && top > 0; r++) {
        const struct store_worker *w = &s->workers[r];
        size_t t = w->phase == STORE_W_DONE ? s->n
                 : w->pushes + 1 == s->per_step ? w->pass_done : 0;
        if (t < top)
            top = t;
    }
    return top;
}

/* count_step: the step's counts and losses, summed and checked (COUNTS);
 * at the first release. 0, or the store FAILED. */
static int count_step(struct store *s, char *err)
{
    uint64_t batch = 0;
    double loss = 0.0;

    for (uint32_t r = 0; r < s->world; r++) {
        if (s->workers[r].examples > UINT64_MAX - batch) {
            err_say(err, "worker %u: step %llu: example counts overflow", (unsigned)r,
                ull(s->step));
            return store__fail(s, ERR_PROTO_FIELD, err);
        }
        batch += s->workers[r].examples;
        loss += s->workers[r].loss;
    }
    if (s->batch && batch != s->batch) {
        char who[160];
        size_t o = 0;
        for (uint32_t r = 0; r < s->world && o < sizeof who; r++) {
            int k = snprintf(who + o, sizeof who - o, "%sworker %u: %llu", r ? ", " : "",
                             (unsigned)r, ull(s->workers[r].examples));
            if (k < 0 || (size_t)k >= sizeof who - o) {
                memcpy(who + sizeof who - 4, "...", 4);     /* cut: say so */
                break;
            }
            o += (size_t)k;
        }
        err_say(err, "step %llu: the example counts sum to %llu, not %s = %llu (%s); "
            "the step fails, weights untouched", ull(s->step), ull(batch), s->batch_what,
            ull(s->batch), who);
        return store__fail(s, ERR_PROTO_FIELD, err);
    }
    if (batch == 0) {
        err_say(err, "step %llu: all %u workers pushed 0 examples (B = 0); the step fails",
            ull(s->step), (unsigned)s->world);
        return store__fail(s, ERR_PROTO_FIELD, err);
    }
    s->rel_batch = batch;
    s->rel_loss = loss;
    return 0;
}

/* update_range: acc[at, at + cnt) <- the optimizer's update of w with the
 * gradient sum acc / divisor, through a staged copy of w (the one update
 * rule, optim.h). The server holds the optimizer state of its range: entry
 * `at` is element at's; each element is updated once a step, so the
 * step's scalars (optim_scalars: the bias corrections' pow) are made once
 * here, not per staged piece. Each new weight is checked finite while it is
 * staged, before it reaches acc: ERR_NONFINITE and the element in *bad. */
static int update_range(struct store *s, size_t at, size_t cnt, uint64_t divisor, size_t *bad)
{
    double buf[STAGE_BYTES / sizeof(double)];
    const size_t es = s->elem_size, per = sizeof buf / es;
    unsigned char *acc = s->acc;
    const unsigned char *w = s->weights;
    struct optim_coef k;

    assert(divisor > 0 && at + cnt <= s->n);
    optim_scalars(&s->opt.cfg, s->step + 1, &k);
    s->opt.t = s->step + 1;
    while (cnt > 0) {
        size_t c = cnt < per ? cnt : per;

        memcpy(buf, w + at * es, c * es);
        if (s->average)         /* LOCAL SGD: the mean of the deltas added */
            for (size_t i = 0; i < c; i++)
                vec_set(buf, i, s->dtype, vec_get(buf, i, s->dtype) +
                        vec_get(acc + at * es, i, s->dtype) / (double)divisor);
        else
            optim_apply(&k, s->dtype, buf, acc + at * es, optim_state(&s->opt, 0, at),
                        optim_state(&s->opt, 1, at), c, divisor);
        if (vec_check_finite(buf, c, s->dtype, bad) != 0) {
            *bad += at;
            return ERR_NONFINITE;
        }
        memcpy(acc + at * es, buf, c * es);
        at += c;
        cnt -= c;
    }
    return 0;
}

/* summed: the checks store_release and store_apply share (what names the
 * call): the store has not failed, and sums into one accumulator. 0, or
 * the refusal in err. */
static int summed(const struct store *s, const char *what, char *err)
{
    if (s->fail_code)
        return store__failed_again(s, PROTO_RANK_SERVER, err);
    if (s->per_worker) {
        err_say(err, "step %llu: %s on a store with per-worker buffers "
            "(store_apply_some applies there)", ull(s->step), what);
        return ERR_PROTO_FIELD;
    }
    return 0;
}

int store_release(struct store *s, struct store_released *out, char *err)
{
    size_t top, lo, bad;
    uint64_t divisor;
    void *t;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = summed(s, "store_release", err)) != 0)
        return rc;
    out->step = s->step;
    top = releasable(s);
    if (top <= s->released)
        return 0;
    if (s->released == 0 && count_step(s, err) != 0)
        return s->fail_code;
    lo = s->n - top;
    /* Each element was finite, but K of them can sum past the largest
     * finite value. */
    if (!s->sizes_only && vec_check_finite((unsigned char *)s->acc + lo * s->elem_size, top - s->released,
                         s->dtype, &bad) != 0) {
        err_say(err, "step %llu: the summed gradient overflowed at element %llu; "
            "the step fails, weights untouched", ull(s->step), ull(s->offset + lo + bad));
        return store__fail(s, ERR_NONFINITE, err);
    }
    divisor = s->average ? s->world : s->divide_by_one ? 1 : s->rel_batch;
    if (!s->sizes_only && update_range(s, lo, top - s->released, divisor, &bad) != 0) {
        err_say(err, "step %llu: the update made weight element %llu NaN or Inf; "
            "the step fails, weights untouched", ull(s->step), ull(s->offset + bad));
        return store__fail(s, ERR_NONFINITE, err);
    }
    out->first = s->offset + lo;
    out->count = top - s->released;
    out->top = top;
    out->weights = s->acc;
    out->batch = s->rel_batch;
    out->loss = s->rel_loss / (double)s->rel_batch;
    out->divisor = divisor;
    s->released = top;
    if (top < s->n)
        return 0;
    /* The step is complete: its new weights become the weights. */
    out->last = 1;
    t = s->weights;
    s->weights = s->acc;
    s->acc = t;
    if (!s->sizes_only)
        vec_zero(s->acc, s->n, s->dtype);
    memset(s->workers, 0, s->world * sizeof *s->workers);   /* all WAITING */
    s->done = 0;
    s->released = 0;
    s->psgd_decoded = 0;
    s->step++;
    return 0;
}

int store_apply(struct store *s, struct store_applied *out, char *err)
{
    struct store_released rel;
    int rc;

    if ((rc = summed(s, "store_apply", err)) != 0)
        return rc;
    if (s->done != s->world) {
        uint32_t r = 0;

        while (s->workers[r].phase == STORE_W_DONE)
            r++;
        err_say(err, "worker %u: step %llu cannot be applied yet: %u of %u pushes complete",
            (unsigned)r, ull(s->step), (unsigned)s->done, (unsigned)s->world);
        return -EAGAIN;
    }
    if ((rc = store_release(s, &rel, err)) != 0)
        return rc;
    assert(rel.last);       /* all K done: the rest is releasable */
    if (out) {
        out->step = rel.step;
        out->batch = rel.batch;
        out->loss = rel.loss;
        out->divisor = rel.divisor;
    }
    return 0;
}

const void *store_weights(const struct store *s)
{
    return s->weights;
}

uint64_t store_step(const struct store *s)
{
    return s->step;
}

uint32_t store_pushes_done(const struct store *s)
{
    return s->done;
}

uint32_t store_pushes_owed(const struct store *s, uint32_t rank)
{
    if (rank >= s->world || s->workers[rank].phase == STORE_W_DONE)
        return 0;
    return s->per_step - s->workers[rank].pushes;
}

size_t store_pass_left(const struct store *s, uint32_t rank)
{
    if (rank >= s->world || s->workers[rank].phase == STORE_W_DONE)
        return 0;
    return s->n - s->workers[rank].pass_done;
}

uint64_t store_payload_in(const struct store *s)
{
    return s->payload_in;
}

int store_failed(const struct store *s, const char **msg)
{
    if (msg)
        *msg = s->fail_msg;
    return s->fail_code;
}

size_t store_bytes(const struct store *s)
{
    return sizeof *s + (2 + (s->per_worker ? (size_t)s->world : 0)) * s->n * s->elem_size +
           s->world * sizeof *s->workers;
}

int store_resume(struct store *s, uint64_t step, const void *weights)
{
    memcpy(s->weights, weights, s->n * s->elem_size);
    vec_zero(s->acc, s->n, s->dtype);
    memset(s->workers, 0, s->world * sizeof *s->workers);   /* all WAITING */
    for (uint32_t r = 0; r < s->world; r++)
        s->workers[r].clock = step;
    if (s->per_worker)
        vec_zero(s->grads, (size_t)s->world * s->n, s->dtype);
    s->done = 0;
    s->released = 0;        /* a part released before the rollback is void */
    s->fail_code = 0;
    s->fail_msg[0] = '\0';
    s->step = step;
    s->psgd_decoded = 0;
    if (s->psgd)
        psgd_server_reset(s->psgd, step);
    return 0;
}
