/* weights.c -- the --weights-out file (weights.h), written through
 * outfile.h: checked at start, replaced atomically at the end. */
#include "weights.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/cli.h"
#include "base/err.h"
#include "base/outfile.h"
#include "base/vec.h"

/* file_name: "PATH.RANK" into out (CLI_PATH_MAX + 16); PATH for rank < 0. */
static void file_name(char *out, const char *path, int rank)
{
    if (rank < 0)
        snprintf(out, CLI_PATH_MAX + 16, "%s", path);
    else
        snprintf(out, CLI_PATH_MAX + 16, "%s.%d", path, rank);
}

int weights_check(const char *path, int rank, char *err)
{
    char file[CLI_PATH_MAX + 16];

    file_name(file, path, rank);
    return outfile_check("--weights-out", file, err);
}

int weights_write(const char *path, int rank, const void *w, size_t n, int dtype, char *err)
{
    char file[CLI_PATH_MAX + 16];
    struct outfile *o;
    int rc;

    file_name(file, path, rank);
    if (!(o = outfile_new("--weights-out", file, &rc, err)))
        return rc;
    for (size_t i = 0; i < n; i++)
        outfile_printf(o, "%.17g\n", vec_get(w, i, dtype));
    return outfile_end(o, err);
}
