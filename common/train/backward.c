/* backward.c -- a backward pass in buckets (backward.h says what and why). */
#include "backward.h"

#include <stdio.h>

#include "base/clock.h"
#include "base/vec.h"

/* What the layer callback needs. */
struct pass {
    struct buckets *plan;
    struct trace *tr;
    const struct clock_src *clock;
    long step;
    const double *loss;
    double mark;            /* when the previous layer (or the micro-batch) ended */
    backward_ready_fn ready;
    void *arg;
};

static void on_layer(size_t layer, size_t first, size_t count, void *arg)
{
    struct pass *p = arg;
    char name[TRACE_NAME_LEN];
    double now = clock_src_now(p->clock);
    long i;

    (void)first;
    (void)count;
    snprintf(name, sizeof name, "backward layer %zu", layer);
    trace_add(p->tr, name, TRACE_COMPUTE, p->mark, now, p->step, -1);
    p->mark = now;
    if ((i = buckets_layer_done(p->plan, layer)) >= 0)
        p->ready(p->arg, (size_t)i, *p->loss);
}

double backward_bucketed(const struct workload *w, const void *weights, uint64_t step,
                         uint64_t lo, uint64_t hi, int micro, void *grad,
                         struct buckets *plan, struct trace *tr, const struct clock_src *clock,
                         backward_ready_fn ready, void *arg)
{
    double l = 0.0;
    struct pass p = { plan, tr, clock, (long)step, &l, 0.0, ready, arg };
    char name[TRACE_NAME_LEN];

    vec_zero(grad, w->n, w->dtype);
    buckets_reset(plan);
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
