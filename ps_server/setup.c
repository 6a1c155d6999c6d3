/* setup.c -- the server's state, built from the parsed flags before the
 * loop starts (and freed after it returns): the same workload as the
 * workers (n, B and the initial weights), this shard's slice of it in the
 * store, the egress schedule, the emulated link, the idle-progress clocks,
 * the per-step record. No libuv: the sockets and timers are main.c's
 * (the transport, server.h).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/compress.h"
#include "ps/psgd_server.h"
#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "measure/model.h"
#include "train/mistake.h"
#include "train/optim.h"
#include "ps/resume.h"
#include "flags.h"
#include "setup.h"
#include "train/workload.h"

#define READ_BUF_MAX   (256u << 10)   /* per joined worker, without the link */
#define READ_BUF_MIN   (16u << 10)    /* ... when K is huge */
#define READ_BUF_TOTAL (64u << 20)    /* all workers' read buffers, at most */
#define EGRESS_CHUNK   MODEL_PS_CHUNK /* a weights write without the link (measure/model.h) */
#define LINGER_MAX_S   0.5

/* setup_store: the workload's initial weights, this shard's slice of them
 * in the store. The full vector once: freed before the accumulator's
 * pages are first touched, so the peak stays at two shard buffers. */
static int setup_store(struct server *srv, const struct workload *wl)
{
    char err[ERR_LEN];
    void *w0 = malloc(wl->n * srv->es);
    uint64_t batch = wl->batch, count_max = wl->batch;
    const char *batch_what = "B";
    struct optim_cfg oc;
    int rc;

    /* COUNTS (store.h): a step's counts sum to B, no worker counts more.
     * mean-of-means counts 1 per worker that has examples (mistake.h). */
    if (srv->f.mistake == MISTAKE_MEAN_OF_MEANS) {
        batch = 0;
        for (int r = 0; r < (int)srv->k; r++) {
            uint64_t lo, hi;
            workload_split(wl->batch, (int)srv->k, r, srv->f.c.shard_weights, &lo, &hi);
            batch += hi > lo;
        }
        count_max = 1;
        batch_what = "the workers with examples (mean-of-means counts 1 each)";
    }
    if (srv->f.sync_every > 1)
        batch = count_max = 0;      /* LOCAL SGD: a round's counts are not checked */
    if (!w0) {
        log_msg("out of memory for %zu initial weights", wl->n);
        return -1;
    }
    workload_init_weights(wl, w0);
    cli_optim_cfg(&srv->f.c, &oc);
    rc = store_init(&srv->store, &(struct store_cfg){
                        .n = (size_t)(srv->scfg.hi - srv->scfg.lo), .offset = srv->scfg.lo,
                        .dtype = srv->f.c.dtype, .world = srv->k, .lr = srv->f.c.lr,
                        .weights = (unsigned char *)w0 + srv->scfg.lo * srv->es,
                        /* The mistakes the server makes itself (mistake.h). */
                        .pushes_per_step = srv->f.mistake == MISTAKE_SYNC_EVERY_MICRO ?
                                           (uint32_t)srv->f.c.micro : 1,
                        .divide_by_one = srv->f.mistake == MISTAKE_SUM_NOT_MEAN,
                        .batch = batch, .count_max = count_max,
                        .batch_what = batch_what, .optim = &oc,
                        /* MODES (mode.h): each worker's push on its own */
                        .per_worker = srv->f.mode_cfg.kind != MODE_SYNC,
                        .compress = srv->f.compress, .psgd_w = wl,
                        .average = srv->f.sync_every > 1 }, err);
    free(w0);
    if (rc != 0) {
        log_msg("%s", err);
        return -1;
    }
    return 0;
}

