/* reference.c -- bin/reference: the single-process big-batch run that the
 * parameter server and the ring must reproduce.
 *
 *     reference [common flags] [--weights-out PATH] [--loss-out FILE] [--mistake NAME]
 *
 * The same workload, seed, batch, dtype, lr and steps as a distributed
 * job, in one process and without a network: each step takes the gradient
 * SUM over the whole global batch [0, B) in one call, then one sgd_step
 * (which divides by B). A distributed run of K workers (any shard weights,
 * any --micro) adds the same per-example gradients in another order, so
 * its weights agree with these up to rounding: ~1e-15 relative in f64
 * (seed 000, section 4), exactly with the synthetic workload, whose sums
 * are exact in any order.
 *
 * stdout: one line per step under a "# step loss" header, loss being the
 * mean per-example loss of that step's batch at the weights before the
 * update (sum of losses / B: the number the parameter server logs);
 * --loss-out FILE writes the same lines to FILE (losscurve.h).
 * --weights-out PATH writes PATH.0 (this is rank 0 of a world of 1, as
 * docs/design.md's PATH.RANK), one "%.17g" value per line, the format every
 * worker writes. Flags a distributed job needs and a single process does
 * not (--rank, --world, --shard-weights, --micro, the link and --timeout)
 * are accepted and have no effect on the correct result.
 *
 * --mistake NAME (mistake.h) makes the same mistake the systems make, the
 * same way, so that a system with a mistake still matches the reference
 * with it: sum-not-mean divides by 1 instead of B; the three modes that
 * live in the workers' micro-batch loop (no-divide-micro, mean-of-means,
 * zero-grad-inside) and sync-every-micro need the job's shape, so with
 * them the reference plays the K = --world workers (default 1) one after
 * the other: worker k's part of the batch is workload_split(B, K, k,
 * --shard-weights), its contribution mistake_grad's, the K contributions
 * added in rank order (sync-every-micro: micro-batch by micro-batch, each
 * over the K workers), then one sgd_step by the summed count. --rank is
 * ignored (0 when not given): this one process is every worker.
 *
 * --sync-every H (H > 1, --optimizer sgd, no --mistake) plays LOCAL SGD
 * (common/train/localsgd.h) over the K = --world workers: each keeps
 * its own weights, takes per step the gradient sum over its share
 * workload_split(B, K, k, --shard-weights) at them and sgd_step by its
 * own count (an empty share: no step); after every H-th step and the last
 * one the workers' deltas from the last sync are added in rank order and
 * w = anchor + sum / K becomes every worker's weights. The ring's
 * all-reduce adds the deltas in another order: ~1e-15 in f64. The loss
 * line of a step is the sum of the workers' losses (each at its own
 * weights) over B.
 *
 * --replay FILE replays a parameter server's record (ps_server --record,
 * format in common/ps/mode.c) in this one process, computing every
 * gradient itself from the workload (same flags, same seeds): for an
 * applied push "a V R S BASED E", worker R's share of step S's batch
 * (workload_split over the record's K and --shard-weights) at the weights
 * R was last sent (those of version BASED: the replay keeps each worker's
 * copy, taken at each "w R V" line, and checks the version), then one
 * update by E with the optimizer's step t = V; for a step
 * "s V S B R0 R1 ..." (sync, backup) the listed workers' shares at the
 * current weights summed in that order, one update by B; "d" lines (a
 * dropped push) change nothing. Its --weights-out PATH.0 is then what the
 * server's PATH.server must be, bit for bit, when its sums are the same
 * (async: one worker's gradient per update, computed the same way).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/cli_common.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/infile.h"
#include "train/losscurve.h"
#include "train/mistake.h"
#include "train/optim.h"
#include "train/sgd.h"
#include "base/vec.h"
#include "train/weights.h"
#include "train/workload.h"


/* The buffers of a run, allocated before the first step. */
struct bufs {
    void *weights, *grad;      /* n elements each */
    void *part, *scratch;      /* one worker's contribution; mistake_grad's scratch */
};

