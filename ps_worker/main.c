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
 * gradient. The optimizer stays on the server, so the weights and every
 * push are the CPU worker's, bit for bit. The timed combine step then
 * includes the two copies (gradient to the host before the push, weights
 * to the device after the pull): what a GPU worker of a parameter server
 * pays; every GPU wait is bounded by --timeout.
 *
 * BUCKETS (buckets_step.h): on the CPU every step goes through bstep_run:
 * the gradient grouped into --bucket-size buckets of whole layers, last
 * layer first, each pushed as soon as it is ready by a communication
 * thread while the backward pass goes on (--no-overlap: after it), then
 * one pull. With one bucket (the default 25MiB holds most models here)
 * that is one push and one pull per step. The timed combine step is the
 * time spent in pushes and the pull; rank 0 logs the medians of step,
 * backward, communication and the wait after the backward pass at the
 * end, and --trace FILE writes each rank's timeline.
 *
 * --mistake NAME (mistake.h): the worker makes the mistakes that live in
 * its micro-batch loop (no-divide-micro, mean-of-means, zero-grad-inside:
 * mistake_grad, the loop bin/reference and the ring call too) and
 * sync-every-micro: each micro-batch's sum is pushed as soon as it is
 * computed (m pushes per step, the server summing them), the weights
 * pulled after the last; the timed combine step is then the sum of the m
 * exchanges. sum-not-mean is the server's (it applies the update); the
 * worker only says so. With --device cuda only sum-not-mean is taken (the
 * GPU twin of the loop has no mistakes): the others exit 64 with one line.
 * --loss-out FILE is accepted and ignored, so that experiments/launch.sh
 * can pass it to every process: the server writes the loss.
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

#include "buckets_step.h"
#include "cli.h"
#include "client.h"
#include "clock.h"
#include "dtype.h"
#include "err.h"
#include "gpu.h"
#include "log.h"
#include "metrics.h"
#include "mistake.h"
#include "proto.h"
#include "vec.h"
#include "weights.h"
#include "workload.h"

static const char synopsis[] =
    "--server HOST:PORT[,HOST:PORT...] [--rank R --world K] [common flags]\n"
    "The parameter-server worker: compute the gradient sum over its part of the\n"
    "global batch, push it to the server(s), pull the new weights, repeat.\n"
    "With several servers (--shard I/S each), server I owns the I-th of S equal\n"
    "slices of the parameter vector.";

/* record_setup: the metrics record's fixed fields, room for every timed
 * step. ERR_USAGE when there are more than a record holds. */
static int record_setup(struct metrics_record *rec, const struct cli_common *o, size_t n,
                        size_t elem)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = metrics_record_init(rec, (size_t)(o->steps - o->warmup));

    if (rc != 0)
        return rc;
    snprintf(rec->system, sizeof rec->system, "ps");
    snprintf(rec->role, sizeof rec->role, "worker");
    snprintf(rec->transport, sizeof rec->transport, "tcp");
    rec->rank = o->rank;
    rec->world = o->world;
    rec->bytes = (uint64_t)n * elem;
    rec->link_bw = o->link_bw;
    rec->link_latency = o->link_latency;
    rec->ncpu = ncpu > 0 ? (int)ncpu : 1;
    return 0;
}

/* One worker's run: everything the steps use, allocated before the first. */
struct run {
    struct cli_common o;
    struct workload w;
    int have_w, have_rec;
    size_t elem;
    uint64_t lo, hi;            /* this worker's part of each step's batch */
    void *weights, *grad;       /* n elements each (pinned with --device cuda) */
    int mistake;                /* enum mistake (mistake.h) */
    void *scratch;              /* n elements, when mistake_grad needs them */
    int cuda;                   /* --device cuda */
    uint64_t bucket_bytes;      /* --bucket-size (0: the default) */
    int no_overlap;             /* --no-overlap */
    const char *trace;          /* --trace FILE */
    struct gpu_stream *stream;  /* --device cuda: the GPU side, on this stream */
    struct gpu_workload *gw;
    void *dweights, *dgrad;     /* device, n elements each */
    double *dloss, *hloss;      /* device / pinned host: one double */
    double *times;              /* combine time of each timed step */
    double *st[5];              /* per timed step: step, backward, pushes, pull, wait */
    struct bstep bs;            /* buckets and overlap (buckets_step.h), CPU */
    int have_bs;
    struct metrics_record rec;
    struct ps_client client;
};

