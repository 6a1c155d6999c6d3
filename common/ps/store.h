/* store.h -- the parameter server's summation and step barrier, without
 * sockets.
 *
 * The store holds the weights this server owns and ONE accumulator of the
 * same size. Each worker's PUSH payload is fed to it as the bytes arrive,
 * in pieces of any size (a TCP read may end in the middle of an element);
 * every complete element is checked for NaN/Inf and then added into the
 * accumulator in place. As soon as every worker has pushed a part of the
 * range (RELEASE below), store_release divides that part once by the
 * global batch B (the sum of the pushed example counts, through the
 * optimizer, optim.h)
 * and its new weights are ready to be sent to all K workers, while the
 * rest of the step's pushes go on. Memory is two n-element buffers plus a
 * few dozen bytes per worker, whatever K is: the server never holds K
 * gradients (docs/design.md, "Bounded memory").
 *
 * PASSES PER STEP. Normally each worker sends one pass of its gradient
 * per step: one push of the whole range, or one push per bucket (BUCKETS
 * below). With cfg.pushes_per_step P > 1 (--mistake sync-every-micro: a
 * worker sends each of its m micro-batch sums as it is computed, P = m)
 * every worker sends P passes per step, one after the other; all are added
 * into the same accumulator, their counts and losses summed, and the step
 * is ready when all K * P passes are complete. cfg.divide_by_one (--mistake
 * sum-not-mean) makes store_apply feed the sum to the optimizer undivided:
 * w -= lr * acc (B taken as 1; the loss is still divided by the real B).
 * The store knows nothing of libuv, frames or connections; the event loop
 * decodes headers (proto.h) and hands the store the PUSH fields and
 * payload bytes.
 *
 * OWNERSHIP. store_init allocates the weights and the accumulator and
 * copies the initial weights in; store_destroy frees them. Nothing else
 * allocates. Bytes given to store_push_data are read during the call only
 * and may sit at any alignment. store_weights points into the store: the
 * weights of the last COMPLETE step, valid and unchanged until the step in
 * progress completes (its last release). A release's new weights are
 * written into the step's accumulator, in the released range only
 * (store_released.weights points at it); at the step's last release the
 * two buffers swap roles, so that same buffer becomes store_weights and
 * stays valid and unchanged until the end of the NEXT step, which cannot
 * complete before every worker has pushed all of it, that is after every
 * worker has received every weight of the step before.
 *
 * BUCKETS. A worker may send a pass as several pushes, one per bucket of
 * its gradient as the bucket becomes ready (--bucket-size, the way BytePS
 * partitions; ps_worker/main.c): each push carries a contiguous range
 * [first, first + count), count >= 1, inside the owned range, and the
 * pushes of a pass go from the last element down: the first ends at the
 * owned range's end, each next one ends where the one before began, and
 * the push that starts at the owned range's start completes the pass. So
 * every element is added exactly once per pass, and the per-worker state
 * stays O(1) (how far down the pass has come, pass_done). A push that does
 * not end where the pass has come to is refused like any wrong range. The
 * count and loss of a pass travel with its FIRST push (the one that ends
 * at the owned range's end), zeros with the others: a push that is not the
 * first of its pass and counts examples is refused (ERR_PROTO_FIELD). So
 * every count of the step is in before any part of it can be released.
 * The losses of all the pushes are summed. A whole-range push is simply a
 * pass of one push.
 *
 * RELEASE (per-bucket pull). Let top_r be how far down worker r's LAST
 * pass of the step has come (n when its pushes are all complete, 0 while
 * it is in an earlier pass), and top = min over r of top_r. The elements
 * [n - top, n) (from the owned range's start) then hold every worker's
 * whole contribution: no push of this step can add to them again. At
 * most once per call, store_release takes the part not yet released,
 * [n - top, n - released), and applies the element-wise update to it:
 * acc[i] <- the optimizer's update of w[i] with acc[i] / B (SGD: w[i] - lr
 * * acc[i] / B), the very arithmetic of optim_apply (it runs on a staged
 * copy; the optimizer's state entry i is element i's), so the bits are those of one update of the
 * whole range, whatever the cuts. The cuts follow the slowest worker's
 * bucket boundaries (any cuts are fine; workers may even cut differently).
 * The first release of a step first sums the counts (COUNTS) and fails the
 * store if they are wrong, before anything is released. When top reaches n
 * the step is complete: the buffers swap (OWNERSHIP), the new accumulator
 * is zeroed and the store moves to step s+1. store_apply is the one-shot
 * form: after all K pushes are in, it releases what is left.
 *
 * THE STEP STATE MACHINE (s: the store's current step, from 0)
 *
 *   state      event                              next state
 *   INGRESS    push_begin/data/end for step s     INGRESS (READY when the
 *                                                 K-th push is complete)
 *   INGRESS    a refused call (wrong rank, step,  INGRESS, nothing changed
 *              range, size; see below)
 *   INGRESS    store_release of a part (RELEASE)  INGRESS
 *   INGRESS    NaN/Inf in a gradient, push_abort  FAILED
 *   READY      store_apply, or the release of     INGRESS at s+1
 *              the last part
 *   any        a first release or apply with      FAILED
 *              wrong counts or B == 0; a release
 *              of a sum that overflowed to Inf
 *   FAILED     any call                           FAILED (returns the code
 *                                                 of the failure again)
 *
 * Per worker, within a step: WAITING -> (push_begin) RECEIVING ->
 * (push_end) DONE; store_apply puts every worker back to WAITING. A
 * push_end that does not complete a pass (a bucket above the owned range's
 * start) goes back to WAITING for the next bucket; with P passes per step,
 * the end of each of the first P-1 passes goes back to WAITING too, the
 * P-th to DONE.
 *
 * REFUSED versus FAILED. A call that is refused (a push for the wrong step,
 * from a rank >= K, for the wrong element range, more bytes than announced,
 * push_end before the last byte, apply before all K pushes) changes nothing:
 * the store is as it was before the call, and the other workers' pushes
 * still complete the step. Whether to go on is the caller's choice (the
 * server closes that worker, so the run ends anyway). A FAILED store is
 * terminal: its accumulator holds a partial sum that can never be applied,
 * the weights are those of the last complete step (never touched by the
 * failed one: its released parts went to the accumulator, and were sent,
 * but store_weights does not change), store_failed says why, and the run
 * ends.
 *
 * SUMMATION ORDER. Element i's contributions are added in the order their
 * bytes are fed, so a different arrival order of the K pushes can change
 * the result by rounding (the results agree to about 1e-16 relative to the
 * summed magnitudes, not bitwise). Fed in rank order, the sum is
 * ((g0 + g1) + g2) + ... exactly, as a reference loop computes it. With the
 * synthetic workload (workload.h) every partial sum is a small multiple of
 * 1/16, so the sum is exact in f32 and f64 in ANY arrival order.
 *
 * COUNTS. With cfg.batch set, the example counts are checked, the way
 * NaN is: a push whose count takes its worker's total for the step past
 * cfg.count_max (B: no worker has more than the whole batch) fails the
 * step at once, naming the worker and the step; at the step's first
 * release (or store_apply), counts that do not sum to cfg.batch fail it,
 * naming the step, the sum and each worker's count. In both cases the
 * store is FAILED, the weights are untouched (nothing of the step is
 * released), and the run ends non-zero. A --mistake that changes what a
 * worker counts (mean-of-means: 1 per worker with examples) passes its own
 * expected sum, maximum and name (cfg.batch_what).
 *
 * PER-WORKER BUFFERS (the modes other than sync: common/ps/mode.h). With
 * cfg.per_worker the store gives each worker a gradient buffer of its own
 * (K x n elements more: these modes give up the bounded memory above, on
 * purpose, because a push may be applied alone or dropped, and a running
 * sum could not take a late push out again). Pushes stream into their
 * worker's buffer exactly as above (buckets, passes, NaN checks); each
 * worker has its own CLOCK, the step its next push must say (the pushes
 * of one worker come in order; another step is refused as stale,
 * duplicate or future, nothing changed). store_release and store_apply
 * are refused; instead the caller (the mode's policy, mode.h) applies:
 *   store_apply_some(ranks[0..m))  the complete pushes of those workers,
 *       summed in that order, divided by the sum of THEIR counts, one
 *       update (async: one rank, its own count b_r; backup: the first
 *       K - N); those workers' buffers are zeroed, their clocks advance;
 *   store_drop(rank)  a complete push thrown away (backup's late ones);
 *       its clock advances, the weights do not change.
 * store_step counts the updates applied (the VERSION). store_weights is
 * updated in place at each store_apply_some: a caller that sends it must
 * copy it first (or send it before the next apply).
 *
 * ERRORS. Every function that can fail returns 0 or a negative err.h code
 * and fills err[ERR_LEN] with one line naming the worker rank and the step.
 */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "train/optim.h"
