/* main.c -- bin/ps_worker: one worker of the parameter server.
 *
 *     ps_worker --server HOST:PORT[,HOST:PORT...] --rank R --world K [common flags]
 *
 * Each step: compute the gradient SUM over this worker's part of the global
 * batch (its contiguous range [lo, hi) of workload_split(B, K, rank,
 * --shard-weights), cut again into --micro m micro-batches that are all
 * added into ONE sum, zeroed once per step), push it with the example count
 * and the summed loss, pull the new weights (client.c), repeat. The server
 * divides by the global B and applies the update: the worker never does.
 * Step 0 starts from workload_init_weights (zeros), as the server does.
 *
 * Timing: a timed step (s >= --warmup) records the combine time, from the
 * first pushed byte to the last pulled one, and the bytes this worker moved
 * in that step (metrics.h). Every buffer and the record are allocated
 * before the first step; nothing is printed per step (the server logs the
 * loss). At the end: --weights-out PATH writes PATH.RANK ("%.17g" per
 * line), --csv the record, and one line on stderr says how it went.
 *
 * --device cuda: the gradient is computed on the GPU (gpu_workload_grad_add,
 * the twin of workload_grad_add: the same bits, gpu.h) at weights kept in
 * GPU memory, on the device of local rank % GPUs. Each step it is copied to
 * a pinned host buffer and pushed from there; the weights are pulled into
 * another pinned buffer and copied to the device for the next step's
 * gradient: the weights and every push are the CPU worker's, bit for bit,
 * and the timed combine includes the two copies (a GPU worker's cost);
 * every GPU wait is bounded by --timeout.
 *
 * THE STEP is common/train/step.c's (step.h), the ring's too: this file gives it
 * a combine (push: each bucket to the servers, ps_client_push) and a
 * finish (pull: the new weights, ps_client_pull), and no apply. On the
 * CPU the gradient is grouped into --bucket-size buckets of whole layers,
 * last layer first, each pushed as soon as it is ready by the step's
 * communication thread while the backward pass goes on (--no-overlap:
 * after it); the weights of each bucket come back as soon as every worker
 * has pushed it (per-bucket pull: client.h), read by the client's receiver
 * threads from the first push of the step's last pass on, and the finish
 * waits for the last of them. With one bucket (the default 25MiB holds
 * most models here) that is one push and one pull per step. The timed combine
 * step is the time spent in pushes and the pull; rank 0 logs the medians
 * of step, backward, communication and the wait after the backward pass
 * at the end, and --trace FILE writes each rank's timeline.
 *
 * --mistake NAME (mistake.h): the worker makes the mistakes that live in
 * its micro-batch loop (no-divide-micro, mean-of-means, zero-grad-inside:
 * mistake_grad, the loop bin/reference and the ring call too) and
 * sync-every-micro: each micro-batch's sum is pushed as soon as it is
 * computed (m passes of pushes per step, in the step's buckets, the
 * server summing them), the weights
 * pulled after the last; the timed combine step is then the sum of the m
 * exchanges. sum-not-mean is the server's (it applies the update); the
 * worker only says so. With --device cuda only sum-not-mean is taken (the
 * GPU twin of the loop has no mistakes): the others exit 64 with one line.
 * --loss-out FILE is accepted and ignored, so that experiments/launch.sh
 * can pass it to every process: the server writes the loss.
 *
 * --reconnect-window TIME (ps_worker/README.md, RECONNECT): a lost server
 * connection is redialled with backoff for up to TIME, and the worker
 * rejoins at the step the servers' WELCOMEs say, from the weights they
 * send (join, below); without it a lost server ends the worker within 2T.
 * The first join takes the servers' step too, so a restarted worker
 * rejoins a running job where it is.
 *
 * Exit status: 0; 64 for bad flags; 1 for anything else, with one line
 * naming the server (index and address), the step, or the file.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

#include "wire/auth.h"
#include "train/cli_common.h"
#include "ps/client.h"
#include "ps/psgd_server.h"
#include "base/clock.h"
#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "gpu.h"
#include "base/log.h"
#include "measure/metrics.h"
#include "train/mistake.h"
#include "wire/proto.h"
#include "train/step.h"
#include "step_gpu.h"
#include "train/trace.h"
#include "train/workload.h"

static const char synopsis[] =
    "--server HOST:PORT[,HOST:PORT...] [--rank R --world K] [common flags]\n"
    "The parameter-server worker: compute the gradient sum over its part of the\n"
    "global batch, push it to the server(s), pull the new weights, repeat.\n"
    "With several servers (--shard I/S or --range FIRST:COUNT each), each says in\n"
    "its WELCOME which elements it owns; their ranges must tile the vector.";

/* push: the PS worker's combine (step.h): the job's elements to the
 * servers that own them, the count and loss with the first push of a
 * pass to each server (client.h). --device cuda: through the pinned
 * buffer. */
