/* metrics.c -- step records, summaries and the merge into a CSV row.
 *
 * The merge rules and the record format are in metrics.h; the merge
 * itself is metrics_merge.c's. The code is
 * strict about records: processes of one job must report the same timed
 * steps in the same order, because a row that silently mixed different
 * steps would compare different things.
 */
#include "metrics.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/infile.h"
#include "model.h"
#include "base/outfile.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int metrics_summarize(const double *v, size_t n, struct metrics_stats *out)
{
    double *s;

    if (n == 0)
        return ERR_USAGE;
    s = malloc(n * sizeof *s);
    if (!s)
        return -ENOMEM;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    out->min = s[0];
    out->max = s[n - 1];
    out->median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return 0;
}

void metrics_wait_add(struct metrics_wait *w, double t)
{
    t = t > 0 ? t : 0.0;
    w->sum += t;
    w->max = w->n == 0 || t > w->max ? t : w->max;
    w->n++;
}

double metrics_wait_mean(const struct metrics_wait *w)
{
    return w->n ? w->sum / (double)w->n : NAN;
}

/* clock_id_read: this machine's boot id (LAST ENTRY: CLOCK_MONOTONIC is
 * one clock per boot, shared by every process and network namespace of
 * the kernel); "" when it cannot be read. */
static void clock_id_read(char *out)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    char buf[METRICS_CLOCK_LEN] = "";

    out[0] = '\0';
    if (!f)
        return;
    if (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, " \t\n")] = '\0';
        snprintf(out, METRICS_CLOCK_LEN, "%s", buf);
    }
    fclose(f);
}

int metrics_record_init(struct metrics_record *r, size_t cap)
{
    memset(r, 0, sizeof *r);
    clock_id_read(r->clock_id);
    r->rank = -1;
    r->ttt_s = r->wait_s = r->compute_cpu_s = NAN;
    r->link_span_s = r->link_idle_s = r->link_credit_s = NAN;
    r->machine0.wait_ns = r->machine1.wait_ns = -1;     /* not known until sampled or read */
    if (cap > METRICS_MAX_STEPS)
        return ERR_USAGE;
    r->cap = cap;
    r->steps = calloc(cap ? cap : 1, sizeof *r->steps);
    return r->steps ? 0 : -ENOMEM;
}

void metrics_record_free(struct metrics_record *r)
{
    free(r->steps);
    r->steps = NULL;
    r->nsteps = r->cap = 0;
}

int metrics_record_add(struct metrics_record *r, const struct metrics_step *s)
{
    if (r->nsteps >= r->cap)
        return ERR_USAGE;
    r->steps[r->nsteps++] = *s;
    return 0;
}

/* A time that does not apply travels as "-". */
static void put_time(FILE *f, double t)
{
    if (isnan(t))
        fprintf(f, " -");
    else
        fprintf(f, " %.9g", t);
}

/* A machine sample: "KEY TOTAL BUSY RUNNING" (RUNNING "-" when unknown);
 * nothing when there is none. */
static void put_machine(FILE *f, const char *key, const struct hostload_sample *m)
{
    if (!m->ok)
        return;
    fprintf(f, "%s %llu %llu", key, (unsigned long long)m->total, (unsigned long long)m->busy);
    if (m->running >= 0)
        fprintf(f, " %d\n", m->running);
    else
        fprintf(f, " -\n");
}

/* The process's run delay at a machine sample: "waitN NS", only when known. */
static void put_wait(FILE *f, const char *key, const struct hostload_sample *m)
{
    if (m->ok && m->wait_ns >= 0)
        fprintf(f, "%s %lld\n", key, (long long)m->wait_ns);
}

