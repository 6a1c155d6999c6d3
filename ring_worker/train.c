/* train.c -- SGD steps over the ring (train.h says what and why).
 *
 * One step: zero the buffer, add this rank's micro-batch gradient sums
 * (mistake_grad, which also makes the micro-batch loop's mistakes),
 * write the trailer, check it is finite, all-reduce (the timed part), check
 * the count (and the closed form), sgd_step. The order of the adds inside
 * a rank is the workload's; across ranks it is the ring's, fixed, so a
 * rerun gives the same bits. sync-every-micro does the first three and
 * the all-reduce once per micro-batch and sums the results.
 */
#include "train.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dtype.h"
#include "err.h"
#include "log.h"
#include "losscurve.h"
#include "mistake.h"
#include "sgd.h"
#include "vec.h"

#define COUNT_SPLIT TRAIN_COUNT_SPLIT
#define LOSS_LOG_EVERY_S 1.0

__attribute__((format(printf, 2, 3)))
static void say(char *err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
}

int train_check(const struct cli_common *c, uint64_t batch, char *err)
{
    /* f32 holds integers exactly up to 2^24: each trailer slot's sum over
     * K ranks must stay below that. f64 (2^53) is never the limit here. */
    if (c->dtype == DTYPE_F32 && (c->world > 4096 || batch >= (1ull << 36))) {
        say(err, "--dtype f32: the example count travels in f32 and is exact only for "
            "K <= 4096 and B < 2^36 (K %d, B %llu); use --dtype f64", c->world,
            (unsigned long long)batch);
        return ERR_USAGE;
    }
    return 0;
}

int train_weights_write(const char *path, int rank, const void *w, size_t n, int dtype,
                        char *err)
{
    char name[CLI_PATH_MAX + 16];
    FILE *f;
    int rc = 0;

    snprintf(name, sizeof name, "%s.%d", path, rank);
    f = fopen(name, "w");
    if (!f) {
        rc = -errno;
        say(err, "--weights-out %s: %s", name, strerror(errno));
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.17g\n", vec_get(w, i, dtype));
    if (fclose(f) != 0) {
        rc = -errno;
        say(err, "--weights-out %s: %s", name, strerror(errno));
    }
    return rc;
}

/* Everything a run uses, allocated before its first step. */
struct bufs {
    unsigned char *weights;     /* n */
    unsigned char *g;           /* n + trailer: what is all-reduced */
    unsigned char *acc;         /* n + trailer: sync-every-micro's sum of the m results */
    unsigned char *ref;         /* n: the closed form (synthetic) */
    unsigned char *scratch;     /* n: mistake_grad's, when it needs one */
};

/* fill: this rank's contribution for step s over batch positions [lo, hi)
 * in `micro` micro-batches (mistake_grad), count and loss into the
 * trailer. */
static void fill(const struct train_cfg *cfg, struct bufs *b, int mistake, uint64_t s,
                 uint64_t lo, uint64_t hi, int micro)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    uint64_t ex;
    double loss;

    mistake_grad(mistake, w, b->weights, s, lo, hi, micro, b->g, b->scratch, &ex, &loss);
    vec_set(b->g, w->n, c->dtype, fmod((double)ex, COUNT_SPLIT));
    vec_set(b->g, w->n + 1, c->dtype, floor((double)ex / COUNT_SPLIT));
    vec_set(b->g, w->n + 2, c->dtype, loss);
}

/* reduce: b->g all-reduced, after the finite check; the time it took
 * added to *t. */
static int reduce(const struct train_cfg *cfg, struct bufs *b, int s, double *t, char *err)
{
    const struct cli_common *c = cfg->c;
    size_t n = cfg->w->n, bad;
    double t0;
    int rc;

    if (vec_check_finite(b->g, n, c->dtype, &bad) != 0) {
        say(err, "step %d: gradient element %zu is %g before the all-reduce", s, bad,
            vec_get(b->g, bad, c->dtype));
        return ERR_NONFINITE;
    }
    t0 = clock_now();
    rc = coll_allreduce(cfg->coll, b->g, n + TRAIN_TRAILER, err);
    *t += clock_now() - t0;
    if (rc != 0) {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        say(err, "step %d: %s", s, why);
    }
    return rc;
}

