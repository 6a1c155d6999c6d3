/* cli_line.h -- for the unit tests: the common flags of one command line
 * given as a string, parsed and finished as a program does.
 *
 * cli_line_common: LINE split at spaces (at most 30 words; no quoting),
 * parsed against cli_common_opts after cli_common_defaults, then
 * cli_common_finish. OUT: *c. Returns what they return, with the reason
 * in err. Not reentrant (one static buffer). */
#ifndef CLI_LINE_H
#define CLI_LINE_H

#include <stdio.h>
#include <string.h>

#include "train/cli_common.h"

static inline int cli_line_common(const char *line, struct cli_common *c, char *err)
{
    static char buf[512];
    char *argv[32];
    const struct cli_opt *tables[2];
    int argc = 0, rc;

    snprintf(buf, sizeof buf, "%s", line);
    argv[argc++] = "test";
    for (char *tok = strtok(buf, " "); tok && argc < 31; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc] = NULL;
    cli_common_defaults(c);
    tables[0] = cli_common_opts(c);
    tables[1] = NULL;
    err[0] = '\0';
    rc = cli_parse(argc, argv, tables, err);
    if (rc == 0)
        rc = cli_common_finish(c, err);
    return rc;
}

#endif /* CLI_LINE_H */
