/* losscurve.c -- the per-step loss array and its file (see losscurve.h). */
#include "losscurve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

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
    FILE *f = fopen(path, "w");
    size_t s;
    int rc = 0;

    if (!f) {
        rc = -errno;
        snprintf(err, ERR_LEN, "--loss-out: cannot write %.200s: %s", path, strerror(errno));
        return rc;
    }
    fprintf(f, "# step loss\n");
    /* A recorded loss is never NaN: the workers' losses are checked finite
     * before they are summed (a sum may still overflow to Inf: kept). */
    for (s = 0; s < lc->steps && !isnan(lc->loss[s]); s++)
        fprintf(f, "%zu %.17g\n", s, lc->loss[s]);
    if (s < lc->steps)
        fprintf(f, "# incomplete: %zu of %zu steps%s%.200s\n", s, lc->steps,
                why && *why ? ": " : "", why ? why : "");
    if (ferror(f))
        rc = -EIO;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc != 0)
        snprintf(err, ERR_LEN, "--loss-out: writing %.200s: %s", path, err_str(rc));
    return rc;
}

int losscurve_probe(const char *path, char *err)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        int rc = -errno;
        snprintf(err, ERR_LEN, "--loss-out: cannot write %.200s: %s", path, strerror(errno));
        return rc;
    }
    fclose(f);
    return 0;
}

void losscurve_free(struct losscurve *lc)
{
    free(lc->loss);
    lc->loss = NULL;
    lc->steps = 0;
}