static int push(void *ctx, const struct step_job *job, char *err)
{
    struct run *r = ctx;
    const struct proto_push_meta meta = { job->meta.examples, job->meta.loss };
    const void *g = job->grad;
    int rc;

    if (r->have_psgd) {         /* two rounds of factors, then the weights (client.h) */
        if (job->first != 0 || job->count != r->w.n) {
            err_say(err, "--compress %s: pushes the whole gradient in one bucket, this one "
                    "is [%zu, %zu) of %zu (--bucket-size at least the model)",
                    compress_name(r->compress), job->first, job->first + job->count, r->w.n);
            return ERR_USAGE;
        }
        if ((rc = ps_client_psgd(&r->client, &r->psgd, job->step, &meta, g, r->psgd_out,
                                 err)) != 0)
            return rc;
        return ps_client_pull_begin(&r->client, job->step, err);
    }

    /* The last pass's weights come back bucket by bucket while it is
     * pushed: start receiving them before its first push (client.h). */
    if (job->pass + 1 == r->passes &&
        (rc = ps_client_pull_begin(&r->client, job->step, err)) != 0)
        return rc;
    if (r->cuda) {
        size_t off = job->first * r->elem;
        if ((rc = stage(r, job->step, (unsigned char *)r->hgrad + off,
                        (const unsigned char *)job->grad + off, job->count * r->elem, err)) != 0)
            return rc;
        g = r->hgrad;
    }
    return ps_client_push(&r->client, job->step, &meta, g, job->first, job->count, err);
}

/* pull: the finish (step.h): the step's new weights from the servers into
 * the step's weights (--device cuda: through the pinned buffer). */
static int pull(void *ctx, uint64_t step, void *weights, char *err)
{
    struct run *r = ctx;
    int rc;

    if (!r->cuda)
        return ps_client_pull(&r->client, step, weights, err);
    if ((rc = ps_client_pull(&r->client, step, r->hweights, err)) != 0)
        return rc;
    return stage(r, step, weights, r->hweights, r->w.n * r->elem, err);
}

/* lost: the server connection itself broke (EOF, reset, refused,
 * silence), rather than a server saying no: worth redialling. */
static int lost(const struct run *r, int rc)
{
    if (ps_client_told(&r->client))
        return 0;
    switch (rc) {
    case ERR_EOF: case ERR_TIMEOUT: case -ECONNRESET: case -EPIPE: case -ECONNREFUSED:
    case -ECONNABORTED: case -ETIMEDOUT: case -ENOTCONN: case -EHOSTUNREACH:
    case -ENETUNREACH:
        return 1;
    default:
        return 0;
    }
}

/* initial_weights: the step-0 weights into the step's weights (a server
 * that went back to step 0). */
static int initial_weights(struct run *r, char *err)
{
    if (!r->cuda) {
        workload_init_weights(&r->w, r->step.weights);
        return 0;
    }
    workload_init_weights(&r->w, r->hweights);
    return stage(r, 0, r->step.weights, r->hweights, r->w.n * r->elem, err);
}

/* rejoin_at: just connected: the servers' step s (OUT: *s), the weights
 * to start it from: pulled (those of s - 1, which a resumed server sends),
 * or the initial ones when s = 0 (and this is not the first join). */
