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
 * LAYERS. The vector is cut into nlayers contiguous layers (layer_off).
 * A backward pass finishes them last layer first; workload_grad_add_layers
 * reports each one the moment its gradient is complete, which is what
 * buckets and overlap build on.
 *
 * THE WORKLOADS.
 *   linreg     the seeds' least squares: N rows (default 4096) of d features
 *              (default 12), X and w_true standard normal, y = X w_true +
 *              0.1 noise, all from the seed; gradient SUM 2 X^T (X w - y),
 *              loss SUM of squared residuals. n = d, one layer. Computed in
 *              double. Initial weights 0.
 *   mlp        a real network with a real backward pass (mlp.h): fixed
 *              dims 32 -> 64 -> 64 -> 1, tanh hidden layers, linear output,
 *              n = 6337 in 3 layers (W and b of each). Data: N rows
 *              (default 4096) of x ~ N(0, 1)^32, y = teacher(x) + 0.1
 *              noise, the teacher the same network with its own seeded
 *              weights (held in w_true), so the loss can fall from about
 *              0.5 towards the noise floor 0.01. Default B = 256, at most
 *              65536 (the rows are walked step by step as for linreg).
 *              Gradient SUM of (out - y)^2 by backpropagation, loss SUM of
 *              squared residuals; computed in double (weights read once
 *              per call, each layer's sum added into grad's dtype when that
 *              layer is complete). Initial weights LeCun-normal from the
 *              seed, biases 0. Plain SGD at the default --lr 0.05 works:
 *              seed 7 goes from 0.58 to 0.09 in 20 steps, then creeps
 *              towards the floor (0.047 after 200). --params does not
 *              resize it (refused).
 *   synthetic  P parameters as equal contiguous layers (8, or --layers L),
 *              no data: the gradient of range [lo, hi) at step s is, for
 *              element i,
 *                  F(lo, hi) = (hi - lo) * a_i + h_i(hi) - h_i(lo)
 *              with a_i and h_i(x) small dyadic rationals (multiples of 1/16
 *              in [-1/2, 1/2]) hashed from (seed, step, i[, x]). F telescopes:
 *              the sum over ANY contiguous partition of [0, B) is F(0, B),
 *              the closed form, and every partial sum is an integer multiple
 *              of 1/16 small enough to be exact in f32 (|sum| * 16 < 2^24
 *              holds while B <= 2^20) and f64, in any summation order. So
 *              the all-reduced sum can be checked exactly anywhere, without
 *              communication. Cheap: one 64-bit mix per element (the step's key
 *              and the three x terms once per call). The weights
 *              do not influence it; loss is 0. Initial weights 0.
 *
 * EMULATED BACKWARD TIME (--backward-time T, and the compute-time model of
 * compute.h: --straggler, --jitter, --pause). A backward pass of a real
 * model on an accelerator is emulated by sleeping (clock_src_sleep_until
 * on w->clock: the CPU is free, as it would be while a GPU computes).
 * Worker r's time in step s is t(r, s) = T * F(r) * J(r, s) + P(r, s)
 * (compute.h has the formulas); a worker whose share of the step is b
 * examples sleeps t(r, s) * (hi - lo) / b in a call for [lo, hi), so its
 * m micro-batches together take t(r, s), in proportion to their examples
 * (bin/reference, one process with the whole batch, world 0: rank 0's
 * t(0, s) per step).
 *   synthetic  the time is spread over the layers in proportion to their
 *              sizes, last layer first, each layer's callback made when
 *              its share has elapsed; the hashing itself counts towards it
 *              (the sleeps run to deadlines from the start of the call).
 *   mlp        the sleep is ADDED on top of the real compute: each layer's
 *              share of the time (in proportion to its size) is slept just
 *              before that layer is reported, last layer first.
 *   linreg     one layer: the whole call's time is slept, on top of the
 *              real compute, before the layer is reported.
 * A check that wants the gradient without the wait (the ring's closed-form
 * check) calls on a copy of the struct with backward_per_example = 0.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "base/clock.h"
#include "compute.h"
#include "wire/proto.h"

