/* weights.c -- the --weights-out file (weights.h). */
#include "weights.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "vec.h"

int weights_write(const char *path, int rank, const void *w, size_t n, int dtype, char *err)
{
    char file[CLI_PATH_MAX + 16];
    FILE *f;
    int rc = 0;

    snprintf(file, sizeof file, "%s.%d", path, rank);
    f = fopen(file, "w");
    if (!f) {
        rc = -errno;
        snprintf(err, ERR_LEN, "--weights-out: cannot write %.200s: %s", file, strerror(errno));
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.17g\n", vec_get(w, i, dtype));
    if (ferror(f))
        rc = -EIO;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc != 0)
        snprintf(err, ERR_LEN, "--weights-out: writing %.200s: %s", file, err_str(rc));
    return rc;
}