static int rejoin_at(struct run *r, int again, uint64_t *s, char *err)
{
    *s = r->client.server_step;
    if (*s > (uint64_t)r->o.steps) {
        err_say(err, "hello: the server is at step %llu, past --steps %d",
                (unsigned long long)*s, r->o.steps);
        return ERR_MISMATCH;
    }
    if (*s > 0)
        return pull(r, *s - 1, r->step.weights, err);
    return again ? initial_weights(r, err) : 0;
}

/* join: connect to every server (RECONNECT in ps_worker/README.md: with
 * --reconnect-window W, a lost or absent server is redialled with
 * backoff until W has passed) and go to the servers' step s: the
 * weights of step s - 1 pulled from them (a resumed server sends them,
 * proto.h), or the initial ones for s = 0. Records of steps >= s (to be
 * done again) are dropped. OUT: *start = s. */
static int join(struct run *r, int again, int *start, char *err)
{
    double deadline = clock_now() + r->reconnect_window, pause = 0.05;
    double pause_max = fmin(1.0, r->o.timeout / 4);
    uint64_t s = 0;
    int rc;

    for (;;) {
        if ((rc = ps_client_connect(&r->client, err)) == 0 &&
            (rc = rejoin_at(r, again, &s, err)) == 0)
            break;
        if (r->reconnect_window <= 0 || !lost(r, rc) || clock_now() + pause > deadline) {
            if (r->reconnect_window > 0) {
                char why[ERR_LEN];
                snprintf(why, sizeof why, "%s", err);
                err_say(err, "%.200s (gave up after --reconnect-window %g s)", why,
                        r->reconnect_window);
            }
            return rc;
        }
        ps_client_disconnect(&r->client);
        clock_sleep_until(clock_now() + pause);
        pause = fmin(2 * pause, pause_max);
    }
    while (r->rec.nsteps > 0 && r->rec.steps[r->rec.nsteps - 1].step >= s)
        r->rec.nsteps--;
    if (again || s > 0)
        log_msg("joined at the server's step %llu%s", (unsigned long long)s,
                s > 0 ? " (its weights of the step before pulled)" : "");
    *start = (int)s;
    return 0;
}

/* run_steps: every step: compute, push, pull; timed steps recorded. On a
 * failure the servers are told why (ps_client_abort) and err says it;
 * with --reconnect-window a lost server is rejoined at its step (join). */
static int run_steps(struct run *r, char *err)
{
    double cpu0 = 0, wall0 = 0, round_s = -1, credit0 = 0;
    uint64_t in0 = 0, out0 = 0;
    int rc, s = 0, timing = 0;

    if ((rc = join(r, 0, &s, err)) != 0)
        return rc;
    for (; s < r->o.steps; s++) {
        struct metrics_step ms;
        struct step_result res;
        uint64_t in1, out1;

        if (!timing && s >= r->o.warmup) {     /* a rejoined run: from its first step */
            timing = 1;
            hostload_sample_read(&r->rec.machine0);     /* the machine's load: metrics.h */
            cpu0 = clock_cpu_seconds();
            wall0 = clock_src_now(r->step.cfg.clock);
            credit0 = r->client.late_total;     /* client.h, OWN TIMELINE: signal 4 */
        }
        if (round_s < 0) {      /* a round begins (every step without local SGD) */
            ps_client_bytes(&r->client, &in0, &out0);
            round_s = 0;
        }
        if ((rc = step_run(&r->step, s, &res, err)) != 0) {
            if (r->reconnect_window > 0 && lost(r, rc)) {
                log_msg("%s; redialling for up to %g s (--reconnect-window)", err,
                        r->reconnect_window);
                ps_client_disconnect(&r->client);
                if ((rc = join(r, 1, &s, err)) != 0)
                    return rc;
                s--;                    /* the loop's s++ makes it the server's step */
                round_s = -1;           /* its bytes counted afresh */
                continue;
            }
            ps_client_abort(&r->client, (uint64_t)s, rc, err);
            return rc;
        }
        round_s += res.t.step;
        if (res.local || s < r->o.warmup) {
            if (!res.local)
                round_s = -1;
            continue;           /* LOCAL SGD: the row is the round's, numbered as one */
        }
        ps_client_bytes(&r->client, &in1, &out1);
        ms = (struct metrics_step){ .step = (uint64_t)(s / r->sync_every),
                                    /* its pull's end on the host's own
                                     * timeline (client.h, OWN TIMELINE) */
                                    .combine_s = res.t.comm + res.t.finish -
                                                 ps_client_pull_late(&r->client),
                                    .ingress_s = NAN, .egress_s = NAN,
                                    .bytes_in = in1 - in0, .bytes_out = out1 - out0,
                                    .step_s = round_s, .enter_t = res.t.enter };
        round_s = -1;
        r->times[r->rec.nsteps] = ms.combine_s;
        metrics_record_add(&r->rec, &ms);     /* room for every timed step */
    }
    r->rec.cpu_s = clock_cpu_seconds() - cpu0;
    r->rec.link_credit_s = r->client.late_total - credit0;
    r->rec.compute_cpu_s = step_compute_cpu(&r->step);  /* timed steps'; cpu_s_per_gb leaves it out */
    r->rec.wall_s = clock_src_now(r->step.cfg.clock) - wall0;
    hostload_sample_read(&r->rec.machine1);
    /* LOCAL SGD: the servers count rounds */
    return ps_client_bye(&r->client, (uint64_t)((r->o.steps + r->sync_every - 1) / r->sync_every),
                         err);
}

