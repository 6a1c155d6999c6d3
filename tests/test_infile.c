/* test_infile.c -- common/base/infile.h: an input file's type is checked
 * before a byte is read; a FIFO is never waited on. Each case runs under
 * alarm(): a hang is a failure, not a stuck suite. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/infile.h"

static char dir[] = "/tmp/psr-infile-XXXXXX";

int main(void)
{
    char path[128], fifo[128], link[128], err[ERR_LEN], buf[16];
    FILE *f;
    int fd, rc;

    if (!mkdtemp(dir)) {
        T_CASE("infile-0.1", "a temp folder");
        T_TRUE(0);
        return t_done();
    }
    alarm(20);      /* a FIFO waited on would hang here: SIGALRM ends the test, a failure */
    snprintf(path, sizeof path, "%s/f", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/link", dir);

    T_CASE("infile-1.1", "a regular file (and a symlink to one, anywhere): opened, read as it is, blocking");
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    T_TRUE(fd >= 0 && write(fd, "hello\n", 6) == 6);
    if (fd >= 0)
        close(fd);
    fd = infile_open("--x", path, err);
    T_TRUE(fd >= 0);
    if (fd >= 0) {
        T_EQ_I(read(fd, buf, sizeof buf), 6);
        T_EQ_I(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
        close(fd);
    }
    T_EQ_I(symlink(path, link), 0);
    f = infile_fopen("--x", link, &rc, err);
    T_TRUE(f != NULL && rc == 0);
    if (f) {
        T_TRUE(fgets(buf, sizeof buf, f) && strcmp(buf, "hello\n") == 0);
        fclose(f);
    }
    unlink(link);
    T_EQ_I(infile_check("--x", path, err), 0);
    T_END();

    T_CASE("infile-1.2", "a FIFO (no writer), a symlink to it, a folder, a device: ERR_USAGE at once, one line naming flag, path and kind");
    T_EQ_I(mkfifo(fifo, 0600), 0);
    T_EQ_I(infile_open("--x", fifo, err), ERR_USAGE);
    T_HAS(err, "--x: cannot read ");
    T_HAS(err, "FIFO");
    T_TRUE(strchr(err, '\n') == NULL);
    T_EQ_I(symlink(fifo, link), 0);
    T_TRUE(infile_fopen("--x", link, &rc, err) == NULL);
    T_EQ_I(rc, ERR_USAGE);
    T_HAS(err, "FIFO");
    unlink(link);
    T_EQ_I(infile_check("--x", dir, err), ERR_USAGE);
    T_HAS(err, "folder");
    T_EQ_I(infile_check("--x", "/dev/null", err), ERR_USAGE);
    T_HAS(err, "device");
    T_EQ_I(infile_check("--x", "/dev/zero", err), ERR_USAGE);
    T_EQ_I(infile_check("--x", "", err), ERR_USAGE);
    unlink(fifo);
    T_END();

    T_CASE("infile-1.3", "a missing file: the errno as it is (not ERR_USAGE)");
    T_EQ_I(infile_check("--x", "/nonexistent-psring/f", err), -ENOENT);
    T_HAS(err, "No such file");
    T_END();

    unlink(path);
    rmdir(dir);
    return t_done();
}
