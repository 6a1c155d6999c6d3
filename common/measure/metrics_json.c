/* metrics_json.c -- a record and a merged row as JSON Lines (jsonl.h; the
 * schema: docs/design.md, JSON LINES).
 *
 * Both go through the text the CSV side writes (the record file's lines,
 * metrics_row_write's row under metrics_csv_header_line), so the JSON
 * cannot say anything the CSV does not: one conversion, jsonl.c's.
 */
#include "metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/outfile.h"
#include "jsonl.h"

#define REC_FIELDS 64

static const char *const step_names[] = {
    "step", "combine_s", "ingress_s", "egress_s", "bytes_in", "bytes_out", "step_s", "enter_t",
};

/* record_json: the record file's text (metrics.h, RECORD FILE) as one
 * "process" line (each "KEY VALUE" line a member; machine0/machine1's
 * three numbers KEY_total, KEY_busy, KEY_running; "psring-record 1" as
 * psring_record) and one "step" line per step line; "-" is null. */
static void record_json(FILE *f, char *text)
{
    char names[REC_FIELDS][METRICS_NAME_LEN + 16];
    const char *np[REC_FIELDS], *vals[REC_FIELDS];
    size_t n = 0;
    int process_due = 1;            /* the process line not yet written */
    char *save = NULL;

    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *tsave = NULL, *key = strtok_r(l, " ", &tsave), *v;
        const char *sv[8];
        size_t nv = 0;

        if (!key)
            continue;
        while ((v = strtok_r(NULL, " ", &tsave)) && nv < 8)
            sv[nv++] = strcmp(v, "-") == 0 ? NULL : v;
        if (strcmp(key, "step") == 0) {
            if (process_due) {          /* the process line before the first step */
                jsonl_object(f, "process", np, vals, n);
                process_due = 0;
            }
            /* "step S C I E BI BO [STEP_S [ENTER_T]]": absent is null. */
            const char *stepv[8];
            for (size_t i = 0; i < 8; i++)
                stepv[i] = i < nv ? sv[i] : NULL;
            jsonl_object(f, "step", step_names, stepv, 8);
            continue;
        }
        for (size_t i = 0; i < nv && n < REC_FIELDS; i++, n++) {
            static const char *const part[] = { "total", "busy", "running" };
            if (nv == 1)
                snprintf(names[n], sizeof names[n], "%s",
                         strcmp(key, "psring-record") == 0 ? "psring_record" : key);
            else
                snprintf(names[n], sizeof names[n], "%.16s_%s", key, i < 3 ? part[i] : "x");
            np[n] = names[n];
            vals[n] = sv[i];
        }
    }
    if (process_due)
        jsonl_object(f, "process", np, vals, n);
}

int metrics_record_write_json(const struct metrics_record *r, const char *path, char *err)
{
    char *text = NULL, *json = NULL;
    size_t len, jlen;
    FILE *f;
    int rc = metrics_record_text(r, &text, &len);

    if (rc == 0 && !(f = open_memstream(&json, &jlen)))
        rc = -errno;
    if (rc == 0) {
        jsonl_manifest(f, NULL);
        record_json(f, text);
        if (fclose(f) != 0)
            rc = -ENOMEM;
    }
    if (rc != 0)
        err_say(err, "--json %s: %s", path, strerror(-rc));
    else
        rc = outfile_write_text("--json", path, json, jlen, err);
    free(text);
    free(json);
    return rc;
}

int metrics_record_save(const struct metrics_record *r, const char *csv, const char *json,
                        char *err)
{
    int rc = csv ? metrics_record_write(r, csv, err) : 0;

    return rc == 0 && json ? metrics_record_write_json(r, json, err) : rc;
}

int metrics_row_json(FILE *f, const struct metrics_row *row, char *err)
{
    char *text = NULL;
    size_t len;
    FILE *m = open_memstream(&text, &len);
    int rc;

    if (!m) {
        err_say(err, "%s", strerror(errno));
        return -errno;
    }
    metrics_row_write(m, row);
    if (fclose(m) != 0) {
        free(text);
        err_say(err, "%s", strerror(ENOMEM));
        return -ENOMEM;
    }
    rc = jsonl_csv_row(f, metrics_csv_header_line(), text, err);
    free(text);
    return rc;
}

int metrics_row_append_json(const char *flag, const char *path, const struct metrics_row *row,
                            const char *manifest, char *err)
{
    int fresh, rc;
    char why[ERR_LEN];
    FILE *f = outfile_append(flag, path, &fresh, &rc, err);

    if (!f)
        return rc;
    jsonl_manifest(f, manifest);
    rc = metrics_row_json(f, row, why);
    if (rc != 0)
        err_say(err, "%s %s: %s", flag, path, why);
    if (fclose(f) != 0 && rc == 0) {
        rc = -errno;
        err_say(err, "%s %s: %s", flag, path, strerror(errno));
    }
    return rc;
}
