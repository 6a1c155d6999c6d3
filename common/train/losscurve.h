/* losscurve.h -- the global loss per step, kept in memory during a run and
 * written at its end (--loss-out FILE), with, optionally, the wall-clock
 * time at which each step's loss was known (--loss-time-out FILE) and the
 * time to a target loss (--target-loss X, the CSV's ttt_s).
 *
 * FILE FORMAT, --loss-out (gnuplot reads it as is; bin/reference prints the
 * same on stdout; tests compare it byte for byte with bin/reference's, so
 * it never changes):
 *
 *     # step loss
 *     0 10.261556425887582
 *     1 8.3133920918221751
 *
 * one "STEP LOSS" line per step, every step (not rate limited, unlike the
 * log), the loss as "%.17g": the mean per-example loss of the step's global
 * batch at the weights before its update (sum of losses / B). Steps not
 * reached (a run that failed) are left out, and a last "# incomplete: ..."
 * comment says so.
 *
 * FILE FORMAT, --loss-time-out: the same lines with a third column, the
 * header line first, then comment lines saying what the columns mean:
 *
 *     # step loss wall_s
 *     # wall_s: seconds since the run's first step began, when the step's
 *     #   loss was known (EMULATED compute time included) ...
 *     0 10.261556425887582 0.0123
 *
 * wall_s as "%.9g"; "nan" for a step recorded without a time (a resumed
 * server's steps before it started). The loss column is the --loss-out
 * file's, bit for bit.
 *
 * WHAT A STEP IS (the caller's choice; docs/design.md, Metrics):
 *   ring_worker (rank 0), ps_server --mode sync: the training step s; wall_s
 *     when its update is known (the ring: after rank 0's apply; the
 *     server: the step's last release).
 *   ps_server --mode backup:N: the applied step s, its loss over the K - N
 *     pushes it used; wall_s at its apply.
 *   ps_server --mode async, ssp:N: one line per APPLIED UPDATE, numbered
 *     0, 1, ... in apply order (K x --steps lines, not --steps); the loss
 *     is that of the last min(K, u + 1) applied pushes, their losses summed
 *     over their example counts summed (one push alone is one worker's
 *     shard, too noisy to stand for the model); wall_s at the apply.
 *
 * TIME TO TARGET (losscurve_time_to): the first wall_s, in step order, at
 * which the recorded loss is <= the target; NaN when none is.
 *
 * OWNERSHIP: losscurve_init allocates room for every step (the loss and the
 * time), so recording a step (inside the timed loop) allocates nothing;
 * losscurve_free frees it.
 */
#ifndef LOSSCURVE_H
#define LOSSCURVE_H

#include <stddef.h>

struct losscurve {
    double *loss;       /* steps entries (owned); NaN: not recorded */
    size_t steps;
    double *wall;       /* steps entries (owned): wall_s; NaN: no time */
};

/* losscurve_init: room for `steps` steps, none recorded. 0 or -ENOMEM. */
int losscurve_init(struct losscurve *lc, size_t steps);
/* losscurve_set: the loss of step `step` (ignored when step >= steps). */
void losscurve_set(struct losscurve *lc, size_t step, double loss);
/* losscurve_set_at: the loss of step `step` and the wall_s it was known
 * at (ignored when step >= steps). */
void losscurve_set_at(struct losscurve *lc, size_t step, double loss, double wall_s);
/* losscurve_write: the --loss-out file above, steps 0.. up to the first
 * one not recorded; `why` (may be NULL) goes into the "# incomplete" line
 * when a step is missing. Written atomically (outfile.h). 0, or a negative
 * errno with a line naming the file in err (ERR_LEN). */
int losscurve_write(const struct losscurve *lc, const char *path, const char *why, char *err);
/* losscurve_write_time: the --loss-time-out file above, the same steps;
 * `note` (may be NULL) is one more comment line under the header, without
 * its "# " (what a step is, for the modes). As losscurve_write. */
int losscurve_write_time(const struct losscurve *lc, const char *path, const char *note,
                         const char *why, char *err);
/* losscurve_time_to: TIME TO TARGET above; NaN when target is NaN. */
double losscurve_time_to(const struct losscurve *lc, double target);
/* losscurve_probe: at start-up, that path can be written (outfile_check:
 * an existing file is left as it is). 0, or a negative code with
 * "--loss-out: cannot write PATH: reason" in err. */
int losscurve_probe(const char *path, char *err);
/* losscurve_free: safe on a zeroed or freed struct. */
void losscurve_free(struct losscurve *lc);

#endif /* LOSSCURVE_H */
