/* train.h -- data-parallel SGD over the ring: the training mode of
 * bin/ring_worker.
 *
 * Every rank takes its share of each step's global batch (workload_split
 * by rank, or by --shard-weights), sums the per-example gradients over
 * --micro micro-batches into one buffer, all-reduces that SUM together with
 * the example count and the loss, and applies the optimizer (sgd_step's
 * w -= lr g_sum / B by default; optim.h) itself:
 * the same update on every rank, bit for bit, equal to one big-batch step
 * up to rounding (docs/design.md). Workload and sgd are the parameter server's
 * code; only the combine step differs.
 *
 * ALL-REDUCED BUFFER: the n gradient elements, then a trailer of three
 * elements of the same dtype: examples mod 4096, examples div 4096, loss.
 * Split in two, the count's partial sums stay below 2^24 and so are exact
 * even in f32 (K <= 4096 and B < 2^36, checked by train_check); the loss
 * is only logged. The count's sum must be B, checked every step.
 *
 * CHECKS, each a failure naming the step: a gradient element that is not
 * finite (before it is sent), the example count, and with the synthetic
 * workload the all-reduced sum against its closed form F(0, B) (bitwise:
 * it is exact in any order).
 *
 * OUTPUT. Rank 0 logs the global loss (sum of losses / B, at the weights
 * before the update) for the first and last step and at most once a second
 * between. The record gets one step per timed step (combine_s: this rank's
 * all-reduce; bytes from its link's counters). --weights-out PATH writes
 * PATH.RANK, one "%.17g" per line.
 *
 * ON THE GPU (--device cuda, --transport nccl): train_cuda_run
 * (train_cuda.c) runs the same steps with the weights and the gradient in
 * GPU memory, the gradient from gpu_workload_grad_add and the update from
 * gpu_sgd_step, the CUDA twins of workload_grad_add and sgd_step: the same
 * bits as train_run for the same inputs (gpu.h), so --device cuda trains
 * exactly as --device cpu does.
 *
 * MISTAKES (--mistake, mistake.h). Each rank makes the ones that live in
 * its micro-batch loop (mistake_grad: no-divide-micro, mean-of-means,
 * zero-grad-inside) and in its own update (sum-not-mean: sgd_step by 1);
 * sync-every-micro all-reduces each micro-batch's sum (with its count and
 * loss) on its own, m all-reduces per step, and sums their results before
 * the one update: the record's combine time is then the m all-reduces
 * together, its bytes the step's. Under mean-of-means the count to check
 * is the number of ranks with a non-empty share (each counts 1); the
 * synthetic closed-form check runs only where the mistake leaves the sum
 * F(0, B) intact (none, sum-not-mean, sync-every-micro). On the GPU
 * (train_cuda_run) only sum-not-mean is made; the others are refused.
 *
 * LOSS FILE (--loss-out FILE, rank 0): the global loss of every step, kept
 * in memory and written at the end (losscurve.h), also after a failure
 * (the steps done, marked incomplete). --loss-time-out FILE (rank 0) adds
 * wall_s, the seconds from rank 0 entering step 0 to the end of the step
 * (its update applied); --target-loss X gives rank 0's record the time to
 * target (ttt_s: the first such wall_s with loss <= X).
 *
 * BUCKETS AND OVERLAP (--bucket-size, --no-overlap, --trace; CPU only).
 * The gradient is cut into buckets of whole layers in reverse layer order
 * (buckets.h: filled from the last layer until a bucket reaches the size;
 * a layer is never split). With one bucket (the default 25 MiB holds every
 * built-in model unless --params is large) a step is exactly as above:
 * one all-reduce of n + 3 elements after the backward pass. With several:
 *   - each bucket is all-reduced on its own (coll_allreduce of its range),
 *     in bucket order (the last layers first), then the 3-element trailer
 *     (count and loss) on its own, once per step: the loss of the last
 *     micro-batch is known only at the end of its backward pass;
 *   - with overlap (the default then), the communication thread
 *     (overlap.h) runs them: a bucket is handed over from the workload's
 *     layer callback the moment its last layer is done, while the backward
 *     pass goes on; the step waits for all of them before sgd_step. With
 *     --micro m, micro-batches 0..m-2 only accumulate into the buffer and
 *     only the last one's backward is overlapped (PyTorch DDP's no_sync):
 *     a bucket's bytes are final only then;
 *   - --no-overlap runs the same all-reduces, in the same order, on the
 *     same bytes, after the backward pass: the baseline. So overlap on and
 *     off give the same bits at the same bucket size.
 * Across bucket sizes the bits may change: the ring sums an element in the
 * order its chunk's owner dictates, and the chunks are cut from the
 * bucket's length. Each order is a sum of the K rank values, so two orders
 * differ by at most 2(K-1)u sum_k |g_k| per element (u the unit roundoff);
 * with K = 2 the sum is a + b either way (exact: addition commutes); the
 * synthetic workload is exact in any order. --mistake modes that change
 * the gradient after the backward pass (no-divide-micro, mean-of-means,
 * zero-grad-inside) and sync-every-micro use the buckets without overlap.
 * --trace FILE writes each rank's timeline (trace.h). When there is more
 * than one bucket, rank 0 logs the plan, and at the end the medians over
 * the timed steps of its step, backward, all-reduce and wait times.
 *
 * THE CODE. The step (gradient, buckets, overlap, trailer, checks) is
 * common/train/step.c's, the PS worker's too; the ring adds its combine (one
 * coll_allreduce per job) and its apply (sgd_step, or gpu_sgd_step in
 * train_cuda.c) and its output, in train.c's train_steps.
 *
 * OPTIMIZER (--optimizer sgd|momentum|adam, optim.h): the apply is
 * optim_update on the host (gpu_optim_update in train_cuda.c) with the
 * state common/train/step.c keeps; the same on every rank, bit for bit.
 *
 * ZeRO (--zero 1|2|3, train_cfg.zero; CPU ring only: main.c refuses --algo
 * rd, the GPU, --bench and --mistake with exit 64). The combine of a
 * gradient job is coll_reduce_scatter_range of the job's range (coll.h,
 * A RANGE: the host ring's ring_reduce_scatter), the driver updates the
 * rank's slice (ring_shard: coll_slice of the range) and all-gathers the
 * weights (ring_gather: coll_all_gather_range); stage 2 also frees the
 * gradient outside the chunk, stage 3 the weights between steps
 * (step.h, SHARDED; docs/design.md, Optimizers and ZeRO). The same bits
 * as --zero 0; the bytes of 1 and 2 are the all-reduce's.
 *
 * MEMORY: every rank logs at the end "memory (--zero Z, --optimizer O, K
 * K): parameters, gradients (kept after the reduce-scatter), optimizer
 * state, other buffers, in bytes; peak RSS" (step_memory, mem_peak_rss).
 *
 * LOCAL SGD (--sync-every H > 1; common/train/localsgd.h): H local steps
 * (each rank's own update, divided by its own count), then one all-reduce
 * of the n deltas since the last sync and the trailer, through the coll
 * (ring, rd, rabenseifner), and w = anchor + sum / K on every rank: the
 * same bits everywhere. The record gets ONE ROW PER SYNCHRONIZATION
 * ROUND, numbered by round (s / H), written at its last step: step_s the round's H steps together,
 * combine_s the sync's all-reduce, bytes the round's (the sync's). Rank
 * 0's loss line and loss file: on a local step rank 0's own loss over its
 * share, on a sync step the mean over the round's examples of all ranks.
 * Only the sync steps' waits are kept (WAIT).
 *
 * OWNERSHIP: train_run allocates its buffers at start and frees them
 * before it returns; nothing is allocated inside the step loop.
 */
