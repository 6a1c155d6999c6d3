/* train_cuda.c -- train.c's SGD steps with the weights and the gradient in
 * GPU memory (ring_worker --device cuda, and --transport nccl).
 *
 * The step is train.c's, and so are its checks, its log and its record;
 * only where the numbers live changes. On the coll's stream, in order:
 *
 *   1. zero the gradient buffer (n elements + the 3-element trailer) and a
 *      device double for the loss; per micro-batch gpu_workload_grad_add
 *      (the twin of workload_grad_add: same bits, gpu.h);
 *   2. copy the n sums and the loss to pinned host memory and wait: the
 *      host checks that every element is finite BEFORE anything is sent
 *      (train.h, CHECKS), and writes the trailer (count and loss, rounded
 *      to dtype exactly as train.c does) and copies its 3 elements back;
 *   3. the all-reduce of the n + 3 elements (coll_allreduce: the staged TCP
 *      ring or NCCL), the timed part;
 *   4. copy the trailer back (with the synthetic workload also the n sums,
 *      for the closed-form check on the host) and check the count;
 *   5. gpu_sgd_step (sgd_step's twin) on the weights, queued; the next
 *      step's gradient (linreg reads the weights) follows it on the stream.
 *
 * The host copies in 2 and 4 serve the checks, outside the timed region;
 * they cost one pass over the gradient per step (two with synthetic).
 * --weights-out copies the weights to the host once, at the end;
 * --loss-out (rank 0) writes the loss of every step then, as train.c.
 *
 * MISTAKES: sum-not-mean is made here too (gpu_sgd_step by 1 instead of
 * B). The others live in the micro-batch loop, whose GPU twin here has no
 * mistakes: they are refused before the first step, with one line.
 *
 * OWNERSHIP: everything is allocated before the first step and freed
 * before train_cuda_run returns.
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
#include "gpu.h"
#include "log.h"
#include "losscurve.h"
#include "mistake.h"
#include "vec.h"
#include "weights.h"

#define LOSS_LOG_EVERY_S 1.0

/* Everything a run uses, allocated before its first step. */
struct dev {
    struct gpu_workload *gw;
    unsigned char *w, *g;        /* device: weights (n), gradient + trailer (n + 3) */
    double *loss;                /* device: one double */
    unsigned char *hg;           /* pinned host: n + 3 elements */
    double *hloss;               /* pinned host: one double */
    unsigned char *ref;          /* host: the closed form (synthetic), n elements */
};

static int dev_alloc(struct dev *d, const struct workload *w, int dtype, char *err)
{
    size_t es = dtype_size(dtype), n = w->n;
    int rc;

    memset(d, 0, sizeof *d);
    if ((rc = gpu_workload_create(&d->gw, w, err)) != 0 ||
        (rc = gpu_malloc((void **)&d->w, n * es, err)) != 0 ||
        (rc = gpu_malloc((void **)&d->g, (n + TRAIN_TRAILER) * es, err)) != 0 ||
        (rc = gpu_malloc((void **)&d->loss, sizeof(double), err)) != 0 ||
        (rc = gpu_host_alloc((void **)&d->hg, (n + TRAIN_TRAILER) * es, err)) != 0 ||
        (rc = gpu_host_alloc((void **)&d->hloss, sizeof(double), err)) != 0)
        return rc;
    if (w->kind == WORKLOAD_SYNTHETIC && !(d->ref = malloc(n * es))) {
        err_say(err, "out of memory for %zu parameters", n);
        return -ENOMEM;
    }
    return 0;
}

static void dev_free(struct dev *d)
{
    free(d->ref);
    gpu_host_free(d->hloss);
    gpu_host_free(d->hg);
    gpu_free(d->loss);
    gpu_free(d->g);
    gpu_free(d->w);
    gpu_workload_destroy(d->gw);
}

/* local_grad: steps 1 and 2 above: this rank's share of step s summed over
 * the micro-batches into d->g, copied with the loss to d->hg / d->hloss. */
