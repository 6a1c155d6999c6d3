/* workload.h -- deterministic gradient generation, the same on every side.
 *
 * A workload owns a parameter vector of n elements and answers one question:
 * the SUM of per-example gradients over a contiguous range [lo, hi) of the
 * global batch of a step, at given weights. Both systems (parameter server
 * and ring) call the same code, so any difference in their results comes
 * from the combine step alone.
 *
 * THE GLOBAL BATCH. Step s uses B examples, global positions 0..B-1, which
 * are dataset rows (s*B + j) mod N. The batch is cut among the K workers
 * into contiguous ranges (workload_split: sizes differ by at most one, the
 * first ones larger, as numpy's array_split; or in proportion to
 * --shard-weights), and each worker's range again into m micro-batches.
 *
 * THE WORKLOADS.
 *   linreg     the seeds' least squares: N rows (default 4096) of d features
 *              (default 12), X and w_true standard normal, y = X w_true +
 *              0.1 noise, all from the seed; gradient SUM 2 X^T (X w - y),
 *              loss SUM of squared residuals. n = d. Computed in double.
 *   synthetic  P parameters as equal contiguous layers, no data: the
 *              gradient of range [lo, hi) at step s is, for element i,
 *                  F(lo, hi) = (hi - lo) * a_i + h_i(hi) - h_i(lo)
 *              with a_i and h_i(x) small dyadic rationals (multiples of 1/16
 *              in [-1/2, 1/2]) hashed from (seed, step, i[, x]). F telescopes:
 *              the sum over ANY contiguous partition of [0, B) is F(0, B),
 *              the closed form, and every partial sum is an integer multiple
 *              of 1/16 small enough to be exact in f32 (|sum| * 16 < 2^24
 *              holds while B <= 2^20) and f64, in any summation order. So
 *              the all-reduced sum can be checked exactly anywhere, without
 *              communication. Cheap: three hashes per element. The weights
 *              do not influence it; loss is 0.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

enum workload_kind {
    WORKLOAD_LINREG = 1,
    WORKLOAD_SYNTHETIC = 2,
    WORKLOAD_MLP = 3,          /* reserved on the wire; not built yet */
};

#define WORKLOAD_LINREG_ROWS 4096
#define WORKLOAD_LINREG_DIM  12
#define WORKLOAD_SYNTH_LAYERS 8
#define WORKLOAD_SYNTH_BATCH 1024   /* default B for synthetic */
#define WORKLOAD_SYNTH_MAX_BATCH (1u << 20)

struct workload_cfg {
    int kind;              /* enum workload_kind */
    int dtype;             /* enum dtype: the element type of weights/grads */
    uint64_t seed;
    uint64_t params;       /* synthetic: P (>= 1) */
    uint64_t rows;         /* linreg: N; 0 = WORKLOAD_LINREG_ROWS */
    int dim;               /* linreg: d; 0 = WORKLOAD_LINREG_DIM */
    uint64_t batch;        /* B; 0 = all N rows (linreg) or SYNTH_BATCH */
};

struct workload {
    int kind, dtype;
    uint64_t seed;
    size_t n;              /* parameters */
    uint64_t batch;        /* B, examples per step */
    uint64_t rows;         /* linreg N */
    int dim;               /* linreg d */
    double *x;             /* linreg: rows x dim, row-major (owned) */
    double *y;             /* linreg: rows (owned) */
    double *w_true;        /* linreg: dim (owned) */
    size_t nlayers;
    size_t *layer_off;     /* nlayers + 1 offsets into the vector (owned) */
};

/* workload_parse: "linreg" or "synthetic" -> kind; ERR_USAGE otherwise. */
int workload_parse(const char *s, int *out);
const char *workload_name(int kind);

/* workload_create: build the dataset (linreg) and layer table. All memory
 * is the workload's, freed by workload_destroy. ERR_USAGE on bad sizes. */
int workload_create(struct workload *w, const struct workload_cfg *cfg);
void workload_destroy(struct workload *w);

/* workload_init_weights: the step-0 weights (zeros), n elements of dtype. */
void workload_init_weights(const struct workload *w, void *weights);

/* workload_grad_add: ADD the gradient SUM over batch positions [lo, hi) of
 * step `step`, at `weights`, into grad (n elements of dtype). If loss is
 * not NULL, add the sum of per-example losses to *loss. lo <= hi <= B. */
void workload_grad_add(const struct workload *w, const void *weights,
                       uint64_t step, uint64_t lo, uint64_t hi,
                       void *grad, double *loss);

/* workload_loss: mean loss over the whole dataset at `weights` (linreg:
 * mean squared residual over all N rows; synthetic: 0). */
double workload_loss(const struct workload *w, const void *weights);

/* workload_split: the contiguous part `index` of `parts` over [0, total):
 * with weights == NULL, sizes differ by at most one and the first
 * (total mod parts) parts are one larger; with weights (parts positive
 * values), the cut points are the rounded cumulative shares, so each size
 * is its exact share rounded up or down. OUT: *lo, *hi. */
void workload_split(uint64_t total, int parts, int index, const double *weights,
                    uint64_t *lo, uint64_t *hi);

#endif /* WORKLOAD_H */