#ifndef TRAIN_H
#define TRAIN_H

#include "train/cli_common.h"
#include "wire/link.h"
#include "measure/metrics.h"
#include "coll.h"
#include "train/step.h"
#include "train/workload.h"

#define TRAIN_TRAILER STEP_TRAILER_LEN      /* count lo, count hi, loss (step.h) */

struct psgd;

struct train_cfg {
    const struct cli_common *c;    /* steps, warmup, micro, lr, dtype, shards, outputs */
    struct workload *w;
    struct coll *coll;             /* the all-reduce (coll.h): host or device memory */
    struct link *link;
    int mistake;                   /* enum mistake (mistake.h); 0: none */
    const char *loss_out;          /* --loss-out FILE (rank 0 writes), or NULL */
    uint64_t bucket_bytes;         /* --bucket-size; 0: BUCKETS_DEFAULT_BYTES */
    int no_overlap;                /* --no-overlap: all buckets after the backward pass */
    int bucket_student;            /* --bucket-student: the buckets students/bucket_student.c
                                      cuts and starts (step.h, STEP_STUDENT) */
    const char *trace;             /* --trace FILE (every rank writes FILE.RANK), or NULL */
    int zero;                      /* --zero: 0, 1 or 2 (ZeRO below) */
    struct train_wait *wait;       /* train_steps' own (WAIT below); NULL from the caller */
    const struct overlap_exec *exec;   /* the communication thread's executor
                                          (overlap.h); NULL: POSIX threads */
    int sync_every;                /* --sync-every H: 0 or 1 every step; > 1 LOCAL SGD */
    struct psgd *psgd;             /* --compress powersgd:R: train_steps' own (coll_psgd.h);
                                      NULL from the caller */
};

