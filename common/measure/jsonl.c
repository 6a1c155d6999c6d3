/* jsonl.c -- CSV and record text to JSON Lines (jsonl.h: the rule). */
#include "jsonl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/err.h"
#include "base/infile.h"

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* JSON's number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
int jsonl_is_number(const char *s, size_t n)
{
    size_t i = 0, d;

    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0')
        i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9')
        while (i < n && is_digit(s[i]))
            i++;
    else
        return 0;
    if (i < n && s[i] == '.') {
        for (d = ++i; i < n && is_digit(s[i]); i++)
            ;
        if (i == d)
            return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        for (d = i; i < n && is_digit(s[i]); i++)
            ;
        if (i == d)
            return 0;
    }
    return i == n;
}

void jsonl_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void jsonl_value(FILE *f, const char *s, size_t n)
{
    if (!s || n == 0)
        fputs("null", f);
    else if (jsonl_is_number(s, n))
        fwrite(s, 1, n, f);
    else
        jsonl_string(f, s, n);
}

void jsonl_object(FILE *f, const char *kind, const char *const *names,
                  const char *const *vals, size_t n)
{
    fputs("{\"record\":", f);
    jsonl_string(f, kind, strlen(kind));
    for (size_t i = 0; i < n; i++) {
        fputc(',', f);
        jsonl_string(f, names[i], strlen(names[i]));
        fputc(':', f);
        jsonl_value(f, vals[i], vals[i] ? strlen(vals[i]) : 0);
    }
    fputs("}\n", f);
}

/* split_csv: one CSV line into fields, in place in buf (a copy of the
 * line): RFC 4180 quotes undone. The count, or -1 when there are too many
 * or a quote is not closed. */
static int split_csv(char *buf, const char **field, int max)
{
    int n = 0;
    char *r = buf, *w = buf;

    buf[strcspn(buf, "\r\n")] = '\0';
    for (;;) {
        if (n == max)
            return -1;
        field[n++] = w;
        if (*r == '"') {
            for (r++;; r++) {
                if (*r == '\0')
                    return -1;
                if (*r == '"' && r[1] == '"')
                    *w++ = *r++;
                else if (*r == '"')
                    break;
                else
                    *w++ = *r;
            }
            r++;
        }
        while (*r && *r != ',')
            *w++ = *r++;
        if (*r == '\0') {
            *w = '\0';
            return n;
        }
        *w++ = '\0';
        r++;
    }
}

int jsonl_csv_row(FILE *f, const char *header, const char *row, char *err)
{
    const char *names[JSONL_FIELDS_MAX], *vals[JSONL_FIELDS_MAX];
    char *hb, *rb;
    int nh, nr, rc = ERR_FORMAT;

    if (strlen(header) >= JSONL_LINE_MAX || strlen(row) >= JSONL_LINE_MAX) {
        err_say(err, "a line over %d bytes", JSONL_LINE_MAX - 1);
        return ERR_FORMAT;
    }
    /* Copies to split in place: on the heap, so a thread's stack is spared. */
    hb = strdup(header);
    rb = strdup(row);
    if (!hb || !rb) {
        err_say(err, "out of memory");
        rc = -ENOMEM;
    } else if ((nh = split_csv(hb, names, JSONL_FIELDS_MAX)) < 0 ||
               (nr = split_csv(rb, vals, JSONL_FIELDS_MAX)) < 0) {
        err_say(err, "an unclosed quote or over %d fields", JSONL_FIELDS_MAX);
    } else if (nh != nr) {
        err_say(err, "%d fields under a header of %d", nr, nh);
    } else {
        jsonl_object(f, "row", names, vals, (size_t)nh);
        rc = 0;
    }
    free(hb);
    free(rb);
    return rc;
}

/* The manifest's facts of this process, KEY and VALUE strings. */
struct fact {
    char key[64];
    char val[1024];
};

/* command_line: /proc/self/cmdline, arguments joined by spaces; argv[0]'s
 * last part in prog. */