/* record_text: the record file's text (metrics.h, RECORD FILE) into f. */
static void record_text(FILE *f, const struct metrics_record *r)
{
    fprintf(f, "psring-record 1\nsystem %s\nrole %s\nrank %d\nworld %d\n",
                   r->system, r->role, r->rank, r->world);
    fprintf(f, "algo %s\ntransport %s\nbytes %llu\n", r->algo[0] ? r->algo : "-",
                   r->transport[0] ? r->transport : "-", (unsigned long long)r->bytes);
    fprintf(f, "link_bw %.17g\nlink_latency %.17g\ncpu_s %.9g\nwall_s %.9g\nncpu %d\n",
                   r->link_bw, r->link_latency, r->cpu_s, r->wall_s, r->ncpu);
    if (r->coll[0])
        fprintf(f, "coll %s\n", r->coll);
    if (r->compress[0])
        fprintf(f, "compress %s\nwire_bytes %llu\n", r->compress,
                (unsigned long long)r->wire_bytes);
    put_machine(f, "machine0", &r->machine0);
    put_machine(f, "machine1", &r->machine1);
    if (r->buckets > 1)
        fprintf(f, "buckets %u\nbucket_bytes %llu\n", (unsigned)r->buckets,
                       (unsigned long long)r->bucket_bytes);
    if (!isnan(r->ttt_s))
        fprintf(f, "ttt_s %.9g\n", r->ttt_s);
    if (!isnan(r->wait_s))
        fprintf(f, "wait_s %.9g\n", r->wait_s);
    if (!isnan(r->compute_cpu_s))
        fprintf(f, "compute_cpu_s %.9g\n", r->compute_cpu_s);
    if (!isnan(r->link_span_s) && !isnan(r->link_idle_s))
        fprintf(f, "link_span_s %.9g\nlink_idle_s %.9g\n", r->link_span_s, r->link_idle_s);
    if (!isnan(r->link_credit_s))
        fprintf(f, "link_credit_s %.9g\n", r->link_credit_s);
    put_wait(f, "wait0", &r->machine0);
    put_wait(f, "wait1", &r->machine1);
    if (r->clock_id[0])
        fprintf(f, "clock %s\n", r->clock_id);
    for (size_t i = 0; i < r->nsteps; i++) {
        const struct metrics_step *s = &r->steps[i];
        fprintf(f, "step %llu", (unsigned long long)s->step);
        put_time(f, s->combine_s);
        put_time(f, s->ingress_s);
        put_time(f, s->egress_s);
        fprintf(f, " %llu %llu", (unsigned long long)s->bytes_in,
                       (unsigned long long)s->bytes_out);
        put_time(f, s->step_s);
        if (isnan(s->enter_t))          /* an instant: every digit (RECORD FILE) */
            fprintf(f, " -");
        else
            fprintf(f, " %.17g", s->enter_t);
        fprintf(f, "\n");
    }
}

int metrics_record_text(const struct metrics_record *r, char **text, size_t *len)
{
    FILE *f = open_memstream(text, len);

    if (!f)
        return -errno;
    record_text(f, r);
    if (fclose(f) != 0) {
        free(*text);
        *text = NULL;
        return -ENOMEM;
    }
    return 0;
}

/* Written through outfile.h: checked, atomic, every error reported as is. */
int metrics_record_write(const struct metrics_record *r, const char *path, char *err)
{
    char *text;
    size_t len;
    int rc = metrics_record_text(r, &text, &len);

    if (rc != 0) {
        err_say(err, "--csv %s: %s", path, strerror(-rc));
        return rc;
    }
    rc = outfile_write_text("--csv", path, text, len, err);
    free(text);
    return rc;
}

/* Strict number parsing for the reader: the whole token must be used. */
static int tok_double(const char *t, double *out)
{
    char *end;
    if (strcmp(t, "-") == 0) {
        *out = NAN;
        return 0;
    }
    errno = 0;
    *out = strtod(t, &end);
    return (end != t && *end == '\0' && errno == 0 && !isinf(*out) && !isnan(*out)) ? 0 : -1;
}