/* WAIT (common/measure/metrics.h, WAIT): per step, from entering the step's first
 * combine (its all-reduce, or reduce-scatter under ZeRO) to the first
 * piece of the first chunk arriving from the neighbour (rd: the partner),
 * on the transport's clock (xport.h, THE FIRST ARRIVAL). A rank waits
 * for its neighbour's entry into the step, which carries lateness
 * propagated along the ring (the previous all-reduce ends for all only
 * when the slowest rank's data has gone round): with one slow rank its
 * right neighbour waits, the slow rank does not. 0 at K = 1; NaN with NCCL (no
 * transport of ours). Every rank logs its mean and max over the timed
 * steps; its record carries the mean (wait_s). */
struct train_wait {
    uint64_t step;                 /* the step measured (its first combine seen) */
    int seen;
    double wait;                   /* that step's wait, seconds; NaN: unknown */
    /* The link's utilization over the timed steps' combines (link.h,
     * UTILIZATION; metrics.h, link_util): their summed time and the
     * link's idle in them; counted while util_on. */
    int util_on;
    double util_span, util_idle;
};

/* train_check: the trailer's exactness bounds for this job; ERR_USAGE and
 * a line in err when K or B is too large for f32. */
int train_check(const struct cli_common *c, uint64_t batch, char *err);

/* train_run: the steps; *rec (initialised by the caller) gets the timed
 * steps, cpu_s and wall_s. 0, or a negative code with one line in err
 * ("step 5: ..."): a transport failure, ERR_NONFINITE, ERR_MISMATCH. */
int train_run(const struct train_cfg *cfg, struct metrics_record *rec, char *err);

/* train_cuda_run: train_run on the current GPU, for a coll on the device
 * (COLL_TCP_CUDA, COLL_NCCL). Same results, checks, log and record. */
int train_cuda_run(const struct train_cfg *cfg, struct metrics_record *rec, char *err);

/* train_apply_fn: the optimizer as step.h's apply; ctx is the train_cfg. */
typedef int (*train_apply_fn)(void *ctx, const struct step_update *u, char *err);

/* train_steps: what train_run and train_cuda_run share: the steps through
 * common/train/step.c with the ring's combine (coll_allreduce), `apply` (NULL:
 * sgd_step on the host) and dev (NULL: host memory), and the ring's output
 * (the loss lines and file, the record, the medians, --weights-out). */
int train_steps(const struct train_cfg *cfg, const struct step_device *dev, train_apply_fn apply,
                struct metrics_record *rec, char *err);

#endif /* TRAIN_H */
