/* test_outfile.c -- common/base/outfile.h: atomic replace, refusals (a
 * symlink out of its folder among them), the mode kept, errors. */
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
    char path[128], fifo[128], link[128], sub[128], victim[160], other[160], got[256];
    char err[ERR_LEN];
    struct stat st;

    if (!mkdtemp(dir)) {
        T_CASE("outfile-0.1", "a temp folder");
        T_TRUE(0);
        return t_done();
    }
    snprintf(path, sizeof path, "%s/f", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);

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

    T_CASE("outfile-2.2", "a symlink to a regular file in its own folder: that file is replaced, the link stays");
    T_EQ_I(symlink("f", link), 0);
    T_EQ_I(outfile_write_text("--x", link, "four\n", 5, err), 0);
    slurp(path, got, sizeof got);
    T_TRUE(strcmp(got, "four\n") == 0);
    T_TRUE(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    unlink(link);
    snprintf(other, sizeof other, "%s/sub/../f", dir);   /* the same folder, spelt otherwise */
    T_EQ_I(mkdir(sub, 0700), 0);
    T_EQ_I(symlink(other, link), 0);
    T_EQ_I(outfile_write_text("--x", link, "five\n", 5, err), 0);
    slurp(path, got, sizeof got);
    T_TRUE(strcmp(got, "five\n") == 0);
    unlink(link);
    T_END();

    T_CASE("outfile-2.4", "a symlink to a file outside its folder (absolute, relative, through a link chain): refused, the victim and the link unchanged");
    snprintf(victim, sizeof victim, "%s/victim", sub);
    {
        int fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
        T_TRUE(fd >= 0 && write(fd, "secret\n", 7) == 7);
        if (fd >= 0)
            close(fd);
    }
    T_EQ_I(symlink(victim, link), 0);
    T_EQ_I(outfile_check("--x", link, err), ERR_USAGE);
    T_HAS(err, "--x: cannot write ");
    T_HAS(err, "outside its folder");
    T_EQ_I(outfile_open(&o, "--x", link, err), ERR_USAGE);
    T_EQ_I(outfile_write_text("--x", link, "pwned\n", 6, err), ERR_USAGE);
    unlink(link);
    T_EQ_I(symlink("sub/victim", link), 0);              /* relative, one folder down */
    T_EQ_I(outfile_write_text("--x", link, "pwned\n", 6, err), ERR_USAGE);
    unlink(link);
    snprintf(other, sizeof other, "%s/hop", dir);         /* link -> hop (same folder) -> victim */
    T_EQ_I(symlink(victim, other), 0);
    T_EQ_I(symlink("hop", link), 0);
    T_EQ_I(outfile_write_text("--x", link, "pwned\n", 6, err), ERR_USAGE);
    T_TRUE(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    unlink(link);
    unlink(other);
    {
        char in_sub[160];                                 /* sub/l -> ../f: out of sub */
        snprintf(in_sub, sizeof in_sub, "%s/l", sub);
        T_EQ_I(symlink("../f", in_sub), 0);
        T_EQ_I(outfile_check("--x", in_sub, err), ERR_USAGE);
        unlink(in_sub);
    }
    slurp(victim, got, sizeof got);
    T_TRUE(strcmp(got, "secret\n") == 0);
    T_TRUE(stat(victim, &st) == 0 && (st.st_mode & 0777) == 0600);
    T_EQ_I(entries(), 2);                                 /* f, sub: no temp file left */
    T_END();

    T_CASE("outfile-2.5", "a replaced file keeps its mode (0600, 0640, 0664); a new one is 0644 less the umask");
    {
        static const mode_t modes[] = { 0600, 0640, 0664 };
        for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
            T_EQ_I(chmod(path, modes[i]), 0);
            T_EQ_I(outfile_write_text("--x", path, "six\n", 4, err), 0);
            T_TRUE(stat(path, &st) == 0);
            T_EQ_I((int)(st.st_mode & 0777), (int)modes[i]);
        }
        T_EQ_I(symlink("f", link), 0);                    /* through an in-folder link too */
        T_EQ_I(chmod(path, 0600), 0);
        T_EQ_I(outfile_write_text("--x", link, "seven\n", 6, err), 0);
        T_TRUE(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
        unlink(link);
        snprintf(other, sizeof other, "%s/new", dir);
        mode_t um = umask(022);
        T_EQ_I(outfile_write_text("--x", other, "new\n", 4, err), 0);
        umask(um);
        T_TRUE(stat(other, &st) == 0 && (st.st_mode & 0777) == 0644);
        unlink(other);
    }
    T_END();

    T_CASE("outfile-2.6", "outfile_append: appends, says when the file is new, keeps the mode; the same refusals, a FIFO not waited on");
    {
        int fresh = -1, rc;
        FILE *f;
        snprintf(other, sizeof other, "%s/rows.csv", dir);
        f = outfile_append("--x", other, &fresh, &rc, err);
        T_TRUE(f != NULL);
        T_EQ_I(fresh, 1);
        if (f) {
            fputs("h\n", f);
            T_EQ_I(fclose(f), 0);
        }
        T_EQ_I(chmod(other, 0600), 0);
        f = outfile_append("--x", other, &fresh, &rc, err);
        T_TRUE(f != NULL);
        T_EQ_I(fresh, 0);
        if (f) {
            fputs("r\n", f);
            T_EQ_I(fclose(f), 0);
        }
        slurp(other, got, sizeof got);
        T_TRUE(strcmp(got, "h\nr\n") == 0);
        T_TRUE(stat(other, &st) == 0 && (st.st_mode & 0777) == 0600);
        unlink(other);
        T_EQ_I(symlink(victim, link), 0);
        T_TRUE(outfile_append("--x", link, &fresh, &rc, err) == NULL);
        T_EQ_I(rc, ERR_USAGE);
        T_HAS(err, "outside its folder");
        unlink(link);
        T_EQ_I(mkfifo(fifo, 0600), 0);
        T_TRUE(outfile_append("--x", fifo, &fresh, &rc, err) == NULL);
        T_EQ_I(rc, ERR_USAGE);
        T_HAS(err, "FIFO");
        unlink(fifo);
        T_TRUE(outfile_append("--x", dir, &fresh, &rc, err) == NULL);
        T_EQ_I(rc, ERR_USAGE);
        slurp(victim, got, sizeof got);
        T_TRUE(strcmp(got, "secret\n") == 0);
    }
    T_END();

    T_CASE("outfile-2.3", "a missing folder is named as such");
    T_EQ_I(outfile_check("--x", "/nonexistent-psring/f", err), -ENOENT);
    T_HAS(err, "its folder does not exist");
    T_END();

    unlink(victim);
    rmdir(sub);
    unlink(path);
    rmdir(dir);
    return t_done();
}