#include "wire/proto.h"

struct psgd_server;
struct workload;

#define STORE_MAX_PUSHES 65536  /* P, pushes per worker per step, at most */

/* COMPRESSED PUSHES (--compress fp16|bf16). A push's elements travel in
 * the compressor's format, push_es bytes each; the store decodes each into
 * the dtype as it stages it, then checks and sums in the dtype, exactly as
 * an uncompressed push (the rounding is the worker's, once, before the
 * push). The weights go back in full precision: they are not a sum, and
 * rounding them every step would be a different training run.
 *
 * NOT-LINEAR PUSHES (--compress topk:F|sign; base/compress.h). A push is
 * one frame of the server's whole range, compress_frame_bytes long (the
 * session checks the length and the range before the push begins); its
 * bytes are kept whole per worker (world x frame bytes, owned) and the
 * frame is validated, decoded and added to the sum when it ends
 * (store_frame.c): a hostile frame (a count, index or padding out of
 * range) is refused, ERR_PROTO_FIELD, nothing added; a non-finite value
 * or sum FAILS the step. The weights go back dense, in full precision.
 *
 * POWERSGD PUSHES (--compress powersgd:R[:noef]; store_psgd.c, the rounds:
 * psgd_server.h). Each worker pushes twice per step, both pushes of the
 * owned range's first element (aux = offset): round 0 (P and the raw
 * elements, psgd_server_frame_bytes(0) bytes, with the count and loss),
 * then, after the server has sent every worker round 0's sum, round 1 (Q,
 * count and loss 0). Each frame is kept whole and checked (a wrong size
 * or a value not finite: refused, nothing kept); store_psgd_reply sums a
 * complete round in rank order for the server to send, and after round 1
 * decodes the step's gradient sum into the accumulator, which store_release
 * then applies as any sum (COUNTS, the optimizer, B). A range without a
 * compressed matrix (the mlp's shard that cuts both W1 and W2; linreg at
 * R >= 2) takes plain pushes of its elements instead, one per step. */
