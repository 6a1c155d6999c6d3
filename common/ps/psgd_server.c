/* psgd_server.c -- PowerSGD's two rounds at the parameter server
 * (psgd_server.h): each worker's frame checked whole and kept in its
 * slot, the K frames summed in rank order, P orthonormalized and P^ Q^T
 * decoded by base/powersgd.c's own code, the one every worker runs.
 */
#include "psgd_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

/* Round 2: both sums taken, the decode not yet. */
#define ROUND_DECODE 2

int psgd_server_plan(struct psgd *ps, const struct workload *w, int setting, int dtype, int ef,
                     uint64_t seed, char *err)
{
    struct psgd_mat *m;
    int rc;

    /* The layers' table as coll_psgd_init takes it (the ring's and rd's),
     * so that every psgd of the job agrees on every shape. */
    if (!(m = calloc(w->nlayers ? w->nlayers : 1, sizeof *m))) {
        err_say(err, "--compress %s: out of memory for the layers' table",
                compress_name(setting));
        return -ENOMEM;
    }
    for (size_t l = 0; l < w->nlayers; l++)
        if (!workload_matrix(w, l, &m[l].first, &m[l].rows, &m[l].cols))
            psgd_near_square(m[l].rows, &m[l].rows, &m[l].cols);
    rc = psgd_init(ps, w->n, 0, dtype, m, w->nlayers, COMPRESS_PSGD_RANK(setting), ef, seed);
    free(m);
    if (rc != 0)
        err_say(err, "--compress %s: %s", compress_name(setting),
                rc == -ENOMEM ? "out of memory for its state" : "a bad layer table or rank");
    return rc;
}

int psgd_server_init(struct psgd_server *s, const struct workload *w, size_t first, size_t count,
                     int setting, int dtype, uint32_t world, char *err)
{
    size_t big;
    int rc;

    memset(s, 0, sizeof *s);
    if (COMPRESS_KIND(setting) != COMPRESS_POWERSGD || !compress_get(setting) || world == 0 ||
        count == 0 || first > w->n || count > w->n - first) {
        err_say(err, "PowerSGD at the server: setting %#x, range [%zu, +%zu) of %zu, K %u "
                "refused", (unsigned)setting, first, count, w->n, (unsigned)world);
        return ERR_USAGE;
    }
    if ((rc = psgd_server_plan(&s->st, w, setting, dtype, 0, 0, err)) != 0)
        return rc;
    s->first = first;
    s->count = count;
    s->dtype = dtype;
    s->es = dtype_size(dtype);
    s->world = world;
    s->len[0] = psgd_round_len(&s->st, first, count, 0);
    s->len[1] = psgd_round_len(&s->st, first, count, 1);
    big = s->len[0] > s->len[1] ? s->len[0] : s->len[1];
    s->slots = malloc((size_t)world * (big ? big : 1) * s->es);
    s->have = calloc(world, 1);
    s->g = malloc(w->n * s->es);
    if (!s->slots || !s->have || !s->g) {
        psgd_server_destroy(s);
        err_say(err, "PowerSGD at the server: out of memory for %u frames of %zu elements",
                (unsigned)world, big);
        return -ENOMEM;
    }
    return 0;
}

void psgd_server_destroy(struct psgd_server *s)
{
    psgd_destroy(&s->st);
    free(s->slots);
    free(s->have);
    free(s->g);
    memset(s, 0, sizeof *s);
}

void psgd_server_reset(struct psgd_server *s, uint64_t step)
{
    s->step = step;
    s->round = 0;
    s->in = 0;
    memset(s->have, 0, s->world);
}

size_t psgd_server_frame_bytes(const struct psgd_server *s, int r)
{
    return r == 0 || r == 1 ? s->len[r] * s->es : 0;
}

/* slot: worker rank's frame of the round being collected. */
static unsigned char *slot(const struct psgd_server *s, uint32_t rank)
{
    size_t big = s->len[0] > s->len[1] ? s->len[0] : s->len[1];
    return s->slots + (size_t)rank * big * s->es;
}