/* The ids are the wire's (proto.h, HELLO): a hello carries them. */
enum workload_kind {
    WORKLOAD_LINREG = PROTO_WORKLOAD_LINREG,
    WORKLOAD_SYNTHETIC = PROTO_WORKLOAD_SYNTHETIC,
    WORKLOAD_MLP = PROTO_WORKLOAD_MLP,
};

#define WORKLOAD_LINREG_ROWS 4096
#define WORKLOAD_LINREG_DIM  12
#define WORKLOAD_SYNTH_LAYERS 8
#define WORKLOAD_SYNTH_BATCH 1024   /* default B for synthetic */
#define WORKLOAD_SYNTH_MAX_BATCH (1u << 20)
#define WORKLOAD_MLP_ROWS 4096
#define WORKLOAD_MLP_BATCH 256      /* default B for mlp */
#define WORKLOAD_MLP_MAX_BATCH (1u << 16)   /* scratch: 1 KiB per example */

struct workload_cfg {
    int kind;              /* enum workload_kind */
    int dtype;             /* enum dtype: the element type of weights/grads */
    uint64_t seed;
    uint64_t params;       /* synthetic: P (>= 1); must be 0 for mlp */
    uint64_t rows;         /* linreg, mlp: N; 0 = the default (4096) */
    int dim;               /* linreg: d; 0 = WORKLOAD_LINREG_DIM */
    uint64_t batch;        /* B; 0 = all N rows (linreg), MLP_BATCH, SYNTH_BATCH */
    /* EMULATED backward seconds per worker per step, T (0: none), spread
     * over the share of the batch of `rank` of `world` (workload_split with
     * shard_weights, world entries or NULL; read only during
     * workload_create). world 0: the whole batch, as one process (rank 0). */
    double backward_time;
    int world, rank;
    /* The compute-time model's straggler, jitter and pause (compute.h;
     * its base and seed are ignored: backward_time and seed above), or
     * NULL for T alone. Copied by workload_create. Without T they do
     * nothing (cli_common_finish refuses them without --backward-time; a
     * server, which clears T, ignores them). */
    const struct compute_model *compute;
    /* Synthetic only: the number of equal layers (0: WORKLOAD_SYNTH_LAYERS;
     * at most n), the unit buckets are made of (buckets.h). */
    int layers;
    const double *shard_weights;
};

struct workload {
    /* The clock the EMULATED backward time sleeps on (clock.h): the
     * transport's, set by the training step's owner; NULL is clock_real. */
    const struct clock_src *clock;
    int kind, dtype;
    uint64_t seed;
    size_t n;              /* parameters */
    uint64_t batch;        /* B, examples per step */
    uint64_t rows;         /* linreg, mlp: N */
    int dim;               /* linreg d; mlp: its input width (32) */
    double *x;             /* linreg, mlp: rows x dim, row-major (owned) */
    double *y;             /* linreg, mlp: rows (owned) */
    double *w_true;        /* linreg: dim; mlp: the teacher's n weights (owned) */
    size_t nlayers;
    size_t *layer_off;     /* nlayers + 1 offsets into the vector (owned) */
    double *work;          /* mlp: scratch of workload_grad_add (owned) */
    double backward_per_example;   /* EMULATED seconds, T / b; 0 = none */
    struct compute_model compute;  /* the model (base T, seed), compute.h */
    int rank;                      /* whose t(r, s) this process sleeps */
};

/* workload_parse: "linreg", "synthetic" or "mlp" -> kind; ERR_USAGE
 * otherwise. */
int workload_parse(const char *s, int *out);
const char *workload_name(int kind);

/* workload_create: build the dataset (linreg, mlp) and layer table. All
 * memory is the workload's, freed by workload_destroy. ERR_USAGE on bad
 * sizes or a bad backward time; with a backward time it logs one "EMULATED backward
 * time" line (log.h) naming the model's straggler, jitter and pause. */
int workload_create(struct workload *w, const struct workload_cfg *cfg);
void workload_destroy(struct workload *w);

/* workload_init_weights: the step-0 weights, n elements of dtype: zeros
 * for linreg and synthetic, the seeded initialisation for mlp. */