static int tok_u64(const char *t, uint64_t *out)
{
    char *end;
    if (*t < '0' || *t > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(t, &end, 10);
    *out = v;
    return (*end == '\0' && errno == 0) ? 0 : -1;
}

static int tok_int(const char *t, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(t, &end, 10);
    *out = (int)v;
    return (end != t && *end == '\0' && errno == 0 && v >= -1 && v <= 1000000) ? 0 : -1;
}

static int set_name(char *dst, const char *v)
{
    if (strlen(v) >= METRICS_NAME_LEN)
        return -1;
    strcpy(dst, strcmp(v, "-") == 0 ? "" : v);
    return 0;
}

/* One "key value..." line into the record; -1 if it does not parse. */
static int read_line(struct metrics_record *r, char *line)
{
    char *save = NULL, *key = strtok_r(line, " \t\n", &save);
    char *v = key ? strtok_r(NULL, " \t\n", &save) : NULL;
    uint64_t u;

    if (!key)
        return 0;                       /* blank line */
    if (!v)
        return -1;
    if (strcmp(key, "step") == 0) {
        struct metrics_step s;
        char *t[7];
        for (int i = 0; i < 5; i++)
            if (!(t[i] = strtok_r(NULL, " \t\n", &save)))
                return -1;
        t[5] = strtok_r(NULL, " \t\n", &save);      /* STEP_S: optional */
        t[6] = t[5] ? strtok_r(NULL, " \t\n", &save) : NULL;   /* ENTER_T: optional */
        s.step_s = s.enter_t = NAN;
        if ((t[6] && strtok_r(NULL, " \t\n", &save)) || tok_u64(v, &s.step) ||
            tok_double(t[0], &s.combine_s) || tok_double(t[1], &s.ingress_s) ||
            tok_double(t[2], &s.egress_s) || tok_u64(t[3], &s.bytes_in) ||
            tok_u64(t[4], &s.bytes_out) || (t[5] && tok_double(t[5], &s.step_s)) ||
            (t[6] && tok_double(t[6], &s.enter_t)))
            return -1;
        if (r->nsteps == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 64;
            struct metrics_step *p;
            if (cap > METRICS_MAX_STEPS)
                return -1;
            p = realloc(r->steps, cap * sizeof *p);
            if (!p)
                return -1;
            r->steps = p;
            r->cap = cap;
        }
        r->steps[r->nsteps++] = s;
        return 0;
    }
    if (strcmp(key, "machine0") == 0 || strcmp(key, "machine1") == 0) {
        struct hostload_sample *m = key[7] == '0' ? &r->machine0 : &r->machine1;
        char *busy = strtok_r(NULL, " \t\n", &save), *run = strtok_r(NULL, " \t\n", &save);
        uint64_t t, b;
        if (!run || strtok_r(NULL, " \t\n", &save) || tok_u64(v, &t) || tok_u64(busy, &b) ||
            b > t)
            return -1;
        m->running = -1;
        if (strcmp(run, "-") != 0 && (tok_int(run, &m->running) || m->running < 0))
            return -1;
        m->total = t;
        m->busy = b;
        m->ok = 1;
        return 0;
    }
    if (strtok_r(NULL, " \t\n", &save))
        return -1;                      /* one value per key */
    if (strcmp(key, "psring-record") == 0) return strcmp(v, "1") == 0 ? 0 : -1;
    if (strcmp(key, "system") == 0) return set_name(r->system, v);
    if (strcmp(key, "role") == 0) return set_name(r->role, v);
    if (strcmp(key, "algo") == 0) return set_name(r->algo, v);
    if (strcmp(key, "transport") == 0) return set_name(r->transport, v);
    if (strcmp(key, "coll") == 0) return set_name(r->coll, v);
    if (strcmp(key, "compress") == 0) return set_name(r->compress, v);
    if (strcmp(key, "wire_bytes") == 0) return tok_u64(v, &r->wire_bytes);
    if (strcmp(key, "rank") == 0) return tok_int(v, &r->rank);
    if (strcmp(key, "world") == 0) return tok_int(v, &r->world);
    if (strcmp(key, "ncpu") == 0) return tok_int(v, &r->ncpu);
    if (strcmp(key, "clock") == 0) {
        if (strlen(v) >= sizeof r->clock_id)
            return -1;
        strcpy(r->clock_id, v);
        return 0;
    }
    if (strcmp(key, "bytes") == 0) {
        if (tok_u64(v, &u))
            return -1;
        r->bytes = u;
        return 0;
    }
    if (strcmp(key, "buckets") == 0) {
        if (tok_u64(v, &u) || u < 2 || u > UINT32_MAX)
            return -1;                  /* written only for several */
        r->buckets = (uint32_t)u;
        return 0;
    }
    if (strcmp(key, "bucket_bytes") == 0) {
        if (tok_u64(v, &u) || u < 1)
            return -1;
        r->bucket_bytes = u;
        return 0;
    }
    if (strcmp(key, "link_bw") == 0) return tok_double(v, &r->link_bw);
    if (strcmp(key, "link_latency") == 0) return tok_double(v, &r->link_latency);
    if (strcmp(key, "cpu_s") == 0) return tok_double(v, &r->cpu_s);
    if (strcmp(key, "wall_s") == 0) return tok_double(v, &r->wall_s);
    if (strcmp(key, "ttt_s") == 0) return tok_double(v, &r->ttt_s) || r->ttt_s < 0 ? -1 : 0;
    if (strcmp(key, "wait_s") == 0) return tok_double(v, &r->wait_s) || r->wait_s < 0 ? -1 : 0;
    if (strcmp(key, "compute_cpu_s") == 0)
        return tok_double(v, &r->compute_cpu_s) || !(r->compute_cpu_s >= 0) ? -1 : 0;
    if (strcmp(key, "link_span_s") == 0)
        return tok_double(v, &r->link_span_s) || !(r->link_span_s >= 0) ? -1 : 0;
    if (strcmp(key, "link_idle_s") == 0)
        return tok_double(v, &r->link_idle_s) || !(r->link_idle_s >= 0) ? -1 : 0;
    if (strcmp(key, "link_credit_s") == 0)
        return tok_double(v, &r->link_credit_s) || !(r->link_credit_s >= 0) ? -1 : 0;
    if (strcmp(key, "wait0") == 0 || strcmp(key, "wait1") == 0) {
        uint64_t w;
        if (tok_u64(v, &w) || w > (uint64_t)INT64_MAX)
            return -1;
        (key[4] == '0' ? &r->machine0 : &r->machine1)->wait_ns = (int64_t)w;
        return 0;
    }
    return -1;                          /* unknown key */
}

int metrics_record_read(struct metrics_record *r, const char *path, char *err)
{
    char line[512];
    int lineno = 0, rc = 0;
    FILE *f;

    rc = metrics_record_init(r, 64);
    if (rc)
        return rc;
    r->clock_id[0] = '\0';             /* the file's, not this machine's */
    /* A FIFO, a device or a folder: ERR_USAGE, unread (infile.h). */
    f = infile_fopen("record", path, &rc, err);
    if (!f)
        return rc;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = ERR_FORMAT;
            if (err)
                snprintf(err, ERR_LEN, "%s:%d: line too long", path, lineno);
            break;
        }
        if ((lineno == 1 && strncmp(line, "psring-record ", 14) != 0) ||
            read_line(r, line) != 0) {
            rc = ERR_FORMAT;
            if (err)
                snprintf(err, ERR_LEN, "%s:%d: not a psring record line", path, lineno);
            break;
        }
    }
    if (rc == 0 && (lineno == 0 || !r->system[0] || r->world < 1)) {
        rc = ERR_FORMAT;
        if (err)
            snprintf(err, ERR_LEN, "%s: incomplete record (no system or world)", path);
    }
    fclose(f);
    return rc;
}

