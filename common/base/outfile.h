/* outfile.h -- the one way psring writes an output file: checked at start,
 * written atomically at the end (outfile.c).
 *
 * Every file a program writes (--weights-out, --loss-out, --loss-time-out,
 * --trace, --csv, --json, --port-file, --checkpoint, --record,
 * --staleness-out, psring_sim's --host-bytes, --csv-out, --json-out,
 * --platform-out, psr_merge --out and --json-out, psr_json --out)
 * goes through this module, so each gets the same promises:
 *
 *   AT START  outfile_check(flag, path) proves the file can be written: a
 *             real temp file is created (O_CREAT|O_EXCL) in the target's
 *             folder and removed again. access() would not do: it says yes
 *             to root whatever the mode, and it knows nothing of read-only
 *             mounts. A bad path ends the run before any training, with one
 *             line naming the path and the errno text.
 *   NEVER     replace what is not a regular file: a FIFO, a device, a
 *             folder, a socket, or a symlink to one of these is refused
 *             with one line (and left as it was). Never follow a symlink
 *             out of its folder: a symlink to a regular file in the link's
 *             own folder (both folders resolved) is followed, the file it
 *             names is replaced and the link stays; a symlink to a file
 *             anywhere else is refused (ERR_USAGE, exit 64), so a link
 *             planted in a shared output folder cannot make a run replace
 *             the planter's victim (docs/security.md).
 *   MODE      a replaced file keeps its mode (the temp file is created
 *             0600 and given the old file's mode before a byte is
 *             written); a new file is 0644 before the umask.
 *   ATOMIC    outfile_open creates "DIR/.BASE.tmp.PID.N" (O_EXCL) next
 *             to the target; the writes go
 *             there; outfile_commit fsyncs it, renames it over the target
 *             and fsyncs the folder. A reader sees the old file or the new
 *             one, never half of one; a failed write (a full disk) leaves
 *             the old file as it was and removes the temp file.
 *   ERRORS    every write, fsync, close and rename is checked, and the
 *             first failure's errno is reported as it is (ENOSPC reads "No
 *             space left on device", never EIO).
 *
 * outfile_append is the one exception to ATOMIC: a row appended to a
 * shared CSV or JSON Lines file (psring_sim --csv-out and --json-out,
 * psr_merge --out and --json-out), with the same
 * checks and O_NOFOLLOW|O_NONBLOCK on the open itself.
 *
 * Messages are one line, "--FLAG: cannot write PATH: reason".
 *
 * OWNERSHIP. struct outfile is the caller's (on the stack or inside its
 * own struct); it holds an open descriptor and a 64 KiB buffer between
 * outfile_open and outfile_commit/outfile_abort, and nothing after either.
 * Nothing is allocated.
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#define OUTFILE_PATH_MAX 4160   /* CLI_PATH_MAX plus a suffix and the temp name */
#define OUTFILE_BUF (64 * 1024)

struct outfile {
    int fd;                         /* the temp file; -1: not open */
    int err;                        /* 0, or the first failure's -errno */
    const char *flag;               /* "--weights-out": for the messages */
    size_t len;                     /* bytes in buf not yet written */
    /* Called by outfile_commit after the temp file is fsynced and closed,
     * just before the rename; NULL (outfile_open's) for none. A test hook
     * (common/ps/checkpoint.h, PSRING_TEST_KILL_BEFORE_RENAME). */
    void (*before_rename)(const struct outfile *o);
    char path[OUTFILE_PATH_MAX];    /* the target (a symlink resolved) */
    char tmp[OUTFILE_PATH_MAX];     /* the temp file next to it */
    char buf[OUTFILE_BUF];
};

/* outfile_check: at start-up, that `path` can be written later: it is not
 * something other than a regular file, its folder exists, and a temp file
 * can be created there (it is removed again; an existing file at `path` is
 * not touched). 0, or a negative errno (ERR_USAGE for a path that is not a
 * regular file or names a folder) with "FLAG: cannot write PATH: reason"
 * in err[ERR_LEN]. */
int outfile_check(const char *flag, const char *path, char *err);

/* outfile_open: the checks of outfile_check, then the temp file, open for
 * writing. 0, or a negative code with the line in err; on failure *o holds
 * nothing (outfile_abort is still safe). */
int outfile_open(struct outfile *o, const char *flag, const char *path, char *err);

/* outfile_write / outfile_printf: append to the file (buffered). After a
 * failure they do nothing: the first error is kept for outfile_commit. */
void outfile_write(struct outfile *o, const void *p, size_t n);
__attribute__((format(printf, 2, 3)))
void outfile_printf(struct outfile *o, const char *fmt, ...);

/* outfile_commit: write what is buffered, fsync, close, rename over the
 * target, fsync the folder. 0, or the first failure's negative errno with
 * the line in err; on failure the temp file is removed and the target is
 * as it was. *o holds nothing after the call. */
int outfile_commit(struct outfile *o, char *err);

/* outfile_abort: close and remove the temp file; the target is untouched.
 * Safe on a struct that is not open. */
void outfile_abort(struct outfile *o);

/* outfile_new: outfile_open on an outfile of its own on the heap (its
 * 64 KiB buffer is not for a thread's stack). NULL on failure, with the
 * negative code in *rc and the line in err. outfile_end: outfile_commit,
 * then free it; its result. */
struct outfile *outfile_new(const char *flag, const char *path, int *rc, char *err);
int outfile_end(struct outfile *o, char *err);

/* outfile_write_text: the whole file in one call: open, write the n bytes
 * of p, commit (the --port-file). 0, or a negative code with the line. */
int outfile_write_text(const char *flag, const char *path, const void *p, size_t n, char *err);

/* outfile_append: `path` opened for appending (created 0644 if missing),
 * after the checks of outfile_check (a symlink only within its folder; a
 * FIFO, device, folder refused with ERR_USAGE). *fresh: 1 when the file
 * is empty (write a header). The stream (the caller fcloses it and checks
 * that), or NULL with the negative code in *rc and the line in err. Not
 * atomic: rows from several writers interleave whole (O_APPEND). */
FILE *outfile_append(const char *flag, const char *path, int *fresh, int *rc, char *err);

#endif /* OUTFILE_H */
