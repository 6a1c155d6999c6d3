/* train_cuda.c -- train.c's SGD steps with the weights and the gradient in
 * GPU memory (ring_worker --device cuda, and --transport nccl).
 *
 * The steps are train.c's (train_steps, through common/train/step.c), and so are
 * the checks, the log and the record; only where the numbers live changes:
 * the device is gpu/step_gpu.h's on the coll's stream, and the apply is
 * gpu_optim_update (optim_apply's twin; --optimizer, optim.h). On the stream, in order, per step:
 *
 *   1. zero the gradient buffer and a device double for the loss; per
 *      micro-batch gpu_workload_grad_add (the twin of workload_grad_add:
 *      same bits, gpu.h);
 *   2. the n sums and the loss copied to host memory and waited for: the
 *      host checks that every element is finite BEFORE anything is sent
 *      (train.h, CHECKS), and writes the trailer (count and loss, rounded
 *      to dtype exactly as on the CPU) and copies its 3 elements back;
 *   3. the all-reduce of the n + 3 elements (coll_allreduce: the staged TCP
 *      ring or NCCL), the timed part;
 *   4. the trailer copied back (with the synthetic workload also the n
 *      sums, for the closed-form check on the host) and the count checked;
 *   5. gpu_optim_update on the weights, queued; the next step's gradient
 *      (linreg reads the weights) follows it on the stream.
 *
 * The host copies in 2 and 4 serve the checks, outside the timed region;
 * they cost one pass over the gradient per step (two with synthetic).
 * --weights-out copies the weights to the host once, at the end;
 * --loss-out (rank 0) writes the loss of every step then, as train.c.
 * One bucket, no overlap: buckets and overlap are the CPU's (main.c
 * refuses --bucket-size, --no-overlap and --trace here).
 *
 * MISTAKES: sum-not-mean is made here too (the update by 1 instead of
 * B). The others live in the micro-batch loop, whose GPU twin here has no
 * mistakes: they are refused before the first step, with one line.
 *
 * OWNERSHIP: everything is allocated before the first step and freed
 * before train_cuda_run returns.
 */
#include "train.h"

#include "base/dtype.h"
#include "base/err.h"
#include "gpu.h"
#include "train/mistake.h"
#include "step_gpu.h"

/* gpu_apply: the apply of step.h: gpu_optim_update (optim_apply's twin;
 * sgd is gpu_sgd_step) on the device weights and the device state the
 * driver keeps, queued on the coll's stream; the scalars from the host. */
static int gpu_apply(void *ctx, const struct step_update *u, char *err)
{
    const struct train_cfg *cfg = ctx;
    const size_t es = dtype_size(cfg->c->dtype);
    struct optim_coef k;
    struct optim_cfg oc;

    cli_optim_cfg(cfg->c, &oc);
    optim_scalars(u->opt ? &u->opt->cfg : &oc, u->step + 1, &k);
    if (u->opt)
        u->opt->t = u->step + 1;
    return gpu_optim_update(&k, cfg->c->dtype, (unsigned char *)u->weights + u->first * es,
                            (const unsigned char *)u->sum + u->first * es,
                            u->opt ? optim_state(u->opt, 0, u->state_off) : NULL,
                            u->opt ? optim_state(u->opt, 1, u->state_off) : NULL, u->count,
                            u->divide_by, cfg->coll->stream, err);
}

int train_cuda_run(const struct train_cfg *cfg, struct metrics_record *rec, char *err)
{
    const struct cli_common *c = cfg->c;
    struct step_gpu g;
    int rc;

    if (cfg->mistake != MISTAKE_NONE && cfg->mistake != MISTAKE_SUM_NOT_MEAN) {
        err_say(err, "--mistake %s: not made on the GPU (only sum-not-mean is); use --device cpu",
            mistake_name(cfg->mistake));
        return ERR_USAGE;
    }
    if ((rc = step_gpu_init(&g, cfg->w, cfg->coll->stream, c->timeout, err)) == 0)
        rc = train_steps(cfg, &g.dev, gpu_apply, rec, err);
    if (rc == 0)
        rc = gpu_stream_wait(cfg->coll->stream, c->timeout, err);  /* the last update */
    step_gpu_destroy(&g);
    return rc;
}
