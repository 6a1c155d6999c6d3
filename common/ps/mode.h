/* mode.h -- the parameter server's training modes as a policy without
 * sockets and without arithmetic: which complete pushes make an update,
 * when a worker may be sent weights, what is dropped, and what is recorded.
 *
 * The store (store.h) does the summation and the update; the event loop
 * (server.c, server_mode.c) moves the bytes. This module only decides, from the sequence of
 * complete pushes (rank, the step it says, the version of the weights it
 * computed on, its example count) and of pull requests, what happens, and
 * keeps the evidence: the versions, each update's staleness, the SSP lead,
 * the dropped pushes, and the record of applied updates (--record FILE).
 *
 * THE MODES (`--mode`; K workers; a worker's CLOCK c_r is how many of its
 * pushes the server has taken, i.e. the step it computes next; the
 * server's VERSION v is how many updates it has applied):
 *
 *   sync       one update per step from all K pushes of that step, B the
 *              sum of their counts (today's barrier; store.h). v = step.
 *   async      every push is one update, applied when it is complete:
 *              w <- w - lr * g_r / b_r, its gradient divided by its OWN
 *              example count b_r (the rule: each push is the mean gradient
 *              of the examples it was computed on, as a one-worker step
 *              would be). The weights a worker pulls carry v (the step
 *              field of WEIGHTS), it pushes with that version, and the
 *              update's STALENESS is v_at_apply - v_computed_on (>= 0).
 *   ssp:N      async, plus a bound: a worker may be at most N steps ahead
 *              of the slowest. The server holds a worker's PULL (not its
 *              push) while c_r - min_j c_j > N (mode_pull_ok), and CHECKS,
 *              at every push, that the pushing worker's step is at most N
 *              ahead of the slowest clock: a violation is a hard failure of
 *              the run (mode_push returns ERR_PROTO_FIELD with one line),
 *              not a log line. ssp:0 is lock-step without the barrier's
 *              single update. The largest lead seen is kept (max_lead).
 *   backup:N   synchronous steps that use the FIRST K - N complete pushes
 *              of the step (in completion order); the mean is over them
 *              (B = the sum of THEIR counts; the COUNTS check becomes "the
 *              used pushes sum to B"). A push for an older step that
 *              arrives after its step was applied is DROPPED and counted.
 *              The ranks each step used are recorded. 1 <= N < K.
 *
 * STEPS A WORKER SAYS. Each worker's pushes must come in its own order:
 * the step of a push is its clock (the first is 0, or the resumed step):
 * a push for another step is refused (stale, duplicate or future) and
 * changes nothing. In sync and backup the step is also the server's: a
 * push for a step after the one being collected is refused; one for an
 * earlier step is dropped in backup (late) and refused in sync.
 *
 * RECORD. Each applied update appends one entry (an array that grows by
 * doubling; entries are small: the bounded-memory rule is about gradients,
 * and a record costs O(steps x K) integers). mode_record_write writes it as
 * text (format in mode.c's comment) through common/outfile (atomic).
 *
 * OWNERSHIP. mode_init allocates the per-worker clocks and the record;
 * mode_destroy frees them; safe to call twice.
 *
 * ERRORS. Functions that can fail return 0 or a negative err.h code with
 * one line in err[ERR_LEN] naming the worker and the step.
 */
#ifndef MODE_H
#define MODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum mode_kind { MODE_SYNC = 0, MODE_ASYNC, MODE_SSP, MODE_BACKUP };

#define MODE_HIST 17            /* staleness bins 0..15 and ">= 16" */

struct mode_cfg {
    int kind;                   /* enum mode_kind */
    uint32_t n;                 /* ssp: the bound N; backup: the N backups */
};

/* What one complete push made happen (mode_push). */
enum mode_action {
    MODE_WAIT = 0,              /* counted; its step is not complete yet */
    MODE_APPLY,                 /* async/ssp: apply this push now, alone */
    MODE_STEP,                  /* sync/backup: this push completed the step:
                                   apply the step from the pushes `used` */
    MODE_DROP,                  /* backup: late for an applied step: discard */
    MODE_SENT,                  /* (the record only) a worker was sent weights */
};

struct mode_verdict {
    int action;                 /* enum mode_action */
    uint64_t version;           /* MODE_APPLY/STEP: the version the update makes
                                   (the server's version after it) */
    uint64_t staleness;         /* MODE_APPLY: version before it - computed on */
    uint64_t batch;             /* MODE_APPLY: b_r; MODE_STEP: B of the used */
    uint32_t nused;             /* MODE_STEP: how many pushes the step used */
    const uint32_t *used;       /* MODE_STEP: their ranks, in completion order
                                   (valid until the next mode_push) */
};

