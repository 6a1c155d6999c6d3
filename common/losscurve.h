/* losscurve.h -- the global loss per step, kept in memory during a run and
 * written at its end (--loss-out FILE).
 *
 * FILE FORMAT (gnuplot reads it as is; bin/reference prints the same on
 * stdout):
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
 * OWNERSHIP: losscurve_init allocates room for every step, so recording a
 * step (inside the timed loop) allocates nothing; losscurve_free frees it.
 */
#ifndef LOSSCURVE_H
#define LOSSCURVE_H

#include <stddef.h>

struct losscurve {
    double *loss;       /* steps entries (owned); NaN: not recorded */
    size_t steps;
};

/* losscurve_init: room for `steps` steps, none recorded. 0 or -ENOMEM. */
int losscurve_init(struct losscurve *lc, size_t steps);
/* losscurve_set: the loss of step `step` (ignored when step >= steps). */
void losscurve_set(struct losscurve *lc, size_t step, double loss);
/* losscurve_write: the file above, steps 0.. up to the first one not
 * recorded; `why` (may be NULL) goes into the "# incomplete" line when a
 * step is missing. Written atomically (outfile.h). 0, or a negative errno
 * with a line naming the file in err (ERR_LEN). */
int losscurve_write(const struct losscurve *lc, const char *path, const char *why, char *err);
/* losscurve_probe: at start-up, that path can be written (outfile_check:
 * an existing file is left as it is). 0, or a negative code with
 * "--loss-out: cannot write PATH: reason" in err. */
int losscurve_probe(const char *path, char *err);
/* losscurve_free: safe on a zeroed or freed struct. */
void losscurve_free(struct losscurve *lc);

#endif /* LOSSCURVE_H */
