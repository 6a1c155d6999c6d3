/* buckets_step.h -- a parameter-server worker's step in gradient buckets:
 * each bucket pushed as soon as its last layer's gradient is ready, while
 * the backward pass goes on, the way BytePS partitions (issue 6).
 *
 * The gradient is grouped into buckets of whole layers, last layer first
 * (common/buckets.h, --bucket-size, the ring's plan). With overlap (the
 * default), the layer callback of the workload's backward pass hands each
 * complete bucket to a communication thread (common/overlap.h), which
 * pushes it to the servers (ps_client_push: each server gets the part it
 * owns, from the top of the vector down, store.h BUCKETS) while the rest
 * is computed; after the backward pass the step waits for the last push
 * and then pulls the new weights (ps_client_pull). --no-overlap pushes the
 * same buckets in the same order after the backward pass: the baseline.
 *
 * SIMPLIFICATION. BytePS also pulls per partition, each as soon as the
 * server has summed it; here the weights come back as one message per
 * server after the step's last push (the server applies the update once,
 * store.h), so only the push half of the communication is overlapped with
 * the backward pass.
 *
 * BITS. The gradient is computed by the same calls in the same order as
 * mistake_grad's loop (the last micro-batch with layer callbacks), so a
 * worker pushes the same bits with or without overlap and with any bucket
 * size. The server adds each element once per worker, in the order the
 * workers' pushes of it arrive, as with one push per step: the result
 * agrees with the whole-push run within the store's rounding bound (exact
 * for the synthetic workload, store.h SUMMATION ORDER).
 *
 * COUNT AND LOSS travel with the push that starts at a server's first
 * element (client.h); the loss is final from the last micro-batch's first
 * layer callback on (workload.h), and it is copied then, before the first
 * bucket is handed to the thread.
 *
 * Mistakes that change the gradient after the backward pass (mistake.h:
 * no-divide-micro, mean-of-means, zero-grad-inside) push their buckets
 * without overlap; sync-every-micro does not use buckets (main.c).
 *
 * OWNERSHIP. bstep_init makes the plan, the trace, and (with overlap) the
 * thread; bstep_destroy joins and frees them. The client, the workload and
 * the buffers are the caller's and must outlive it.
 */
#ifndef BUCKETS_STEP_H
#define BUCKETS_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "buckets.h"
#include "client.h"
#include "err.h"
#include "overlap.h"
#include "proto.h"
#include "trace.h"
#include "workload.h"

struct bstep_cfg {
    struct ps_client *client;
    const struct workload *w;
    int micro;                  /* --micro m */
    int mistake;                /* enum mistake */
    uint64_t bucket_bytes;      /* --bucket-size; 0: BUCKETS_DEFAULT_BYTES */
    int no_overlap;             /* --no-overlap */
    const char *trace;          /* --trace FILE, or NULL */
    int rank;
};

/* What one step took (seconds). */
struct bstep_times {
    double backward;            /* the backward pass (all micro-batches) */
    double comm;                /* in pushes and the pull, summed */
    double pull;                /* of which the pull */
    double wait;                /* from the end of the backward pass to the weights */
};

struct bstep {
    struct bstep_cfg cfg;
    struct buckets plan;
    struct overlap ov;
    int overlap;                /* 1: buckets go to ov from the layer callback */
    struct trace tr;
    unsigned char *grad;        /* the step's gradient buffer (caller's) */
    void *scratch;              /* mistake_grad's (caller's), or NULL */
    uint64_t step;              /* the pass being pushed ... */
    struct proto_push_meta meta;    /* ... and its count and loss */
};

/* bstep_init: the plan for cfg->w's layers; the thread when overlapping;
 * the trace. 0, or a negative code with one line in err; bstep_destroy
 * may be called either way. Logs the plan on rank 0 when it has several
 * buckets. */
int bstep_init(struct bstep *b, const struct bstep_cfg *cfg, char *err);
void bstep_destroy(struct bstep *b);

/* bstep_buckets: how many buckets the plan has (1: the caller may use the
 * plain whole push). */
size_t bstep_buckets(const struct bstep *b);

/* bstep_run: step `step`: the gradient at `weights` over the batch
 * positions [lo, hi), into grad (n elements, scratch as mistake_grad
 * wants it), pushed bucket by bucket; then the new weights pulled into
 * `weights`. OUT: *t. 0, or the code with one line in err naming the step
 * (and the server). */
int bstep_run(struct bstep *b, void *weights, void *grad, void *scratch, uint64_t step,
              uint64_t lo, uint64_t hi, struct bstep_times *t, char *err);

/* bstep_trace_flush: write the step's trace events (outside the timed part). */
void bstep_trace_flush(struct bstep *b);

/* bstep_trace_close: finish the --trace file; 0, or a negative code with
 * one line in err (a full disk). bstep_destroy closes it too, quietly. */
int bstep_trace_close(struct bstep *b, char *err);

#endif /* BUCKETS_STEP_H */
