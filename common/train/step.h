/* step.h -- one data-parallel training step, written once: the gradient
 * buffer, the bucket plan, the communication thread, the count and loss,
 * and the checks, for every system; what differs between systems is two
 * small things they hand in, a COMBINE and an APPLY (struct step_ops).
 *
 *   ring (common/coll/train.c)   combine: all-reduce each bucket, then the
 *                                3-element trailer; apply: optim_update
 *                                (--optimizer, optim.h) on the host, or
 *                                gpu_optim_update (train_cuda.c)
 *   PS worker (ps_worker/main.c) combine: push each bucket to the servers;
 *                                finish: pull the weights; apply: none
 *                                (the server applies the update)
 *   ring with --zero (SHARDED below): combine reduce-scatters, the
 *                                driver updates the rank's shard and
 *                                all-gathers (ops shard and gather)
 *
 * ONE STEP (step_run), in order, on the caller's thread unless said:
 *   1. the gradient SUM over this rank's share [lo, hi) of the global
 *      batch (workload_split by rank, or by shard weights), in `micro`
 *      micro-batches, into the driver's buffer: mistake_grad (mistake.h,
 *      which makes the micro-batch loop's mistakes) on the CPU, or the
 *      device's zero / grad_add / loss (struct step_device) on a GPU;
 *   2. STEP_CHECK_FINITE: every gradient element checked finite before it
 *      is sent ("step S: gradient element I is X before the all-reduce");
 *   3. STEP_TRAILER: the count and the loss written behind the n gradient
 *      elements (TRAILER below), so that they are combined with them;
 *   4. combine(job) for each bucket of the plan, bucket 0 (the last
 *      layers) first, then with STEP_TRAILER one job for the trailer; with
 *      one bucket and STEP_TRAILER, ONE job of n + 3 elements instead;
 *   5. --mistake sync-every-micro: 1-4 once per micro-batch (`passes`),
 *      each pass's combined buffer summed on the host (STEP_TRAILER);
 *   6. finish(step, weights), when given (the PS pull);
 *   7. STEP_TRAILER: the combined count checked (the global batch B, or
 *      under mean-of-means the number of ranks with data), and with the
 *      synthetic workload the combined sum against its closed form F(0, B)
 *      bitwise (where the mistake leaves it intact);
 *   8. apply(weights, sum, n, divide_by), when given: divide_by the count,
 *      or 1 under sum-not-mean.
 *
 * OVERLAP (CPU, several buckets, no mistake that changes the gradient
 * after the backward pass, no --no-overlap): steps 1 and 4 run together.
 * The last micro-batch's backward pass (backward.h) reports each bucket
 * as it completes and the driver hands it to its communication thread
 * (overlap.h), which calls combine for it while the pass goes on; the
 * trailer job follows the pass; the step waits for all of them before 6.
 * Without overlap there is no callback: the gradient is computed straight
 * (mistake_grad) and combine is called for each bucket in order, here.
 * The jobs, their order and their bytes are the same either way, so are
 * the bits.
 *
 * TRAILER (STEP_TRAILER): elements n, n+1, n+2 of the buffer, of the
 * gradient's dtype: examples mod 4096, examples div 4096, loss. Split in
 * two, the count's partial sums stay below 2^24 and so are exact even in
 * f32 (K <= 4096 and B < 2^36: the ring's train_check). Without
 * STEP_TRAILER the combine learns the count and loss from job->meta (the
 * PS sends them with a push) and the driver checks nothing after it.
 *
 * THE OPS. Who owns what, and on which thread:
 *   combine(ctx, job, err)  sends job->count elements from job->first of
 *       job->grad (the driver's buffer, in the device's memory). Called
 *       once per job, in job order, never two at a time: on the
 *       communication thread while overlapping (then the combine's
 *       transport belongs to that thread from the step's first job to the
 *       end of its wait, overlap.h THREADING), else on the caller's. It may
 *       write the job's elements (the all-reduce leaves the sum there) and
 *       nothing else of the buffer. job->meta is final. Its error line
 *       must name the step ("step S: ..."; the PS client's lines do).
 *   finish(ctx, step, weights, err)  after every job of the step, on the
 *       caller's thread; may be NULL. The PS pulls the new weights into
 *       `weights` (the driver's, device memory on a GPU).
 *   apply(ctx, weights, sum, n, divide_by, err)  the optimizer, on the
 *       caller's thread, after the checks; may be NULL. sum is the
 *       combined gradient (device memory on a GPU). Its line need not
 *       name the step: the driver puts "step S: " in front.
 * ctx is the adapter's and must outlive the driver. A failing op stops
 * the step; step_run returns its code and line.
 *
 * WHERE THE NUMBERS LIVE. cfg->device NULL: host memory and the CPU
 * workload. Otherwise the device's alloc/put/get move the buffers and its
 * zero/grad_add/loss compute the gradient (gpu/step_gpu.h: the CUDA
 * one, for the ring and the PS worker alike). On a device there is one
 * bucket and no overlap, and only the mistakes that leave the micro-batch
 * loop alone (none, sum-not-mean; the adapters refuse the others): the
 * GPU twin of the loop has no mistakes. The host copies the checks need
 * (the n elements before the combine with STEP_CHECK_FINITE, the trailer
 * after, the sum with the closed form) are made outside the timed part.
 *
 * TIME is read only through cfg->clock (clock.h): the ring's is its
 * transport's (coll_clock; virtual time under psring_sim), the PS worker's
 * clock_real. The workload's EMULATED backward sleep runs on workload.clock,
 * which the ring's adapter sets to the same clock (workload.h).
 *
 * TRACE (--trace FILE, trace.h): "backward" (or "backward layer L" and
 * "backward micro J" with overlap), "NAME bucket I" and "NAME count+loss"
 * (or "NAME" for the one job of n + 3), the wait after the backward pass
 * (ops->wait_name), ops->finish_name, "optimizer".
 *
 * OPTIMIZER (cfg->optim, optim.h): the driver keeps its state, for the n
 * elements or, SHARDED, for the rank's own ones, in host or device memory,
 * and hands it to apply in struct step_update with the offset of the
 * range's entries. NULL: no state (the PS worker; the server has its own).
 *
 * SHARDED (cfg->zero 1, 2, 3: ZeRO; host memory, a trailer, no mistake;
 * docs/design.md, Optimizers and ZeRO). Each job that holds gradient
 * elements is combined with job->scatter set (the ring reduce-scatters);
 * ops->shard says which part [lo, hi) of it the rank then owns. After the
 * combine: apply on each own part below n (the state of the own elements
 * only), the own trailer elements copied behind the weights (which have
 * n + 3 elements for it), then ops->gather of each job's range of the
 * weights: every rank has the new weights and the combined count and loss,
 * and the checks of 7 run on those (the closed form on the own parts).
 * The divisor is the count the combine must reach (B). Stage 2 also gives
 * the gradient's pages outside the own part back after each job
 * (mem_release). Stage 3 keeps only the own part of the weights between
 * steps: before the pass it gathers them, runs the forward (the
 * workload's call, whose gradient the backward overwrites), frees and
 * gathers them again; after the combine it frees them, updates its part
 * and gathers the trailer through a 3-element slot per rank (tslots);
 * step_weights_write gathers the weights first (a collective).
 * Host buffers come from mem_map (mem.h), so a release shows in the RSS.
 *
 * OWNERSHIP. step_init allocates every buffer (the weights, the gradient
 * with its trailer, the sum of the passes, the closed form, the scratch,
 * the plan, the thread, the trace, the per-step times); step_destroy
 * frees them. step_run allocates nothing.
 */
