/* mlp.c -- forward and backward of the mlp workload's network (mlp.h).
 *
 * The backward pass is done the way a framework does it on an accelerator:
 * the forward pass runs over the whole range first and keeps each example's
 * hidden activations; then each layer's backward runs over the whole range
 * before the next one starts, output layer first. So the gradient of the
 * last layer is complete (and handed to the caller, who may start
 * communicating it) while the earlier layers are still being computed:
 * this is the reverse-order readiness that buckets and overlap exploit.
 *
 * Determinism: every sum has a fixed order (inputs in index order inside
 * an example, examples in order inside a layer's gradient), the build has
 * no fused multiply-add (-ffp-contract=off), and tanh is the C library's.
 * So a range gives the same bits in every process on one machine, and the
 * sum over [0, B) differs from [0, k) + [k, B) by rounding only.
 *
 * Scratch per example: h1 and h2 from the forward pass, then the deltas
 * written over them (delta2 over h2 once layer 2 has used h2, delta1 over
 * h1 once layer 1 has used h1), and the output's delta.
 */
#include "mlp.h"

#include <math.h>
#include <string.h>

#include "base/rng.h"

/* Offsets of each layer's weight matrix and bias in the vector. */
#define W1 0
#define B1 (W1 + MLP_H1 * MLP_IN)
#define W2 (B1 + MLP_H1)
#define B2 (W2 + MLP_H2 * MLP_H1)
#define W3 (B2 + MLP_H2)
#define B3 (W3 + MLP_H2)
_Static_assert(B3 + 1 == MLP_PARAMS, "layout covers the vector");

/* Scratch slots of one example. */
#define S_H1 0
#define S_H2 MLP_H1
#define S_D3 (MLP_H1 + MLP_H2)

void mlp_layer_table(size_t off[MLP_LAYERS + 1])
{
    off[0] = W1;
    off[1] = W2;
    off[2] = W3;
    off[3] = MLP_PARAMS;
}

void mlp_init(double *p, uint64_t seed, double gain, double bias_sd)
{
    static const struct { size_t w, b, fan_out, fan_in; } lay[MLP_LAYERS] = {
        { W1, B1, MLP_H1, MLP_IN }, { W2, B2, MLP_H2, MLP_H1 }, { W3, B3, 1, MLP_H2 },
    };
    struct rng r;

    rng_seed(&r, seed);
    for (int l = 0; l < MLP_LAYERS; l++) {
        double scale = gain / sqrt((double)lay[l].fan_in);
        for (size_t i = 0; i < lay[l].fan_out * lay[l].fan_in; i++)
            p[lay[l].w + i] = scale * rng_normal(&r);
        /* A zero bias draws nothing (and is +0, never -0). */
        for (size_t o = 0; o < lay[l].fan_out; o++)
            p[lay[l].b + o] = bias_sd > 0 ? bias_sd * rng_normal(&r) : 0.0;
    }
}

/* dense_tanh: out[o] = tanh(b[o] + sum_i w[o][i] in[i]), w row-major
 * (nout rows of nin), the sum from the bias up in i's order. */
static void dense_tanh(const double *w, const double *b, const double *in, int nin,
                       double *out, int nout)
{
    for (int o = 0; o < nout; o++) {
        const double *wr = w + (size_t)o * nin;
        double z = b[o];
        for (int i = 0; i < nin; i++)
            z += wr[i] * in[i];
        out[o] = tanh(z);
    }
}

double mlp_forward(const double *p, const double *x, double *h1, double *h2)
{
    double out = p[B3];

    dense_tanh(p + W1, p + B1, x, MLP_IN, h1, MLP_H1);
    dense_tanh(p + W2, p + B2, h1, MLP_H1, h2, MLP_H2);
    for (int i = 0; i < MLP_H2; i++)
        out += p[W3 + i] * h2[i];
    return out;
}

void mlp_grad(const double *p, const double *x, const double *y, uint64_t rows,
              uint64_t first, uint64_t count, double *g, double *work, double *loss_sum,
              mlp_layer_done done, void *arg)
{
    double loss = 0.0;

    /* Forward: keep h1, h2 and the output's delta 2 (out - y). */
    for (uint64_t j = 0; j < count; j++) {
        uint64_t row = (first + j) % rows;
        double *s = work + j * MLP_WORK_PER_EXAMPLE;
        double r = mlp_forward(p, x + row * MLP_IN, s + S_H1, s + S_H2) - y[row];
        s[S_D3] = 2.0 * r;
        loss += r * r;
    }
    if (loss_sum)
        *loss_sum += loss;     /* final before the first layer is done (mlp.h) */

    /* Layer 2 (output): dW3 = d3 h2, db3 = d3. */
    memset(g + W3, 0, (MLP_PARAMS - W3) * sizeof *g);
    for (uint64_t j = 0; j < count; j++) {
        const double *s = work + j * MLP_WORK_PER_EXAMPLE;
        for (int i = 0; i < MLP_H2; i++)
            g[W3 + i] += s[S_D3] * s[S_H2 + i];
        g[B3] += s[S_D3];
    }
    if (done)
        done(2, g, arg);

    /* Layer 1: d2 = W3^T d3 * (1 - h2^2), written over h2; dW2 = d2 h1^T. */
    memset(g + W2, 0, (W3 - W2) * sizeof *g);
    for (uint64_t j = 0; j < count; j++) {
        double *s = work + j * MLP_WORK_PER_EXAMPLE;
        for (int o = 0; o < MLP_H2; o++) {
            double h = s[S_H2 + o];
            s[S_H2 + o] = p[W3 + o] * s[S_D3] * (1.0 - h * h);
        }
        for (int o = 0; o < MLP_H2; o++) {
            double d = s[S_H2 + o], *gr = g + W2 + (size_t)o * MLP_H1;
            for (int i = 0; i < MLP_H1; i++)
                gr[i] += d * s[S_H1 + i];
            g[B2 + o] += d;
        }
    }
    if (done)
        done(1, g, arg);

    /* Layer 0: d1 = W2^T d2 * (1 - h1^2), written over h1; dW1 = d1 x^T. */
    memset(g + W1, 0, (W2 - W1) * sizeof *g);
    for (uint64_t j = 0; j < count; j++) {
        double *s = work + j * MLP_WORK_PER_EXAMPLE;
        const double *xr = x + ((first + j) % rows) * MLP_IN;
        for (int i = 0; i < MLP_H1; i++) {
            double back = 0.0, h = s[S_H1 + i];
            for (int o = 0; o < MLP_H2; o++)
                back += p[W2 + (size_t)o * MLP_H1 + i] * s[S_H2 + o];
            s[S_H1 + i] = back * (1.0 - h * h);
        }
        for (int o = 0; o < MLP_H1; o++) {
            double d = s[S_H1 + o], *gr = g + W1 + (size_t)o * MLP_IN;
            for (int i = 0; i < MLP_IN; i++)
                gr[i] += d * xr[i];
            g[B1 + o] += d;
        }
    }
    if (done)
        done(0, g, arg);
}
