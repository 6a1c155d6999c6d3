/* hostload.c -- /proc/stat samples and the machine-bound rule of
 * hostload.h.
 *
 * The parsers walk a byte range by hand (no sscanf, no NUL needed) so the
 * fuzz target can hand them any bytes; a number that overflows 64 bits or a
 * line cut short is a refusal, never a guess. The sampler reads into a
 * stack buffer with open/read: it allocates nothing, so the programs can
 * call it right before and after their timed loops.
 */
#include "hostload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"

/* A cursor over [p, end). */
struct cur {
    const char *p, *end;
};

static void skip_blanks(struct cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
}

/* u64: one decimal number at the cursor; -1 if none or it overflows. */
static int u64(struct cur *c, uint64_t *out)
{
    uint64_t v = 0;
    const char *start = c->p;

    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        c->p++;
    }
    if (c->p == start)
        return -1;
    *out = v;
    return 0;
}

/* line_starts: whether the line at p (up to end) begins with word. */
static int line_starts(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

/* The "cpu " line's fields after the word: at least 4, at most 10 used.
 * Order: user nice system idle iowait irq softirq steal guest guest_nice. */
static int cpu_line(struct cur *c, struct hostload_sample *s)
{
    uint64_t f[8] = { 0 }, extra;
    int n = 0;

    for (;;) {
        skip_blanks(c);
        if (c->p >= c->end || *c->p == '\n')
            break;
        if (n < 8) {
            if (u64(c, &f[n]) != 0)
                return -1;
        } else if (u64(c, &extra) != 0) {
            return -1;              /* guest, guest_nice: inside user/nice */
        }
        n++;
    }
    if (n < 4)
        return -1;
    /* busy: user nice system irq softirq steal; idle: idle iowait. */
    uint64_t busy = 0, idle = 0;
    const int busy_i[] = { 0, 1, 2, 5, 6, 7 };
    for (size_t i = 0; i < sizeof busy_i / sizeof *busy_i; i++) {
        if (busy > UINT64_MAX - f[busy_i[i]])
            return -1;
        busy += f[busy_i[i]];
    }
    if (f[3] > UINT64_MAX - f[4])
        return -1;
    idle = f[3] + f[4];
    if (busy > UINT64_MAX - idle)
        return -1;
    s->busy = busy;
    s->total = busy + idle;
    return 0;
}

int hostload_parse_stat(const char *text, size_t len, struct hostload_sample *s)
{
    struct cur c = { text, text + len };
    int have_cpu = 0;

    memset(s, 0, sizeof *s);
    s->running = -1;
    s->wait_ns = -1;                /* not /proc/stat's: hostload_sample_read's */
    while (c.p < c.end) {
        const char *eol = memchr(c.p, '\n', (size_t)(c.end - c.p));
        struct cur line = { c.p, eol ? eol : c.end };

        if (line_starts(line.p, line.end, "cpu ")) {
            if (have_cpu)
                return ERR_FORMAT;              /* two aggregate lines */
            line.p += 4;
            if (cpu_line(&line, s) != 0)
                return ERR_FORMAT;
            have_cpu = 1;
        } else if (line_starts(line.p, line.end, "procs_running") &&
                   (line.end - line.p == 13 || line.p[13] == ' ' || line.p[13] == '\t')) {
            uint64_t r;
            line.p += 13;
            skip_blanks(&line);
            if (u64(&line, &r) != 0 || r > 1000000)
                return ERR_FORMAT;
            skip_blanks(&line);
            if (line.p != line.end)
                return ERR_FORMAT;
            s->running = (int)r;
        }
        c.p = eol ? eol + 1 : c.end;
    }
    if (!have_cpu) {
        s->running = -1;
        return ERR_FORMAT;
    }
    s->ok = 1;
    return 0;
}

int hostload_parse_loadavg(const char *text, size_t len)
{
    struct cur c = { text, text + len };
    uint64_t r, t;

    /* "0.52 0.58 0.59 4/111 13812": three averages, then R/T. */
    for (int field = 0; field < 3; field++) {
        skip_blanks(&c);
        while (c.p < c.end && *c.p != ' ' && *c.p != '\t' && *c.p != '\n')
            c.p++;
    }
    skip_blanks(&c);
    if (u64(&c, &r) != 0 || c.p >= c.end || *c.p != '/')
        return -1;
    c.p++;
    if (u64(&c, &t) != 0 || r > 1000000)
        return -1;
    return (int)r;
}

int64_t hostload_parse_schedstat(const char *text, size_t len)
{
    struct cur c = { text, text + len };
    uint64_t cpu, wait;

    skip_blanks(&c);
    if (u64(&c, &cpu) != 0 || c.p >= c.end || (*c.p != ' ' && *c.p != '\t'))
        return -1;
    skip_blanks(&c);
    if (u64(&c, &wait) != 0 || wait > (uint64_t)INT64_MAX)
        return -1;
    if (c.p < c.end && *c.p != ' ' && *c.p != '\t' && *c.p != '\n')
        return -1;
    return (int64_t)wait;
}

/* read_file: up to cap bytes of path into buf; the length, or -errno. */
static ssize_t read_file(const char *path, char *buf, size_t cap)
{
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    while (len < cap) {
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            return -e;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    return (ssize_t)len;
}

/* process_wait: this process's run delay, its threads' summed; -1 when a
 * thread's cannot be read (a thread that ended between the listing and
 * the read is skipped: its delay is gone with it). */
static int64_t process_wait(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int64_t sum = 0;
    int threads = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char path[64], buf[128];
        ssize_t n;
        int64_t w;
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", e->d_name);
        n = read_file(path, buf, sizeof buf);
        if (n == -ENOENT || n == -ESRCH)
            continue;
        if (n <= 0 || (w = hostload_parse_schedstat(buf, (size_t)n)) < 0) {
            sum = -1;
            break;
        }
        sum += w;
        threads++;
    }
    closedir(d);
    return threads > 0 ? sum : -1;
}

int hostload_sample_read(struct hostload_sample *s)
{
    char buf[HOSTLOAD_READ_MAX];
    ssize_t n = read_file("/proc/stat", buf, sizeof buf);
    int64_t wait = process_wait();
    int rc;

    memset(s, 0, sizeof *s);
    s->running = -1;
    s->wait_ns = wait;
    if (n < 0)
        return (int)n;
    /* A machine with a long interrupt line may not fit: the "cpu " line
     * comes first, so cut at the last whole line. */
    if ((size_t)n == sizeof buf) {
        char *nl = memrchr(buf, '\n', (size_t)n);
        n = nl ? nl - buf + 1 : 0;
    }
    if ((rc = hostload_parse_stat(buf, (size_t)n, s)) != 0)
        return rc;
    s->wait_ns = wait;              /* the parser cleared it */
    if (s->running < 0 && (n = read_file("/proc/loadavg", buf, 256)) > 0)
        s->running = hostload_parse_loadavg(buf, (size_t)n);
    return 0;
}

void hostload_decide(const struct hostload_sample *a, const struct hostload_sample *b,
                     double job_cpu_s, double wall_s, double hz, int ncpu, int nproc,
                     double run_queue, struct hostload_verdict *v)
{
    double others = NAN;
    int machine = a && b && a->ok && b->ok && b->total >= a->total + HOSTLOAD_MIN_TICKS &&
                  b->busy >= a->busy && hz > 0;
    int sig_busy, sig_others, sig_queue;

    if (ncpu < 1)
        ncpu = 1;
    if (machine) {
        /* Everything in the counters' own ticks, over the one window. */
        double total = (double)(b->total - a->total);
        v->machine_busy = fmin(1.0, (double)(b->busy - a->busy) / total);
        v->job_busy = job_cpu_s > 0 ? job_cpu_s * hz / total : 0.0;
        others = fmax(0.0, v->machine_busy - v->job_busy);
        v->other_cores = others * ncpu;
    } else {
        v->machine_busy = v->other_cores = NAN;
        v->job_busy = wall_s > 0 && job_cpu_s > 0 ? job_cpu_s / (wall_s * ncpu) : 0.0;
    }
    v->run_queue = run_queue;
    v->wait_share = NAN;            /* signal 4: hostload_wait */
    if (isnan(run_queue)) {
        /* Only this window's two samples: their mean is their median. */
        if (a && a->ok && a->running >= 1)
            v->run_queue = a->running - 1;
        if (b && b->ok && b->running >= 1)
            v->run_queue = isnan(v->run_queue) ? b->running - 1
                                               : 0.5 * (v->run_queue + b->running - 1);
    }
    sig_busy = (machine ? v->machine_busy : v->job_busy) > HOSTLOAD_BUSY;
    sig_others = machine && v->other_cores > HOSTLOAD_OTHER_CORES &&
                 v->other_cores + nproc > ncpu;
    sig_queue = !isnan(v->run_queue) && v->run_queue - (nproc - 1) >= ncpu &&
                !(machine && v->other_cores < HOSTLOAD_QUEUE_CORES);
    v->bound = sig_busy || sig_others || sig_queue;
    if (!v->bound)
        v->by = HOSTLOAD_LINK;
    else if (sig_others || sig_queue || (machine && others > v->job_busy))
        v->by = HOSTLOAD_OTHERS;
    else
        v->by = HOSTLOAD_CPU;
}

void hostload_wait(struct hostload_verdict *v, double job_wait_s, double wall_s, int nproc)
{
    v->wait_share = NAN;
    if (!(job_wait_s >= 0) || !(wall_s > 0) || nproc < 1)
        return;
    v->wait_share = job_wait_s / (wall_s * nproc);
    if (v->bound || !(v->wait_share > HOSTLOAD_WAIT))
        return;
    v->bound = 1;
    /* Whose processes held the CPUs: the others', when they used more. */
    v->by = !isnan(v->other_cores) && v->machine_busy - v->job_busy > v->job_busy
                ? HOSTLOAD_OTHERS : HOSTLOAD_CPU;
}

const char *hostload_by_name(enum hostload_by by)
{
    switch (by) {
    case HOSTLOAD_LINK: return "link";
    case HOSTLOAD_CPU: return "cpu";
    case HOSTLOAD_OTHERS: return "busy";
    }
    return "?";
}