/* combine: step s's gradient, all-reduced: in b->g, or with
 * sync-every-micro the sum of the m micro-batch all-reduces in b->acc.
 * OUT: *sum, the buffer that holds it; *t, the time in all-reduces. */
static int combine(const struct train_cfg *cfg, struct bufs *b, int s, unsigned char **sum,
                   double *t, char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    uint64_t lo, hi, a, z;
    int rc;

    *t = 0.0;
    workload_split(w->batch, c->world, c->rank, c->shard_weights, &lo, &hi);
    if (cfg->mistake != MISTAKE_SYNC_EVERY_MICRO) {
        fill(cfg, b, cfg->mistake, (uint64_t)s, lo, hi, c->micro);
        *sum = b->g;
        return reduce(cfg, b, s, t, err);
    }
    vec_zero(b->acc, w->n + TRAIN_TRAILER, c->dtype);
    for (int j = 0; j < c->micro; j++) {
        workload_split(hi - lo, c->micro, j, NULL, &a, &z);
        fill(cfg, b, MISTAKE_NONE, (uint64_t)s, lo + a, lo + z, 1);
        if ((rc = reduce(cfg, b, s, t, err)) != 0)
            return rc;
        vec_add(b->acc, b->g, w->n + TRAIN_TRAILER, c->dtype);
    }
    *sum = b->acc;
    return 0;
}

/* expected_count: what the all-reduced count must be: B, or under
 * mean-of-means the number of ranks with a non-empty share. */
static uint64_t expected_count(const struct train_cfg *cfg)
{
    const struct cli_common *c = cfg->c;
    uint64_t lo, hi, k = 0;

    if (cfg->mistake != MISTAKE_MEAN_OF_MEANS)
        return cfg->w->batch;
    for (int r = 0; r < c->world; r++) {
        workload_split(cfg->w->batch, c->world, r, c->shard_weights, &lo, &hi);
        k += hi > lo;
    }
    return k;
}