/* workers_grad: the K workers' contributions to step s under mistake m,
 * summed in rank order into b->grad (sync-every-micro: for each
 * micro-batch j, every worker's j-th micro-batch sum). OUT: the summed
 * count and loss. */
static void workers_grad(const struct cli_common *o, const struct workload *w, int m,
                         struct bufs *b, uint64_t s, uint64_t *count, double *loss)
{
    const int k = o->world > 0 ? o->world : 1;
    const double *sw = o->world > 0 ? o->shard_weights : NULL;
    const int rounds = m == MISTAKE_SYNC_EVERY_MICRO ? o->micro : 1;

    vec_zero(b->grad, w->n, o->dtype);
    *count = 0;
    *loss = 0.0;
    for (int j = 0; j < rounds; j++) {
        for (int r = 0; r < k; r++) {
            uint64_t lo, hi, a0 = 0, a1, ex;
            double l;
            int micro = o->micro;

            workload_split(w->batch, k, r, sw, &lo, &hi);
            a1 = hi - lo;
            if (m == MISTAKE_SYNC_EVERY_MICRO) {
                workload_split(hi - lo, o->micro, j, NULL, &a0, &a1);
                micro = 1;
            }
            mistake_grad(m, w, b->weights, s, lo + a0, lo + a1, micro, b->part, b->scratch,
                         &ex, &l);
            vec_add(b->grad, b->part, w->n, o->dtype);
            *count += ex;
            *loss += l;
        }
    }
}

/* replay_fail: one line naming the record's line; ERR_FORMAT. */
static int replay_fail(const char *path, long line, const char *why)
{
    fprintf(stderr, "reference: --replay %s: line %ld: %s\n", path, line, why);
    return ERR_FORMAT;
}

/* share_grad: worker r of k's gradient sum of step s at weights wt into
 * g (zeroed first). OUT: its example count. */
static uint64_t share_grad(const struct cli_common *o, const struct workload *w, int k,
                           uint32_t r, uint64_t s, const void *wt, void *g)
{
    uint64_t lo, hi;
    double loss = 0.0;

    workload_split(w->batch, k, (int)r, o->world > 0 ? o->shard_weights : NULL, &lo, &hi);
    vec_zero(g, w->n, o->dtype);
    workload_grad_add(w, wt, s, lo, hi, g, &loss);
    return hi - lo;
}

/* replay_start: the record's "mode MODE K" line: K copies of the initial
 * weights b->weights (the versions each worker was sent: 0). 0, or
 * ERR_FORMAT after one line. OUT: *k, *snap, *snapver (the caller frees). */
static int replay_start(const struct cli_common *o, const struct workload *w,
                        const struct bufs *b, const char *path, long no, const char *line,
                        char *mode, int *k, unsigned char **snap, uint64_t **snapver)
{
    size_t es = dtype_size(o->dtype);
    int used = 0;

    if (sscanf(line, "mode %39s %d %n", mode, k, &used) != 2 || *k < 1 || *k > 65536 ||
        line[used] != '\0')
        return replay_fail(path, no, "want \"mode MODE K\" first");
    if (o->world > 0 && o->world != *k)
        return replay_fail(path, no, "K differs from --world");
    *snap = malloc((size_t)*k * w->n * es);
    *snapver = calloc((size_t)*k, sizeof **snapver);
    if (!*snap || !*snapver)
        return replay_fail(path, no, "out of memory for K copies of the weights");
    for (int i = 0; i < *k; i++)
        memcpy(*snap + (size_t)i * w->n * es, b->weights, w->n * es);
    return 0;
}

/* replay: the record at path applied to b->weights (see the opening
 * comment). 0, or nonzero after one line on stderr. */