struct store_cfg {
    size_t n;               /* elements this server owns (>= 1) */
    uint64_t offset;        /* index of the first of them (--shard I/S) */
    int dtype;              /* enum dtype */
    uint32_t world;         /* K, 1..PROTO_MAX_WORLD */
    double lr;              /* learning rate, finite */
    const void *weights;    /* n initial elements of dtype, copied; NULL: zeros */
    uint32_t pushes_per_step;   /* P pushes per worker per step; 0 or 1: one */
    int divide_by_one;      /* MISTAKE sum-not-mean: w -= lr * acc, not acc / B */
    uint64_t batch;         /* COUNTS: what the example counts of a step must
                               sum to (B); 0: not checked */
    uint64_t count_max;     /* COUNTS: the most one worker may count in a
                               step; 0: batch */
    const char *batch_what; /* names that sum in messages ("B"); NULL: "B" */
    const struct optim_cfg *optim;  /* the optimizer (optim.h; its lr is used, not
                                       `lr` above); NULL: plain SGD at `lr` */
    int per_worker;         /* PER-WORKER BUFFERS (async, ssp, backup); 0: sync */
    int sizes_only;         /* SIZES (bin/psring_sim --payload sizes): a push's bytes
                               are counted, never read: no check, no sum, no update */
    int compress;           /* COMPRESSED PUSHES: the PUSH elements' wire format
                               (base/compress.h); 0: dtype's own */
    int average;            /* LOCAL SGD (--sync-every H > 1; sync only): the pushes
                               are the workers' deltas since the last sync and the
                               update is w + acc / K, no optimizer (divisor K) */
    const struct workload *psgd_w;  /* POWERSGD PUSHES (compress powersgd:R): the
                               workload whose layers give the matrices; read during
                               store_init only */
};