/* setup_record: the per-step record's fixed columns. */
static void setup_record(struct server *srv)
{
    struct metrics_record *rec = &srv->rec;

    snprintf(rec->system, sizeof rec->system, "ps");
    snprintf(rec->role, sizeof rec->role, "server");
    rec->algo[0] = '\0';
    snprintf(rec->transport, sizeof rec->transport, "tcp");
    rec->rank = srv->f.shard_i;
    rec->world = (int)srv->k;
    rec->bytes = (uint64_t)srv->scfg.n * srv->es;
    compress_label(srv->f.compress, rec->compress, sizeof rec->compress);
    rec->wire_bytes = compress_frame_bytes(srv->f.compress, srv->scfg.n, srv->f.c.dtype);
    if (srv->store.psgd)        /* PowerSGD: a worker's two rounds to this server */
        rec->wire_bytes = psgd_server_frame_bytes(srv->store.psgd, 0) +
                          psgd_server_frame_bytes(srv->store.psgd, 1);
    rec->link_bw = srv->f.c.link_bw;
    rec->link_latency = srv->f.c.link_latency;
    rec->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    srv->out_first = NAN;
}

/* setup_workload: the workload the flags name, this shard's [lo, hi) of it
 * and the session settings every connection checks its HELLO against. */
static void setup_workload(struct server *srv, struct workload *wl)
{
    const struct cli_common *c = &srv->f.c;
    struct workload_cfg wcfg;
    uint64_t lo, hi;
    int rc;

    cli_workload_cfg(c, &wcfg);
    wcfg.backward_time = 0;     /* the workers' sleep: the server computes no gradient */
    if (wcfg.kind == WORKLOAD_SYNTHETIC && wcfg.params == 0)
        flags_fail("--params: required with --workload synthetic");
    if ((rc = workload_create(wl, &wcfg)) != 0)
        flags_fail("--workload %s: cannot build it (%s)", workload_name(wcfg.kind), err_str(rc));
    if (srv->f.range_count > 0) {
        if (srv->f.range_first >= wl->n || srv->f.range_count > wl->n - srv->f.range_first)
            flags_fail("--range %llu:%llu: elements [%llu, %llu) are not inside the %zu "
                       "parameters", ull(srv->f.range_first), ull(srv->f.range_count),
                       ull(srv->f.range_first), ull(srv->f.range_first + srv->f.range_count),
                       wl->n);
        lo = srv->f.range_first;
        hi = lo + srv->f.range_count;
    } else {
        if ((uint64_t)srv->f.shard_s > wl->n)
            flags_fail("--shard %d/%d: more servers than the %zu parameters", srv->f.shard_i,
                       srv->f.shard_s, wl->n);
        workload_split(wl->n, srv->f.shard_s, srv->f.shard_i, NULL, &lo, &hi);
    }
    srv->es = dtype_size(c->dtype);
    srv->scfg = (struct session_cfg){
        .world = srv->k, .n = wl->n, .lo = lo, .hi = hi, .dtype = c->dtype,
        .workload = c->workload, .seed = c->seed, .key = &srv->f.key,
        .batch = wl->batch, .steps = (uint64_t)c->steps, .compress = srv->f.compress,
        .sync_every = (uint32_t)srv->f.sync_every,
    };
}

