/* test_mode.c -- the parameter server's training modes as a policy
 * (common/ps/mode.h), without sockets: parsing and bounds, the sync
 * barrier, async versions and staleness, the SSP hold and its hard check
 * under a slow worker, backup's first K - N pushes and the dropped late
 * ones, and the record file.
 *
 *   mode-1.x  --mode values      mode-2.x  the modes
 *   mode-3.x  the record and the staleness line
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps/mode.h"
#include "check.h"
#include "base/err.h"
#include "base/rng.h"

static int parse_kind(const char *v, uint32_t *n)
{
    struct mode_cfg c = { -1, 0 };
    char err[ERR_LEN];
    int rc = mode_parse(v, &c, err);

    if (rc != 0)
        return rc;
    *n = c.n;
    return c.kind;
}

static void parse_bad(const char *v)
{
    struct mode_cfg c = { -1, 0 };
    char err[ERR_LEN] = "";

    T_EQ_I(mode_parse(v, &c, err), ERR_USAGE);
    T_TRUE(err[0] != '\0' && strchr(err, '\n') == NULL);
    T_EQ_I(c.kind, -1);     /* nothing written */
}

/* push: mode_push that must succeed, returning the action. */
static int push(struct mode *m, uint32_t r, uint64_t step, uint64_t on, uint64_t ex,
                struct mode_verdict *v)
{
    char err[ERR_LEN];
    int rc = mode_push(m, r, step, on, ex, v, err);

    if (rc != 0) {
        printf("     push: %s\n", err);
        return -1;
    }
    return v->action;
}

/* mode_case: opens case id with m in mode kind (with its N) for k
 * workers. mode_open: the mode alone. Both must open. */
static void mode_open(struct mode *m, int kind, uint32_t n, int k);

static void mode_case(const char *id, const char *name, struct mode *m, int kind, uint32_t n,
                      int k)
{
    T_CASE(id, name);
    mode_open(m, kind, n, k);
}

/* used_are: the step used three pushes, of these ranks in this order. */
static void used_are(const struct mode_verdict *v, uint32_t a, uint32_t b, uint32_t c)
{
    T_EQ_U(v->nused, 3);
    T_EQ_U(v->used[0], a);
    T_EQ_U(v->used[1], b);
    T_EQ_U(v->used[2], c);
}

/* mode_end: m destroyed, the case over. */
static void mode_end(struct mode *m)
{
    mode_destroy(m);
    T_END();
}

static void mode_open(struct mode *m, int kind, uint32_t n, int k)
{
    struct mode_cfg c = { kind, n };
    char err[ERR_LEN];

    T_EQ_I(mode_init(m, &c, k, 0, err), 0);
}

static void t_parse(void)
{
    struct mode m;
    struct mode_cfg c;
    char err[ERR_LEN], name[32];
    uint32_t n = 99;

    T_CASE("mode-1.1", "sync, async, ssp:N and backup:N parse; the name prints back");
    T_EQ_I(parse_kind("sync", &n), MODE_SYNC);
    T_EQ_I(parse_kind("async", &n), MODE_ASYNC);
    T_EQ_I(parse_kind("ssp:0", &n), MODE_SSP);
    T_EQ_U(n, 0);
    T_EQ_I(parse_kind("ssp:3", &n), MODE_SSP);
    T_EQ_U(n, 3);
    T_EQ_I(parse_kind("backup:1", &n), MODE_BACKUP);
    T_EQ_U(n, 1);
    T_EQ_I(mode_parse("backup:2", &c, err), 0);
    T_STR(mode_name(&c, name), "backup:2");

    T_CASE("mode-1.2", "bad values are ERR_USAGE with one line, nothing written");
    parse_bad("ssp:-1");
    parse_bad("backup:K");
    parse_bad("backup:0");
    parse_bad("ssp:");
    parse_bad("ssp:1x");
    parse_bad("ssp:2000000000");
    parse_bad("async:1");
    parse_bad("SYNC");
    parse_bad("");
    T_EQ_I(mode_parse("ssp:-1", &c, err), ERR_USAGE);
    T_HAS(err, "ssp:-1");

    T_CASE("mode-1.3", "backup:N needs N below K");
    c = (struct mode_cfg){ MODE_BACKUP, 4 };
    T_EQ_I(mode_init(&m, &c, 4, 0, err), ERR_USAGE);
    T_HAS(err, "below K = 4");
    mode_destroy(&m);
    c.n = 3;
    T_EQ_I(mode_init(&m, &c, 4, 0, err), 0);
    mode_destroy(&m);
    mode_destroy(&m);       /* twice is safe */
    T_END();
}