#ifndef STEP_H
#define STEP_H

#include <stddef.h>
#include <stdint.h>

#include "buckets.h"
#include "base/clock.h"
#include "base/err.h"
#include "overlap.h"
#include "trace.h"
#include "optim.h"
#include "workload.h"

#define STEP_TRAILER_LEN 3
#define STEP_COUNT_SPLIT 4096.0     /* the trailer's count: lo + SPLIT * hi */

/* step_ops.flags */
#define STEP_TRAILER      1u        /* count and loss combined behind the gradient */
#define STEP_CHECK_FINITE 2u        /* every element checked finite before it is sent */
#define STEP_LOSSY        4u        /* the combine approximates the sum (PowerSGD): no
                                       closed-form check of the synthetic workload */
#define STEP_STUDENT      8u        /* --bucket-student: the overlapped pass's buckets cut
                                       and started by students/bucket_student.c
                                       (step_student.c, bucket_student.h) */

/* A rank's count and loss for one pass (what the PS sends with a push). */
struct step_meta {
    uint64_t examples;
    double loss;
};

/* One call of combine. */
struct step_job {
    uint64_t step;
    int pass;                   /* 0, or the micro-batch under sync-every-micro */
    void *grad;                 /* the whole buffer, n + STEP_TRAILER_LEN elements */
    size_t first, count;        /* the elements to combine */
    struct step_meta meta;      /* this pass's local count and loss */
    int scatter;                /* ZeRO: reduce-scatter (shard says who owns
                                   what), not all-reduce */
    double *late;               /* OUT (the combine may set it, NULL: none): how
                                   much later than on this EMULATED host's own
                                   timeline the combine ended (waiting for a
                                   CPU another host held: common/wire/link.h,
                                   OWN CORES); its end is taken on that
                                   timeline */
};