/* One entry of the record. */
struct mode_entry {
    uint64_t version;           /* the server's version after this update */
    uint64_t step;              /* the step the push(es) said */
    uint64_t based_on;          /* APPLY: the version computed on */
    uint64_t examples;          /* APPLY: b_r; STEP: B */
    uint32_t rank;              /* APPLY: the pusher; STEP: UINT32_MAX; DROP: the late one */
    int action;                 /* MODE_APPLY, MODE_STEP or MODE_DROP */
    size_t used_at, nused;      /* STEP: its ranks in mode->used_log[used_at..] */
};

struct mode {
    struct mode_cfg cfg;
    uint32_t world;
    uint64_t step;              /* sync/backup: the step being collected */
    uint64_t version;           /* updates applied */
    uint64_t *clock;            /* world entries: each worker's next step */
    uint32_t *used;             /* world entries: this step's used ranks */
    uint32_t nused;
    uint64_t batch;             /* sync/backup: the used counts summed so far */
    uint64_t dropped;           /* backup: late pushes dropped */
    uint64_t max_lead;          /* ssp/async: the largest step - min clock seen */
    uint64_t hist[MODE_HIST];   /* staleness of the applied updates */
    uint64_t stale_sum, stale_n;
    /* the record */
    struct mode_entry *log;
    size_t nlog, caplog;
    uint32_t *used_log;
    size_t nused_log, capused;
};

/* mode_parse: "sync", "async", "ssp:N" or "backup:N" into *out. N is
 * checked against THE BOUNDS (common/base/cli.c: ssp-bound, backup-count); that
 * N < K is mode_init's check. 0, or ERR_USAGE with one line in err. */
int mode_parse(const char *v, struct mode_cfg *out, char *err);

/* mode_name: "sync", "async", "ssp:N" or "backup:N" into out[32]; returns out. */
const char *mode_name(const struct mode_cfg *cfg, char *out);

/* mode_init: K workers, every clock at `step` (0, or a resumed step; the
 * version starts there too). ERR_USAGE when backup's N is not below K or
 * K is 0; -ENOMEM. */
int mode_init(struct mode *m, const struct mode_cfg *cfg, uint32_t world, uint64_t step,
              char *err);
void mode_destroy(struct mode *m);

/* mode_min_clock: the slowest worker's clock: every worker has pushed
 * the steps below it. */
uint64_t mode_min_clock(const struct mode *m);

/* mode_pull_ok: 1 when worker `rank` may be sent the weights for its next
 * step now; 0 when SSP holds it (its clock is more than N ahead of the
 * slowest). Always 1 in the other modes. */
int mode_pull_ok(const struct mode *m, uint32_t rank);

/* mode_push: worker `rank`'s push for `step`, computed on weights of
 * version `based_on` with `examples` examples, is complete. OUT: *out.
 * Refused, nothing changed (ERR_PROTO_RANK, ERR_PROTO_FIELD): rank >= K,
 * a step that is not the worker's clock, a future step (sync/backup),
 * based_on after the server's version, examples 0 in async/ssp. FAILS
 * (ERR_PROTO_FIELD, "ssp:N violated"): the SSP check. */
int mode_push(struct mode *m, uint32_t rank, uint64_t step, uint64_t based_on,
              uint64_t examples, struct mode_verdict *out, char *err);

/* mode_sent: the record notes that worker `rank` was sent the weights of
 * the current version (async, ssp: the replay's copy of them; SSP may send
 * them later than the worker's own update). 0 or -ENOMEM. */
int mode_sent(struct mode *m, uint32_t rank);

/* mode_hist_line: "staleness: mean M, max X; 0:a 1:b ..." (non-empty bins)
 * into out[len]. */
void mode_hist_line(const struct mode *m, char *out, size_t len);

/* mode_hist_write: the staleness histogram to `path` as two columns under
 * a "# staleness updates" header (the last bin is ">= 16", written as 16),
 * atomically (common/outfile). 0 or a negative code with err. */
int mode_hist_write(const struct mode *m, const char *flag, const char *path, char *err);

/* mode_record_write: the record as text to `path` (flag names it in
 * messages), atomically (common/outfile). 0 or a negative code with err. */
int mode_record_write(const struct mode *m, const char *flag, const char *path, char *err);

#endif /* MODE_H */
