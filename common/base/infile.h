/* infile.h -- the one way psring opens an input file named on the command
 * line (--secret-file, --resume, --replay, --platform file:PATH, the
 * records psr_merge and psring_sim read, fit's CSV): its type is checked
 * before a byte is read (infile.c).
 *
 * A FIFO, a device, a socket or a folder is refused at once with one line
 * and ERR_USAGE (exit 64): open(2) of a FIFO with no writer would wait for
 * ever, a device may never end, and a folder's read fails with a word
 * (EISDIR) far from the flag. The path is stat()ed first, so nothing but a
 * regular file is opened at all; it is then opened with O_NONBLOCK (a FIFO
 * swapped in between the two is not waited on) and fstat()ed again, and
 * O_NONBLOCK is cleared for the reads. A symlink is followed: an input is
 * only read, never replaced.
 *
 * Messages are one line: "FLAG: cannot read PATH: reason".
 *
 * OWNERSHIP. The descriptor or stream returned is the caller's to close.
 * Nothing is allocated but the stream of infile_fopen.
 */
#ifndef INFILE_H
#define INFILE_H

#include <stdio.h>

/* infile_open: path opened read-only (O_CLOEXEC) once it is shown to be a
 * regular file. The descriptor, or a negative code: ERR_USAGE for
 * something that is not a regular file (or an empty path), -errno for a
 * failed stat or open; the line in err[ERR_LEN]. */
int infile_open(const char *flag, const char *path, char *err);

/* infile_fopen: infile_open as a stdio stream ("r"). NULL on failure, with
 * the code in *rc and the line in err. */
FILE *infile_fopen(const char *flag, const char *path, int *rc, char *err);

/* infile_check: that path is a regular file that can be opened for
 * reading (opened and closed again; for a file another program reads,
 * SimGrid's platform). 0, or infile_open's code and line. */
int infile_check(const char *flag, const char *path, char *err);

#endif /* INFILE_H */
