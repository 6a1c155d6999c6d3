/* mistake.h -- the classic bugs of the combine step, made on purpose
 * (--mistake NAME), for the lab handout.
 *
 * Each mode is one mistake from the seeds (000, sections 1 and 3: sum or
 * mean, gradient accumulation), made the same way by the parameter server,
 * the ring and bin/reference, so a system with a mistake still matches the
 * reference with the same mistake, and the difference from the correct run
 * is the mistake's alone. Every binary accepts --mistake (the launcher
 * passes common flags to every process) and acts on the part it owns: the
 * optimizer's division is the server's (PS) or every rank's (ring), the
 * micro-batch loop is the workers'. Each process says so on stderr at
 * start: "MISTAKE MODE sum-not-mean: ...".
 *
 * psring's combine is sum-based: a worker sends the SUM of its per-example
 * gradients g_k and its example count b_k, the combine adds them, and the
 * update divides once, by B = sum of the counts (sgd.h). In that flow, for a
 * worker with b = hi - lo examples cut into m micro-batches j of c_j
 * examples each, with gradient sums s_j and loss sums l_j:
 *
 *   none              g = s_0 + s_1 + ... (one buffer, zeroed once per
 *                     step), count b, loss sum_j l_j. The correct run.
 *   sum-not-mean      the workers as in none; the update is
 *                     w -= lr * g_sum (B taken as 1): B times too large.
 *                     Made by whoever applies sgd (PS server, ring ranks).
 *   no-divide-micro   micro-batch MEANS accumulated without the division by
 *                     m (PyTorch's loss / ACCUM forgotten). Emulated in the
 *                     sum-based flow as g = b * sum_j (s_j / c_j) (empty
 *                     micro-batches skipped), count b: the combine's
 *                     division by B then yields sum_j mean_j weighted by
 *                     b/B, which with equal micro-batches is m times the
 *                     correct gradient. Computed in double per element,
 *                     rounded once into the gradient's dtype per micro-batch.
 *   mean-of-means     each worker contributes its MEAN with weight 1:
 *                     g = (sum_j s_j) / b, count 1, loss (sum_j l_j) / b
 *                     (a worker with b = 0 contributes zeros and count 0).
 *                     The combine then averages the K means: exact with
 *                     equal shards, wrong under --shard-weights.
 *   zero-grad-inside  the buffer zeroed inside the micro-batch loop: g = the
 *                     LAST micro-batch's s_{m-1} only, with the full count
 *                     b; the loss is still sum_j l_j (zeroing the gradient
 *                     does not touch the logged loss). The step moves as
 *                     if trained on the last micro-batches alone, 1/m as far.
 *   sync-every-micro  communicates after every micro-batch: m pushes per
 *                     step (PS: the server sums m pushes per worker) or m
 *                     all-reduces (ring: their results summed), each of
 *                     s_j with count c_j and loss l_j, then ONE optimizer
 *                     step. The same weights (exactly, with the synthetic
 *                     workload; within rounding for linreg), m times the
 *                     traffic, shown by the byte counters.
 *
 * OWNERSHIP: the names and descriptions are static strings. mistake_grad
 * writes only the caller's buffers.
 */
#ifndef MISTAKE_H
#define MISTAKE_H

#include <stdint.h>

struct workload;

enum mistake {
    MISTAKE_NONE = 0,
    MISTAKE_SUM_NOT_MEAN,
    MISTAKE_NO_DIVIDE_MICRO,
    MISTAKE_MEAN_OF_MEANS,
    MISTAKE_ZERO_GRAD_INSIDE,
    MISTAKE_SYNC_EVERY_MICRO,
    MISTAKE_COUNT
};

/* The --mistake option's metavar and help line, the same in every binary. */
#define MISTAKE_METAVAR "NAME"
#define MISTAKE_HELP "make a classic bug on purpose: sum-not-mean, no-divide-micro, " \
    "mean-of-means, zero-grad-inside, sync-every-micro (default none)"

/* mistake_parse: a name ("none" or one of the five) into *(int *)dst.
 * 0, or ERR_USAGE with a line listing the names in err (ERR_LEN). The
 * signature of a CLI_CUSTOM parser (cli.h). */
int mistake_parse(const char *s, void *dst, char *err);

/* mistake_name: "none", "sum-not-mean", ...; "?" for a bad value. */
const char *mistake_name(int m);

/* mistake_describe: one line on what the mode does and what it shows. */
const char *mistake_describe(int m);

/* mistake_announce: for m != none, log "MISTAKE MODE NAME: DESCRIPTION"
 * (log.h: prefixed with role and rank). Nothing for none. */
void mistake_announce(int m);

/* mistake_needs_scratch: 1 when mistake_grad needs its scratch buffer
 * (no-divide-micro). */
int mistake_needs_scratch(int m);

/* mistake_grad: a worker's contribution to step `step` under mistake m, for
 * its part [lo, hi) of the global batch cut into `micro` micro-batches
 * (workload_split(hi - lo, micro, j)): the gradient into grad (w->n
 * elements of w->dtype, overwritten), the count and the loss into
 * *examples and *loss (see the table above). none, sum-not-mean and
 * sync-every-micro give the correct local sum (sync-every-micro's caller
 * calls this once per micro-batch, with that micro-batch's range and
 * micro = 1). scratch: w->n elements of w->dtype when
 * mistake_needs_scratch(m), else may be NULL. Allocates nothing. */
void mistake_grad(int m, const struct workload *w, const void *weights, uint64_t step,
                  uint64_t lo, uint64_t hi, int micro, void *grad, void *scratch,
                  uint64_t *examples, double *loss);

#endif /* MISTAKE_H */
