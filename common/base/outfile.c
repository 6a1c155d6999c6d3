/* outfile.c -- output files checked at start and written atomically
 * (outfile.h): temp file in the target's folder, fsync, rename, fsync the
 * folder; never over anything but a regular file, never through a
 * symlink out of its folder, keeping a replaced file's mode.
 *
 * The checks and the rename are not one atomic act: a FIFO put in the
 * target's place between outfile_open's check and the rename would be
 * replaced. The target is checked again just before the rename, which
 * narrows that window to a few system calls; closing it for good would
 * need renameat2 flags no file system offers for this case. psring's
 * outputs are the user's own files, so this is the simplification.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

static unsigned long tmp_serial;    /* temp names of one process differ */

/* say: "FLAG: cannot write PATH: reason". Returns rc. */
static int say(char *err, const char *flag, const char *path, int rc, const char *why)
{
    err_say(err, "%s: cannot write %.300s: %s", flag, path, why ? why : strerror(-rc));
    return rc;
}

static const char *kind_name(mode_t m)
{
    if (S_ISDIR(m))
        return "it is a folder";
    if (S_ISFIFO(m))
        return "it is a FIFO, not a regular file (left as it is)";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "it is a device, not a regular file (left as it is)";
    if (S_ISSOCK(m))
        return "it is a socket, not a regular file (left as it is)";
    return "it is not a regular file (left as it is)";
}

/* dir_of: the folder part of path into out (OUTFILE_PATH_MAX): "." for a
 * bare name, "/" for a name in the root. */
static void dir_of(const char *path, char *out)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        strcpy(out, ".");
    else if (slash == path)
        strcpy(out, "/");
    else
        snprintf(out, OUTFILE_PATH_MAX, "%.*s", (int)(slash - path), path);
}

/* link_target: for the symlink `path`, whose final target is the regular
 * file `real` (realpath's), 0 when `real` lies in the link's own folder
 * (both folders resolved), else ERR_USAGE with the line: a link planted in
 * an output folder must not reach a file elsewhere (docs/security.md). */
static int link_target(const char *flag, const char *path, const char *real, char *err)
{
    char dir[OUTFILE_PATH_MAX], rdir[PATH_MAX], tdir[OUTFILE_PATH_MAX];

    dir_of(path, dir);
    dir_of(real, tdir);
    if (!realpath(dir, rdir))
        return say(err, flag, path, -errno, NULL);
    if (strcmp(rdir, tdir) != 0) {
        err_say(err, "%s: cannot write %.200s: it is a symlink to %.200s, outside its folder "
                "(left as it is)", flag, path, real);
        return ERR_USAGE;
    }
    return 0;
}

/* target: the file to replace for `path` into out (OUTFILE_PATH_MAX): path
 * itself, or what its symlink names when that lies in the link's own
 * folder; its mode into *mode (0: no file there yet). 0, or a negative
 * code with the line. */
static int target(const char *flag, const char *path, char *out, mode_t *mode, char *err)
{
    struct stat st;
    size_t n = strlen(path);

    *mode = 0;
    if (n == 0)
        return say(err, flag, path, ERR_USAGE, "empty path");
    if (n >= OUTFILE_PATH_MAX - 64)
        return say(err, flag, path, -ENAMETOOLONG, NULL);
    if (path[n - 1] == '/')
        return say(err, flag, path, ERR_USAGE, "it names a folder, not a file");
    memcpy(out, path, n + 1);
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : say(err, flag, path, -errno, NULL);
    if (S_ISLNK(st.st_mode)) {
        char real[PATH_MAX];
        int rc;
        if (stat(path, &st) != 0) {
            if (errno == ENOENT)    /* a dangling link: it would be replaced */
                return say(err, flag, path, ERR_USAGE,
                           "it is a symlink to nothing (left as it is)");
            return say(err, flag, path, -errno, NULL);
        }
        if (!S_ISREG(st.st_mode))
            return say(err, flag, path, ERR_USAGE, kind_name(st.st_mode));
        if (!realpath(path, real))
            return say(err, flag, path, -errno, NULL);
        if ((rc = link_target(flag, path, real, err)) != 0)
            return rc;
        if (strlen(real) >= OUTFILE_PATH_MAX - 64)
            return say(err, flag, path, -ENAMETOOLONG, NULL);
        strcpy(out, real);
    } else if (!S_ISREG(st.st_mode)) {
        return say(err, flag, path, ERR_USAGE, kind_name(st.st_mode));
    }
    *mode = st.st_mode & 0777;
    return 0;
}