static void command_line(char *cmd, size_t cap, char *prog, size_t pcap)
{
    FILE *p = fopen("/proc/self/cmdline", "r");
    size_t n = p ? fread(cmd, 1, cap - 1, p) : 0;
    const char *slash;

    if (p)
        fclose(p);
    cmd[n] = '\0';
    slash = strrchr(cmd, '/');
    snprintf(prog, pcap, "%s", slash ? slash + 1 : cmd);
    while (n > 0 && cmd[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if (cmd[i] == '\0')
            cmd[i] = ' ';
    cmd[n] = '\0';
}

static size_t own_facts(struct fact *fa)
{
    struct utsname u;
    time_t now = time(NULL);
    struct tm tm;
    FILE *p;
    size_t n = 0;

    snprintf(fa[n].key, sizeof fa[n].key, "program");
    command_line(fa[n + 1].val, sizeof fa[n + 1].val, fa[n].val, sizeof fa[n].val);
    n++;
    snprintf(fa[n++].key, sizeof fa[0].key, "command");
    snprintf(fa[n].key, sizeof fa[n].key, "version");
    snprintf(fa[n++].val, sizeof fa[0].val, "%s", PSRING_VERSION);
    snprintf(fa[n].key, sizeof fa[n].key, "date");
    gmtime_r(&now, &tm);
    strftime(fa[n++].val, sizeof fa[0].val, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (uname(&u) == 0) {
        snprintf(fa[n].key, sizeof fa[n].key, "host");
        snprintf(fa[n++].val, sizeof fa[0].val, "%s", u.nodename);
        snprintf(fa[n].key, sizeof fa[n].key, "kernel");
        snprintf(fa[n++].val, sizeof fa[0].val, "%s %s %s", u.sysname, u.release, u.machine);
    }
    snprintf(fa[n].key, sizeof fa[n].key, "ncpu");
    snprintf(fa[n++].val, sizeof fa[0].val, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    if ((p = fopen("/proc/loadavg", "r"))) {
        double l1, l5, l15;
        if (fscanf(p, "%lf %lf %lf", &l1, &l5, &l15) == 3) {
            snprintf(fa[n].key, sizeof fa[n].key, "loadavg");
            snprintf(fa[n++].val, sizeof fa[0].val, "%.2f %.2f %.2f", l1, l5, l15);
        }
        fclose(p);
    }
    return n;
}

#define MANIFEST_KEYS 512

/* seen: whether key[0..n) is one of keys[0..nk) (lengths in lens). */
static int seen(const char *const *keys, const size_t *lens, size_t nk, const char *key, size_t n)
{
    for (size_t i = 0; i < nk; i++)
        if (lens[i] == n && memcmp(keys[i], key, n) == 0)
            return 1;
    return 0;
}

/* fact_value: a manifest fact's value; a commit ("git": 13e6144, 1234567)
 * is a string even where its text reads as a number. */
static void fact_value(FILE *f, const char *key, size_t klen, const char *v, size_t n)
{
    if (klen == 3 && memcmp(key, "git", 3) == 0 && n > 0)
        jsonl_string(f, v, n);
    else
        jsonl_value(f, v, n);
}

void jsonl_manifest(FILE *f, const char *text)
{
    /* On the heap (about 30 KiB), not a thread's stack; without it the
     * line holds the text's keys and none of this process's facts. */
    struct manifest_scratch {
        struct fact fa[16];
        const char *keys[MANIFEST_KEYS];
        size_t lens[MANIFEST_KEYS];
    } *m = calloc(1, sizeof *m);
    size_t nk = 0, nf = m ? own_facts(m->fa) : 0;
    const char *keys_none[1];
    size_t lens_none[1];
    const char **keys = m ? m->keys : keys_none;
    size_t *lens = m ? m->lens : lens_none, kmax = m ? MANIFEST_KEYS : 0;
    struct fact *fa = m ? m->fa : NULL;

    fputs("{\"record\":\"manifest\"", f);
    for (const char *l = text; l && *l;) {
        const char *end = strchr(l, '\n'), *colon;
        size_t len = end ? (size_t)(end - l) : strlen(l);

        colon = memchr(l, ':', len);
        if (l[0] != '#' && colon && colon > l && colon + 1 < l + len && colon[1] == ' ' &&
            !memchr(l, ' ', (size_t)(colon - l)) && nk < kmax &&
            !seen(keys, lens, nk, l, (size_t)(colon - l))) {
            keys[nk] = l;
            lens[nk++] = (size_t)(colon - l);
            fputc(',', f);
            jsonl_string(f, l, (size_t)(colon - l));
            fputc(':', f);
            fact_value(f, l, (size_t)(colon - l), colon + 2, len - (size_t)(colon + 2 - l));
        }
        l += len + (end != NULL);
    }
    for (size_t i = 0; i < nf; i++) {
        /* The text's command (a launcher's) replaces this process's
         * command and its program's name with it. */
        const char *k = i == 0 ? "command" : fa[i].key;
        if (seen(keys, lens, nk, k, strlen(k)))
            continue;
        fputc(',', f);
        jsonl_string(f, fa[i].key, strlen(fa[i].key));
        fputc(':', f);
        fact_value(f, fa[i].key, strlen(fa[i].key), fa[i].val, strlen(fa[i].val));
    }
    fputs("}\n", f);
    free(m);
}

int jsonl_csv_text(FILE *f, const char *csv, const char *manifest, char *err)
{
    char *header = malloc(2 * JSONL_LINE_MAX), *row;
    char why[ERR_LEN];
    int line = 0, rc = 0;

    if (!header) {
        err_say(err, "out of memory");
        return -ENOMEM;
    }
    row = header + JSONL_LINE_MAX;
    jsonl_manifest(f, manifest);
    header[0] = '\0';
    for (const char *l = csv, *s; *l;) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        char *into = header[0] ? row : header;

        line++;
        s = l;                          /* this line: s[0..len) */
        l += len + (end != NULL);
        if (len == 0 || (len == 1 && s[0] == '\r'))
            continue;                   /* a blank line */
        if (len >= JSONL_LINE_MAX) {
            err_say(err, "line %d: over %d bytes", line, JSONL_LINE_MAX - 1);
            rc = ERR_FORMAT;
            break;
        }
        memcpy(into, s, len);
        into[len] = '\0';
        if (into == row && (rc = jsonl_csv_row(f, header, row, why)) != 0) {
            err_say(err, "line %d: %s", line, why);
            break;
        }
    }
    free(header);
    return rc;
}

char *jsonl_read_text(const char *flag, const char *path, int *rc, char *err)
{
    FILE *f = infile_fopen(flag, path, rc, err);
    char *text = NULL;
    size_t len = 0, cap = 0;

    if (!f)
        return NULL;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *t = cap + 65536 > JSONL_TEXT_MAX ? NULL : realloc(text, cap += 65536);
            if (!t) {
                *rc = -EFBIG;
                err_say(err, "%s %s: over %d bytes", flag, path, JSONL_TEXT_MAX);
                goto fail;
            }
            text = t;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096)
            break;
    }
    if (ferror(f)) {
        *rc = -EIO;
        err_say(err, "%s %s: %s", flag, path, strerror(errno));
        goto fail;
    }
    fclose(f);
    text[len] = '\0';
    return text;
fail:
    fclose(f);
    free(text);
    return NULL;
}