/* micro_steps: --mistake sync-every-micro: each micro-batch's sum pushed as
 * soon as it is computed (m pushes of the step), the weights pulled with
 * the last. OUT: *combine, the time spent in the m exchanges. */
static int micro_steps(struct run *r, uint64_t step, double *combine, char *err)
{
    *combine = 0.0;
    for (int j = 0; j < r->o.micro; j++) {
        struct proto_push_meta meta;
        uint64_t a, b;
        double t0;
        int rc;

        workload_split(r->hi - r->lo, r->o.micro, j, NULL, &a, &b);
        mistake_grad(MISTAKE_NONE, &r->w, r->weights, step, r->lo + a, r->lo + b, 1, r->grad,
                     NULL, &meta.examples, &meta.loss);
        t0 = clock_now();
        rc = ps_client_step(&r->client, step, &meta, r->grad,
                            j == r->o.micro - 1 ? r->weights : NULL, err);
        *combine += clock_now() - t0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* gpu_gradient: local_gradient on the GPU, into r->dgrad, waited for;
 * the summed loss copied to meta. */
static int gpu_gradient(struct run *r, uint64_t step, struct proto_push_meta *meta, char *err)
{
    int rc;

    meta->examples = r->hi - r->lo;
    if ((rc = gpu_zero_async(r->dgrad, r->w.n * r->elem, r->stream, err)) != 0 ||
        (rc = gpu_zero_async(r->dloss, sizeof(double), r->stream, err)) != 0)
        return rc;
    for (int j = 0; j < r->o.micro; j++) {
        uint64_t a, b;
        workload_split(r->hi - r->lo, r->o.micro, j, NULL, &a, &b);
        rc = gpu_workload_grad_add(r->gw, r->dweights, step, r->lo + a, r->lo + b, r->dgrad,
                                   r->dloss, r->stream, err);
        if (rc != 0)
            return rc;
    }
    if ((rc = gpu_copy_async(r->hloss, r->dloss, sizeof(double), r->stream, err)) != 0 ||
        (rc = gpu_stream_wait(r->stream, r->o.timeout, err)) != 0)
        return rc;
    meta->loss = *r->hloss;
    return 0;
}

/* gpu_stage: copy bytes between the device and pinned memory, waited for. */
static int gpu_stage(struct run *r, void *dst, const void *src, char *err)
{
    int rc = gpu_copy_async(dst, src, r->w.n * r->elem, r->stream, err);

    return rc != 0 ? rc : gpu_stream_wait(r->stream, r->o.timeout, err);
}

/* gpu_step: one combine step of a GPU worker: the gradient to the pinned
 * push buffer, push and pull, the pulled weights to the device. */
static int gpu_step(struct run *r, uint64_t step, const struct proto_push_meta *meta, char *err)
{
    char why[ERR_LEN];
    int rc;

    if ((rc = gpu_stage(r, r->grad, r->dgrad, err)) != 0)
        goto fail;
    if ((rc = ps_client_step(&r->client, step, meta, r->grad, r->weights, err)) != 0)
        return rc;              /* its line names the server and the step */
    if ((rc = gpu_stage(r, r->dweights, r->weights, err)) != 0)
        goto fail;
    return 0;
fail:
    snprintf(why, sizeof why, "%s", err);
    err_say(err, "step %llu: %s", (unsigned long long)step, why);
    return rc;
}

/* one_step: compute and exchange step s (whatever the mode). OUT: the
 * combine time (the timed part: the exchange(s), with --device cuda the
 * two copies too), and *t (backward, comm, wait) where the step has them
 * (on the CPU, not sync-every-micro). Returns 0 or the code with err
 * naming the step. */
static int one_step(struct run *r, int s, double *combine, struct bstep_times *t, char *err)
{
    struct proto_push_meta meta;
    double t0;
    int rc;

    if (r->mistake == MISTAKE_SYNC_EVERY_MICRO)
        return micro_steps(r, (uint64_t)s, combine, err);
    if (!r->cuda) {
        rc = bstep_run(&r->bs, r->weights, r->grad, r->scratch, (uint64_t)s, r->lo, r->hi, t,
                       err);
        *combine = t->comm;
        return rc;
    }
    if ((rc = gpu_gradient(r, (uint64_t)s, &meta, err)) != 0) {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "step %d: %s", s, why);
        return rc;
    }
    t0 = clock_now();
    rc = gpu_step(r, (uint64_t)s, &meta, err);
    *combine = clock_now() - t0;
    return rc;
}

/* run_steps: every step: compute, push, pull; timed steps recorded. On a
 * failure the servers are told why (ps_client_abort) and err says it. */
static int run_steps(struct run *r, char *err)
{
    double cpu0 = 0, wall0 = 0;
    int rc;

    for (int s = 0; s < r->o.steps; s++) {
        struct metrics_step ms;
        uint64_t in0, out0, in1, out1;
        struct bstep_times bt = { NAN, NAN, NAN, NAN };
        double combine = 0.0, t_step = clock_now();

        if (s == r->o.warmup) {
            cpu0 = clock_cpu_seconds();
            wall0 = clock_now();
        }
        ps_client_bytes(&r->client, &in0, &out0);
        if ((rc = one_step(r, s, &combine, &bt, err)) != 0) {
            ps_client_abort(&r->client, (uint64_t)s, rc, err);
            return rc;
        }
        t_step = clock_now() - t_step;
        if (r->have_bs)
            bstep_trace_flush(&r->bs);
        if (s < r->o.warmup)
            continue;
        r->st[0][r->rec.nsteps] = t_step;
        r->st[1][r->rec.nsteps] = bt.backward;
        r->st[2][r->rec.nsteps] = bt.comm - bt.pull;
        r->st[3][r->rec.nsteps] = bt.pull;
        r->st[4][r->rec.nsteps] = bt.wait;
        ps_client_bytes(&r->client, &in1, &out1);
        ms = (struct metrics_step){ .step = (uint64_t)s, .combine_s = combine,
                                    .ingress_s = NAN, .egress_s = NAN,
                                    .bytes_in = in1 - in0, .bytes_out = out1 - out0 };
        r->times[r->rec.nsteps] = ms.combine_s;
        metrics_record_add(&r->rec, &ms);     /* room for every timed step */
    }
    r->rec.cpu_s = clock_cpu_seconds() - cpu0;
    r->rec.wall_s = clock_now() - wall0;
    return ps_client_bye(&r->client, (uint64_t)r->o.steps, err);
}

/* gpu_setup: the device of this local rank, its stream, the workload's
 * device side, and the buffers (the host ones pinned). */
static int gpu_setup(struct run *r, char *err)
{
    size_t bytes = r->w.n * r->elem;
    char desc[160];
    int rc;

    if ((rc = gpu_device_select(r->o.local_rank, NULL, err)) != 0 ||
        (rc = gpu_stream_create(&r->stream, err)) != 0 ||
        (rc = gpu_workload_create(&r->gw, &r->w, err)) != 0 ||
        (rc = gpu_malloc(&r->dweights, bytes, err)) != 0 ||
        (rc = gpu_malloc(&r->dgrad, bytes, err)) != 0 ||
        (rc = gpu_malloc((void **)&r->dloss, sizeof(double), err)) != 0 ||
        (rc = gpu_host_alloc((void **)&r->hloss, sizeof(double), err)) != 0 ||
        (rc = gpu_host_alloc(&r->weights, bytes, err)) != 0 ||
        (rc = gpu_host_alloc(&r->grad, bytes, err)) != 0)
        return rc;
    if (gpu_device_describe(desc, sizeof desc, NULL) == 0)
        log_msg("GPU %s (local rank %d)", desc, r->o.local_rank);
    return 0;
}

/* gpu_teardown: what gpu_setup made (any part of it). */
static void gpu_teardown(struct run *r)
{
    if (r->stream)
        (void)gpu_stream_wait(r->stream, r->o.timeout, NULL);
    gpu_host_free(r->grad);
    gpu_host_free(r->weights);
    gpu_host_free(r->hloss);
    gpu_free(r->dloss);
    gpu_free(r->dgrad);
    gpu_free(r->dweights);
    gpu_workload_destroy(r->gw);
    gpu_stream_destroy(r->stream);
    r->grad = r->weights = NULL;
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
        log_msg("--params: the synthetic workload needs --params N");
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
    r->times = malloc(r->rec.cap * sizeof *r->times);    /* cap <= METRICS_MAX_STEPS */
    for (int i = 0; i < 5; i++)
        if (!(r->st[i] = malloc(r->rec.cap * sizeof *r->st[i]))) {
            log_msg("out of memory for %zu step times", r->rec.cap);
            return 1;
        }
    if (r->cuda) {
        if ((rc = gpu_setup(r, err)) != 0) {
            log_msg("--device cuda: %s", err);
            return 1;
        }
    } else {
        r->weights = malloc(r->w.n * r->elem);
        r->grad = malloc(r->w.n * r->elem);
        if (mistake_needs_scratch(r->mistake))
            r->scratch = malloc(r->w.n * r->elem);
    }
    if (!r->weights || !r->grad || !r->times ||
        (!r->cuda && mistake_needs_scratch(r->mistake) && !r->scratch)) {
        log_msg("out of memory for %zu parameters", r->w.n);
        return 1;
    }
    workload_init_weights(&r->w, r->weights);
    if (r->cuda && (rc = gpu_stage(r, r->dweights, r->weights, err)) != 0) {
        log_msg("--device cuda: %s", err);
        return 1;
    }
    workload_split(r->w.batch, o->world, o->rank, o->shard_weights, &r->lo, &r->hi);

    memset(&ccfg, 0, sizeof ccfg);
    ccfg.servers = servers;
    ccfg.rank = (uint32_t)o->rank;
    ccfg.world = (uint32_t)o->world;
    ccfg.hello = (struct proto_hello){ .n = r->w.n, .dtype = (uint32_t)o->dtype,
                                       .workload = (uint32_t)o->workload, .seed = o->seed,
                                       .token = cli_token(), .batch = r->w.batch };
    ccfg.link_bw = o->link_bw;
    ccfg.link_latency = o->link_latency;
    ccfg.timeout = o->timeout;
    if ((rc = ps_client_init(&r->client, &ccfg, err)) != 0) {
        log_msg("%s", err);
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
    }
    if (!r->cuda) {
        struct bstep_cfg bc = { &r->client, &r->w, o->micro, r->mistake, r->bucket_bytes,
                                r->no_overlap, r->trace, o->rank };
        r->have_bs = 1;
        if ((rc = bstep_init(&r->bs, &bc, err)) != 0) {
            log_msg("%s", err);
            return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
        }
        if (r->mistake == MISTAKE_SYNC_EVERY_MICRO && bstep_buckets(&r->bs) > 1 && o->rank == 0)
            log_msg("--mistake sync-every-micro pushes each micro-batch whole: the %zu buckets "
                    "are not used", bstep_buckets(&r->bs));
    }
    return 0;
}

/* finish: --weights-out, --csv, the last line. 0, or 1 (message logged). */
static int finish(struct run *r)
{
    struct metrics_stats st;
    char err[ERR_LEN];

    if (r->o.weights_out &&
        weights_write(r->o.weights_out, r->o.rank, r->weights, r->w.n, r->o.dtype, err) != 0) {
        log_msg("%s", err);
        return 1;
    }
    if (r->have_bs && bstep_trace_close(&r->bs, err) != 0) {
        log_msg("%s", err);
        return 1;
    }
    if (r->o.csv && metrics_record_write(&r->rec, r->o.csv, err) != 0) {
        log_msg("--csv: %s", err);
        return 1;
    }
    metrics_summarize(r->times, r->rec.nsteps, &st);
    log_msg("done, %d steps, median combine %.3f ms", r->o.steps, st.median * 1e3);
    if (r->o.rank == 0 && r->rec.nsteps > 0 && !r->cuda &&
        r->mistake != MISTAKE_SYNC_EVERY_MICRO) {
        double md[5];
        for (int i = 0; i < 5; i++)
            md[i] = metrics_summarize(r->st[i], r->rec.nsteps, &st) == 0 ? st.median : NAN;
        log_msg("medians over %zu timed steps: step %.4f s, backward %.4f s, pushes %.4f s, "
                "pull %.4f s, wait after backward %.4f s (%zu bucket%s, overlap %s)",
                r->rec.nsteps, md[0], md[1], md[2], md[3], md[4], bstep_buckets(&r->bs),
                bstep_buckets(&r->bs) == 1 ? "" : "s", r->bs.overlap ? "on" : "off");
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct run r;        /* static: starts zeroed */
    const char *servers = NULL, *device = "cpu", *loss_out = NULL;
    const struct cli_opt own[] = {
        { "server", CLI_STRING, &servers, "LIST",
          "HOST:PORT[,HOST:PORT...]: the server(s), shard I at position I (required)",
          0, 0, NULL },
        { "device", CLI_STRING, &device, "cpu|cuda",
          "where the gradient is computed (default cpu; cuda: local rank % GPUs)", 0, 0, NULL },
        { "mistake", CLI_CUSTOM, &r.mistake, MISTAKE_METAVAR, MISTAKE_HELP, 0, 0,
          mistake_parse },
        { "bucket-size", CLI_SIZE, &r.bucket_bytes, "SIZE",
          "buckets of whole layers, last first, pushed when ready (default 25MiB)", 1, 0,
          NULL },
        { "no-overlap", CLI_BOOL, &r.no_overlap, NULL,
          "push the buckets after the backward pass, not during it", 0, 0, NULL },
        { "trace", CLI_STRING, &r.trace, "FILE",
          "write each rank's timeline to FILE.RANK (Chrome trace-event JSON, Perfetto)",
          0, 0, NULL },
        { "loss-out", CLI_STRING, &loss_out, "FILE",
          "accepted and ignored (the server writes the loss; for launch.sh)", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *tables[3];
    char err[ERR_LEN] = "";
    int status;

    cli_common_defaults(&r.o);
    tables[0] = own;
    tables[1] = cli_common_opts(&r.o);
    tables[2] = NULL;
    cli_main_parse("ps_worker", synopsis, argc, argv, tables);
    if (cli_common_finish(&r.o, err) != 0) {
        fprintf(stderr, "ps_worker: %s\n", err);
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(device, "cpu") != 0 && strcmp(device, "cuda") != 0) {
        fprintf(stderr, "ps_worker: --device: cpu or cuda\n");
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    r.cuda = strcmp(device, "cuda") == 0;
    if (r.cuda && (r.bucket_bytes || r.no_overlap || r.trace)) {
        fprintf(stderr, "ps_worker: --bucket-size/--no-overlap/--trace: buckets and overlap run "
                "on the CPU; use --device cpu\n");
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    if (r.cuda && r.mistake != MISTAKE_NONE && r.mistake != MISTAKE_SUM_NOT_MEAN) {
        fprintf(stderr, "ps_worker: --mistake %s: not made on the GPU (--device cuda); "
                "use --device cpu\n", mistake_name(r.mistake));
        cli_common_free(&r.o);
        return CLI_EXIT_USAGE;
    }
    (void)loss_out;
    log_init("ps_worker", r.o.rank);
    mistake_announce(r.mistake);
    if (!servers) {
        log_msg("--server: missing (give HOST:PORT of each server, comma-separated)");
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
    if (ps_client_connect(&r.client, err) != 0 || run_steps(&r, err) != 0) {
        log_msg("%s", err);
        goto out;
    }
    ps_client_close(&r.client);
    status = finish(&r);
out:
    ps_client_close(&r.client);
    if (r.have_rec)
        metrics_record_free(&r.rec);
    free(r.times);
    for (int i = 0; i < 5; i++)
        free(r.st[i]);
    if (r.have_bs)
        bstep_destroy(&r.bs);
    if (r.cuda)
        gpu_teardown(&r);
    free(r.scratch);
    free(r.grad);
    free(r.weights);
    if (r.have_w)
        workload_destroy(&r.w);
    cli_common_free(&r.o);
    return status;
}
