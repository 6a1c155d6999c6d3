/* mlp.h -- the mlp workload's network: a real forward and backward pass.
 *
 * A fixed multi-layer perceptron, MLP_IN -> MLP_H1 -> MLP_H2 -> 1 (32 -> 64
 * -> 64 -> 1), tanh on both hidden layers, a linear output and the squared
 * loss (out - y)^2 per example. Its MLP_PARAMS = 6337 parameters lie in one
 * vector as three layers, each its weight matrix (fan_out x fan_in,
 * row-major) followed by its bias:
 *
 *     layer  elements          shape
 *     0      [   0, 2112)      W1 64x32, b1 64
 *     1      [2112, 6272)      W2 64x64, b2 64
 *     2      [6272, 6337)      W3  1x64, b3 1
 *
 * Everything here is double and pure: the caller (workload.c) owns the
 * dataset, the scratch memory, and the conversion to the vector's dtype.
 * The sizes are fixed on purpose: the mlp exists to give the combine step a
 * real backward pass whose layers finish last-first, not to be a model zoo;
 * `--params` does not resize it.
 */
#ifndef MLP_H
#define MLP_H

#include <stddef.h>
#include <stdint.h>

#define MLP_IN 32
#define MLP_H1 64
#define MLP_H2 64
#define MLP_LAYERS 3
#define MLP_PARAMS (MLP_H1 * MLP_IN + MLP_H1 + MLP_H2 * MLP_H1 + MLP_H2 + MLP_H2 + 1)
/* Scratch doubles per example kept between forward and backward: both
 * hidden activations (overwritten by their deltas in backward) and the
 * output's delta. */
#define MLP_WORK_PER_EXAMPLE (MLP_H1 + MLP_H2 + 1)

/* mlp_layer_table: the offsets above. OUT: off[0..MLP_LAYERS], off[0] = 0,
 * off[MLP_LAYERS] = MLP_PARAMS. */
void mlp_layer_table(size_t off[MLP_LAYERS + 1]);

/* mlp_init: LeCun-normal weights (N(0, gain^2 / fan_in)) and biases
 * N(0, bias_sd^2), drawn from `seed` in vector order. OUT: p (MLP_PARAMS). */
void mlp_init(double *p, uint64_t seed, double gain, double bias_sd);

/* mlp_forward: the network's output for one input x (MLP_IN values).
 * h1, h2 (MLP_H1, MLP_H2 values) receive the hidden activations. */
double mlp_forward(const double *p, const double *x, double *h1, double *h2);

/* mlp_layer_done: called by mlp_grad when layer `layer`'s gradient SUM over
 * the range is complete in g[off[layer], off[layer + 1]). */
typedef void (*mlp_layer_done)(int layer, const double *g, void *arg);

/* mlp_grad: forward over `count` examples, example j (0 <= j < count) being
 * dataset row (first + j) mod rows of x (rows x MLP_IN, row-major) and y;
 * then backward, one layer at a time from the output to the input, each
 * over the whole range, summing the per-example gradients in example order.
 * Layer l's sum is WRITTEN to its part of g (MLP_PARAMS doubles) and
 * done(l, g, arg) called, for l = MLP_LAYERS-1 down to 0 (done may be
 * NULL). work: count * MLP_WORK_PER_EXAMPLE doubles, the caller's. The sum
 * of the per-example losses is added to *loss (when not NULL) as soon as
 * the forward pass is done, BEFORE the first done(): a caller that sends
 * the loss with the first bucket of gradient may read it there. */
void mlp_grad(const double *p, const double *x, const double *y, uint64_t rows,
              uint64_t first, uint64_t count, double *g, double *work, double *loss,
              mlp_layer_done done, void *arg);

#endif /* MLP_H */