/* make_tmp: create "DIR/.BASE.tmp.PID.N" next to path, its name into tmp
 * (OUTFILE_PATH_MAX), with the mode of the file it will replace (`mode`;
 * 0: a new file, 0644 before the umask). Created 0600 and widened after,
 * so it is never more open than the file it replaces. The descriptor, or
 * -errno. */
static int make_tmp(const char *path, mode_t mode, char *tmp)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;

    for (int tries = 0; tries < 100; tries++) {
        int fd;
        snprintf(tmp, OUTFILE_PATH_MAX, "%.*s.%s.tmp.%ld.%lu", dirlen, path, path + dirlen,
                 (long)getpid(), __atomic_fetch_add(&tmp_serial, 1, __ATOMIC_RELAXED));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode ? 0600 : 0644);
        if (fd >= 0 && mode && fchmod(fd, mode) != 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            tmp[0] = '\0';
            return -e;
        }
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            break;
    }
    tmp[0] = '\0';
    return -errno;
}

/* tmp_why: the reason make_tmp failed, naming the folder when it is the
 * folder that is missing (ENOENT alone would say "No such file"). */
static const char *tmp_why(const char *path, int rc)
{
    const char *slash = strrchr(path, '/');
    char dir[OUTFILE_PATH_MAX];
    struct stat st;

    if (rc != -ENOENT || !slash)
        return NULL;
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return stat(dir, &st) != 0 ? "its folder does not exist"
         : !S_ISDIR(st.st_mode) ? "its folder is not a folder" : NULL;
}

int outfile_open(struct outfile *o, const char *flag, const char *path, char *err)
{
    mode_t mode;
    int rc;

    o->fd = -1;
    o->err = 0;
    o->len = 0;
    o->flag = flag;
    o->before_rename = NULL;
    o->tmp[0] = '\0';
    if ((rc = target(flag, path, o->path, &mode, err)) != 0)
        return rc;
    if ((o->fd = make_tmp(o->path, mode, o->tmp)) < 0) {
        rc = o->fd;
        o->fd = -1;
        return say(err, flag, path, rc, tmp_why(o->path, rc));
    }
    return 0;
}

int outfile_check(const char *flag, const char *path, char *err)
{
    char real[OUTFILE_PATH_MAX], tmp[OUTFILE_PATH_MAX];
    mode_t mode;
    int fd, rc;

    if ((rc = target(flag, path, real, &mode, err)) != 0)
        return rc;
    if ((fd = make_tmp(real, 0, tmp)) < 0)
        return say(err, flag, path, fd, tmp_why(real, fd));
    close(fd);
    unlink(tmp);
    return 0;
}