/* step_setup: the training step (step.h) with the PS worker's combine
 * (push each bucket) and finish (pull), no apply: the server applies. */
static int step_setup(struct run *r, char *err)
{
    const struct step_ops ops = {
        0, "push", "push", ", pushed one by one", "wait for the pushes", "pull weights",
        push, pull, NULL, r, NULL, NULL,
    };
    const struct step_cfg sc = {
        &r->w, r->o.rank, r->o.world, r->o.shard_weights, r->o.micro, r->mistake, r->o.steps,
        r->o.warmup, r->bucket_bytes, r->no_overlap, r->trace,
        &clock_real,    /* the PS worker's client talks TCP itself: the real clock */
        r->cuda ? &r->gpu.dev : NULL, r->sync_every > 1 ? &r->oc : NULL, 0, NULL,
        r->sync_every,
    };

    cli_optim_cfg(&r->o, &r->oc);  /* LOCAL SGD's local steps (no state otherwise) */
    r->have_step = 1;
    r->passes = r->mistake == MISTAKE_SYNC_EVERY_MICRO ? r->o.micro : 1;
    return step_init(&r->step, &sc, &ops, err);
}

/* refuse: what a set-up step refused, said as THE USAGE LINE (cli.h) when
 * it is a usage error (CLI_EXIT_USAGE), else as a line of this worker's
 * (1). */
static int refuse(int rc, const char *msg)
{
    if (rc == ERR_USAGE) {
        cli_usage_print("ps_worker", msg);
        return CLI_EXIT_USAGE;
    }
    log_msg("%s", msg);
    return 1;
}

/* setup: the workload, the buffers, the record and the client (not yet
 * connected). Returns the exit status on failure (message logged), else 0. */
