/* train.c -- SGD steps over the ring (train.h says what and why).
 *
 * One step: zero the buffer, add this rank's micro-batch gradient sums,
 * write the trailer, check it is finite, all-reduce (the timed part), check
 * the count (and the closed form), sgd_step. The order of the adds inside
 * a rank is the workload's; across ranks it is the ring's, fixed, so a
 * rerun gives the same bits.
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

/* local_grad: this rank's share of step s, summed over m micro-batches
 * into g (zeroed first), count and loss into the trailer. */
static void local_grad(const struct train_cfg *cfg, const void *weights, uint64_t s, void *g)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    uint64_t lo, hi, a, b;
    double loss = 0.0;

    vec_zero(g, w->n + TRAIN_TRAILER, c->dtype);
    workload_split(w->batch, c->world, c->rank, c->shard_weights, &lo, &hi);
    for (int j = 0; j < c->micro; j++) {
        workload_split(hi - lo, c->micro, j, NULL, &a, &b);
        workload_grad_add(w, weights, s, lo + a, lo + b, g, &loss);
    }
    vec_set(g, w->n, c->dtype, fmod((double)(hi - lo), COUNT_SPLIT));
    vec_set(g, w->n + 1, c->dtype, floor((double)(hi - lo) / COUNT_SPLIT));
    vec_set(g, w->n + 2, c->dtype, loss);
}

int train_run(const struct train_cfg *cfg, struct metrics_record *rec, char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    size_t n = w->n, es = dtype_size(c->dtype), bad;
    unsigned char *weights = NULL, *g = NULL, *ref = NULL;
    double cpu0 = 0, wall0 = 0, last_log = -INFINITY;
    int rc = 0;

    weights = malloc(n * es);
    g = malloc((n + TRAIN_TRAILER) * es);
    if (w->kind == WORKLOAD_SYNTHETIC)
        ref = malloc(n * es);
    if (!weights || !g || (w->kind == WORKLOAD_SYNTHETIC && !ref)) {
        rc = -ENOMEM;
        say(err, "out of memory for %zu parameters", n);
        goto out;
    }
    workload_init_weights(w, weights);

    for (int s = 0; s < c->steps; s++) {
        uint64_t out0, in0, count;
        double t0, t1, loss;

        if (s == c->warmup) {
            cpu0 = clock_cpu_seconds();
            wall0 = clock_now();
        }
        local_grad(cfg, weights, (uint64_t)s, g);
        if (vec_check_finite(g, n, c->dtype, &bad) != 0) {
            rc = ERR_NONFINITE;
            say(err, "step %d: gradient element %zu is %g before the all-reduce", s, bad,
                vec_get(g, bad, c->dtype));
            goto out;
        }

        out0 = cfg->link->bytes_out;
        in0 = cfg->link->bytes_in;
        t0 = clock_now();
        rc = coll_allreduce(cfg->coll, g, n + TRAIN_TRAILER, err);
        t1 = clock_now();
        if (rc != 0) {
            char why[ERR_LEN];
            snprintf(why, sizeof why, "%s", err);
            say(err, "step %d: %s", s, why);
            goto out;
        }

        count = (uint64_t)vec_get(g, n, c->dtype) +
                (uint64_t)vec_get(g, n + 1, c->dtype) * (uint64_t)COUNT_SPLIT;
        if (count != w->batch) {
            rc = ERR_MISMATCH;
            say(err, "step %d: the ranks' example counts add up to %llu, not the global "
                "batch %llu (--shard-weights or --batch differ between ranks?)", s,
                (unsigned long long)count, (unsigned long long)w->batch);
            goto out;
        }
        if (ref) {
            vec_zero(ref, n, c->dtype);
            workload_grad_add(w, weights, (uint64_t)s, 0, w->batch, ref, NULL);
            if (memcmp(ref, g, n * es) != 0) {
                size_t i = 0;
                while (i < n && vec_get(ref, i, c->dtype) == vec_get(g, i, c->dtype))
                    i++;
                rc = ERR_MISMATCH;
                say(err, "step %d: the all-reduced sum differs from the closed form F(0, B) "
                    "at element %zu: %.17g, want %.17g", s, i,
                    i < n ? vec_get(g, i, c->dtype) : NAN,
                    i < n ? vec_get(ref, i, c->dtype) : NAN);
                goto out;
            }
        }
        loss = vec_get(g, n + 2, c->dtype) / (double)count;
        rc = sgd_step(weights, g, n, c->dtype, c->lr, count);
        if (rc != 0) {
            say(err, "step %d: sgd_step: %s", s, err_str(rc));
            goto out;
        }
        if (c->rank == 0 && (s == 0 || s == c->steps - 1 ||
                             clock_now() - last_log >= LOSS_LOG_EVERY_S)) {
            log_msg("step %d: loss %.9g (mean over the global batch of %llu)", s, loss,
                    (unsigned long long)count);
            last_log = clock_now();
        }
        if (s >= c->warmup) {
            struct metrics_step st = {
                .step = (uint64_t)s, .combine_s = t1 - t0, .ingress_s = NAN, .egress_s = NAN,
                .bytes_in = cfg->link->bytes_in - in0, .bytes_out = cfg->link->bytes_out - out0,
            };
            metrics_record_add(rec, &st);
        }
    }
    rec->cpu_s = clock_cpu_seconds() - cpu0;
    rec->wall_s = clock_now() - wall0;
    if (c->weights_out)
        rc = train_weights_write(c->weights_out, c->rank, weights, n, c->dtype, err);
out:
    free(ref);
    free(g);
    free(weights);
    return rc;
}