/* Per-worker state of the step in progress: O(1) bytes each. */
struct store_worker {
    int phase;              /* STORE_W_* (store_int.h) */
    uint32_t pushes;        /* complete pushes of the current step (< P unless DONE) */
    uint64_t examples;      /* from the push metadata, summed over its pushes */
    double loss;
    size_t pass_done;       /* elements of the current pass pushed (from the end) */
    size_t first, count;    /* this push: [first, first + count), from offset */
    size_t next;            /* elements of this push already added */
    size_t part_len;        /* bytes of a split element carried in part[] */
    size_t have;            /* NOT-LINEAR PUSHES: bytes of the frame received */
    unsigned char part[8];  /* the start of that element (at most f64) */
    uint64_t clock;         /* PER-WORKER BUFFERS: the step its next push says */
};

struct store {
    size_t n, elem_size;
    uint64_t offset;
    int dtype;
    uint32_t world;
    double lr;
    uint32_t per_step;      /* P: pushes per worker per step (>= 1) */
    int divide_by_one;      /* MISTAKE sum-not-mean */
    int average;            /* LOCAL SGD: w + acc / K */
    uint64_t batch, count_max;      /* COUNTS (0: unchecked) */
    const char *batch_what;
    uint64_t step;          /* the step being collected */
    uint32_t done;          /* workers whose P pushes for `step` are complete */
    size_t released;        /* elements of `step` released, from the top (RELEASE) */
    uint64_t rel_batch;     /* B of `step`, fixed by its first release */
    double rel_loss;        /* the summed loss of `step`, likewise */
    uint64_t payload_in;    /* gradient bytes of every complete push so far */
    int fail_code;          /* 0, or the code that made the store FAILED */
    void *weights;          /* n elements (owned) */
    void *acc;              /* n elements: the running sum (owned) */
    struct store_worker *workers;   /* world entries (owned) */
    char fail_msg[ERR_LEN];  /* why it FAILED */
    int per_worker;         /* PER-WORKER BUFFERS */
    int sizes_only;         /* store_cfg's */
    void *grads;            /* per_worker: K x n elements, worker r's at r x n (owned) */
    struct optim opt;       /* the optimizer and its state for these n elements
                               (optim.h: a plain struct with a size, state_bytes,
                               for a checkpoint; owned) */
    const struct compressor *comp;  /* store_cfg's compress */
    size_t push_es;         /* bytes of one PUSH element on the wire */
    int setting;            /* NOT-LINEAR PUSHES: store_cfg's compress */
    size_t frame_max;       /* ... the bytes of a push's frame */
    unsigned char *frames;  /* ... world x frame_max (owned; NULL with sizes_only) */
    struct psgd_server *psgd;   /* POWERSGD PUSHES: the two rounds (owned); NULL:
                               off, or a range without a compressed matrix */
    int psgd_decoded;       /* ... the step's P^ Q^T is in acc: releasable */
};

/* What store_release released (count 0: nothing new). The new weights of
 * elements [first, first + count) (absolute indices) are at
 * weights + (first - offset) * elem_size: see OWNERSHIP for how long. */
struct store_released {
    uint64_t step;          /* the step they belong to */
    uint64_t first, count;  /* the released range */
    size_t top;             /* elements released so far in the step, from the top */
    int last;               /* this release completed the step */
    const void *weights;    /* the buffer holding the step's new weights */
    uint64_t batch;         /* B (from the first release on) */
    double loss;            /* sum of the pushed losses / B: final when `last` */
    uint64_t divisor;       /* what the sum was divided by: B, or 1 (divide_by_one) */
};

