/* flags.h -- bin/ps_server's command line: its own flags (--workers,
 * --listen, --port-file, --shard or --range, --loss-out, --mistake, --checkpoint,
 * --checkpoint-every, --resume, --local-worker, --mode, --record,
 * --weights-out) and the common
 * ones (train/cli_common.h), checked against each other before anything starts.
 *
 * Every refusal is one line "ps_server: reason" on stderr and exit 64
 * (CLI_EXIT_USAGE); --help and --version exit 0. No libuv here.
 */
#ifndef FLAGS_H
#define FLAGS_H

#include "wire/auth.h"
#include "train/cli_common.h"
#include "ps/mode.h"
#include "wire/net.h"

#define FLAGS_PROG "ps_server"

struct flags {
    struct cli_common c;          /* the common flags; world = K, rank = 0 */
    const char *listen_at;        /* --listen HOST:PORT, as typed */
    char host[NET_HOST_LEN];      /* ... parsed */
    int port;
    const char *port_file;        /* --port-file FILE, or NULL */
    int workers;                  /* K */
    int shard_i, shard_s;         /* --shard I/S (0/1 when not given) */
    uint64_t range_first, range_count;  /* --range FIRST:COUNT (count 0: not
                                           given; checked against n in setup.c) */
    const char *loss_out;         /* --loss-out FILE, or NULL */
    int mistake;                  /* enum mistake (mistake.h) */
    const char *checkpoint;       /* --checkpoint FILE, or NULL (checkpoint.h) */
    int checkpoint_every;         /* --checkpoint-every N: after every N-th step */
    const char *resume;           /* --resume FILE, or NULL */
    int local_worker;             /* --local-worker R: EMULATED, worker R is on this host,
                                     its bytes bypass the link; -1 none */
    struct auth_key key;          /* the job's secret (--secret-file, PSRING_SECRET) */
    const char *mode;             /* --mode sync|async|ssp:N|backup:N, as typed (mode.h) */
    struct mode_cfg mode_cfg;     /* ... parsed (sync when not given) */
    const char *record;           /* --record FILE: the applied updates (mode.c), or NULL */
    const char *staleness_out;    /* --staleness-out FILE: the histogram (mode.h), or NULL */
    char record_file[CLI_PATH_MAX + 16];    /* --record FILE, FILE.I with --shard I/S */
    char staleness_file[CLI_PATH_MAX + 16]; /* --staleness-out FILE, likewise */
    char weights_file[CLI_PATH_MAX + 16];   /* --weights-out PATH (common): "PATH.server",
                                               then .I with S shards (weights.h) */
};

/* flags_parse: argv into f, every check that needs nothing built yet
 * included (K, rank discovery, the addresses, the output folders, the
 * emulated link's values). Returns only when all is well; f->c is freed
 * with cli_common_free. */
void flags_parse(struct flags *f, int argc, char **argv);

/* flags_fail: "ps_server: <message>" on stderr, exit 64: a usage error
 * found later, in set-up (setup.c). */
__attribute__((format(printf, 1, 2), noreturn))
void flags_fail(const char *fmt, ...);

#endif /* FLAGS_H */
