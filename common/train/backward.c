/* backward.c -- a backward pass in buckets (backward.h says what and why).
 *
 * backward_layers is the pass: the micro-batch loop, each layer of the
 * last micro-batch traced and handed to a layer function. backward_bucketed
 * is that pass with the bucket plan's layer function (plan_layer), which
 * calls ready for each bucket a layer completes.
 */
#include "backward.h"

#include <stdio.h>

#include "base/clock.h"
#include "base/vec.h"

/* What the workload's layer callback needs. */
struct pass {
    struct trace *tr;
    const struct clock_src *clock;
    long step;
    const double *loss;
    double mark;            /* when the previous layer (or the micro-batch) ended */
    backward_layer_fn layer;
    void *arg;
};

static void on_layer(size_t layer, size_t first, size_t count, void *arg)
{
    struct pass *p = arg;
    char name[TRACE_NAME_LEN];
    double now = clock_src_now(p->clock);

    snprintf(name, sizeof name, "backward layer %zu", layer);
    trace_add(p->tr, name, TRACE_COMPUTE, p->mark, now, p->step, -1);
    p->mark = now;
    p->layer(p->arg, layer, first, count, *p->loss);
}

double backward_layers(const struct workload *w, const void *weights, uint64_t step,
                       uint64_t lo, uint64_t hi, int micro, void *grad, struct trace *tr,
                       const struct clock_src *clock, backward_layer_fn layer, void *arg)
{
    double l = 0.0;
    struct pass p = { tr, clock, (long)step, &l, 0.0, layer, arg };
    char name[TRACE_NAME_LEN];

    vec_zero(grad, w->n, w->dtype);
    for (int j = 0; j < micro; j++) {
        uint64_t a0, a1;
        double m0 = clock_src_now(clock);

        workload_split(hi - lo, micro, j, NULL, &a0, &a1);
        if (j < micro - 1) {
            workload_grad_add(w, weights, step, lo + a0, lo + a1, grad, &l);
            snprintf(name, sizeof name, "backward micro %d", j);
            trace_add(tr, name, TRACE_COMPUTE, m0, clock_src_now(clock), (long)step, -1);
            continue;
        }
        p.mark = m0;
        workload_grad_add_layers(w, weights, step, lo + a0, lo + a1, grad, &l, on_layer, &p);
    }
    return l;
}

/* The bucket plan's layer function: a layer done, and ready when it
 * completes a bucket. */
struct planned {
    struct buckets *plan;
    backward_ready_fn ready;
    void *arg;
};

static void plan_layer(void *arg, size_t layer, size_t first, size_t count, double loss)
{
    struct planned *q = arg;
    long i = buckets_layer_done(q->plan, layer);

    (void)first;
    (void)count;
    if (i >= 0)
        q->ready(q->arg, (size_t)i, loss);
}

double backward_bucketed(const struct workload *w, const void *weights, uint64_t step,
                         uint64_t lo, uint64_t hi, int micro, void *grad,
                         struct buckets *plan, struct trace *tr, const struct clock_src *clock,
                         backward_ready_fn ready, void *arg)
{
    struct planned q = { plan, ready, arg };

    buckets_reset(plan);
    return backward_layers(w, weights, step, lo, hi, micro, grad, tr, clock, plan_layer, &q);
}
