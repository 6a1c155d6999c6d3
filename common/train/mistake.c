/* mistake.c -- the mistake modes' names, descriptions and the worker side
 * of each (mistake.h has the table of what each one computes).
 *
 * mistake_grad is the one place the workers' micro-batch loop is written
 * for every mode, the correct one included: ps_worker, ring_worker and
 * bin/reference call it, so a mode is made the same way everywhere. For
 * none it is exactly the loop the systems always ran (zero once, add each
 * micro-batch's sum in order), so the correct path's bits do not change.
 */
#include "mistake.h"

#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/vec.h"
#include "workload.h"

static const struct {
    const char *name, *what;
} modes[MISTAKE_COUNT] = {
    [MISTAKE_NONE] = { "none", "the correct combine: sums, one division by the global B" },
    [MISTAKE_SUM_NOT_MEAN] = { "sum-not-mean",
        "the summed gradient fed to the optimizer undivided (B taken as 1): each step is "
        "B times too large, training diverges at once" },
    [MISTAKE_NO_DIVIDE_MICRO] = { "no-divide-micro",
        "micro-batch means accumulated without dividing by m (local gradient b * sum of "
        "the micro-batch means): the step is m times too large" },
    [MISTAKE_MEAN_OF_MEANS] = { "mean-of-means",
        "each worker sends its mean with weight 1, the combine averages the K means: "
        "exact with equal shards, wrong under --shard-weights" },
    [MISTAKE_ZERO_GRAD_INSIDE] = { "zero-grad-inside",
        "the accumulator cleared inside the micro-batch loop: only the last micro-batch's "
        "gradient survives (with the full example count)" },
    [MISTAKE_SYNC_EVERY_MICRO] = { "sync-every-micro",
        "communicates after every micro-batch (m pushes / all-reduces per step, summed, "
        "one update): the same weights, m times the traffic" },
};

int mistake_parse(const char *s, void *dst, char *err)
{
    for (int m = 0; m < MISTAKE_COUNT; m++)
        if (strcmp(s, modes[m].name) == 0) {
            *(int *)dst = m;
            return 0;
        }
    snprintf(err, ERR_LEN, "'%.40s' is not a mistake mode (none, sum-not-mean, "
             "no-divide-micro, mean-of-means, zero-grad-inside, sync-every-micro)", s);
    return ERR_USAGE;
}

const char *mistake_name(int m)
{
    return m >= 0 && m < MISTAKE_COUNT ? modes[m].name : "?";
}

const char *mistake_describe(int m)
{
    return m >= 0 && m < MISTAKE_COUNT ? modes[m].what : "?";
}

void mistake_announce(int m)
{
    if (m != MISTAKE_NONE)
        log_msg("MISTAKE MODE %s: %s", mistake_name(m), mistake_describe(m));
}

int mistake_needs_scratch(int m)
{
    return m == MISTAKE_NO_DIVIDE_MICRO;
}

/* add_scaled: grad[i] += x[i] / c * b, in double, rounded once. */
static void add_scaled(void *grad, const void *x, size_t n, int dtype, double c, double b)
{
    for (size_t i = 0; i < n; i++)
        vec_set(grad, i, dtype, vec_get(grad, i, dtype) + vec_get(x, i, dtype) / c * b);
}

void mistake_grad(int m, const struct workload *w, const void *weights, uint64_t step,
                  uint64_t lo, uint64_t hi, int micro, void *grad, void *scratch,
                  uint64_t *examples, double *loss)
{
    const uint64_t b = hi - lo;
    double l = 0.0;

    vec_zero(grad, w->n, w->dtype);
    for (int j = 0; j < micro; j++) {
        uint64_t a0, a1;

        workload_split(b, micro, j, NULL, &a0, &a1);
        switch (m) {
        case MISTAKE_NO_DIVIDE_MICRO:
            if (a1 == a0)
                break;      /* an empty micro-batch has no mean */
            vec_zero(scratch, w->n, w->dtype);
            workload_grad_add(w, weights, step, lo + a0, lo + a1, scratch, &l);
            add_scaled(grad, scratch, w->n, w->dtype, (double)(a1 - a0), (double)b);
            break;
        case MISTAKE_ZERO_GRAD_INSIDE:
            vec_zero(grad, w->n, w->dtype);     /* the bug: inside the loop */
            workload_grad_add(w, weights, step, lo + a0, lo + a1, grad, &l);
            break;
        default:
            workload_grad_add(w, weights, step, lo + a0, lo + a1, grad, &l);
            break;
        }
    }
    *examples = b;
    *loss = l;
    if (m == MISTAKE_MEAN_OF_MEANS) {
        *examples = b > 0 ? 1 : 0;
        if (b > 0) {
            for (size_t i = 0; i < w->n; i++)
                vec_set(grad, i, w->dtype, vec_get(grad, i, w->dtype) / (double)b);
            *loss = l / (double)b;
        }
    }
}