/* The modes one case each: sync (2.1), async (2.2), backup (2.5). */
static void t_modes(void)
{
    struct mode m;
    struct mode_verdict v;
    char err[ERR_LEN];

    mode_case("mode-2.1", "sync: the K-th push completes the step; future and stale refused",
              &m, MODE_SYNC, 0, 3);
    T_EQ_I(push(&m, 2, 0, 0, 5, &v), MODE_WAIT);
    T_EQ_I(mode_push(&m, 2, 1, 0, 5, &v, err), ERR_PROTO_FIELD);  /* future */
    T_HAS(err, "worker 2");
    T_EQ_I(mode_push(&m, 2, 0, 0, 5, &v, err), ERR_PROTO_FIELD);  /* duplicate */
    T_EQ_I(push(&m, 0, 0, 0, 6, &v), MODE_WAIT);
    T_EQ_I(mode_push(&m, 3, 0, 0, 5, &v, err), ERR_PROTO_RANK);
    T_EQ_I(push(&m, 1, 0, 0, 7, &v), MODE_STEP);
    used_are(&v, 2, 0, 1);
    T_EQ_U(v.batch, 18);
    T_EQ_U(v.version, 1);
    T_EQ_U(m.step, 1);
    T_EQ_I(mode_pull_ok(&m, 0), 1);
    mode_end(&m);

    mode_case("mode-2.2", "async: each push applied alone; versions and staleness",
              &m, MODE_ASYNC, 0, 2);
    T_EQ_I(push(&m, 0, 0, 0, 4, &v), MODE_APPLY);
    T_EQ_U(v.version, 1);
    T_EQ_U(v.staleness, 0);
    T_EQ_U(v.batch, 4);
    T_EQ_I(push(&m, 1, 0, 0, 3, &v), MODE_APPLY);    /* computed on 0, applied at 1 */
    T_EQ_U(v.staleness, 1);
    T_EQ_I(push(&m, 0, 1, 1, 4, &v), MODE_APPLY);
    T_EQ_U(v.staleness, 1);
    T_EQ_I(push(&m, 0, 2, 3, 4, &v), MODE_APPLY);    /* fresh: worker 0 ran ahead */
    T_EQ_U(v.staleness, 0);
    T_EQ_U(v.version, 4);
    T_EQ_U(m.max_lead, 1);                          /* step 2 while worker 1 at 1 */
    /* refusals change nothing */
    T_EQ_I(mode_push(&m, 1, 1, 9, 3, &v, err), ERR_PROTO_FIELD);  /* version from the future */
    T_HAS(err, "version 9");
    T_EQ_I(mode_push(&m, 1, 1, 1, 0, &v, err), ERR_PROTO_FIELD);  /* no examples */
    T_EQ_I(mode_push(&m, 1, 0, 1, 3, &v, err), ERR_PROTO_FIELD);  /* duplicate */
    T_EQ_U(m.version, 4);
    T_EQ_U(m.hist[0], 2);
    T_EQ_U(m.hist[1], 2);
    T_EQ_I(mode_pull_ok(&m, 0), 1);                 /* async holds no one */
    mode_end(&m);

    mode_case("mode-2.5", "backup:1 of 4: the first 3 pushes make the step, the late one dropped",
              &m, MODE_BACKUP, 1, 4);
    T_EQ_I(push(&m, 3, 0, 0, 2, &v), MODE_WAIT);
    T_EQ_I(push(&m, 1, 0, 0, 3, &v), MODE_WAIT);
    T_EQ_I(push(&m, 0, 0, 0, 4, &v), MODE_STEP);
    used_are(&v, 3, 1, 0);
    T_EQ_U(v.batch, 9);                             /* B of the used pushes only */
    T_EQ_I(mode_push(&m, 0, 2, 1, 4, &v, err), ERR_PROTO_FIELD);  /* future */
    T_EQ_I(push(&m, 2, 0, 0, 5, &v), MODE_DROP);    /* late for step 0 */
    T_EQ_U(m.dropped, 1);
    T_EQ_I(push(&m, 2, 1, 1, 5, &v), MODE_WAIT);    /* and on with step 1 */
    T_EQ_I(push(&m, 0, 1, 1, 4, &v), MODE_WAIT);
    T_EQ_I(push(&m, 1, 1, 1, 3, &v), MODE_STEP);
    T_EQ_U(v.batch, 12);
    T_EQ_U(v.version, 2);
    mode_end(&m);
}

/* ssp_drive: K workers, worker `slow` takes `factor` ticks per step, the
 * others 1; a worker pulls when mode_pull_ok lets it, computes, pushes on
 * the version it pulled. Returns held pulls (> 0: SSP held someone), or -1
 * on a refused push. Every worker runs `steps` steps. */