static int local_grad(const struct train_cfg *cfg, struct dev *d, uint64_t s, char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    struct gpu_stream *st = cfg->coll->stream;
    size_t es = dtype_size(c->dtype);
    uint64_t lo, hi, a, b;
    int rc;

    if ((rc = gpu_zero_async(d->g, (w->n + TRAIN_TRAILER) * es, st, err)) != 0 ||
        (rc = gpu_zero_async(d->loss, sizeof(double), st, err)) != 0)
        return rc;
    workload_split(w->batch, c->world, c->rank, c->shard_weights, &lo, &hi);
    for (int j = 0; j < c->micro; j++) {
        workload_split(hi - lo, c->micro, j, NULL, &a, &b);
        rc = gpu_workload_grad_add(d->gw, d->w, s, lo + a, lo + b, d->g, d->loss, st, err);
        if (rc != 0)
            return rc;
    }
    if ((rc = gpu_copy_async(d->hg, d->g, w->n * es, st, err)) != 0 ||
        (rc = gpu_copy_async(d->hloss, d->loss, sizeof(double), st, err)) != 0 ||
        (rc = gpu_stream_wait(st, c->timeout, err)) != 0)
        return rc;
    vec_set(d->hg, w->n, c->dtype, fmod((double)(hi - lo), TRAIN_COUNT_SPLIT));
    vec_set(d->hg, w->n + 1, c->dtype, floor((double)(hi - lo) / TRAIN_COUNT_SPLIT));
    vec_set(d->hg, w->n + 2, c->dtype, *d->hloss);
    return 0;
}

/* check_sum: the synthetic workload's all-reduced sum (in d->hg) against
 * its closed form F(0, B), bitwise, as train.c does. */
static int check_sum(const struct train_cfg *cfg, struct dev *d, int s, char *err)
{
    const struct workload *w = cfg->w;
    int dtype = cfg->c->dtype;
    size_t i = 0;

    vec_zero(d->ref, w->n, dtype);
    workload_grad_add(w, NULL, (uint64_t)s, 0, w->batch, d->ref, NULL);
    if (memcmp(d->ref, d->hg, w->n * dtype_size(dtype)) == 0)
        return 0;
    while (i < w->n && vec_get(d->ref, i, dtype) == vec_get(d->hg, i, dtype))
        i++;
    err_say(err, "step %d: the all-reduced sum differs from the closed form F(0, B) at element "
        "%zu: %.17g, want %.17g", s, i, i < w->n ? vec_get(d->hg, i, dtype) : NAN,
        i < w->n ? vec_get(d->ref, i, dtype) : NAN);
    return ERR_MISMATCH;
}

