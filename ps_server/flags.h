/* flags.h -- bin/ps_server's command line: its own flags (--workers,
 * --listen, --port-file, --shard or --range, --loss-out, --mistake, --checkpoint,
 * --checkpoint-every, --resume, --local-worker, --mode, --record,
 * --weights-out) and the common
 * ones (train/cli_common.h), checked against each other before anything starts.
 *
 * Every refusal is one line "ps_server: reason" on stderr and exit 64
 * (CLI_EXIT_USAGE); --help and --version exit 0. No libuv here. What
 * the flags say is a struct server_flags (common/ps/server.h): the
 * settings the server's protocol runs with.
 */
#ifndef FLAGS_H
#define FLAGS_H

#include "ps/server.h"

#define FLAGS_PROG SERVER_PROG


/* flags_parse: argv into f, every check that needs nothing built yet
 * included (K, rank discovery, the addresses, the output folders, the
 * emulated link's values). Returns only when all is well; f->c is freed
 * with cli_common_free. */
void flags_parse(struct server_flags *f, int argc, char **argv);

/* flags_fail: "ps_server: <message>" on stderr, exit 64: a usage error
 * found later, in set-up (setup.c). */
__attribute__((format(printf, 1, 2), noreturn))
void flags_fail(const char *fmt, ...);

#endif /* FLAGS_H */
