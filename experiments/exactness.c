/* exactness.c -- the seed's Code 10.5.1 in C: distributed == big batch.
 *
 * One big-batch SGD step over all N rows of the seed's least-squares
 * problem is the reference. The same step is then taken the distributed
 * way: K workers, each splitting its rows into m micro-batches, summing
 * the micro-batch gradient SUMS locally, the K sums added (what an
 * all-reduce SUM returns), divided once by the global count B = N, one
 * update. The two differ by rounding only (~1e-16). The exercise that
 * follows gives one worker half the rows: averaging per-worker means
 * (mean-of-means) is then wrong by a visible amount, while sum-then-divide
 * stays exact.
 *
 * It runs in one process on purpose: this is the arithmetic the network
 * code must preserve, shown without a network. It uses the same workload
 * and optimizer code as the parameter server and the ring (--optimizer:
 * sgd, or the first step of momentum or Adam from zero state, optim.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/optim.h"
#include "base/vec.h"
#include "train/workload.h"

struct opts {
    int workers, micro, dim;
    uint64_t rows, seed;
    double lr;
    int optimizer;          /* enum optim_kind */
};

static struct opts o = { .workers = 8, .micro = 4, .dim = WORKLOAD_LINREG_DIM,
                         .rows = WORKLOAD_LINREG_ROWS, .seed = 7, .lr = 0.05 };

/* step_from: out = w0 after the first update of --optimizer (fresh, zero
 * state) from the gradient sum g over `batch` examples. */
static void step_from(const double *w0, const double *g, size_t n, uint64_t batch, double *out)
{
    const struct optim_cfg oc = { o.optimizer, o.lr, OPTIM_DEFAULT_MOMENTUM, OPTIM_DEFAULT_BETA1,
                                  OPTIM_DEFAULT_BETA2, OPTIM_DEFAULT_EPS };
    struct optim opt;
    char err[ERR_LEN];

    memcpy(out, w0, n * sizeof *out);
    if (optim_init(&opt, &oc, DTYPE_F64, n, err) != 0) {
        fprintf(stderr, "exactness: %s\n", err);
        exit(1);
    }
    (void)optim_update(&opt, 1, out, g, n, 0, batch);
    optim_destroy(&opt);
}

static int parse_optimizer(const char *v, void *dst, char *err)
{
    if (optim_parse(v, (int *)dst) == 0)
        return 0;
    err_say(err, "'%s' is not an optimizer (one of: sgd, momentum, adam)", v);
    return ERR_USAGE;
}

