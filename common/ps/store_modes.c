/* store_modes.c -- the store's mechanics for the modes other than sync
 * (store.h, PER-WORKER BUFFERS; the policies are mode.c's): one update
 * from the complete pushes of some workers (async: one; backup: the first
 * K - N), a late push dropped, and each worker's clock. The sync barrier
 * and the streaming of every push into its buffer are store.c's; the two
 * files share the helpers of store_int.h.
 */
#include "store.h"
#include "store_int.h"

#include <assert.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "train/optim.h"

/* taken: the checks store_apply_some and store_drop share: worker r's
 * push may be used. 0 or a refusal in err. */
static int taken(const struct store *s, uint32_t r, const char *what, char *err)
{
    int rc;

    if (!s->per_worker) {
        err_say(err, "step %llu: %s on a store without per-worker buffers", ull(s->step),
            what);
        return ERR_PROTO_FIELD;
    }
    if ((rc = store__rank_in(s, r, what, "at version", s->step, err)) != 0)
        return rc;
    if (s->workers[r].phase != STORE_W_DONE) {
        err_say(err, "worker %u: %s of its push for step %llu, which is not complete",
            (unsigned)r, what, ull(s->workers[r].clock));
        return ERR_PROTO_FIELD;
    }
    return 0;
}

/* reset_worker: rank r's push is used or dropped: its buffer zeroed, its
 * state WAITING, its clock on. */
static void reset_worker(struct store *s, uint32_t r)
{
    struct store_worker *w = &s->workers[r];
    uint64_t clock = w->clock;

    vec_zero(store__sum_of(s, w), s->n, s->dtype);
    memset(w, 0, sizeof *w);
    w->clock = clock + 1;
    s->done--;
}

int store_apply_some(struct store *s, const uint32_t *ranks, uint32_t m,
                     struct store_applied *out, char *err)
{
    uint64_t batch = 0, divisor;
    double loss = 0.0;
    const unsigned char *g;
    size_t bad;
    int rc;

    if (s->fail_code)
        return store__failed_again(s, PROTO_RANK_SERVER, err);
    if (m == 0 || m > s->world) {
        err_say(err, "version %llu: an update from %u pushes (1 .. K = %u)", ull(s->step),
            (unsigned)m, (unsigned)s->world);
        return ERR_PROTO_FIELD;
    }
    for (uint32_t i = 0; i < m; i++) {
        if ((rc = taken(s, ranks[i], "apply", err)) != 0)
            return rc;
        for (uint32_t j = 0; j < i; j++)
            if (ranks[j] == ranks[i]) {
                err_say(err, "worker %u: its push used twice in one update (version %llu)",
                    (unsigned)ranks[i], ull(s->step));
                return ERR_PROTO_FIELD;
            }
        if (s->workers[ranks[i]].examples > UINT64_MAX - batch) {
            err_say(err, "worker %u: version %llu: example counts overflow",
                (unsigned)ranks[i], ull(s->step));
            return ERR_PROTO_FIELD;
        }
        batch += s->workers[ranks[i]].examples;
        loss += s->workers[ranks[i]].loss;
    }
    if (batch == 0) {
        err_say(err, "worker %u: version %llu: the %u pushes used count 0 examples",
            (unsigned)ranks[0], ull(s->step), (unsigned)m);
        return ERR_PROTO_FIELD;
    }
    /* In the given order: 0 + g0 is g0 exactly, so m = 1 needs no copy. */
    if (m == 1) {
        g = store__sum_of(s, &s->workers[ranks[0]]);
    } else {
        vec_zero(s->acc, s->n, s->dtype);
        for (uint32_t i = 0; i < m; i++)
            vec_add(s->acc, store__sum_of(s, &s->workers[ranks[i]]), s->n, s->dtype);
        g = s->acc;
    }
    if (vec_check_finite(g, s->n, s->dtype, &bad) != 0) {
        err_say(err, "version %llu: the summed gradient overflowed at element %llu; "
            "the run fails, weights untouched", ull(s->step), ull(s->offset + bad));
        return store__fail(s, ERR_NONFINITE, err);
    }
    divisor = s->divide_by_one ? 1 : batch;
    rc = optim_update(&s->opt, s->step + 1, s->weights, g, s->n, 0, divisor);
    assert(rc == 0 || rc == ERR_NONFINITE);    /* the optimizer checked at init, divisor > 0 */
    if (rc != 0) {
        err_say(err, "version %llu: the update made a weight NaN or Inf; the run fails",
            ull(s->step));
        return store__fail(s, ERR_NONFINITE, err);
    }
    if (out) {
        out->step = s->step;
        out->batch = batch;
        out->loss = loss / (double)batch;
        out->divisor = divisor;
    }
    for (uint32_t i = 0; i < m; i++)
        reset_worker(s, ranks[i]);
    s->step++;
    return 0;
}

int store_drop(struct store *s, uint32_t rank, char *err)
{
    int rc;

    if (s->fail_code)
        return store__failed_again(s, rank, err);
    if ((rc = taken(s, rank, "drop", err)) != 0)
        return rc;
    reset_worker(s, rank);
    return 0;
}

uint64_t store_clock(const struct store *s, uint32_t rank)
{
    if (rank >= s->world)
        return 0;
    return s->per_worker ? s->workers[rank].clock : s->step;
}