/* One call of apply: the optimizer on elements [first, first + count) of
 * the whole vectors weights and sum (the combined gradient), with the
 * optimizer's state for element `first` at state_off (opt NULL: the
 * driver keeps no state; the apply has its own, or none). t = step + 1 is
 * the update's number (optim.h's bias corrections). */
struct optim;
struct step_update {
    uint64_t step;
    struct optim *opt;
    void *weights;
    const void *sum;
    size_t first, count, state_off;
    uint64_t divide_by;
};

struct step_ops {
    unsigned flags;             /* STEP_TRAILER | STEP_CHECK_FINITE */
    const char *name;           /* "allreduce", "push": the trace's job names */
    const char *verb;           /* "all-reduce": "... before the all-reduce" */
    const char *plan_note;      /* rank 0's plan line: "" or ", pushed one by one" */
    const char *wait_name;      /* the trace's wait after the backward pass */
    const char *finish_name;    /* the trace's finish, or NULL */
    int (*combine)(void *ctx, const struct step_job *job, char *err);
    int (*finish)(void *ctx, uint64_t step, void *weights, char *err);
    int (*apply)(void *ctx, const struct step_update *u, char *err);
    void *ctx;
    /* ZeRO (cfg.zero > 0; SHARDED below): the rank's own part [*lo, *hi)
     * of a job's range [first, first + count) once it is reduce-scattered,
     * and the all-gather of such a range of buf. NULL without ZeRO. */
    void (*shard)(void *ctx, size_t first, size_t count, size_t *lo, size_t *hi);
    int (*gather)(void *ctx, void *buf, size_t first, size_t count, char *err);
};

/* Where the buffers live and how the gradient is made there (step.h: WHERE
 * THE NUMBERS LIVE). put/get return when the bytes have arrived. zero
 * clears n elements of grad and the loss; grad_add adds the gradient sum
 * (and the loss) of [lo, hi) at weights; loss returns the loss summed since
 * zero. Every function: 0 or a negative code with one line in err. */
struct step_device {
    int (*alloc)(void *ctx, void **p, size_t bytes, char *err);
    void (*free)(void *ctx, void *p);
    int (*put)(void *ctx, void *dst, const void *host_src, size_t bytes, char *err);
    int (*get)(void *ctx, void *host_dst, const void *src, size_t bytes, char *err);
    int (*zero)(void *ctx, void *grad, size_t n, char *err);
    int (*grad_add)(void *ctx, const void *weights, uint64_t step, uint64_t lo, uint64_t hi,
                    void *grad, char *err);
    int (*loss)(void *ctx, double *loss, char *err);
    void *ctx;
};

struct step_cfg {
    const struct workload *w;   /* its dtype is the buffers' */
    int rank, world;
    const double *shard_weights;    /* --shard-weights (world entries), or NULL */
    int micro;                  /* --micro m */
    int mistake;                /* enum mistake (mistake.h) */
    int steps, warmup;          /* for the per-step times (step_medians) */
    uint64_t bucket_bytes;      /* --bucket-size; 0: BUCKETS_DEFAULT_BYTES */
    int no_overlap;             /* --no-overlap */
    const char *trace;          /* --trace FILE (FILE.RANK), or NULL */
    const struct clock_src *clock;
    const struct step_device *device;   /* NULL: host memory, the CPU */
    const struct optim_cfg *optim;      /* the optimizer whose state the driver
                                           keeps (optim.h), or NULL: none */
    int zero;                   /* --zero: 0 (all-reduce), 1, 2 or 3 (SHARDED) */
    const struct overlap_exec *exec;    /* the communication thread's executor
                                           (overlap.h); NULL: POSIX threads */
    int sync_every;             /* --sync-every H: 0 or 1, every step (the above);
                                   H > 1: LOCAL SGD (localsgd.h) */
};

/* What the driver holds, in bytes, per rank (step_memory): the
 * parameters, the gradient and the optimizer state as allocated and as
 * resident between steps (ZeRO-2 gives back the gradient outside the
 * rank's shard after the reduce-scatter), and the other buffers. */
struct step_memory {
    uint64_t params, grads, grads_resident, optim, buffers;
};

/* What one step took, in seconds (cfg->clock). */
struct step_times {
    double step;                /* the whole step, less the closed-form check */
    double backward;            /* the gradient (all micro-batches, all passes) */
    double comm;                /* inside combine, summed over the jobs */
    double finish;              /* inside finish */
    double wait;                /* from the end of the backward pass to finish's end */
    double enter;               /* when the step's first combine job began, on
                                   the step's clock (NaN: none ran) */
};