static int setup(struct run *r, const char *servers)
{
    struct cli_common *o = &r->o;
    struct workload_cfg wcfg;
    struct ps_client_cfg ccfg;
    char err[ERR_LEN];
    int rc;

    if (o->workload == WORKLOAD_SYNTHETIC && o->params == 0) {
        cli_usage_print("ps_worker", "--params: the synthetic workload needs --params N");
        return CLI_EXIT_USAGE;
    }
    cli_workload_cfg(o, &wcfg);     /* --backward-time spread over this worker's examples */
    if ((rc = workload_create(&r->w, &wcfg)) != 0) {
        log_msg("cannot build the %s workload (params %llu, batch %llu): %s",
                workload_name(o->workload), (unsigned long long)o->params,
                (unsigned long long)o->batch, err_str(rc));
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
    }
    r->have_w = 1;
    r->elem = dtype_size(o->dtype);
    if ((rc = record_setup(&r->rec, o, r->w.n, r->elem)) != 0) {
        if (rc == ERR_USAGE)
            log_msg("--steps: %d timed steps (--steps minus --warmup), at most %d",
                    o->steps - o->warmup, METRICS_MAX_STEPS);
        else
            log_msg("out of memory for the record of %d steps", o->steps - o->warmup);
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
    }
    r->have_rec = 1;
    compress_label(r->compress, r->rec.compress, sizeof r->rec.compress);
    r->rec.wire_bytes = compress_frame_bytes(r->compress, r->w.n, o->dtype);
    if (COMPRESS_KIND(r->compress) == COMPRESS_POWERSGD) {     /* both rounds' factors */
        if ((rc = psgd_server_plan(&r->psgd, &r->w, r->compress, o->dtype,
                                   COMPRESS_PSGD_EF(r->compress), o->seed, err)) != 0 ||
            !(r->psgd_out = malloc(r->w.n * r->elem))) {
            log_msg("%s", rc ? err : "out of memory for PowerSGD's decode");
            return 1;
        }
        r->have_psgd = 1;
        r->rec.wire_bytes = psgd_wire_elems(&r->psgd, 0) * r->elem;
    }
    r->times = malloc(r->rec.cap * sizeof *r->times);    /* cap <= METRICS_MAX_STEPS */
    if (!r->times) {
        log_msg("out of memory for %zu step times", r->rec.cap);
        return 1;
    }
    if (r->cuda && (rc = gpu_setup(r, err)) != 0) {
        log_msg("--device cuda: %s", err);
        return 1;
    }

    memset(&ccfg, 0, sizeof ccfg);
    ccfg.servers = servers;
    ccfg.rank = (uint32_t)o->rank;
    ccfg.world = (uint32_t)o->world;
    ccfg.hello = (struct proto_hello){ .n = r->w.n, .dtype = (uint32_t)o->dtype,
                                       .workload = (uint32_t)o->workload, .seed = o->seed,
                                       .batch = r->w.batch,
                                       .compress = (uint32_t)r->compress,
                                       .sync_every = (uint32_t)r->sync_every };
    ccfg.link_bw = o->link_bw;
    ccfg.link_latency = o->link_latency;
    ccfg.link_host = o->link_host;
    ccfg.has_local = r->local_server >= 0;
    ccfg.local_server = r->local_server;
    ccfg.timeout = o->timeout;
    if ((rc = cli_secret(o, &r->key, err)) != 0) {
        cli_usage_print("ps_worker", err);
        return CLI_EXIT_USAGE;
    }
    ccfg.key = &r->key;
    if ((rc = ps_client_init(&r->client, &ccfg, err)) != 0)
        return refuse(rc, err);
    {
        /* Servers beyond loopback need the job's secret (auth.h). */
        const char *hosts[PS_CLIENT_MAX_SERVERS];
        for (int i = 0; i < r->client.nservers; i++)
            hosts[i] = r->client.conns[i].host;
        if (auth_policy("ps_worker", &r->key, NULL, hosts, r->client.nservers, err) != 0) {
            cli_usage_print("ps_worker", err);
            return CLI_EXIT_USAGE;
        }
    }
    if ((rc = step_setup(r, err)) != 0) {
        log_msg("%s%s", r->cuda ? "--device cuda: " : "", err);
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
    }
    /* Several buckets: the record says so, for model_s (metrics.h). */
    if (step_buckets(&r->step) > 1) {
        r->rec.buckets = (uint32_t)step_buckets(&r->step);
        r->rec.bucket_bytes = buckets_bytes_max(&r->step.plan, r->elem);
    }
    return 0;
}

