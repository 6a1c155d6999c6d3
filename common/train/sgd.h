/* sgd.h -- the optimizer step, and the seeds' sum-versus-mean rule, once.
 *
 * Workers produce gradient SUMS over their examples; the combine step adds
 * them (all-reduce SUM, or the server's accumulator) together with the
 * example counts. The update is driven by the mean over the GLOBAL batch:
 *
 *     w <- w - lr * (g_sum / B),    B = sum over workers of their examples
 *
 * Dividing by K instead of B is right only when every worker had the same
 * number of examples (mean-of-means); feeding g_sum undivided multiplies
 * the learning rate by B. This is the only place psring divides.
 *
 * Arithmetic: each element is computed in double as w - lr * (g / B) and
 * rounded once to the dtype, so the parameter server and every ring rank,
 * given the same g_sum, produce bit-identical weights.
 */
#ifndef SGD_H
#define SGD_H

#include <stddef.h>
#include <stdint.h>

/* sgd_step: w[i] -= lr * (g_sum[i] / batch) for i < n, in place.
 * ERR_USAGE if batch is 0 or lr is not finite; w is untouched then. */
int sgd_step(void *w, const void *g_sum, size_t n, int dtype, double lr, uint64_t batch);

#endif /* SGD_H */
