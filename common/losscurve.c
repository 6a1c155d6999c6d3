/* losscurve.c -- the per-step loss array and its file (see losscurve.h). */
#include "losscurve.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "outfile.h"

int losscurve_init(struct losscurve *lc, size_t steps)
{
    lc->steps = 0;
    lc->loss = malloc((steps ? steps : 1) * sizeof *lc->loss);
    if (!lc->loss)
        return -ENOMEM;
    lc->steps = steps;
    for (size_t i = 0; i < steps; i++)
        lc->loss[i] = NAN;
    return 0;
}

void losscurve_set(struct losscurve *lc, size_t step, double loss)
{
    if (step < lc->steps)
        lc->loss[step] = loss;
}

int losscurve_write(const struct losscurve *lc, const char *path, const char *why, char *err)
{
    size_t s;
    int rc;
    struct outfile *o = outfile_new("--loss-out", path, &rc, err);

    if (!o)
        return rc;
    outfile_printf(o, "# step loss\n");
    /* A recorded loss is never NaN: the workers' losses are checked finite
     * before they are summed (a sum may still overflow to Inf: kept). */
    for (s = 0; s < lc->steps && !isnan(lc->loss[s]); s++)
        outfile_printf(o, "%zu %.17g\n", s, lc->loss[s]);
    if (s < lc->steps)
        outfile_printf(o, "# incomplete: %zu of %zu steps%s%.200s\n", s, lc->steps,
                       why && *why ? ": " : "", why ? why : "");
    return outfile_end(o, err);
}

int losscurve_probe(const char *path, char *err)
{
    return outfile_check("--loss-out", path, err);
}

void losscurve_free(struct losscurve *lc)
{
    free(lc->loss);
    lc->loss = NULL;
    lc->steps = 0;
}