int psgd_server_put(struct psgd_server *s, uint32_t rank, uint64_t step, int r,
                    const void *frame, size_t bytes, char *err)
{
    size_t want = psgd_server_frame_bytes(s, r), bad = 0;

    if (rank >= s->world) {
        err_say(err, "worker %u: PowerSGD round %d of step %llu refused: rank not below K = %u",
                (unsigned)rank, r, ull(step), (unsigned)s->world);
        return ERR_PROTO_RANK;
    }
    if (step != s->step || r != s->round || s->have[rank]) {
        err_say(err, "worker %u: PowerSGD round %d of step %llu refused: the server collects "
                "round %d of step %llu%s", (unsigned)rank, r, ull(step), s->round, ull(s->step),
                s->have[rank] ? " and has this worker's frame" : "");
        return ERR_PROTO_FIELD;
    }
    if (bytes != want) {
        err_say(err, "worker %u: PowerSGD round %d of step %llu refused: %zu bytes, not the "
                "round's %zu", (unsigned)rank, r, ull(step), bytes, want);
        return ERR_PROTO_SIZE;
    }
    if (vec_check_finite(frame, s->len[r], s->dtype, &bad) != 0) {
        err_say(err, "worker %u: PowerSGD round %d of step %llu refused: element %zu of its "
                "frame is %g", (unsigned)rank, r, ull(step), bad,
                vec_get(frame, bad, s->dtype));
        return ERR_NONFINITE;
    }
    memcpy(slot(s, rank), frame, bytes);
    s->have[rank] = 1;
    s->in++;
    return 0;
}

int psgd_server_ready(const struct psgd_server *s)
{
    return s->round != ROUND_DECODE && s->in == s->world;
}

int psgd_server_sum(struct psgd_server *s, const void **sum, char *err)
{
    int r = s->round;
    size_t bad = 0, n = r == ROUND_DECODE ? 0 : s->len[r];
    void *acc = r == ROUND_DECODE ? NULL : s->st.round[r];

    if (!psgd_server_ready(s)) {
        err_say(err, "PowerSGD at the server: step %llu round %d summed with %u of %u frames",
                ull(s->step), r, (unsigned)s->in, (unsigned)s->world);
        return ERR_PROTO_FIELD;
    }
    memcpy(acc, slot(s, 0), n * s->es);
    for (uint32_t k = 1; k < s->world; k++)
        if (vec_add_finite(acc, slot(s, k), n, s->dtype, &bad) != 0) {
            err_say(err, "PowerSGD at the server: step %llu round %d: the sum's element %zu "
                    "is not finite (adding worker %u's); the step fails", ull(s->step), r, bad,
                    (unsigned)k);
            return ERR_NONFINITE;
        }
    if (r == 0)                 /* P^: the workers' very arithmetic (the header's note) */
        psgd_encode_q(&s->st, s->first, s->count);
    memset(s->have, 0, s->world);
    s->in = 0;
    s->round = r == 0 ? 1 : ROUND_DECODE;
    *sum = acc;
    return 0;
}

int psgd_server_decode(struct psgd_server *s, void *grad, char *err)
{
    size_t bad = 0;
    int rc;

    if (s->round != ROUND_DECODE) {
        err_say(err, "PowerSGD at the server: step %llu decoded in round %d, before both sums",
                ull(s->step), s->round);
        return ERR_PROTO_FIELD;
    }
    rc = psgd_decode(&s->st, s->g, s->first, s->count, (int)s->world, &bad);
    memcpy(grad, (unsigned char *)s->g + s->first * s->es, s->count * s->es);
    s->round = 0;
    s->step++;
    if (rc == ERR_NONFINITE)
        err_say(err, "PowerSGD at the server: step %llu: element %zu of P^ Q^T is not finite",
                ull(s->step - 1), s->first + bad);
    return rc;
}