void workload_init_weights(const struct workload *w, void *weights);

/* workload_grad_add: ADD the gradient SUM over batch positions [lo, hi) of
 * step `step`, at `weights`, into grad (n elements of dtype). If loss is
 * not NULL, add the sum of per-example losses to *loss. lo <= hi <= B.
 * Deterministic; the sum over [0, B) equals that of any split into
 * contiguous ranges up to rounding (exactly, for synthetic). Calls on one
 * workload must not run concurrently (the mlp's scratch is the workload's).
 * Sleeps with --backward-time (see above). */
void workload_grad_add(const struct workload *w, const void *weights,
                       uint64_t step, uint64_t lo, uint64_t hi,
                       void *grad, double *loss);

/* workload_layer_fn: layer `layer`'s part of grad, elements [first,
 * first + count) = [layer_off[layer], layer_off[layer + 1]), holds its
 * final value for this call (the gradient has been added). */
typedef void (*workload_layer_fn)(size_t layer, size_t first, size_t count, void *arg);

/* workload_synth_compare: synthetic only: whether got (w->n elements)
 * holds exactly F(lo, hi), what workload_grad_add adds into zeros
 * (bytes compared): 0 yes; 1 no, *bad the first element that differs in
 * value and ref[*bad] (ref: w->n elements, only that one written) the
 * value wanted there, or *bad = w->n where only bytes differ (-0 and 0).
 * F is made and compared in blocks that stay in cache, not written
 * whole (the check of an all-reduced sum, step.c). */
int workload_synth_compare(const struct workload *w, uint64_t step, uint64_t lo, uint64_t hi,
                           const void *got, void *ref, size_t *bad);

/* workload_synth_wide: whether the synthetic gradient may use its
 * AVX-512 loop (on: the default; the same bits as the scalar loop, about
 * 2.5x faster); returns whether it now does (0 where the CPU or the
 * compiler has none). For the test that compares the two; not
 * thread-safe against a running workload_grad_add. */
int workload_synth_wide(int on);

/* workload_grad_add_layers: workload_grad_add, calling done(layer, ...)
 * for every layer once, last layer first (nlayers-1 down to 0), each as
 * soon as that layer's gradient is in grad; also for an empty range.
 * done may be NULL. The same bits in grad and *loss as workload_grad_add.
 * *loss (when not NULL) has this call's whole loss added by the first
 * done() (the loss comes from the forward pass), so a caller may send it
 * with the first bucket of gradient. */
void workload_grad_add_layers(const struct workload *w, const void *weights,
                              uint64_t step, uint64_t lo, uint64_t hi,
                              void *grad, double *loss, workload_layer_fn done, void *arg);

/* workload_matrix: layer `layer`'s weight matrix, for compressors that
 * need a shape (PowerSGD, base/powersgd.h): 1 and its first element and
 * rows x cols (row-major) where the layer holds one (mlp: W, fan_out x
 * fan_in; the rest of the layer is its bias, a vector); 0 where the layer
 * is a plain vector without a shape (linreg's weights, the synthetic
 * workload's layers: *first, *rows = its elements, *cols = 1). */
int workload_matrix(const struct workload *w, size_t layer, size_t *first, size_t *rows,
                    size_t *cols);

/* workload_backward_time: the EMULATED seconds this process sleeps in
 * step `step` for its whole share, t(rank, step) (compute.h); 0 when
 * there is no backward time. */
double workload_backward_time(const struct workload *w, uint64_t step);

/* workload_loss: mean loss over the whole dataset at `weights` (linreg,
 * mlp: mean squared residual over all N rows; synthetic: 0). */
double workload_loss(const struct workload *w, const void *weights);

/* workload_split: the contiguous part `index` of `parts` over [0, total):
 * with weights == NULL, sizes differ by at most one and the first
 * (total mod parts) parts are one larger; with weights (parts positive
 * values), the cut points are the rounded cumulative shares, so each size
 * is its exact share rounded up or down. OUT: *lo, *hi. */
void workload_split(uint64_t total, int parts, int index, const double *weights,
                    uint64_t *lo, uint64_t *hi);

#endif /* WORKLOAD_H */