const char *metrics_csv_header_line(void)
{
    return "system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,"
           "ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,"
           "model_s,host_bound,bound_by,machine_busy,job_busy,run_queue,servers,placement,coll,step_s,"
           "ttt_s,wait_s,link_util,cpu_s_per_gb,compress\n";
}

void metrics_csv_header(FILE *f)
{
    fputs(metrics_csv_header_line(), f);
}

/* An empty field for a value that does not apply. */
static void put_field(FILE *f, double v)
{
    if (isnan(v))
        fputc(',', f);
    else
        fprintf(f, ",%.6g", v);
}

void metrics_row_write(FILE *f, const struct metrics_row *row)
{
    fprintf(f, "%s,%s,%s,%d,%llu,%zu", row->system, row->algo, row->transport,
            row->k, (unsigned long long)row->bytes, row->steps);
    put_field(f, row->time_s);
    put_field(f, row->time_min_s);
    put_field(f, row->time_max_s);
    put_field(f, row->ingress_s);
    put_field(f, row->egress_s);
    put_field(f, row->algbw);
    put_field(f, row->busbw);
    fprintf(f, ",%.0f,%.0f", row->bytes_in, row->bytes_out);
    put_field(f, row->link_bw);
    put_field(f, row->link_latency);
    put_field(f, row->model_s);
    if (row->host_bound < 0)
        fputc(',', f);
    else
        fprintf(f, ",%d", row->host_bound);
    fprintf(f, ",%s", row->bound_by);
    put_field(f, row->machine_busy);
    put_field(f, row->job_busy);
    put_field(f, row->run_queue);
    if (row->servers > 0)
        fprintf(f, ",%d", row->servers);
    else
        fputc(',', f);
    fprintf(f, ",%s,%s", row->placement, row->coll);

    put_field(f, row->step_s);
    put_field(f, row->ttt_s);
    put_field(f, row->wait_s);
    put_field(f, row->link_util);
    put_field(f, row->cpu_s_per_gb);
    fprintf(f, ",%s\n", row->compress);
}
