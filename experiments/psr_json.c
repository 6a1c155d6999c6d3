/* psr_json.c -- a CSV as JSON Lines beside it (docs/design.md, JSON LINES).
 *
 *     psr_json [--manifest FILE] --out NAME.json NAME.csv
 *
 * The lab writes its CSVs with scripts (awk, psr_merge's rows gathered);
 * this turns each into NAME.json at the end (experiments/lib.sh,
 * json_beside), by the one rule of common/measure/jsonl.h: a manifest line
 * (--manifest FILE's "KEY: VALUE" lines, the lab's manifest.txt, and this
 * machine's facts), then one {"record":"row",...} line per row, the
 * header's names in order, an empty field null, a number a number, the
 * rest strings. Written whole and atomically (outfile.h): a reader sees
 * the old file or the new one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/err.h"
#include "base/outfile.h"
#include "measure/jsonl.h"

int main(int argc, char **argv)
{
    const char *out = NULL, *manifest_path = NULL;
    const struct cli_opt table[] = {
        { "out", CLI_STRING, &out, "FILE", "write the JSON Lines to FILE (replaced whole)", 0, 0,
          NULL },
        { "manifest", CLI_STRING, &manifest_path, "FILE",
          "FILE's KEY: VALUE lines join the manifest line", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *const tables[] = { table, NULL };
    char err[ERR_LEN], *csv = NULL, *manifest = NULL, *json = NULL;
    size_t len = 0;
    int first = 1, rc = 1, r;
    FILE *f;

    /* Options first, then the CSV: split argv at the first path. */
    while (first < argc && argv[first][0] == '-' && argv[first][1] != '\0')
        first += (strchr(argv[first], '=') || strcmp(argv[first], "--help") == 0 ||
                  strcmp(argv[first], "-h") == 0 || strcmp(argv[first], "--version") == 0) ? 1 : 2;
    if (first > argc)
        first = argc;
    cli_main_parse("psr_json", "[--manifest FILE] --out FILE CSV\n"
                   "Write a CSV as JSON Lines: a manifest line, then one line per row.",
                   first, argv, tables);
    if (argc - first != 1 || !out) {
        fprintf(stderr, "psr_json: %s; see psr_json --help\n",
                !out ? "--out FILE is needed" : "give one CSV file");
        return CLI_EXIT_USAGE;
    }
    if (outfile_check("--out", out, err) != 0) {
        fprintf(stderr, "psr_json: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if ((manifest_path && !(manifest = jsonl_read_text("--manifest", manifest_path, &r, err))) ||
        !(csv = jsonl_read_text("CSV", argv[first], &r, err))) {
        fprintf(stderr, "psr_json: %s\n", err);
        rc = r == ERR_USAGE ? CLI_EXIT_USAGE : 1;
        goto out;
    }
    if (!(f = open_memstream(&json, &len)))
        goto out;
    r = jsonl_csv_text(f, csv, manifest, err);
    if (fclose(f) != 0 || r != 0) {
        fprintf(stderr, "psr_json: %s: %s\n", argv[first], r ? err : "out of memory");
        goto out;
    }
    if (outfile_write_text("--out", out, json, len, err) != 0) {
        fprintf(stderr, "psr_json: %s\n", err);
        goto out;
    }
    rc = 0;
out:
    free(csv);
    free(manifest);
    free(json);
    return rc;
}
