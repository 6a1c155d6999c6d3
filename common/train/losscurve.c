/* losscurve.c -- the per-step loss array, its times and its files (see
 * losscurve.h). */
#include "losscurve.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/outfile.h"

int losscurve_init(struct losscurve *lc, size_t steps)
{
    lc->steps = 0;
    lc->loss = malloc((steps ? steps : 1) * sizeof *lc->loss);
    lc->wall = malloc((steps ? steps : 1) * sizeof *lc->wall);
    if (!lc->loss || !lc->wall) {
        losscurve_free(lc);
        return -ENOMEM;
    }
    lc->steps = steps;
    for (size_t i = 0; i < steps; i++)
        lc->loss[i] = lc->wall[i] = NAN;
    return 0;
}

void losscurve_set(struct losscurve *lc, size_t step, double loss)
{
    if (step < lc->steps)
        lc->loss[step] = loss;
}

void losscurve_set_at(struct losscurve *lc, size_t step, double loss, double wall_s)
{
    if (step < lc->steps) {
        lc->loss[step] = loss;
        lc->wall[step] = wall_s;
    }
}

/* put_curve: either file; `timed` adds the wall_s column and its comment. */
static int put_curve(const struct losscurve *lc, const char *flag, const char *path, int timed,
                 const char *note, const char *why, char *err)
{
    size_t s;
    int rc;
    struct outfile *o = outfile_new(flag, path, &rc, err);

    if (!o)
        return rc;
    outfile_printf(o, timed ? "# step loss wall_s\n" : "# step loss\n");
    if (timed) {
        outfile_printf(o, "# wall_s: seconds since the run's first step began, when the "
                       "step's loss was known (EMULATED compute time included: "
                       "--backward-time, --straggler, --jitter, --pause)\n");
        if (note && *note)
            outfile_printf(o, "# %.300s\n", note);
    }
    /* A recorded loss is never NaN: the workers' losses are checked finite
     * before they are summed (a sum may still overflow to Inf: kept). */
    for (s = 0; s < lc->steps && !isnan(lc->loss[s]); s++) {
        if (timed)
            outfile_printf(o, "%zu %.17g %.9g\n", s, lc->loss[s], lc->wall[s]);
        else
            outfile_printf(o, "%zu %.17g\n", s, lc->loss[s]);
    }
    if (s < lc->steps)
        outfile_printf(o, "# incomplete: %zu of %zu steps%s%.200s\n", s, lc->steps,
                       why && *why ? ": " : "", why ? why : "");
    return outfile_end(o, err);
}

int losscurve_write(const struct losscurve *lc, const char *path, const char *why, char *err)
{
    return put_curve(lc, "--loss-out", path, 0, NULL, why, err);
}

int losscurve_write_time(const struct losscurve *lc, const char *path, const char *note,
                         const char *why, char *err)
{
    return put_curve(lc, "--loss-time-out", path, 1, note, why, err);
}

double losscurve_time_to(const struct losscurve *lc, double target)
{
    if (isnan(target) || !lc->loss)
        return NAN;
    for (size_t s = 0; s < lc->steps && !isnan(lc->loss[s]); s++)
        if (lc->loss[s] <= target && !isnan(lc->wall[s]))
            return lc->wall[s];
    return NAN;
}

int losscurve_probe(const char *path, char *err)
{
    return outfile_check("--loss-out", path, err);
}

void losscurve_free(struct losscurve *lc)
{
    free(lc->loss);
    free(lc->wall);
    lc->loss = NULL;
    lc->wall = NULL;
    lc->steps = 0;
}
