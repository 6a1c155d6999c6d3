/* test_losscurve.c -- the loss curve (common/train/losscurve.h): the --loss-out
 * file as it always was, the --loss-time-out file (the same steps and
 * losses, a wall_s column, its comment lines), and the time to a target
 * loss. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "base/err.h"
#include "train/losscurve.h"

static char dir[] = "/tmp/psring-losscurve-XXXXXX";

/* slurp: the file at path into buf[len] (NUL-terminated); its length, or
 * -1. */
static long slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n;

    if (!f)
        return -1;
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return (long)n;
}

static void test_files(void)
{
    struct losscurve lc;
    char err[ERR_LEN], path[128], tpath[128], buf[2048], tbuf[2048];
    const double loss[3] = { 10.25, 8.5, 0.125 }, wall[3] = { 0.5, 1.25, 2 };

    snprintf(path, sizeof path, "%s/loss", dir);
    snprintf(tpath, sizeof tpath, "%s/loss.time", dir);

    T_CASE("losscurve-0.1", "--loss-out keeps its two columns; --loss-time-out has the same steps and losses and a wall_s column");
    T_EQ_I(losscurve_init(&lc, 3), 0);
    for (size_t s = 0; s < 3; s++)
        losscurve_set_at(&lc, s, loss[s], wall[s]);
    T_EQ_I(losscurve_write(&lc, path, NULL, err), 0);
    T_EQ_I(losscurve_write_time(&lc, tpath, "step: the training step", NULL, err), 0);
    T_TRUE(slurp(path, buf, sizeof buf) > 0);
    T_STR(buf, "# step loss\n0 10.25\n1 8.5\n2 0.125\n");
    T_TRUE(slurp(tpath, tbuf, sizeof tbuf) > 0);
    {
        const char *head = "# step loss wall_s\n# wall_s: seconds since the run's first step began";
        T_TRUE(strncmp(tbuf, head, strlen(head)) == 0);
    }
    T_HAS(tbuf, "EMULATED compute time included");
    T_HAS(tbuf, "\n# step: the training step\n");
    T_HAS(tbuf, "\n0 10.25 0.5\n1 8.5 1.25\n2 0.125 2\n");
    {
        /* The data lines, less the third column, are the --loss-out file's. */
        char cut[2048] = "# step loss\n", step[64], l[64], w[64];
        size_t o = strlen(cut);
        for (char *p = tbuf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
            if (*p == '#' || sscanf(p, "%63s %63s %63s", step, l, w) != 3)
                continue;
            o += (size_t)snprintf(cut + o, sizeof cut - o, "%s %s\n", step, l);
        }
        T_STR(cut, buf);
    }

    T_CASE("losscurve-0.2", "time to target: the first wall_s with loss <= X; NaN below every loss or without a target");
    T_EQ_D(losscurve_time_to(&lc, 100), 0.5);      /* above the first loss */
    T_EQ_D(losscurve_time_to(&lc, 10.25), 0.5);    /* <=, not < */
    T_EQ_D(losscurve_time_to(&lc, 9), 1.25);
    T_EQ_D(losscurve_time_to(&lc, 0.125), 2);
    T_TRUE(isnan(losscurve_time_to(&lc, 0.1)));    /* never reached */
    T_TRUE(isnan(losscurve_time_to(&lc, NAN)));    /* no --target-loss */
    losscurve_free(&lc);

    T_CASE("losscurve-0.3", "an incomplete run: both files stop at the first missing step and say so; no time is nan; free twice is safe");
    T_EQ_I(losscurve_init(&lc, 4), 0);
    losscurve_set(&lc, 0, 3.0);                    /* a loss without a time (resumed) */
    losscurve_set_at(&lc, 1, 2.0, 0.75);
    losscurve_set_at(&lc, 3, 0.5, 9.0);            /* after the gap: not written */
    T_EQ_I(losscurve_write_time(&lc, tpath, NULL, "the run failed", err), 0);
    T_TRUE(slurp(tpath, tbuf, sizeof tbuf) > 0);
    T_HAS(tbuf, "\n0 3 nan\n1 2 0.75\n# incomplete: 2 of 4 steps: the run failed\n");
    T_TRUE(strstr(tbuf, "\n3 ") == NULL);
    T_EQ_D(losscurve_time_to(&lc, 2.5), 0.75);     /* step 0 has no time */
    T_TRUE(isnan(losscurve_time_to(&lc, 1)));      /* step 3 is past the gap */
    losscurve_free(&lc);
    losscurve_free(&lc);

    T_CASE("losscurve-0.4", "--loss-time-out into a missing folder: one line naming the flag and the path");
    T_EQ_I(losscurve_init(&lc, 1), 0);
    losscurve_set_at(&lc, 0, 1.0, 0.1);
    snprintf(tpath, sizeof tpath, "%s/no/such/dir/loss", dir);
    T_TRUE(losscurve_write_time(&lc, tpath, NULL, NULL, err) < 0);
    T_HAS(err, "--loss-time-out: cannot write ");
    T_HAS(err, "no/such/dir/loss");
    T_TRUE(strchr(err, '\n') == NULL);
    losscurve_free(&lc);
    T_END();
}

int main(void)
{
    char cmd[128];

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_files();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", dir);
    return t_done();
}