int train_run(const struct train_cfg *cfg, struct metrics_record *rec, char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    const int m = cfg->mistake;
    size_t n = w->n, es = dtype_size(c->dtype);
    struct bufs b = { NULL, NULL, NULL, NULL, NULL };
    struct losscurve lc = { NULL, 0 };
    const int closed_form = w->kind == WORKLOAD_SYNTHETIC &&
        (m == MISTAKE_NONE || m == MISTAKE_SUM_NOT_MEAN || m == MISTAKE_SYNC_EVERY_MICRO);
    const uint64_t want = expected_count(cfg);
    const char *loss_out = c->rank == 0 ? cfg->loss_out : NULL;
    double cpu0 = 0, wall0 = 0, last_log = -INFINITY;
    int rc = 0;

    b.weights = malloc(n * es);
    b.g = malloc((n + TRAIN_TRAILER) * es);
    if (closed_form)
        b.ref = malloc(n * es);
    if (m == MISTAKE_SYNC_EVERY_MICRO)
        b.acc = malloc((n + TRAIN_TRAILER) * es);
    if (mistake_needs_scratch(m))
        b.scratch = malloc(n * es);
    if (!b.weights || !b.g || (closed_form && !b.ref) ||
        (m == MISTAKE_SYNC_EVERY_MICRO && !b.acc) || (mistake_needs_scratch(m) && !b.scratch) ||
        (loss_out && losscurve_init(&lc, (size_t)c->steps) != 0)) {
        rc = -ENOMEM;
        say(err, "out of memory for %zu parameters", n);
        goto out;
    }
    workload_init_weights(w, b.weights);

    for (int s = 0; s < c->steps; s++) {
        uint64_t out0, in0, count;
        unsigned char *g;
        double t, loss;

        if (s == c->warmup) {
            cpu0 = clock_cpu_seconds();
            wall0 = clock_now();
        }
        out0 = cfg->link->bytes_out;
        in0 = cfg->link->bytes_in;
        if ((rc = combine(cfg, &b, s, &g, &t, err)) != 0)
            goto out;

        count = (uint64_t)vec_get(g, n, c->dtype) +
                (uint64_t)vec_get(g, n + 1, c->dtype) * (uint64_t)COUNT_SPLIT;
        if (count != want) {
            rc = ERR_MISMATCH;
            say(err, "step %d: the ranks' example counts add up to %llu, not %s %llu "
                "(--shard-weights, --batch or --mistake differ between ranks?)", s,
                (unsigned long long)count, m == MISTAKE_MEAN_OF_MEANS ?
                "the number of ranks with data (mean-of-means counts 1 each)" : "the global batch",
                (unsigned long long)want);
            goto out;
        }
        if (b.ref) {
            /* The closed form over the whole batch, without the EMULATED
             * backward time (that is the ranks' compute, not this check's). */
            struct workload q = *w;
            q.backward_per_example = 0;
            vec_zero(b.ref, n, c->dtype);
            workload_grad_add(&q, b.weights, (uint64_t)s, 0, w->batch, b.ref, NULL);
            if (memcmp(b.ref, g, n * es) != 0) {
                size_t i = 0;
                while (i < n && vec_get(b.ref, i, c->dtype) == vec_get(g, i, c->dtype))
                    i++;
                rc = ERR_MISMATCH;
                say(err, "step %d: the all-reduced sum differs from the closed form F(0, B) "
                    "at element %zu: %.17g, want %.17g", s, i,
                    i < n ? vec_get(g, i, c->dtype) : NAN,
                    i < n ? vec_get(b.ref, i, c->dtype) : NAN);
                goto out;
            }
        }
        loss = vec_get(g, n + 2, c->dtype) / (double)count;
        rc = sgd_step(b.weights, g, n, c->dtype, c->lr, m == MISTAKE_SUM_NOT_MEAN ? 1 : count);
        if (rc != 0) {
            say(err, "step %d: sgd_step: %s", s, err_str(rc));
            goto out;
        }
        losscurve_set(&lc, (size_t)s, loss);
        if (c->rank == 0 && (s == 0 || s == c->steps - 1 ||
                             clock_now() - last_log >= LOSS_LOG_EVERY_S)) {
            log_msg("step %d: loss %.9g (mean over the global batch of %llu)", s, loss,
                    (unsigned long long)count);
            last_log = clock_now();
        }
        if (s >= c->warmup) {
            struct metrics_step st = {
                .step = (uint64_t)s, .combine_s = t, .ingress_s = NAN, .egress_s = NAN,
                .bytes_in = cfg->link->bytes_in - in0, .bytes_out = cfg->link->bytes_out - out0,
            };
            metrics_record_add(rec, &st);
        }
    }
    rec->cpu_s = clock_cpu_seconds() - cpu0;
    rec->wall_s = clock_now() - wall0;
    if (c->weights_out)
        rc = train_weights_write(c->weights_out, c->rank, b.weights, n, c->dtype, err);
out:
    if (loss_out) {
        char why[ERR_LEN];
        int rc2 = losscurve_write(&lc, loss_out, rc != 0 ? "the run failed" : NULL, why);
        if (rc2 != 0 && rc == 0) {
            rc = rc2;
            snprintf(err, ERR_LEN, "%s", why);
        }
    }
    losscurve_free(&lc);
    free(b.scratch);
    free(b.acc);
    free(b.ref);
    free(b.g);
    free(b.weights);
    return rc;
}