int train_cuda_run(const struct train_cfg *cfg, struct metrics_record *rec, char *err)
{
    const struct cli_common *c = cfg->c;
    const struct workload *w = cfg->w;
    struct gpu_stream *st = cfg->coll->stream;
    size_t n = w->n, es = dtype_size(c->dtype), bad;
    double cpu0 = 0, wall0 = 0, last_log = -INFINITY;
    const char *loss_out = c->rank == 0 ? cfg->loss_out : NULL;
    struct losscurve lc = { NULL, 0 };
    struct dev d;
    int rc;

    if (cfg->mistake != MISTAKE_NONE && cfg->mistake != MISTAKE_SUM_NOT_MEAN) {
        err_say(err, "--mistake %s: not made on the GPU (only sum-not-mean is); use --device cpu",
            mistake_name(cfg->mistake));
        return ERR_USAGE;
    }
    if ((rc = dev_alloc(&d, w, c->dtype, err)) != 0)
        goto out;
    if (loss_out && losscurve_init(&lc, (size_t)c->steps) != 0) {
        rc = -ENOMEM;
        err_say(err, "out of memory for the loss of %d steps", c->steps);
        goto out;
    }
    workload_init_weights(w, d.hg);
    if ((rc = gpu_copy_async(d.w, d.hg, n * es, st, err)) != 0 ||
        (rc = gpu_stream_wait(st, c->timeout, err)) != 0)
        goto out;

    for (int s = 0; s < c->steps; s++) {
        uint64_t out0, in0, count;
        double t0, t1, loss;
        char why[ERR_LEN];

        if (s == c->warmup) {
            cpu0 = clock_cpu_seconds();
            wall0 = clock_now();
        }
        if ((rc = local_grad(cfg, &d, (uint64_t)s, err)) != 0)
            goto fail;
        if (vec_check_finite(d.hg, n, c->dtype, &bad) != 0) {
            rc = ERR_NONFINITE;
            err_say(err, "step %d: gradient element %zu is %g before the all-reduce", s, bad,
                vec_get(d.hg, bad, c->dtype));
            goto out;
        }
        if ((rc = gpu_copy_async(d.g + n * es, d.hg + n * es, TRAIN_TRAILER * es, st, err)) != 0)
            goto fail;

        out0 = cfg->link->bytes_out;
        in0 = cfg->link->bytes_in;
        t0 = clock_now();
        rc = coll_allreduce(cfg->coll, d.g, n + TRAIN_TRAILER, err);
        t1 = clock_now();
        if (rc != 0)
            goto fail;

        /* Synthetic: the whole sum, for the closed form; else the trailer. */
        if (d.ref)
            rc = gpu_copy_async(d.hg, d.g, (n + TRAIN_TRAILER) * es, st, err);
        else
            rc = gpu_copy_async(d.hg + n * es, d.g + n * es, TRAIN_TRAILER * es, st, err);
        if (rc != 0 || (rc = gpu_stream_wait(st, c->timeout, err)) != 0)
            goto fail;
        count = (uint64_t)vec_get(d.hg, n, c->dtype) +
                (uint64_t)vec_get(d.hg, n + 1, c->dtype) * (uint64_t)TRAIN_COUNT_SPLIT;
        if (count != w->batch) {
            rc = ERR_MISMATCH;
            err_say(err, "step %d: the ranks' example counts add up to %llu, not the global "
                "batch %llu (--shard-weights or --batch differ between ranks?)", s,
                (unsigned long long)count, (unsigned long long)w->batch);
            goto out;
        }
        if (d.ref && (rc = check_sum(cfg, &d, s, err)) != 0)
            goto out;
        loss = vec_get(d.hg, n + 2, c->dtype) / (double)count;
        rc = gpu_sgd_step(d.w, d.g, n, c->dtype, c->lr,
                          cfg->mistake == MISTAKE_SUM_NOT_MEAN ? 1 : count, st, err);
        if (rc != 0)
            goto fail;
        losscurve_set(&lc, (size_t)s, loss);
        if (c->rank == 0 && (s == 0 || s == c->steps - 1 ||
                             clock_now() - last_log >= LOSS_LOG_EVERY_S)) {
            log_msg("step %d: loss %.9g (mean over the global batch of %llu)", s, loss,
                    (unsigned long long)count);
            last_log = clock_now();
        }
        if (s >= c->warmup) {
            struct metrics_step ms = {
                .step = (uint64_t)s, .combine_s = t1 - t0, .ingress_s = NAN, .egress_s = NAN,
                .bytes_in = cfg->link->bytes_in - in0, .bytes_out = cfg->link->bytes_out - out0,
            };
            metrics_record_add(rec, &ms);
        }
        continue;
fail:
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "step %d: %s", s, why);
        goto out;
    }
    rec->cpu_s = clock_cpu_seconds() - cpu0;
    rec->wall_s = clock_now() - wall0;
    if (c->weights_out && (rc = gpu_copy_async(d.hg, d.w, n * es, st, err)) != 0)
        goto out;
    if ((rc = gpu_stream_wait(st, c->timeout, err)) != 0)      /* the last update */
        goto out;
    if (c->weights_out)
        rc = weights_write(c->weights_out, c->rank, d.hg, n, c->dtype, err);
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
    dev_free(&d);
    return rc;
}