static int replay(const struct cli_common *o, const struct workload *w, struct optim *opt,
                  struct bufs *b, const char *path)
{
    char ferr[ERR_LEN];
    int frc;
    FILE *f = infile_fopen("--replay", path, &frc, ferr);  /* no FIFO waited on */
    char *line = NULL, kind[32], mode[40];
    size_t cap = 0, es = dtype_size(o->dtype);
    unsigned char *snap = NULL;
    uint64_t *snapver = NULL, version = 0, updates = 0;
    long no = 0;
    int k = 0, rc = ERR_FORMAT;

    if (!f) {
        fprintf(stderr, "reference: %s\n", ferr);
        return 1;
    }
    while (getline(&line, &cap, f) > 0) {
        unsigned long long v, s, on, e, r;
        int used = 0, n;

        no++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (k == 0) {
            if ((rc = replay_start(o, w, b, path, no, line, mode, &k, &snap, &snapver)) != 0)
                goto out;
            continue;
        }
        if (sscanf(line, "%31s%n", kind, &used) != 1)
            continue;
        if (strcmp(kind, "a") == 0) {
            if (sscanf(line + used, "%llu %llu %llu %llu %llu %n", &v, &r, &s, &on, &e, &n) != 5 ||
                line[used + n] != '\0' || r >= (unsigned long long)k || v != version + 1 ||
                e == 0) {
                rc = replay_fail(path, no, "want \"a VERSION RANK STEP BASED_ON EXAMPLES\", "
                                 "VERSION the next one and RANK below K");
                goto out;
            }
            if (on != snapver[r]) {
                rc = replay_fail(path, no, "the worker computed on a version it was not sent");
                goto out;
            }
            if (share_grad(o, w, k, (uint32_t)r, s, snap + r * w->n * es, b->grad) != e) {
                rc = replay_fail(path, no, "the example count is not the worker's share");
                goto out;
            }
            rc = optim_update(opt, v, b->weights, b->grad, w->n, 0, e);
        } else if (strcmp(kind, "w") == 0) {
            if (sscanf(line + used, "%llu %llu %n", &r, &v, &n) != 2 || line[used + n] != '\0' ||
                r >= (unsigned long long)k || v != version) {
                rc = replay_fail(path, no, "want \"w RANK VERSION\", VERSION the current one");
                goto out;
            }
            memcpy(snap + r * w->n * es, b->weights, w->n * es);
            snapver[r] = v;
            continue;
        } else if (strcmp(kind, "s") == 0) {
            const char *p;
            uint64_t sum = 0;

            if (sscanf(line + used, "%llu %llu %llu%n", &v, &s, &e, &n) != 3 ||
                v != version + 1 || e == 0) {
                rc = replay_fail(path, no, "want \"s VERSION STEP B RANKS...\"");
                goto out;
            }
            if (!b->part)
                b->part = malloc(w->n * es);
            if (!b->part) {
                rc = replay_fail(path, no, "out of memory");
                goto out;
            }
            vec_zero(b->part, w->n, o->dtype);
            for (p = line + used + n; sscanf(p, "%llu%n", &r, &n) == 1; p += n) {
                if (r >= (unsigned long long)k) {
                    rc = replay_fail(path, no, "a rank not below K");
                    goto out;
                }
                sum += share_grad(o, w, k, (uint32_t)r, s, b->weights, b->grad);
                vec_add(b->part, b->grad, w->n, o->dtype);
            }
            if (sum != e) {
                rc = replay_fail(path, no, "the used workers' counts do not sum to B");
                goto out;
            }
            rc = optim_update(opt, v, b->weights, b->part, w->n, 0, e);
        } else if (strcmp(kind, "d") == 0) {
            continue;
        } else {
            rc = replay_fail(path, no, "not an a, s or d line");
            goto out;
        }
        if (rc != 0) {
            fprintf(stderr, "reference: --replay %s: line %ld: %s\n", path, no, err_str(rc));
            goto out;
        }
        version = v;
        updates++;
    }
    if (k == 0) {
        rc = replay_fail(path, no, "no \"mode MODE K\" line");
        goto out;
    }
    printf("# replayed %s: mode %s, K %d, %llu updates\n", path, mode, k,
           (unsigned long long)updates);
    rc = 0;
out:
    free(line);
    free(snap);
    free(snapver);
    fclose(f);
    return rc;
}

