/* test_outfile.c -- common/base/outfile.h: atomic replace, refusals, errors. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/outfile.h"

static char dir[] = "/tmp/psr-outfile-XXXXXX";

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

static int entries(void)
{
    char cmd[128], out[32];
    FILE *p;
    snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
    p = popen(cmd, "r");
    if (!p || !fgets(out, sizeof out, p))
        out[0] = '\0';
    if (p)
        pclose(p);
    return atoi(out);
}

int main(void)
{
    static struct outfile o;
    char path[128], fifo[128], link[128], got[256], err[ERR_LEN];
    struct stat st;

    if (!mkdtemp(dir)) {
        T_CASE("outfile-0.1", "a temp folder");
        T_TRUE(0);
        return t_done();
    }
    snprintf(path, sizeof path, "%s/f", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/link", dir);

    T_CASE("outfile-1.1", "open, write, commit: the file holds what was written, no temp left");
    T_EQ_I(outfile_open(&o, "--x", path, err), 0);
    outfile_printf(&o, "one %d\n", 1);
    T_EQ_I(outfile_commit(&o, err), 0);
    slurp(path, got, sizeof got);
    T_HAS(got, "one 1\n");
    T_EQ_I(entries(), 1);
    T_END();

    T_CASE("outfile-1.2", "an aborted write leaves the old file as it was; so does a check");
    T_EQ_I(outfile_open(&o, "--x", path, err), 0);
    outfile_printf(&o, "two\n");
    outfile_abort(&o);
    T_EQ_I(outfile_check("--x", path, err), 0);
    slurp(path, got, sizeof got);
    T_TRUE(strcmp(got, "one 1\n") == 0);
    T_EQ_I(entries(), 1);
    T_END();

    T_CASE("outfile-1.3", "a write error is kept and reported as it is, the old file intact");
    T_EQ_I(outfile_open(&o, "--x", path, err), 0);
    outfile_printf(&o, "three\n");
    o.err = -ENOSPC;        /* as drain() records a failed write(2) */
    T_EQ_I(outfile_commit(&o, err), -ENOSPC);
    T_HAS(err, "--x: cannot write ");
    T_HAS(err, "No space left on device");
    slurp(path, got, sizeof got);
    T_TRUE(strcmp(got, "one 1\n") == 0);
    T_EQ_I(entries(), 1);
    T_END();

    T_CASE("outfile-2.1", "a FIFO, a symlink to it, a folder, a dangling symlink: refused, left as they were");
    T_EQ_I(mkfifo(fifo, 0600), 0);
    T_EQ_I(symlink(fifo, link), 0);
    T_EQ_I(outfile_check("--x", fifo, err), ERR_USAGE);
    T_HAS(err, "FIFO");
    T_EQ_I(outfile_open(&o, "--x", link, err), ERR_USAGE);
    T_HAS(err, "FIFO");
    T_EQ_I(outfile_check("--x", dir, err), ERR_USAGE);
    T_HAS(err, "folder");
    T_TRUE(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    T_TRUE(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    unlink(link);
    T_EQ_I(symlink("/nonexistent-psring", link), 0);
    T_EQ_I(outfile_check("--x", link, err), ERR_USAGE);
    T_HAS(err, "symlink to nothing");
    unlink(link);
    unlink(fifo);
    T_END();

    T_CASE("outfile-2.2", "a symlink to a regular file: the file is replaced, the link stays");
    T_EQ_I(symlink(path, link), 0);
    T_EQ_I(outfile_write_text("--x", link, "four\n", 5, err), 0);
    slurp(path, got, sizeof got);
    T_TRUE(strcmp(got, "four\n") == 0);
    T_TRUE(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    unlink(link);
    T_END();

    T_CASE("outfile-2.3", "a missing folder is named as such");
    T_EQ_I(outfile_check("--x", "/nonexistent-psring/f", err), -ENOENT);
    T_HAS(err, "its folder does not exist");
    T_END();

    unlink(path);
    rmdir(dir);
    return t_done();
}