static long ssp_drive(struct mode *m, uint32_t k, uint32_t slow, int factor, uint64_t steps,
                      uint64_t seed)
{
    uint64_t on[8], done[8];
    int left[8], busy[8];
    long held = 0;
    struct rng rg;
    struct mode_verdict v;

    rng_seed(&rg, seed);
    for (uint32_t r = 0; r < k; r++)
        busy[r] = 0, done[r] = 0, left[r] = 0, on[r] = 0;
    for (int tick = 0; tick < 100000; tick++) {
        int all = 1;
        uint64_t o = rng_next(&rg);     /* a rotated order each tick */

        for (uint32_t i = 0; i < k; i++) {
            uint32_t r = (uint32_t)((i + o) % k);

            if (done[r] == steps)
                continue;
            all = 0;
            if (!busy[r]) {
                if (!mode_pull_ok(m, r)) {
                    held++;
                    continue;
                }
                busy[r] = 1;
                on[r] = m->version;
                left[r] = r == slow ? factor : 1 + (int)(rng_next(&rg) % 2);
            }
            if (--left[r] > 0)
                continue;
            if (push(m, r, done[r], on[r], 2, &v) != MODE_APPLY)
                return -1;
            busy[r] = 0;
            done[r]++;
        }
        if (all)
            return held;
    }
    return -1;
}

static void t_ssp(void)
{
    struct mode m;
    struct mode_verdict v;
    char err[ERR_LEN];
    long held;

    T_CASE("mode-2.3", "ssp:2 with a 4x slow worker: pulls held, never more than 2 ahead");
    for (uint32_t n = 0; n <= 2; n++) {
        mode_open(&m, MODE_SSP, n, 4);
        held = ssp_drive(&m, 4, 1, 4, 30, 7 + n);
        T_TRUE(held > 0);                   /* the slow one made SSP hold pulls */
        T_TRUE(m.max_lead <= n);
        T_EQ_U(m.max_lead, n);              /* and the fast ones did use the slack */
        T_EQ_U(m.version, 4 * 30);
        mode_destroy(&m);
    }

    T_CASE("mode-2.4", "ssp:1: a push beyond the bound fails with one line");
    mode_open(&m, MODE_SSP, 1, 2);
    T_EQ_I(push(&m, 0, 0, 0, 1, &v), MODE_APPLY);
    T_EQ_I(mode_pull_ok(&m, 0), 1);                 /* 1 ahead: allowed */
    T_EQ_I(push(&m, 0, 1, 1, 1, &v), MODE_APPLY);
    T_EQ_I(mode_pull_ok(&m, 0), 0);                 /* 2 ahead: held */
    T_EQ_I(mode_push(&m, 0, 2, 2, 1, &v, err), ERR_PROTO_FIELD);  /* pushed anyway */
    T_HAS(err, "ssp:1 violated");
    T_TRUE(strchr(err, '\n') == NULL);
    T_EQ_U(m.version, 2);
    T_EQ_I(push(&m, 1, 0, 0, 1, &v), MODE_APPLY);
    T_EQ_U(v.staleness, 2);
    T_EQ_I(mode_pull_ok(&m, 0), 1);                 /* the slowest moved */
    mode_end(&m);
}

static void t_record(void)
{
    struct mode m;
    struct mode_verdict v;
    char err[ERR_LEN], path[64], buf[512], line[160];
    FILE *f;
    size_t n;

    T_CASE("mode-3.1", "the record lists applied steps with their ranks and drops, in order");
    snprintf(path, sizeof path, "/tmp/test_mode.%d.rec", (int)getpid());
    mode_open(&m, MODE_BACKUP, 1, 3);
    push(&m, 2, 0, 0, 2, &v);
    push(&m, 0, 0, 0, 3, &v);
    push(&m, 1, 0, 0, 4, &v);
    T_EQ_I(mode_record_write(&m, "--record", path, err), 0);
    f = fopen(path, "r");
    T_TRUE(f != NULL);
    n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    T_STR(buf, "# psring mode record 1\nmode backup:1 3\ns 1 0 5 2 0\nd 1 0\n");
    mode_destroy(&m);

    mode_open(&m, MODE_ASYNC, 1, 2);
    push(&m, 1, 0, 0, 2, &v);
    T_EQ_I(mode_sent(&m, 1), 0);
    push(&m, 0, 0, 0, 3, &v);
    T_EQ_I(mode_record_write(&m, "--record", path, err), 0);
    f = fopen(path, "r");
    n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    T_STR(buf, "# psring mode record 1\nmode async 2\na 1 1 0 0 2\nw 1 1\na 2 0 0 0 3\n");
    unlink(path);
    T_TRUE(mode_record_write(&m, "--record", "/nonexistent-dir/x.rec", err) < 0);
    T_HAS(err, "--record");

    T_CASE("mode-3.2", "the staleness line names mean, max and the bins");
    mode_hist_line(&m, line, sizeof line);
    T_HAS(line, "over 2 updates: mean 0.500, max 1;");
    T_HAS(line, " 0:1 1:1");
    mode_end(&m);
}

int main(void)
{
    t_parse();
    t_modes();
    t_ssp();
    t_record();
    return t_done();
}
