/* cli.h -- command lines: the flag loop, its tables, --help, and the
 * bounds every flag value is checked against.
 *
 * Every binary builds a list of option tables (its own, then the common
 * flags' table, cli_common_opts() in train/cli_common.h) and calls
 * cli_main_parse(), which prints --help and --version and exits 64 with
 * one line naming the flag on any bad value. The value parsers (sizes,
 * rates, times: the UNITS) are in units.h, which this header includes;
 * the flag loop and --help are cli.c. The common flags themselves (struct
 * cli_common), rank discovery, the coordinator and the secret are the
 * training layer's: train/cli_common.h, common/train/cli_common.c. This
 * header knows nothing of them.
 */
#ifndef CLI_H
#define CLI_H

#include <stdint.h>
#include <stdio.h>

#include "units.h"

#define PSRING_VERSION "0.1.0"
#define CLI_EXIT_USAGE 64
#define CLI_HELP     1      /* cli_parse results that are not errors */
#define CLI_VERSION  2
#define CLI_PATH_MAX 4096

enum cli_kind {
    CLI_BOOL,     /* int*: set to 1 by the bare flag */
    CLI_INT,      /* int*: decimal, within [min, max] */
    CLI_U64,      /* uint64_t*: decimal, within [min, max] */
    CLI_SIZE,     /* uint64_t*: a size, within [min, max] */
    CLI_RATE,     /* double*: bytes per second, >= 0, finite */
    CLI_TIME,     /* double*: seconds, >= 0, finite */
    CLI_DOUBLE,   /* double*: finite */
    CLI_STRING,   /* const char**: the argv string itself (not copied) */
    CLI_CUSTOM,   /* parse(value, dst, err) decides */
};

struct cli_opt {
    const char *name;        /* without the dashes: "link-bw" */
    enum cli_kind kind;
    void *dst;
    const char *metavar;     /* "RATE"; NULL for CLI_BOOL */
    const char *help;        /* one line */
    long long min, max;      /* CLI_INT/CLI_U64/CLI_SIZE bounds (max 0: none) */
    int (*parse)(const char *value, void *dst, char *err);  /* CLI_CUSTOM */
};
/* A table ends with an entry whose name is NULL. */

/* cli_bound_check: x, parsed from v, against THE BOUNDS' entry `name`
 * (cli.c; a flag, or a part of one such as "straggler-factor"). 0, or
 * ERR_USAGE with "'v' is out of range: RANGE" in err. No entry: 0. */
int cli_bound_check(const char *name, double x, const char *v, char *err);

/* cli_parse: argv against the NULL-terminated list of tables. Accepts
 * "--name value" and "--name=value". Returns 0, CLI_HELP, CLI_VERSION, or
 * ERR_USAGE with "--name VALUE: reason" ("--name: reason" when there is
 * no value; the argument itself when it is no flag) in err. */
int cli_parse(int argc, char **argv, const struct cli_opt *const *tables, char *err);

/* cli_usage: the --help text: synopsis, then one line per option. */
void cli_usage(FILE *f, const char *prog, const char *synopsis,
               const struct cli_opt *const *tables);

/* THE USAGE LINE. Every usage error of every program (and of the scripts:
 * experiments/lib.sh's usage_error and die_usage) is one line on stderr,
 *     PROG: --flag VALUE: why; see PROG --help
 * and exit status 64. cli_parse's err is "--flag VALUE: why" (VALUE as
 * cli_value shows it); a program's own cross-checks say the same, and
 * these two print it:
 * cli_usage_print: "PROG: MSG; see PROG --help" on stderr (the caller
 * returns CLI_EXIT_USAGE); cli_usage_fail: the same, then exit(64). */
void cli_usage_print(const char *prog, const char *msg);
/* cli_value: a flag's value as the usage line shows it: bare when it is a
 * plain word (4M, 127.0.0.1:0), else in single quotes, cut at 40 bytes,
 * non-printable bytes as \xNN. OUT: buf (CLI_VALUE_BUF bytes), returned. */
#define CLI_VALUE_BUF (40 * 4 + 8)
const char *cli_value(const char *s, char *buf);
/* cli_reason: a parser's reason for refusing v without the 'v' it starts
 * with ("'x' is not a mode (...)" -> "not a mode (...)"), for the line
 * "--flag VALUE: REASON"; the reason itself when it does not. */
const char *cli_reason(const char *reason, const char *v);
__attribute__((noreturn)) void cli_usage_fail(const char *prog, const char *msg);

/* cli_main_parse: cli_parse for main(): --help -> usage on stdout, exit 0;
 * --version -> exit 0; bad input -> THE USAGE LINE on stderr and exit
 * 64. Returns only when the arguments parsed. */
void cli_main_parse(const char *prog, const char *synopsis, int argc, char **argv,
                    const struct cli_opt *const *tables);

#endif /* CLI_H */