int setup_server(struct server *srv, const struct server_flags *f, double now)
{
    struct workload wl;
    int rc;

    memset(srv, 0, sizeof *srv);
    srv->f = *f;
    srv->loss_out = f->loss_out;
    /* Its values passed the same call in flags_parse; the host's file
     * (--link-host) is tried here. */
    {
        char lerr[ERR_LEN];
        if (link_setup(&srv->link, f->c.link_bw, f->c.link_latency, f->c.link_host, lerr) != 0)
            flags_fail("--link-host: %s", lerr);
    }

    signal(SIGPIPE, SIG_IGN);
    clock_precise_timers();
    log_init(FLAGS_PROG, f->shard_i);
    mistake_announce(f->mistake);
    if (f->sync_every > 1)
        log_msg("local SGD (--sync-every %d): the workers' deltas averaged, w + sum / K; a "
                "step below is a round of %d steps (%d rounds)", f->sync_every, f->sync_every,
                f->c.steps);
    srv->k = (uint32_t)f->workers;
    srv->timeout = f->c.timeout;
    srv->linger_s = fmin(LINGER_MAX_S, srv->timeout / 4);

    setup_workload(srv, &wl);
    rc = setup_store(srv, &wl);
    workload_destroy(&wl);
    if (rc != 0)
        return -1;
    {
        char err[ERR_LEN];

        if ((rc = mode_init(&srv->mode, &f->mode_cfg, srv->k, 0, err)) == ERR_USAGE)
            flags_fail("%s", err);
        if (rc != 0) {
            log_msg("%s", err);
            return -1;
        }
    }
    /* Every shard has every worker's loss; the one owning element 0 alone
     * writes the file (measure_init: the loss curve). */
    if (srv->loss_out && srv->scfg.lo > 0)
        srv->loss_out = NULL;
    if (server_alloc(srv, EGRESS_CHUNK, now) != 0) {
        log_msg("out of memory for %u workers", (unsigned)srv->k);
        return -1;
    }
    /* Read buffers: at most one link piece when paced; smaller when K is
     * huge, so that all of them together stay bounded. */
    srv->rcap = READ_BUF_TOTAL / srv->k;
    if (srv->rcap > READ_BUF_MAX)
        srv->rcap = READ_BUF_MAX;
    if (srv->rcap < READ_BUF_MIN)
        srv->rcap = READ_BUF_MIN;
    if (link_active(&srv->link) && link_piece(&srv->link) < srv->rcap)
        srv->rcap = link_piece(&srv->link);
    setup_record(srv);
    resume_sweep(srv);          /* --checkpoint: a killed writer's temp files */
    /* --resume: the checkpoint's weights and step (resume.h). A file that
     * cannot be read is a usage error; one that is not this job's is
     * refused as data (docs/design.md, "Exit codes"). */
    if (f->resume) {
        char err[ERR_LEN];
        int rc2 = resume_load(srv, f->resume, err);

        if (rc2 == ERR_FORMAT || rc2 == ERR_MISMATCH) {
            fprintf(stderr, "%s: %s\n", FLAGS_PROG, err);
            exit(CKPT_EXIT_DATA);
        }
        if (rc2 != 0)
            flags_fail("%s", err);
    } else if (f->checkpoint) {
        /* A checkpoint from the start: ROLLBACK (resume.h) always has one. */
        char err[ERR_LEN];

        if (resume_save(srv, err) != 0) {
            log_msg("%s", err);
            return -1;
        }
    }
    return 0;
}

void setup_announce(const struct server *srv, int bound)
{
    const struct cli_common *c = &srv->f.c;
    char linkdesc[96];

    if (!link_active(&srv->link))
        snprintf(linkdesc, sizeof linkdesc, "link off (loopback speed)");
    else
        snprintf(linkdesc, sizeof linkdesc, "link EMULATED %.6g MB/s, latency %.6g us",
                 c->link_bw / 1e6, c->link_latency * 1e6);
    char part[48];

    if (srv->f.range_count > 0)
        snprintf(part, sizeof part, "--range");
    else
        snprintf(part, sizeof part, "shard %d/%d", srv->f.shard_i, srv->f.shard_s);
    char mname[32];

    log_msg("listening on %s:%d for %u workers: %s n %llu %s, elements [%llu, %llu) "
            "(%s), B %llu, %d steps, lr %g; %s%s%s", srv->f.host, bound, (unsigned)srv->k,
            workload_name(c->workload), ull(srv->scfg.n), dtype_name(c->dtype),
            ull(srv->scfg.lo), ull(srv->scfg.hi), part,
            ull(srv->scfg.batch), c->steps, c->lr, linkdesc,
            srv->f.mode_cfg.kind != MODE_SYNC ? "; mode " : "",
            srv->f.mode_cfg.kind != MODE_SYNC ? mode_name(&srv->f.mode_cfg, mname) : "");
}

void setup_destroy(struct server *srv)
{
    server_free(srv);
    cli_common_free(&srv->f.c);
}