/* What store_apply did. */
struct store_applied {
    uint64_t step;          /* the step just applied */
    uint64_t batch;         /* B: the sum of the pushed example counts */
    double loss;            /* sum of the pushed losses / B */
    uint64_t divisor;       /* what the sum was divided by: B, or 1 (divide_by_one) */
};

/* store_init: allocate and fill *s from *cfg (step 0, INGRESS). ERR_USAGE
 * for n 0, an unknown dtype, K out of range, a non-finite lr, a size
 * that overflows or P > STORE_MAX_PUSHES; -ENOMEM. On failure nothing is held, but store_destroy
 * may still be called. */
int store_init(struct store *s, const struct store_cfg *cfg, char *err);
/* store_destroy: free what store_init allocated; safe to call twice. */
void store_destroy(struct store *s);

/* store_push_begin: worker `rank` starts its PUSH for `step` with metadata
 * *meta and `count` elements starting at element `first`. Refused, with
 * nothing changed: rank >= K (ERR_PROTO_RANK); a step other than the
 * store's, or a push from this rank for it beyond its P (ERR_PROTO_FIELD,
 * the message says stale, future or duplicate; one while its previous push
 * is still arriving is a duplicate too); example counts whose sum over
 * the pushes overflows (ERR_PROTO_FIELD); a range [first, first + count)
 * not inside the one this server owns, empty, or not ending where this
 * worker's pass has come to (BUCKETS; ERR_PROTO_FIELD, or ERR_PROTO_SIZE
 * when only the count is wrong); a non-finite
 * loss (ERR_NONFINITE). meta->examples may be 0: a worker whose share of
 * the batch is empty (B < K) still pushes (zeros), so the barrier counts
 * it; only the sum B must be positive (store_apply). FAILS the store
 * (ERR_PROTO_FIELD) when the worker's counts for the step pass
 * cfg.count_max (COUNTS). */
int store_push_begin(struct store *s, uint32_t rank, uint64_t step,
                     const struct proto_push_meta *meta, uint64_t first,
                     uint64_t count, char *err);

/* store_push_data: the next nbytes payload bytes (after the metadata) of
 * rank's push. More bytes than the push has left: refused (ERR_PROTO_SIZE),
 * nothing added; not inside a push: ERR_PROTO_FIELD. A complete element
 * that is NaN or Inf: ERR_NONFINITE and the store is FAILED (the elements
 * of this piece are checked before any of them is added, but earlier pieces
 * are already in the accumulator). */
int store_push_data(struct store *s, uint32_t rank, const void *bytes,
                    size_t nbytes, char *err);

/* store_push_end: rank's push is complete. Refused (ERR_PROTO_SIZE) while
 * bytes are missing, and ERR_PROTO_FIELD if no push is in progress. */
int store_push_end(struct store *s, uint32_t rank, char *err);

/* store_push_abort: rank's frame was cut off (the worker died or was
 * dropped) during its push of the current step, or the caller gives up on
 * the step: the store is FAILED. err gets the reason. Returns the failure
 * code (ERR_EOF), or the earlier one if the store had already failed. */
int store_push_abort(struct store *s, uint32_t rank, char *err);

/* store_step_ready: 1 when all K pushes of the current step are complete
 * and the store has not failed. */
int store_step_ready(const struct store *s);

/* store_psgd_reply: POWERSGD PUSHES: when all K frames of a round are in,
 * their sum in rank order into *sum (*count elements of dtype, the
 * store's, valid until the next round's pushes) and the round in *round;
 * after round 1 the step's gradient sum is decoded into the accumulator
 * (store_release applies it). 1: a sum to send; 0: nothing (not PowerSGD,
 * or a round incomplete); a negative code: the store FAILED (a sum or a
 * decode not finite). */
int store_psgd_reply(struct store *s, const void **sum, size_t *count, int *round, char *err);