/* local_sgd: --sync-every H's steps (the header). 0, or -1 after a line. */
static int local_sgd(const struct cli_common *o, const struct workload *w, struct bufs *b,
                     int h, struct losscurve *lc)
{
    const int k = o->world, dt = o->dtype;
    const size_t n = w->n, es = dtype_size(dt);
    unsigned char *ws = malloc((size_t)k * n * es);     /* worker i's at ws + i n es */
    int rc = 0;

    if (!ws) {
        fprintf(stderr, "reference: out of memory for %d workers' weights\n", k);
        return -1;
    }
    for (int i = 0; i < k; i++)
        memcpy(ws + (size_t)i * n * es, b->weights, n * es);    /* b->weights: the anchor */
    printf("# reference: local SGD, %d workers, --sync-every %d, %s n=%zu %s, batch %llu, "
           "lr %g, seed %llu, %d steps\n# step loss\n", k, h, workload_name(o->workload), n,
           dtype_name(dt), (unsigned long long)w->batch, o->lr, (unsigned long long)o->seed,
           o->steps);
    for (int s = 0; s < o->steps && rc == 0; s++) {
        double loss = 0.0;
        for (int i = 0; i < k && rc == 0; i++) {
            uint64_t lo, hi;
            double l = 0.0;
            workload_split(w->batch, k, i, o->shard_weights, &lo, &hi);
            vec_zero(b->grad, n, dt);
            workload_grad_add(w, ws + (size_t)i * n * es, (uint64_t)s, lo, hi, b->grad, &l);
            loss += l;
            if (hi > lo)
                rc = sgd_step(ws + (size_t)i * n * es, b->grad, n, dt, o->lr, hi - lo);
        }
        if (rc == 0 && ((s + 1) % h == 0 || s == o->steps - 1)) {
            for (size_t j = 0; j < n; j++) {
                double a = vec_get(b->weights, j, dt), sum = 0.0;
                for (int i = 0; i < k; i++)
                    sum += vec_get(ws + (size_t)i * n * es, j, dt) - a;
                vec_set(b->weights, j, dt, a + sum / k);
            }
            for (int i = 0; i < k; i++)
                memcpy(ws + (size_t)i * n * es, b->weights, n * es);
        }
        printf("%d %.17g\n", s, loss / (double)w->batch);
        if (lc)
            losscurve_set(lc, (size_t)s, loss / (double)w->batch);
    }
    free(ws);
    if (rc != 0)
        fprintf(stderr, "reference: local SGD: %s\n", err_str(rc));
    return rc != 0 ? -1 : 0;
}

/* run_steps: the big-batch steps (or, with a shaping MISTAKE, the
 * workers' steps played in one process; --sync-every H: local_sgd), the
 * loss per step on stdout and into lc where there is one. 0, or -1 after saying why on stderr. */
static int run_steps(const struct cli_common *o, struct workload *w, struct optim *opt,
                     struct bufs *b, int mistake, int sync_every, struct losscurve *lc)
{
    int shaped = mistake != MISTAKE_NONE && mistake != MISTAKE_SUM_NOT_MEAN;

    if (sync_every > 1)
        return local_sgd(o, w, b, sync_every, lc);

