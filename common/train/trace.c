/* trace.c -- Chrome trace-event JSON, one event per line (trace.h). */
#include "trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/outfile.h"

/* line: one event line, the comma ending the one before. */
static void line(struct trace *t, const char *s)
{
    outfile_printf(t->f, "%s%s", t->any ? ",\n" : "", s);
    t->any = 1;
}

int trace_check(const char *path, int rank, char *err)
{
    char name[CLI_PATH_MAX + 16];

    snprintf(name, sizeof name, "%s.%d", path, rank);
    return outfile_check("--trace", name, err);
}

int trace_open(struct trace *t, const char *path, int rank, size_t cap, char *err)
{
    char name[CLI_PATH_MAX + 16], buf[160];
    struct timespec rt;
    double mono;
    int rc = 0;

    memset(t, 0, sizeof *t);
    if (!path)
        return 0;
    snprintf(name, sizeof name, "%s.%d", path, rank);
    t->ev = calloc(cap, sizeof *t->ev);
    if (!t->ev) {
        err_say(err, "--trace %s: out of memory for %zu events", name, cap);
        return -ENOMEM;
    }
    if (!(t->f = outfile_new("--trace", name, &rc, err))) {
        free(t->ev);
        t->f = NULL;
        t->ev = NULL;
        return rc;
    }
    t->cap = cap;
    t->rank = rank;
    mono = clock_now();
    clock_gettime(CLOCK_REALTIME, &rt);
    t->shift = (double)rt.tv_sec + (double)rt.tv_nsec * 1e-9 - mono;
    outfile_printf(t->f, "[\n");
    snprintf(buf, sizeof buf, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
             "\"args\":{\"name\":\"rank %d\"}}", rank, rank);
    line(t, buf);
    snprintf(buf, sizeof buf, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
             "\"args\":{\"name\":\"compute\"}}", rank, TRACE_COMPUTE);
    line(t, buf);
    snprintf(buf, sizeof buf, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
             "\"args\":{\"name\":\"communication\"}}", rank, TRACE_COMM);
    line(t, buf);
    return 0;
}

void trace_add(struct trace *t, const char *name, int tid, double t0, double t1, long step,
               long long bytes)
{
    struct trace_event *e;

    if (!t->f || t->n == t->cap)
        return;
    e = &t->ev[t->n++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->tid = tid;
    e->t0 = t0;
    e->t1 = t1;
    e->step = step;
    e->bytes = bytes;
}

void trace_flush(struct trace *t)
{
    char buf[320], extra[48];

    if (!t->f)
        return;
    for (size_t i = 0; i < t->n; i++) {
        const struct trace_event *e = &t->ev[i];
        extra[0] = '\0';
        if (e->bytes >= 0)
            snprintf(extra, sizeof extra, ",\"bytes\":%lld", e->bytes);
        snprintf(buf, sizeof buf, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,"
                 "\"tid\":%d,\"ts\":%.1f,\"dur\":%.3f,\"args\":{\"step\":%ld%s}}",
                 e->name, e->tid == TRACE_COMM ? "comm" : "compute", t->rank, e->tid,
                 (e->t0 + t->shift) * 1e6, (e->t1 - e->t0) * 1e6, e->step, extra);
        line(t, buf);
    }
    t->n = 0;
}

int trace_close(struct trace *t, char *err)
{
    int rc = 0;

    if (t->f) {
        trace_flush(t);
        outfile_printf(t->f, "\n]\n");
        rc = outfile_end(t->f, err);
    }
    free(t->ev);
    memset(t, 0, sizeof *t);
    return rc;
}
