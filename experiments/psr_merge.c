/* psr_merge.c -- merge one job's per-process records into one CSV row.
 *
 *     psr_merge [--out results.csv] [--json-out results.json] [--manifest FILE]
 *               [--placement P] RECORD...
 *
 * Every process of a job writes its own record (--csv); the launcher calls
 * this once per job. The row is appended to --out (the header first when
 * the file is new or empty; refused when the file has another header, an
 * older psring's, since the row would not line up) or printed on stdout
 * with the header. The
 * merge rules are metrics.h's. --placement names the parameter server's
 * placement (separate, colocated, colocated-even; the launcher knows it,
 * the records do not) for the CSV's placement column and model_s.
 * --json-out appends the same row as JSON Lines (metrics_row_append_json:
 * a manifest line, then the row's; docs/design.md, JSON LINES), the
 * "KEY: VALUE" lines of --manifest FILE (the launcher's facts: its
 * command, the git commit) in the manifest line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cli.h"
#include "base/err.h"
#include "base/infile.h"
#include "base/outfile.h"
#include "measure/jsonl.h"
#include "measure/metrics.h"

/* header_differs: whether the CSV at path starts with a line other than
 * this psr_merge's header (a row appended under it would not line up). */
static int header_differs(const char *path)
{
    char line[1024], err[ERR_LEN];
    int differs = 1, rc;
    FILE *f = infile_fopen("--out", path, &rc, err);

    if (!f)
        return 1;               /* a regular file a moment ago: say so below */
    if (fgets(line, sizeof line, f))
        differs = strcmp(line, metrics_csv_header_line()) != 0;
    fclose(f);
    return differs;
}

int main(int argc, char **argv)
{
    const char *out = NULL, *placement = NULL, *json_out = NULL, *manifest_path = NULL;
    char *manifest = NULL;
    const struct cli_opt table[] = {
        { "out", CLI_STRING, &out, "FILE", "append the row to FILE (header if new)", 0, 0, NULL },
        { "json-out", CLI_STRING, &json_out, "FILE",
          "append a manifest line and the row to FILE as JSON Lines", 0, 0, NULL },
        { "manifest", CLI_STRING, &manifest_path, "FILE",
          "with --json-out: FILE's KEY: VALUE lines join the manifest line", 0, 0, NULL },
        { "placement", CLI_STRING, &placement, "P", "PS: separate (default), colocated or "
          "colocated-even (the CSV's placement, and model_s for it)", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *const tables[] = { table, NULL };
    struct metrics_record *recs;
    struct metrics_row row;
    char err[ERR_LEN];
    int nrec = 0, first = 1, rc = 1;
    char **paths;
    FILE *f;

    /* Options first, then record paths: split argv at the first path. */
    while (first < argc && strncmp(argv[first], "--", 2) == 0)
        first += (strchr(argv[first], '=') || strcmp(argv[first], "--help") == 0 ||
                  strcmp(argv[first], "--version") == 0) ? 1 : 2;
    if (first > argc)
        first = argc;
    cli_main_parse("psr_merge", "[--out FILE] [--json-out FILE [--manifest FILE]] [--placement P] "
                   "RECORD...\n"
                   "Merge one job's per-process records (--csv) into one row of the shared CSV.",
                   first, argv, tables);
    paths = argv + first;
    nrec = argc - first;
    if (nrec == 0) {
        fprintf(stderr, "psr_merge: no record files given (psr_merge [--out FILE] RECORD...); "
                "see psr_merge --help\n");
        return CLI_EXIT_USAGE;
    }

    if (manifest_path && !json_out) {
        fprintf(stderr, "psr_merge: --manifest %s: only with --json-out; see psr_merge --help\n",
                manifest_path);
        return CLI_EXIT_USAGE;
    }
    if (json_out && outfile_check("--json-out", json_out, err) != 0) {
        fprintf(stderr, "psr_merge: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (manifest_path && !(manifest = jsonl_read_text("--manifest", manifest_path, &rc, err))) {
        fprintf(stderr, "psr_merge: %s\n", err);
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
    }
    recs = calloc((size_t)nrec, sizeof *recs);
    if (!recs) {
        free(manifest);
        return 1;
    }
    for (int i = 0; i < nrec; i++) {
        int r = metrics_record_read(&recs[i], paths[i], err);
        if (r != 0) {
            fprintf(stderr, "psr_merge: %s\n", err);
            rc = r == ERR_USAGE ? CLI_EXIT_USAGE : 1;
            goto out;
        }
    }
    if (metrics_merge(recs, (size_t)nrec, &row, err) != 0) {
        fprintf(stderr, "psr_merge: %s\n", err);
        goto out;
    }
    if (placement && (rc = metrics_row_place(&row, placement, err)) != 0) {
        if (rc == ERR_USAGE)
            fprintf(stderr, "psr_merge: --placement %s: %s; see psr_merge --help\n", placement,
                    err);
        else
            fprintf(stderr, "psr_merge: --placement: %s\n", err);
        rc = rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
        goto out;
    }
    rc = 1;

    if (out) {
        int fresh, r;
        /* outfile_append: a symlink out of its folder, a FIFO, a device
         * or a folder is refused (outfile.h), a FIFO never waited on. */
        if (!(f = outfile_append("--out", out, &fresh, &r, err))) {
            fprintf(stderr, "psr_merge: %s\n", err);
            rc = r == ERR_USAGE ? CLI_EXIT_USAGE : 1;
            goto out;
        }
        if (!fresh && header_differs(out)) {
            fprintf(stderr, "psr_merge: %s has another header (an older psring's?); "
                            "its rows would not line up: write to a new file\n", out);
            fclose(f);
            goto out;
        }
        if (fresh)
            metrics_csv_header(f);
        metrics_row_write(f, &row);
        if (fclose(f) != 0) {
            fprintf(stderr, "psr_merge: writing %s: %s\n", out, strerror(errno));
            goto out;
        }
    } else {
        metrics_csv_header(stdout);
        metrics_row_write(stdout, &row);
    }
    if (json_out && metrics_row_append_json("--json-out", json_out, &row, manifest, err) != 0) {
        fprintf(stderr, "psr_merge: %s\n", err);
        goto out;
    }
    rc = 0;
out:
    free(manifest);
    for (int i = 0; i < nrec; i++)
        metrics_record_free(&recs[i]);
    free(recs);
    return rc;
}