    printf("# reference: %s n=%zu %s, batch %llu, lr %g, seed %llu, %d steps, optimizer %s%s%s\n",
           workload_name(o->workload), w->n, dtype_name(o->dtype), (unsigned long long)w->batch,
           o->lr, (unsigned long long)o->seed, o->steps, optim_name(o->optimizer),
           mistake != MISTAKE_NONE ? ", MISTAKE " : "",
           mistake != MISTAKE_NONE ? mistake_name(mistake) : "");
    printf("# step loss\n");
    for (int s = 0; s < o->steps; s++) {
        uint64_t count = w->batch;
        double loss = 0.0;

        if (shaped) {
            workers_grad(o, w, mistake, b, (uint64_t)s, &count, &loss);
        } else {
            vec_zero(b->grad, w->n, o->dtype);
            workload_grad_add(w, b->weights, (uint64_t)s, 0, w->batch, b->grad, &loss);
        }
        if (count == 0) {
            fprintf(stderr, "reference: step %d: the workers' counts add up to 0\n", s);
            return -1;
        }
        int rc = optim_update(opt, (uint64_t)s + 1, b->weights, b->grad, w->n, 0,
                          mistake == MISTAKE_SUM_NOT_MEAN ? 1 : count);
        if (rc != 0) {
            fprintf(stderr, "reference: step %d: %s\n", s, err_str(rc));
            return -1;
        }
        printf("%d %.17g\n", s, loss / (double)count);
        if (lc)
            losscurve_set(lc, (size_t)s, loss / (double)count);
    }
    return 0;
}

/* finish_flags: --sync-every's combinations, the common flags' cross-checks for one process that plays
 * every rank, and the output files' probes. 0, or -1 after one line. */