/* The outcome of one step. */
struct step_result {
    uint64_t count;             /* STEP_TRAILER: the combined count; else the local one */
    int local;                  /* LOCAL SGD: 1 for a step that did not communicate */
    double loss;                /* STEP_TRAILER: combined loss sum / count; else NAN */
    struct step_times t;
};

struct step {
    struct step_cfg cfg;
    struct step_ops ops;
    size_t n, es;
    uint64_t lo, hi;            /* this rank's share of each step */
    uint64_t want;              /* the count the combine must add up to */
    int closed_form;            /* check the synthetic sum against F(0, B) */
    int passes;                 /* m under sync-every-micro, else 1 */
    void *weights;              /* n, in the device's memory */
    void *g;                    /* n + trailer, in the device's memory */
    unsigned char *acc;         /* host, n + trailer: the sum of the passes */
    unsigned char *host;        /* host, n + trailer: a device's checks */
    unsigned char *ref;         /* host, n: the closed form */
    unsigned char *scratch;     /* host, n: mistake_grad's */
    struct buckets plan;
    struct overlap ov;
    int overlap;                /* 1: buckets to ov from the layer callback */
    double bwd_end;             /* when the step's (last) backward pass ended */
    struct trace tr;
    double *times[5];           /* per timed step, as struct step_times */
    size_t ntimed;
    struct step_meta meta;      /* the pass being combined (read by the thread) */
    uint64_t step;
    int pass;
    struct optim opt;           /* cfg.optim's state: n, or the shard's elements */
    int have_opt;
    size_t *own;                /* ZeRO: per job, its own [lo, hi) and state offset */
    size_t own_n;               /* ZeRO: own elements below n (the state's size) */
    void *tslots;               /* ZeRO-3: 3 K elements, the trailer's slots */
    struct step_memory mem;     /* what step_init allocated */
    void *anchor;               /* LOCAL SGD: n, the weights at the last sync */
    uint64_t round_examples;    /* LOCAL SGD: this rank's examples since then */
    double round_loss;          /* LOCAL SGD: and their loss sum */
    int round_steps;            /* LOCAL SGD: the steps since then */
    double compute_cpu;         /* the driver's compute's CPU seconds so far
                                   (step_compute_cpu) */
};

/* step_init: the plan (rank 0 logs it when it has several buckets), the
 * buffers, the weights at workload_init_weights, the thread when
 * overlapping, the trace. 0, or a negative code with one line in err;
 * step_destroy may be called either way (on a zeroed or initialised *d). */
int step_init(struct step *d, const struct step_cfg *cfg, const struct step_ops *ops,
              char *err);
void step_destroy(struct step *d);

/* step_run: step s (steps above); OUT: *r. 0, or a negative code with one
 * line in err naming the step: a combine's or finish's failure,
 * ERR_NONFINITE, ERR_MISMATCH. Timed steps (s >= warmup) keep their times
 * for step_medians. Writes the step's trace events. */
int step_run(struct step *d, int s, struct step_result *r, char *err);

/* step_medians: the medians of the kept times (NAN where none); returns
 * how many timed steps they are over. */
size_t step_medians(const struct step *d, struct step_times *med);

/* step_weights_write: --weights-out: the weights to PATH.RANK
 * (weights.h), through a host copy on a device. */
int step_weights_write(struct step *d, const char *path, int rank, char *err);

/* step_memory: what step_init allocated (struct step_memory). */
const struct step_memory *step_memory(const struct step *d);

/* step_buckets: the plan's bucket count; step_overlapping: 1 with the
 * communication thread. */
size_t step_buckets(const struct step *d);
int step_overlapping(const struct step *d);

/* step_compute_cpu: the CPU seconds the driver has spent computing in the
 * timed steps so far (step >= cfg.warmup: a record's cpu_s), counted per thread (CLOCK_THREAD_CPUTIME_ID) around the gradient (the
 * workload's backward pass, a device's launches), the closed-form check
 * and the apply, on whichever thread ran them; 0 on a clock other than
 * the real one (a simulated rank's compute costs no CPU of its own). The
 * rest of a process's CPU over its steps is what moving and reducing the
 * bytes cost (the records' compute_cpu_s, metrics.h: cpu_s_per_gb). */
static inline double step_compute_cpu(const struct step *d)
{
    return d->compute_cpu;
}

/* step_trace_close: finish the --trace file (0, or a code and a line);
 * step_destroy closes it quietly otherwise. */
int step_trace_close(struct step *d, char *err);

#endif /* STEP_H */