/* store_release: release the part every worker has pushed and that is not
 * released yet (RELEASE): its update applied into the accumulator, *out
 * saying which part (out->count 0: nothing new, nothing changed). The
 * step's first release sums the counts: wrong counts or B == 0 FAIL the
 * store (ERR_PROTO_FIELD, COUNTS); a released part whose sum overflowed to
 * Inf FAILS it (ERR_NONFINITE). store_weights is untouched either way. */
int store_release(struct store *s, struct store_released *out, char *err);

/* store_apply: w -= lr * acc / B with B the sum of the pushed counts (B
 * taken as 1 with divide_by_one), zero the accumulator, advance the step:
 * store_release of everything not yet released. Refused before all K
 * pushes are in (-EAGAIN, nothing changed). B == 0, a count sum that overflows or is not
 * cfg.batch (ERR_PROTO_FIELD, COUNTS) or a summed gradient that overflowed to Inf
 * (ERR_NONFINITE): the store is FAILED, weights untouched. OUT: *out
 * (may be NULL). */
int store_apply(struct store *s, struct store_applied *out, char *err);

/* store_apply_some: PER-WORKER BUFFERS: one update from the complete
 * pushes of workers ranks[0..m) (m >= 1, distinct), summed in that order
 * into the accumulator (m = 1: the worker's buffer itself), divided by the
 * sum of their counts (1 with divide_by_one): w <- optim(w, sum / B), the
 * optimizer's step t = store_step + 1. Their buffers are zeroed, their
 * clocks advance, store_step advances. Refused, nothing changed: not a
 * per-worker store, m = 0, a rank >= K, twice, or whose push is not
 * complete (ERR_PROTO_FIELD / ERR_PROTO_RANK); counts that sum to 0
 * (ERR_PROTO_FIELD). A sum that overflowed to Inf: FAILED (ERR_NONFINITE),
 * weights untouched. OUT: *out (may be NULL): step = the version before,
 * batch = B, loss = their losses / B. */
int store_apply_some(struct store *s, const uint32_t *ranks, uint32_t m,
                     struct store_applied *out, char *err);

/* store_drop: PER-WORKER BUFFERS: worker rank's complete push is thrown
 * away (a late push in backup): its buffer zeroed, its clock advanced, the
 * weights and store_step unchanged. Refused as store_apply_some. */
int store_drop(struct store *s, uint32_t rank, char *err);

/* store_clock: PER-WORKER BUFFERS: the step worker rank's next push must
 * say (0 for rank >= K; store_step in sync). */
uint64_t store_clock(const struct store *s, uint32_t rank);

/* store_resume: go on from a checkpoint (common/ps/checkpoint.h): the
 * weights become n elements copied from `weights`, the step `step`, the
 * accumulator zero, every worker WAITING, a failure forgotten. Whatever
 * optimizer state the store gains must be restored with them. 0. */
int store_resume(struct store *s, uint64_t step, const void *weights);

/* Accessors. store_weights: n elements of dtype (see OWNERSHIP).
 * store_step: the step being collected. store_pushes_done: workers whose
 * pushes of that step are all complete. store_pushes_owed: the pushes
 * worker `rank` still owes the current step (0: done, or rank >= K).
 * store_pass_left: the elements of rank's current pass not yet pushed
 * (n before its first push, 0 when done or rank >= K). store_payload_in:
 * the gradient bytes (elements x size, no metadata) of every complete
 * push so far: K x n x size per step (P times that with P passes).
 * store_failed: 0 or the failure code, with the message in msg (may be
 * NULL) valid as long as the store. store_bytes: the memory the
 * store holds (struct, buffers and per-worker state), for the bounded-
 * memory check. */
const void *store_weights(const struct store *s);
uint64_t store_step(const struct store *s);
uint32_t store_pushes_done(const struct store *s);
uint32_t store_pushes_owed(const struct store *s, uint32_t rank);
size_t store_pass_left(const struct store *s, uint32_t rank);
uint64_t store_payload_in(const struct store *s);
int store_failed(const struct store *s, const char **msg);
size_t store_bytes(const struct store *s);

#endif /* STORE_H */
