/* backward.h -- a backward pass that hands the gradient's buckets over as
 * they become complete: the overlap path of the training step
 * (common/train/step.c), for the ring and the parameter-server worker alike.
 *
 * The micro-batch loop is mistake_grad(MISTAKE_NONE)'s, the same calls in
 * the same order, so the gradient has the same bits as without buckets:
 * grad zeroed, the first micro-1 micro-batches added by workload_grad_add,
 * the last by workload_grad_add_layers, whose layer callbacks (last layer
 * first) mark the layers done in the bucket plan (buckets.h). Only the last
 * micro-batch is overlapped; the earlier ones accumulate first (PyTorch
 * DDP's no_sync). Each time a layer completes a bucket, ready(arg, bucket,
 * loss) is called on this thread, loss being the pass's loss sum, whole
 * from the first call on (workload.h: the loss comes from the forward
 * pass).
 *
 * Trace (trace.h, compute): "backward micro J" for each early micro-batch,
 * "backward layer L" for each layer of the last.
 */
#ifndef BACKWARD_H
#define BACKWARD_H

#include <stddef.h>
#include <stdint.h>

#include "buckets.h"
#include "base/clock.h"
#include "trace.h"
#include "workload.h"

/* backward_layer_fn: layer `layer` of the last micro-batch, elements
 * [first, first + count) of grad, is final; loss as for ready below. */
typedef void (*backward_layer_fn)(void *arg, size_t layer, size_t first, size_t count,
                                  double loss);

/* backward_layers: the same pass, calling layer(arg, ...) for each layer
 * of the last micro-batch (last layer first) after tracing it, with no
 * bucket plan: the student's hook (step_student.c, bucket_student.h).
 * Returns the summed loss. */
double backward_layers(const struct workload *w, const void *weights, uint64_t step,
                       uint64_t lo, uint64_t hi, int micro, void *grad, struct trace *tr,
                       const struct clock_src *clock, backward_layer_fn layer, void *arg);

/* backward_ready_fn: bucket `bucket` of the plan is complete in grad. */
typedef void (*backward_ready_fn)(void *arg, size_t bucket, double loss);

/* backward_bucketed: the gradient SUM over batch positions [lo, hi) of
 * step `step` at `weights` into grad (n elements of w's dtype), in `micro`
 * micro-batches, plan's buckets handed to ready as they complete (see
 * above; plan is reset first), the trace's times read from clock. Returns
 * the summed loss. */
double backward_bucketed(const struct workload *w, const void *weights, uint64_t step,
                         uint64_t lo, uint64_t hi, int micro, void *grad,
                         struct buckets *plan, struct trace *tr, const struct clock_src *clock,
                         backward_ready_fn ready, void *arg);

#endif /* BACKWARD_H */
