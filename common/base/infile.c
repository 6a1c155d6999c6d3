/* infile.c -- input files checked for their type before they are read
 * (infile.h): stat, open with O_NONBLOCK, fstat, then blocking reads.
 */
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

static const char *kind_name(mode_t m)
{
    if (S_ISDIR(m))
        return "it is a folder, not a file";
    if (S_ISFIFO(m))
        return "it is a FIFO, not a regular file";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "it is a device, not a regular file";
    if (S_ISSOCK(m))
        return "it is a socket, not a regular file";
    return "it is not a regular file";
}

/* say: "FLAG: cannot read PATH: why (or the errno's text)". Returns rc. */
static int say(char *err, const char *flag, const char *path, int rc, const char *why)
{
    err_say(err, "%s: cannot read %.300s: %s", flag, path, why ? why : strerror(-rc));
    return rc;
}

int infile_open(const char *flag, const char *path, char *err)
{
    struct stat st;
    int fd, fl;

    if (!path || !*path)
        return say(err, flag, "''", ERR_USAGE, "empty path");
    if (stat(path, &st) != 0)
        return say(err, flag, path, -errno, NULL);
    if (!S_ISREG(st.st_mode))
        return say(err, flag, path, ERR_USAGE, kind_name(st.st_mode));
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return say(err, flag, path, -errno, NULL);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int rc = S_ISREG(st.st_mode) ? -errno : ERR_USAGE;
        close(fd);
        return say(err, flag, path, rc, rc == ERR_USAGE ? kind_name(st.st_mode) : NULL);
    }
    if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int rc = -errno;
        close(fd);
        return say(err, flag, path, rc, NULL);
    }
    return fd;
}

FILE *infile_fopen(const char *flag, const char *path, int *rc, char *err)
{
    FILE *f;
    int fd = infile_open(flag, path, err);

    if (fd < 0) {
        *rc = fd;
        return NULL;
    }
    if (!(f = fdopen(fd, "r"))) {
        *rc = say(err, flag, path, -errno, NULL);
        close(fd);
        return NULL;
    }
    *rc = 0;
    return f;
}

int infile_check(const char *flag, const char *path, char *err)
{
    int fd = infile_open(flag, path, err);

    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}
