/* auto.c -- ring_worker --algo auto (auto.h says what and why). */
#include "auto.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/infile.h"
#include "base/outfile.h"
#include "base/vec.h"
#include "coll/coll.h"
#include "measure/model.h"

#define GAMMA_BYTES (256 * 1024)
#define GAMMA_PASSES 16

/* measure_gamma: seconds per byte of vec_add, the best of the passes. */
static double measure_gamma(int dtype)
{
    size_t n = GAMMA_BYTES / dtype_size(dtype);
    void *acc = calloc(n, dtype_size(dtype)), *x = calloc(n, dtype_size(dtype));
    double best = INFINITY;

    if (!acc || !x) {
        free(acc);
        free(x);
        return NAN;
    }
    for (size_t i = 0; i < n; i++)
        vec_set(x, i, dtype, (double)(i % 7));
    for (int p = 0; p < GAMMA_PASSES; p++) {
        double t0 = clock_now(), t;
        vec_add(acc, x, n, dtype);
        t = clock_now() - t0;
        if (t < best)
            best = t;
    }
    free(acc);
    free(x);
    return best / GAMMA_BYTES;
}

/* read_file: the three keys from FILE (auto.h's format). */
static int read_file(const char *file, struct auto_calib *cal, char *err)
{
    static const char *const keys[3] = { "latency_s", "bw_Bps", "gamma_s_per_byte" };
    double *vals[3] = { &cal->lat, &cal->bw, &cal->gamma };
    int rc, seen[3] = { 0, 0, 0 };
    char line[256], key[64];
    double v;
    FILE *f = infile_fopen("--calibration", file, &rc, err);

    if (!f)
        return rc;
    while (fgets(line, sizeof line, f)) {
        int i;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%63s %lf", key, &v) != 2)
            break;
        for (i = 0; i < 3 && strcmp(key, keys[i]) != 0; i++)
            ;
        if (i == 3 || seen[i]++ || !isfinite(v) || v < 0 || (i == 1 && v <= 0))
            break;
        *vals[i] = v;
    }
    fclose(f);
    if (seen[0] == 1 && seen[1] == 1 && seen[2] == 1)
        return 0;
    err_say(err, "--calibration %s: not latency_s, bw_Bps and gamma_s_per_byte once each "
            "(finite, >= 0, bw > 0; docs/design.md)", file);
    return ERR_USAGE;
}

int auto_calibrate(const char *file, double link_bw, double link_latency, int dtype,
                   struct auto_calib *cal, char *err)
{
    char text[256];
    int n;

    memset(cal, 0, sizeof *cal);
    if (file && infile_check("--calibration", file, err) == 0) {
        snprintf(cal->source, sizeof cal->source, "--calibration file");
        return read_file(file, cal, err);
    }
    if (!(link_bw > 0)) {
        err_say(err, "--algo auto: without --link-bw the link's a and bw are not known; give "
                "--link-bw or --calibration FILE (an existing one)");
        return ERR_USAGE;
    }
    cal->lat = link_latency;
    cal->bw = link_bw;
    cal->gamma = measure_gamma(dtype);
    if (!isfinite(cal->gamma)) {
        err_say(err, "--algo auto: no memory for the reduction loop");
        return -ENOMEM;
    }
    snprintf(cal->source, sizeof cal->source, "the emulated link, g measured here");
    if (!file)
        return 0;
    n = snprintf(text, sizeof text, "# psring --algo auto calibration (ring_worker): the "
                 "emulated link's a and bw, g from a local vec_add loop\nlatency_s %.9g\n"
                 "bw_Bps %.9g\ngamma_s_per_byte %.6g\n", cal->lat, cal->bw, cal->gamma);
    return outfile_write_text("--calibration", file, text, (size_t)n, err);
}

int auto_choose(const struct auto_calib *cal, int k, double bytes, char *line, size_t len)
{
    const struct model_algo_row *runner, *best;
    double t[2];

    best = model_select(k, bytes, cal->bw, cal->lat, cal->gamma, &runner, t);
    snprintf(line, len, "--algo auto: %s (%.6g s predicted) over %s (%.6g s) at K = %d, "
             "n = %.0f bytes; a = %.3g s, bw = %.4g B/s, g = %.3g s/B (%s)", best->name, t[0],
             runner ? runner->name : "none", t[1], k, bytes, cal->lat, cal->bw, cal->gamma,
             cal->source);
    return coll_algo_parse(best->name);
}
