/* flags.c -- bin/ps_server's command line (see flags.h). */
#include "flags.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/err.h"
#include "wire/link.h"
#include "train/mistake.h"
#include "base/infile.h"
#include "base/outfile.h"
#include "wire/proto.h"
#include "train/weights.h"

/* split_pair: a value "X<sep>Y" (the flag's shape, e.g. "I/S"; eg: an
 * example or two for the message) into two integers within [lo0, hi0] and
 * [lo1, hi1], and the value quoted for a message (printable, cut at 40
 * bytes) into q[44]. 0, or ERR_USAGE with "'v' is not SHAPE..." in err. */
static int split_pair(const char *v, char sep, const char *shape, const char *eg,
                      long long lo0, long long hi0, long long lo1, long long hi1,
                      long long out[2], char *q, char *err)
{
    char a[32], reason[ERR_LEN];
    const char *at = strchr(v, sep);
    size_t n = at ? (size_t)(at - v) : 0, k;

    for (k = 0; v[k] && k < 40; k++)
        q[k] = v[k] > ' ' && v[k] < 0x7f ? v[k] : '?';
    q[k] = '\0';
    if (!at || n == 0 || n >= sizeof a) {
        snprintf(err, ERR_LEN, "'%s' is not %s (%s)", q, shape, eg);
        return ERR_USAGE;
    }
    memcpy(a, v, n);
    a[n] = '\0';
    if (cli_parse_ll(a, lo0, hi0, &out[0], reason) != 0 ||
        cli_parse_ll(at + 1, lo1, hi1, &out[1], reason) != 0) {
        err_say(err, "'%s' is not %s: %s", q, shape, reason);
        return ERR_USAGE;
    }
    return 0;
}

/* parse_shard: "I/S", 0 <= I < S <= PROTO_MAX_WORLD, into dst (int[2]). */
static int parse_shard(const char *v, void *dst, char *err)
{
    char q[44];
    long long is[2];
    int *sh = dst;

    if (split_pair(v, '/', "I/S", "examples: 0/1, 1/2", 0, PROTO_MAX_WORLD - 1, 1,
                   PROTO_MAX_WORLD, is, q, err) != 0)
        return ERR_USAGE;
    if (is[0] >= is[1]) {
        snprintf(err, ERR_LEN, "'%s': shard index %lld is not below the count %lld", q, is[0],
                 is[1]);
        return ERR_USAGE;
    }
    sh[0] = (int)is[0];
    sh[1] = (int)is[1];
    return 0;
}

/* parse_range: "FIRST:COUNT" into dst (uint64_t[2]), each part within THE
 * BOUNDS (common/base/cli.c: range-first, range-count). Whether it fits n is
 * setup.c's check, once the workload is built. */
static int parse_range(const char *v, void *dst, char *err)
{
    char q[44], num[32];
    long long fc[2];
    uint64_t *rg = dst;

    if (split_pair(v, ':', "FIRST:COUNT", "example: 0:1000", 0, LLONG_MAX, 0, LLONG_MAX, fc,
                   q, err) != 0)
        return ERR_USAGE;
    snprintf(num, sizeof num, "%lld", fc[0]);
    if (cli_bound_check("range-first", (double)fc[0], num, err) != 0)
        return ERR_USAGE;
    snprintf(num, sizeof num, "%lld", fc[1]);
    if (cli_bound_check("range-count", (double)fc[1], num, err) != 0)
        return ERR_USAGE;
    rg[0] = (uint64_t)fc[0];
    rg[1] = (uint64_t)fc[1];
    return 0;
}

