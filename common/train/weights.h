/* weights.h -- the --weights-out file, written the same way by every
 * program (docs/design.md): PATH.RANK, one element per line as "%.17g", so a
 * double reads back bit for bit and two files can be compared with cmp
 * (bitwise) or awk (within a bound). The parameter server's workers, the
 * ring's ranks and bin/reference (rank 0) all call this one function, so
 * their files are comparable by construction.
 */
#ifndef WEIGHTS_H
#define WEIGHTS_H

#include <stddef.h>

/* A rank < 0 names the file PATH itself (ps_server's PATH.server). */

/* weights_check: at start-up, that "PATH.RANK" can be written
 * (outfile_check: an existing file is not touched). 0, or a negative code
 * with "--weights-out: cannot write PATH.RANK: reason" in err[ERR_LEN]. */
int weights_check(const char *path, int rank, char *err);

/* weights_write: write n elements of dtype from w to "PATH.RANK",
 * atomically (outfile.h: an old file stays whole until the new one is
 * complete). 0, or a negative err.h code with "--weights-out: ..." naming
 * the file in err[ERR_LEN] (a missing folder, a full disk). w is only
 * read. */
int weights_write(const char *path, int rank, const void *w, size_t n, int dtype, char *err);

#endif /* WEIGHTS_H */