/* sync_why: why LOCAL SGD's combination is refused, or NULL. */
static const char *sync_why(const struct run *r)
{
    return r->sync_every == 1 ? NULL : r->cuda ? "local SGD runs on the CPU (--device cpu)" :
        r->mistake != MISTAKE_NONE ? "not with --mistake" :
        r->bucket_bytes || r->no_overlap ? "the sync is one push: no buckets, no overlap" :
        r->reconnect_window > 0 ? "not with --reconnect-window (a rejoin is by step)" : NULL;
}

/* psgd_why: why --compress powersgd:R's combination is refused, or NULL. */
static const char *psgd_why(const struct run *r)
{
    return r->bucket_bytes || r->no_overlap ? "pushes the whole gradient in two rounds; not "
                                              "with --bucket-size or --no-overlap" :
        r->sync_every > 1 ? "not with --sync-every (it compresses the gradient)" :
        r->mistake == MISTAKE_SYNC_EVERY_MICRO ? "not with --mistake sync-every-micro (one "
                                                 "push of each round per step)" :
        r->reconnect_window > 0 ? "not with --reconnect-window (the error feedback and the "
                                  "warm start would not survive a rejoin)" : NULL;
}

/* role_flags: --compress into r->compress (none when not given) and
 * --sync-every (1 when not given); the usage line and CLI_EXIT_USAGE for
 * a bad name, --compress with --device cuda, or sync_why's refusals. */
static int role_flags(struct run *r, const char *name)
{
    char q[CLI_VALUE_BUF], msg[ERR_LEN];

    if (r->sync_every == 0)
        r->sync_every = 1;
    if (sync_why(r))
        snprintf(msg, sizeof msg, "--sync-every %d: %s", r->sync_every, sync_why(r));
    else if (name && compress_parse(name, &r->compress) != 0)
        snprintf(msg, sizeof msg, "--compress %s: not " COMPRESS_CHOICES, cli_value(name, q));
    else if (COMPRESS_KIND(r->compress) == COMPRESS_POWERSGD && psgd_why(r))
        snprintf(msg, sizeof msg, "--compress %s: %s", cli_value(name, q), psgd_why(r));
    else if (compress_get(r->compress)->frame && (r->bucket_bytes || r->no_overlap))
        snprintf(msg, sizeof msg, "--compress %s: pushes each server's range whole in one frame; "
                 "not with --bucket-size or --no-overlap", cli_value(name, q));
    else if (r->cuda && r->compress != COMPRESS_NONE)
        snprintf(msg, sizeof msg, "--compress %s: compresses the CPU worker's pushes only; "
                 "it needs --device cpu", compress_name(r->compress));
    else
        return 0;
    cli_usage_print("ps_worker", msg);
    return CLI_EXIT_USAGE;
}

/* teardown: whatever set-up made (any part of it), the client first. */
static void teardown(struct run *r)
{
    ps_client_close(&r->client);
    if (r->have_rec)
        metrics_record_free(&r->rec);
    free(r->times);
    if (r->have_step)
        step_destroy(&r->step);
    if (r->have_gpu)
        gpu_teardown(r);
    if (r->have_w)
        workload_destroy(&r->w);
    if (r->have_psgd)
        psgd_destroy(&r->psgd);
    free(r->psgd_out);
    cli_common_free(&r->o);
}