/* drain: write the buffer out. Keeps the first error. */
static void drain(struct outfile *o)
{
    size_t off = 0;

    while (o->err == 0 && off < o->len) {
        ssize_t w = write(o->fd, o->buf + off, o->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            o->err = -errno;
        else if (w == 0)
            o->err = -EIO;      /* write(2) never returns 0 for len > 0 */
        else
            off += (size_t)w;
    }
    o->len = 0;
}

void outfile_write(struct outfile *o, const void *p, size_t n)
{
    const char *c = p;

    if (o->fd < 0 || o->err)
        return;
    while (n > 0 && o->err == 0) {
        size_t k = sizeof o->buf - o->len;
        if (k > n)
            k = n;
        memcpy(o->buf + o->len, c, k);
        o->len += k;
        c += k;
        n -= k;
        if (o->len == sizeof o->buf)
            drain(o);
    }
}

void outfile_printf(struct outfile *o, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n;

    if (o->fd < 0 || o->err)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->err = -EINVAL;
        return;
    }
    /* Every caller writes short lines; a longer one is cut, not lost. */
    outfile_write(o, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

void outfile_abort(struct outfile *o)
{
    if (o->fd >= 0)
        close(o->fd);
    if (o->tmp[0])
        unlink(o->tmp);
    o->fd = -1;
    o->tmp[0] = '\0';
    o->len = 0;
}

/* sync_dir: fsync the folder of path, so the rename itself is durable. */
static int sync_dir(const char *path)
{
    char dir[OUTFILE_PATH_MAX];
    int fd, rc = 0;

    dir_of(path, dir);
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fsync(fd) != 0 && errno != EINVAL)  /* EINVAL: no fsync for folders here */
        rc = -errno;
    close(fd);
    return rc;
}

int outfile_commit(struct outfile *o, char *err)
{
    char again[OUTFILE_PATH_MAX];
    mode_t mode;
    int rc;

    if (o->fd < 0)
        return say(err, o->flag ? o->flag : "output", o->path, -EBADF, NULL);
    drain(o);
    if (o->err == 0 && fsync(o->fd) != 0)
        o->err = -errno;
    if (close(o->fd) != 0 && o->err == 0)
        o->err = -errno;
    o->fd = -1;
    rc = o->err;
    /* Checked again: something other than a file may have appeared. */
    if (rc == 0 && (rc = target(o->flag, o->path, again, &mode, err)) != 0) {
        outfile_abort(o);
        return rc;
    }
    if (rc == 0 && o->before_rename)
        o->before_rename(o);
    if (rc == 0 && rename(o->tmp, o->path) != 0)
        rc = -errno;
    if (rc != 0) {
        outfile_abort(o);
        return say(err, o->flag, o->path, rc, NULL);
    }
    o->tmp[0] = '\0';
    if ((rc = sync_dir(o->path)) != 0)
        return say(err, o->flag, o->path, rc, NULL);
    return 0;
}

int outfile_write_text(const char *flag, const char *path, const void *p, size_t n, char *err)
{
    int rc;
    struct outfile *o = outfile_new(flag, path, &rc, err);

    if (!o)
        return rc;
    outfile_write(o, p, n);
    return outfile_end(o, err);
}

struct outfile *outfile_new(const char *flag, const char *path, int *rc, char *err)
{
    struct outfile *o = malloc(sizeof *o);

    if (!o) {
        *rc = say(err, flag, path, -ENOMEM, NULL);
        return NULL;
    }
    if ((*rc = outfile_open(o, flag, path, err)) != 0) {
        free(o);
        return NULL;
    }
    return o;
}

int outfile_end(struct outfile *o, char *err)
{
    int rc = outfile_commit(o, err);

    free(o);
    return rc;
}

FILE *outfile_append(const char *flag, const char *path, int *fresh, int *rc, char *err)
{
    char real[OUTFILE_PATH_MAX];
    struct stat st;
    mode_t mode;
    FILE *f;
    int fd;

    if ((*rc = target(flag, path, real, &mode, err)) != 0)
        return NULL;
    /* O_NOFOLLOW: `real` is no symlink now (target resolved it); one put
     * there since is refused, not followed. O_NONBLOCK: a FIFO put there
     * since is not waited on (fstat refuses it below). */
    fd = open(real, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
              O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = -errno;
        *rc = say(err, flag, path, e, tmp_why(real, e));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *rc = S_ISREG(st.st_mode) ? say(err, flag, path, -errno, NULL)
                                  : say(err, flag, path, ERR_USAGE, kind_name(st.st_mode));
        close(fd);
        return NULL;
    }
    if (!(f = fdopen(fd, "a"))) {
        *rc = say(err, flag, path, -errno, NULL);
        close(fd);
        return NULL;
    }
    *fresh = st.st_size == 0;
    *rc = 0;
    return f;
}