static int finish_flags(struct cli_common *o, const char *loss_out, int sync_every,
                        int mistake, const char *replay_path)
{
    char err[ERR_LEN] = "";

    if (sync_every > 1 && (mistake != MISTAKE_NONE || replay_path || o->optimizer != OPTIM_SGD)) {
        fprintf(stderr, "reference: --sync-every %d: not with %s; see reference --help\n",
                sync_every, replay_path ? "--replay" : mistake != MISTAKE_NONE ?
                "--mistake" : "--optimizer momentum|adam (each worker's own state)");
        return -1;
    }

    if (o->rank < 0)
        o->rank = 0;            /* one process plays every rank */
    if (cli_common_finish(o, err) != 0) {
        fprintf(stderr, "reference: %s\n", err);
        return -1;
    }
    if (o->workload == WORKLOAD_SYNTHETIC && o->params == 0) {
        fprintf(stderr, "reference: --params: the synthetic workload needs --params N\n");
        return -1;
    }
    if (loss_out && losscurve_probe(loss_out, err) != 0) {
        fprintf(stderr, "reference: %s\n", err);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct cli_common o;
    const char *loss_out = NULL, *replay_path = NULL;
    int mistake = MISTAKE_NONE, sync_every = 1;
    const struct cli_opt own[] = {
        { "loss-out", CLI_STRING, &loss_out, "FILE",
          "also write the loss per step to FILE (\"# step loss\" lines)", 0, 0, NULL },
        { "mistake", CLI_CUSTOM, &mistake, MISTAKE_METAVAR, MISTAKE_HELP, 0, 0, mistake_parse },
        { "replay", CLI_STRING, &replay_path, "FILE",
          "replay a parameter server's --record FILE (its order of updates) instead", 0, 0,
          NULL },
        { "sync-every", CLI_INT, &sync_every, "H",
          "local SGD over the --world workers: H local steps, then their weights averaged",
          1, 1 << 20, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *tables[3];
    struct workload_cfg cfg;
    struct workload w;
    struct bufs b = { NULL, NULL, NULL, NULL };
    struct losscurve lc = { NULL, 0, NULL };
    struct optim_cfg oc;
    struct optim opt;
    char err[ERR_LEN] = "";
    size_t elem;
    int rc, status = 1, shaped;

    cli_common_defaults(&o);
    memset(&opt, 0, sizeof opt);
    tables[0] = own;
    tables[1] = cli_common_opts(&o);
    tables[2] = NULL;
    cli_main_parse("reference", "[common flags] [--loss-out FILE] [--mistake NAME] [--replay FILE]\n"
                   "The single-process big-batch run of the same data: per step the gradient\n"
                   "sum over the whole batch, one SGD step; the loss per step on stdout,\n"
                   "--weights-out PATH writes PATH.0. With --mistake it makes the systems'\n"
                   "mistake the same way (playing the --world workers with --micro and\n"
                   "--shard-weights where the mistake lives in the workers).",
                   argc, argv, tables);
    if (finish_flags(&o, loss_out, sync_every, mistake, replay_path) != 0) {
        cli_common_free(&o);
        return CLI_EXIT_USAGE;
    }
    /* --replay: a FIFO, a device or a folder is refused unread (infile.h). */
    if (replay_path && (rc = infile_check("--replay", replay_path, err)) != 0) {
        fprintf(stderr, "reference: %s\n", err);
        cli_common_free(&o);
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;    /* a missing file: 1 */
    }
    cli_workload_cfg(&o, &cfg);     /* rank 0 of 1: --backward-time is T per step */
    rc = workload_create(&w, &cfg);
    if (rc != 0) {
        fprintf(stderr, "reference: cannot build the %s workload (params %llu, batch %llu): %s\n",
                workload_name(o.workload), (unsigned long long)o.params,
                (unsigned long long)o.batch, err_str(rc));
        cli_common_free(&o);
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
    }
    if (mistake != MISTAKE_NONE)
        fprintf(stderr, "reference: MISTAKE MODE %s: %s\n", mistake_name(mistake),
                mistake_describe(mistake));
    shaped = mistake != MISTAKE_NONE && mistake != MISTAKE_SUM_NOT_MEAN;
    elem = dtype_size(o.dtype);
    b.weights = malloc(w.n * elem);
    b.grad = malloc(w.n * elem);
    if (shaped) {
        b.part = malloc(w.n * elem);
        b.scratch = malloc(w.n * elem);
    }
    if (!b.weights || !b.grad || (shaped && (!b.part || !b.scratch)) ||
        (loss_out && losscurve_init(&lc, (size_t)o.steps) != 0)) {
        fprintf(stderr, "reference: out of memory for %zu parameters\n", w.n);
        goto out;
    }
    workload_init_weights(&w, b.weights);
    cli_optim_cfg(&o, &oc);
    if (optim_init(&opt, &oc, o.dtype, w.n, err) != 0) {
        fprintf(stderr, "reference: %s\n", err);
        goto out;
    }

    if (replay_path) {
        if (mistake != MISTAKE_NONE || loss_out) {
            fprintf(stderr, "reference: --replay: not with %s; see reference --help\n",
                    loss_out ? "--loss-out" : "--mistake");
            status = CLI_EXIT_USAGE;
            goto out;
        }
        if (replay(&o, &w, &opt, &b, replay_path) != 0)
            goto out;
        goto write;
    }
    if (run_steps(&o, &w, &opt, &b, mistake, sync_every, loss_out ? &lc : NULL) != 0)
        goto out;
write:
    if (fflush(stdout) != 0) {
        fprintf(stderr, "reference: writing stdout: %s\n", strerror(errno));
        goto out;
    }
    if (loss_out && losscurve_write(&lc, loss_out, NULL, err) != 0) {
        fprintf(stderr, "reference: %s\n", err);
        goto out;
    }
    if (o.weights_out && weights_write(o.weights_out, 0, b.weights, w.n, o.dtype, err) != 0) {
        fprintf(stderr, "reference: %s\n", err);
        goto out;
    }
    status = 0;
out:
    optim_destroy(&opt);
    losscurve_free(&lc);
    free(b.scratch);
    free(b.part);
    free(b.grad);
    free(b.weights);
    workload_destroy(&w);
    cli_common_free(&o);
    return status;
}