int main(int argc, char **argv)
{
    static struct run r;        /* static: starts zeroed */
    const char *servers = NULL, *device = "cpu", *loss_out = NULL, *compress = NULL;
    const struct cli_opt own[] = {
        { "server", CLI_STRING, &servers, "LIST",
          "HOST:PORT[,HOST:PORT...]: the server(s), in any order (required)",
          0, 0, NULL },
        { "device", CLI_STRING, &device, "cpu|cuda",
          "where the gradient is computed (default cpu; cuda: local rank % GPUs)", 0, 0, NULL },
        { "mistake", CLI_CUSTOM, &r.mistake, MISTAKE_METAVAR, MISTAKE_HELP, 0, 0,
          mistake_parse },
        { "compress", CLI_STRING, &compress, COMPRESS_METAVAR,
          "push 16-bit floats, the top F of |g| or signs (error feedback; :noef: none); the "
          "server sums in --dtype, sends the weights in full (--compress must match)", 0, 0, NULL },
        { "bucket-size", CLI_SIZE, &r.bucket_bytes, "SIZE",
          "buckets of whole layers, last first, pushed when ready (default 25MiB)", 1, 0,
          NULL },
        { "no-overlap", CLI_BOOL, &r.no_overlap, NULL,
          "push the buckets after the backward pass, not during it", 0, 0, NULL },
        { "trace", CLI_STRING, &r.trace, "FILE",
          "write each rank's timeline to FILE.RANK (Chrome trace-event JSON, Perfetto)",
          0, 0, NULL },
        { "reconnect-window", CLI_TIME, &r.reconnect_window, "TIME",
          "when a server is lost, redial it (with backoff) for up to TIME and rejoin at "
          "its step (default: off, exit within 2T)", 0, 0, NULL },
        { "loss-out", CLI_STRING, &loss_out, "FILE",
          "accepted and ignored (the server writes the loss; for launch.sh)", 0, 0, NULL },
        { "local-server", CLI_INT, &r.local_server, "I",
          "EMULATED: server I (position in --server) shares this host; bypasses the link",
          0, PROTO_MAX_WORLD - 1, NULL },
        { "sync-every", CLI_INT, &r.sync_every, "H", "local SGD: push the delta, pull the "
          "average every H steps (default 1; as the servers')", 1, 1 << 20, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *tables[3];
    char err[ERR_LEN] = "";
    int status;

    cli_common_defaults(&r.o);
    r.local_server = -1;
    tables[0] = own;
    tables[1] = cli_common_opts(&r.o);
    tables[2] = NULL;
    cli_main_parse("ps_worker", synopsis, argc, argv, tables);
    if (cli_common_finish(&r.o, err) != 0) {
        cli_usage_print("ps_worker", err);
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(device, "cpu") != 0 && strcmp(device, "cuda") != 0) {
        char q[CLI_VALUE_BUF], msg[ERR_LEN];
        snprintf(msg, sizeof msg, "--device %s: not cpu or cuda", cli_value(device, q));
        cli_usage_print("ps_worker", msg);
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    r.cuda = strcmp(device, "cuda") == 0;
    if (role_flags(&r, compress) != 0) {
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    if (r.cuda && (r.bucket_bytes || r.no_overlap || r.trace)) {
        cli_usage_print("ps_worker", "--device cuda: buckets and overlap (--bucket-size, "
                        "--no-overlap, --trace) run on the CPU; use --device cpu");
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    if (r.cuda && r.mistake != MISTAKE_NONE && r.mistake != MISTAKE_SUM_NOT_MEAN) {
        char msg[ERR_LEN];
        snprintf(msg, sizeof msg, "--mistake %s: not made on the GPU (--device cuda); "
                 "use --device cpu", mistake_name(r.mistake));
        cli_usage_print("ps_worker", msg);
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    (void)loss_out;
    if (r.trace && trace_check(r.trace, r.o.rank, err) != 0) {
        cli_usage_print("ps_worker", err);
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    log_init("ps_worker", r.o.rank);
    mistake_announce(r.mistake);
    if (!servers) {
        cli_usage_print("ps_worker", "--server: missing (give HOST:PORT of each server, "
                        "comma-separated)");
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }

    if ((status = setup(&r, servers)) != 0)
        goto out;
    log_msg("rank %d of %d (from %s), %s n=%zu %s, batch %llu, %d step%s, %d server%s",
            r.o.rank, r.o.world, r.o.rank_source, workload_name(r.o.workload), r.w.n,
            dtype_name(r.o.dtype), (unsigned long long)r.w.batch, r.o.steps,
            r.o.steps == 1 ? "" : "s", r.client.nservers, r.client.nservers == 1 ? "" : "s");
    clock_precise_timers();
    status = 1;
    auth_policy_say();          /* every flag is checked: the secret's line now */
    if (run_steps(&r, err) != 0) {
        log_msg("%s", err);
        goto out;
    }
    ps_client_close(&r.client);
    status = finish(&r);
out:
    teardown(&r);
    return status;
}