static double max_abs_diff(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

static double norm_diff(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

static double norm(const double *a, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * a[i];
    return sqrt(s);
}

/* partials[k] <- worker k's gradient SUM: its rows (split by `weights`, or
 * equally) cut into m micro-batches, accumulated locally. counts[k] <- b_k. */
static void worker_sums(const struct workload *w, const double *w0, int k_workers,
                        int m, const double *weights, double *partials, uint64_t *counts)
{
    for (int k = 0; k < k_workers; k++) {
        uint64_t lo, hi;
        double *g = partials + (size_t)k * w->n;
        workload_split(w->batch, k_workers, k, weights, &lo, &hi);
        vec_zero(g, w->n, DTYPE_F64);
        for (int j = 0; j < m; j++) {
            uint64_t a, b;
            workload_split(hi - lo, m, j, NULL, &a, &b);
            workload_grad_add(w, w0, 0, lo + a, lo + b, g, NULL);
        }
        counts[k] = hi - lo;
    }
}

/* The two combine rules, each ending in one SGD step from w0. `sum` and
 * `mean` are n-element scratch buffers owned by the caller. */
static void step_sum_over_b(const struct workload *w, const double *w0, int k_workers,
                            double lr, const double *partials, double *sum, double *out)
{
    vec_zero(sum, w->n, DTYPE_F64);
    for (int k = 0; k < k_workers; k++)
        vec_add(sum, partials + (size_t)k * w->n, w->n, DTYPE_F64);
    (void)lr;
    step_from(w0, sum, w->n, w->batch, out);
}

static void step_mean_of_means(const struct workload *w, const double *w0, int k_workers,
                               double lr, const double *partials, const uint64_t *counts,
                               double *mean, double *out)
{
    vec_zero(mean, w->n, DTYPE_F64);
    for (int k = 0; k < k_workers; k++)
        for (size_t i = 0; i < w->n; i++)
            mean[i] += partials[(size_t)k * w->n + i] / (double)counts[k];
    for (size_t i = 0; i < w->n; i++)
        mean[i] /= (double)k_workers;
    /* The mean is already a mean: one "example" of it. */
    (void)lr;
    step_from(w0, mean, w->n, 1, out);
}

int main(int argc, char **argv)
{
    const struct cli_opt table[] = {
        { "workers", CLI_INT, &o.workers, "K", "workers (default 8)", 1, 4096, NULL },
        { "micro", CLI_INT, &o.micro, "M", "micro-batches per worker (default 4)", 1, 4096, NULL },
        { "rows", CLI_U64, &o.rows, "N", "examples (default 4096)", 1, 1 << 24, NULL },
        { "dim", CLI_INT, &o.dim, "D", "features (default 12)", 1, 4096, NULL },
        { "seed", CLI_U64, &o.seed, "S", "data seed (default 7)", 0, 0, NULL },
        { "lr", CLI_DOUBLE, &o.lr, "X", "learning rate (default 0.05)", 0, 0, NULL },
        { "optimizer", CLI_CUSTOM, &o.optimizer, "NAME", "sgd, momentum or adam (default sgd)",
          0, 0, parse_optimizer },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *const tables[] = { table, NULL };
    struct workload_cfg cfg;
    struct workload w;
    double *w0, *big, *acc, *mm, *partials, *weights, *g;
    uint64_t *counts;

    cli_main_parse("exactness", "[--workers K] [--micro M] [--rows N] [--dim D] [--seed S] [--lr X]\n"
                   "[--optimizer sgd|momentum|adam]\n"
                   "One big-batch SGD step against K workers x M micro-batches (seed Code 10.5.1).",
                   argc, argv, tables);
    if ((uint64_t)o.workers * (uint64_t)o.micro > o.rows) {
        fprintf(stderr, "exactness: --workers x --micro (%d x %d) exceeds --rows %llu; "
                "see exactness --help\n",
                o.workers, o.micro, (unsigned long long)o.rows);
        return CLI_EXIT_USAGE;
    }
    cfg = (struct workload_cfg){ .kind = WORKLOAD_LINREG, .dtype = DTYPE_F64, .seed = o.seed,
                                 .rows = o.rows, .dim = o.dim };
    if (workload_create(&w, &cfg) != 0) {
        fprintf(stderr, "exactness: cannot build the dataset (%llu x %d)\n",
                (unsigned long long)o.rows, o.dim);
        return 1;
    }

    w0 = calloc(w.n, sizeof *w0);
    big = calloc(w.n, sizeof *big);
    acc = calloc(w.n, sizeof *acc);
    mm = calloc(w.n, sizeof *mm);
    g = calloc(w.n, sizeof *g);
    partials = calloc((size_t)o.workers * w.n, sizeof *partials);
    counts = calloc((size_t)o.workers, sizeof *counts);
    weights = calloc((size_t)o.workers, sizeof *weights);
    if (!w0 || !big || !acc || !mm || !g || !partials || !counts || !weights) {
        fprintf(stderr, "exactness: out of memory\n");
        return 1;
    }

    /* Reference: one big-batch step over all N rows, mean gradient. g is
     * scratch for the combine rules afterwards. */
    workload_init_weights(&w, w0);
    workload_grad_add(&w, w0, 0, 0, w.batch, g, NULL);
    step_from(w0, g, w.n, w.batch, big);

    /* K workers x m micro-batches, summed locally, summed across, / N. */
    worker_sums(&w, w0, o.workers, o.micro, NULL, partials, counts);
    step_sum_over_b(&w, w0, o.workers, o.lr, partials, g, acc);
    step_mean_of_means(&w, w0, o.workers, o.lr, partials, counts, g, mm);

    printf("examples N             : %llu\n", (unsigned long long)w.batch);
    printf("workers K, micro m     : %d %d\n", o.workers, o.micro);
    printf("max |w_acc - w_big|    : %.2e\n", max_abs_diff(acc, big, w.n));
    printf("rel error of the step  : %.2e\n", norm_diff(acc, big, w.n) / norm(big, w.n));
    printf("sum/N vs mean-of-means : %.2e\n", max_abs_diff(acc, mm, w.n));

    /* The exercise: worker 0 holds half the rows, the rest share the others. */
    if (o.workers > 1) {
        weights[0] = (double)(o.workers - 1);
        for (int k = 1; k < o.workers; k++)
            weights[k] = 1.0;
        worker_sums(&w, w0, o.workers, o.micro, weights, partials, counts);
        step_sum_over_b(&w, w0, o.workers, o.lr, partials, g, acc);
        step_mean_of_means(&w, w0, o.workers, o.lr, partials, counts, g, mm);
        /* The others' shares differ by one row when they do not divide
         * evenly (292 and 293 of 4096 - 2048 over 7), in no set order, so
         * the line says their true smallest and largest. */
        uint64_t cmin = counts[1], cmax = counts[1];
        for (int k = 2; k < o.workers; k++) {
            if (counts[k] < cmin) cmin = counts[k];
            if (counts[k] > cmax) cmax = counts[k];
        }
        printf("\nunequal shards: worker 0 has %llu rows, workers 1..%d have %llu..%llu\n",
               (unsigned long long)counts[0], o.workers - 1,
               (unsigned long long)cmin, (unsigned long long)cmax);
        printf("sum/B vs big batch     : %.2e   (exact: B counts every example once)\n",
               max_abs_diff(acc, big, w.n));
        printf("mean-of-means vs big   : %.2e   (wrong: each worker weighted 1/K, not b_k/B)\n",
               max_abs_diff(mm, big, w.n));
    }

    free(w0); free(big); free(acc); free(mm); free(g);
    free(partials); free(counts); free(weights);
    workload_destroy(&w);
    return 0;
}