void flags_fail(const char *fmt, ...)
{
    char msg[ERR_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_usage_fail(FLAGS_PROG, msg);
}

/* check_sync_every: LOCAL SGD's combinations (common/ps/server.h); with
 * H > 1 the steps and the warm-up become rounds: ceil(S / H) of them, the
 * first timed one the first whose last step is past the warm-up. */
static void check_sync_every(struct server_flags *f)
{
    const int h = f->sync_every;
    const char *why;

    if (h == 1)
        return;
    why = f->mode_cfg.kind != MODE_SYNC ? "only with --mode sync (the stale modes apply each "
                                          "worker's push on its own)" :
          f->mistake ? "not with --mistake (the mistakes live in the every-step gradient)" :
          f->checkpoint || f->resume ? "not with --checkpoint or --resume (a round is not a "
                                       "step)" : NULL;
    if (why)
        flags_fail("--sync-every %d: %s", h, why);
    f->c.warmup /= h;
    f->c.steps = (f->c.steps + h - 1) / h;
}

/* check_psgd: --compress powersgd:R's combinations (common/ps/store.h,
 * POWERSGD PUSHES): two rounds of every worker's factors per step. */
static void check_psgd(const struct server_flags *f)
{
    const char *why;
    char q[CLI_VALUE_BUF];

    if (COMPRESS_KIND(f->compress) != COMPRESS_POWERSGD)
        return;
    why = f->mode_cfg.kind != MODE_SYNC ? "only with --mode sync (each round sums every "
                                          "worker's factors)" :
          f->sync_every > 1 ? "not with --sync-every (it compresses the gradient, not a "
                              "round's delta)" :
          f->mistake ? "not with --mistake (one push of each round per step)" :
          f->checkpoint || f->resume ? "not with --checkpoint or --resume (the workers' "
                                       "error feedback and warm start are not in it)" : NULL;
    if (why)
        flags_fail("--compress %s: %s", cli_value(f->compress_arg, q), why);
}

/* check: the cross-checks after parsing, in the order the old main made
 * them (the first refusal is the one the user sees). */
static void check(struct server_flags *f)
{
    char err[ERR_LEN], q[CLI_VALUE_BUF];
    struct link probe;

    /* --workers K, or the common --world K: the server has no rank of its
     * own, so rank discovery must not run (or fail) for it. */
    if (f->workers > 0 && f->c.world > 0 && f->workers != f->c.world)
        flags_fail("--workers %d and --world %d disagree", f->workers, f->c.world);
    if (f->workers < 0)
        f->workers = f->c.world;
    if (f->workers < 1)
        flags_fail("--workers: required (the number of workers K; --world K also works)");
    f->c.world = f->workers;
    if (f->c.rank < 0)
        f->c.rank = 0;
    if (cli_common_finish(&f->c, err) != 0)
        flags_fail("%s", err);
    if (f->local_worker >= f->workers)
        flags_fail("--local-worker %d: not a worker (K = %d)", f->local_worker, f->workers);
    if (net_parse_hostport(f->listen_at, f->host, sizeof f->host, &f->port, err) != 0 ||
        net_host_check(f->host, err) != 0)
        flags_fail("--listen %s: %s", cli_value(f->listen_at, q), err);
    /* A server reachable from other hosts must have the job's secret. */
    if (cli_secret(&f->c, &f->key, err) != 0 ||
        auth_policy(FLAGS_PROG, &f->key, f->host, NULL, 0, err) != 0)
        flags_fail("%s", err);
    /* Each output is tried now (a temp file really created next to it). */
    if (f->port_file && outfile_check("--port-file", f->port_file, err) != 0)
        flags_fail("%s", err);
    if (f->loss_out && outfile_check("--loss-out", f->loss_out, err) != 0)
        flags_fail("%s", err);
    /* Checkpoints (checkpoint.h): the file is tried now like any output;
     * --resume is read in set-up, where the job's shape is known. */
    if (f->checkpoint_every > 0 && !f->checkpoint)
        flags_fail("--checkpoint-every: needs --checkpoint FILE");
    if (f->checkpoint_every > f->c.steps)
        flags_fail("--checkpoint-every %d: more than --steps %d (no checkpoint would be "
                   "written)", f->checkpoint_every, f->c.steps);
    if (f->checkpoint && f->checkpoint_every == 0)
        f->checkpoint_every = 1;
    if (f->checkpoint && outfile_check("--checkpoint", f->checkpoint, err) != 0)
        flags_fail("%s", err);
    /* --resume: a FIFO, a device or a folder is refused unread (infile.h). */
    if (f->resume && infile_check("--resume", f->resume, err) != 0)
        flags_fail("%s", err);
    /* The modes (mode.h); backup:N's N < K is mode_init's check (setup). */
    if (f->mode && mode_parse(f->mode, &f->mode_cfg, err) != 0)
        flags_fail("--mode %s: %s", cli_value(f->mode, q), cli_reason(err, f->mode));
    if (f->mode_cfg.kind != MODE_SYNC) {
        const char *with = f->checkpoint ? "--checkpoint" : f->resume ? "--resume" :
                           f->mistake ? "--mistake" :
                           f->local_worker >= 0 ? "--local-worker" : NULL;
        if (with)
            flags_fail("--mode %s: not with %s (only sync has it yet)", f->mode, with);
    }
    check_sync_every(f);
    if (f->record && f->mode_cfg.kind == MODE_SYNC)
        flags_fail("--record: only with --mode async, ssp:N or backup:N (a sync run "
                   "reproduces from its seed)");
    if (f->staleness_out && f->mode_cfg.kind == MODE_SYNC)
        flags_fail("--staleness-out: only with --mode async, ssp:N or backup:N (sync's "
                   "updates are never stale)");
    /* With S shards each server writes its own: FILE.I. */
    if (f->staleness_out) {
        if (f->shard_s > 1)
            snprintf(f->staleness_file, sizeof f->staleness_file, "%s.%d", f->staleness_out,
                     f->shard_i);
        else
            snprintf(f->staleness_file, sizeof f->staleness_file, "%s", f->staleness_out);
        if (outfile_check("--staleness-out", f->staleness_file, err) != 0)
            flags_fail("%s", err);
    }
    if (f->record) {
        if (f->shard_s > 1)
            snprintf(f->record_file, sizeof f->record_file, "%s.%d", f->record, f->shard_i);
        else
            snprintf(f->record_file, sizeof f->record_file, "%s", f->record);
        if (outfile_check("--record", f->record_file, err) != 0)
            flags_fail("%s", err);
    }
    /* --weights-out PATH (a common flag): the server writes PATH.server,
     * PATH.server.I with S shards. */
    if (f->c.weights_out) {
        snprintf(f->weights_file, sizeof f->weights_file, "%s.server", f->c.weights_out);
        if (weights_check(f->weights_file, f->shard_s > 1 ? f->shard_i : -1, err) != 0)
            flags_fail("%s", err);
    }
    /* setup.c builds the link; its values are refused here, with the rest. */
    if (link_init(&probe, f->c.link_bw, f->c.link_latency) != 0)
        flags_fail("--link-bw/--link-latency: rate %g B/s, latency %g s out of range",
                   f->c.link_bw, f->c.link_latency);
}

void flags_parse(struct server_flags *f, int argc, char **argv)
{
    int shard[2] = { -1, -1 };
    uint64_t range[2] = { 0, 0 };
    const struct cli_opt own[] = {
        { "listen", CLI_STRING, &f->listen_at, "HOST:PORT",
          "address to listen on (default 127.0.0.1:0, a free port)", 0, 0, NULL },
        { "port-file", CLI_STRING, &f->port_file, "FILE",
          "write the port it listens on to FILE (for port 0)", 0, 0, NULL },
        { "workers", CLI_INT, &f->workers, "K", "number of workers K (same as --world)",
          1, PROTO_MAX_WORLD, NULL },
        { "shard", CLI_CUSTOM, shard, "I/S",
          "own part I of S of the parameter vector (default 0/1)", 0, 0, parse_shard },
        { "range", CLI_CUSTOM, range, "FIRST:COUNT",
          "own elements [FIRST, FIRST+COUNT) of the parameter vector (not with --shard)",
          0, 0, parse_range },
        { "loss-out", CLI_STRING, &f->loss_out, "FILE",
          "write the global loss of every step to FILE at the end (shard 0 only)", 0, 0, NULL },
        { "mistake", CLI_CUSTOM, &f->mistake, MISTAKE_METAVAR, MISTAKE_HELP, 0, 0,
          mistake_parse },
        { "checkpoint", CLI_STRING, &f->checkpoint, "FILE",
          "write this shard's weights and step to FILE (atomically) every N steps", 0, 0,
          NULL },
        { "checkpoint-every", CLI_INT, &f->checkpoint_every, "N",
          "checkpoint after every N-th step (default 1; at most --steps)", 1, 1000000000,
          NULL },
        { "resume", CLI_STRING, &f->resume, "FILE",
          "go on from the checkpoint FILE (its step; exit 65 if it is not this job's)", 0, 0,
          NULL },
        { "mode", CLI_STRING, &f->mode, "MODE",
          "sync (default), async, ssp:N (at most N steps ahead of the slowest) or backup:N",
          0, 0, NULL },
        { "record", CLI_STRING, &f->record, "FILE",
          "write the applied updates in order to FILE at the end (for reference --replay)",
          0, 0, NULL },
        { "staleness-out", CLI_STRING, &f->staleness_out, "FILE",
          "write the staleness histogram to FILE at the end (\"# staleness updates\")", 0, 0,
          NULL },
        { "local-worker", CLI_INT, &f->local_worker, "R",
          "EMULATED: worker R shares this host; its bytes bypass the link", 0, PROTO_MAX_WORLD - 1, NULL },
        { "compress", CLI_STRING, &f->compress_arg, COMPRESS_METAVAR,
          "the pushes' format (the workers' --compress: 16-bit floats, top-k or sign "
          "frames); sums in --dtype, the weights go back in full", 0, 0, NULL },
        { "sync-every", CLI_INT, &f->sync_every, "H",
          "local SGD: the workers' deltas averaged every H steps (default 1: every step)",
          1, 1 << 20, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *tables[3];

    memset(f, 0, sizeof *f);
    f->listen_at = "127.0.0.1:0";
    f->workers = -1;
    f->local_worker = -1;
    f->sync_every = 1;
    cli_common_defaults(&f->c);
    tables[0] = own;
    tables[1] = cli_common_opts(&f->c);
    tables[2] = NULL;
    cli_main_parse(FLAGS_PROG, "--workers K [--listen HOST:PORT] [--port-file FILE] "
                   "[--shard I/S | --range FIRST:COUNT] [--loss-out FILE] [--mistake NAME] "
                   "[--checkpoint FILE [--checkpoint-every N]] [--resume FILE] "
                   "[--local-worker R] [--mode MODE] [--record FILE] [--staleness-out FILE] "
                   "[--compress " COMPRESS_METAVAR "] [--sync-every H] [common flags]", argc, argv, tables);
    if (f->compress_arg && compress_parse(f->compress_arg, &f->compress) != 0) {
        char q[CLI_VALUE_BUF];
        flags_fail("--compress %s: not " COMPRESS_CHOICES,
                   cli_value(f->compress_arg, q));
    }
    if (shard[0] >= 0 && range[1] > 0)
        flags_fail("--shard and --range: give one (both say which elements this server owns)");
    f->shard_i = shard[0] >= 0 ? shard[0] : 0;
    f->shard_s = shard[1] >= 0 ? shard[1] : 1;
    f->range_first = range[0];
    f->range_count = range[1];
    check(f);
    check_psgd(f);
}
