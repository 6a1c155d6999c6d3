/* reference.c -- bin/reference: the single-process big-batch run that the
 * parameter server and the ring must reproduce.
 *
 *     reference [common flags] [--weights-out PATH]
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
 * update (sum of losses / B: the number the parameter server logs).
 * --weights-out PATH writes PATH.0 (this is rank 0 of a world of 1, as
 * DESIGN.md's PATH.RANK), one "%.17g" value per line, the format every
 * worker writes. Flags a distributed job needs and a single process does
 * not (--rank, --world, --shard-weights, --micro, the link and --timeout)
 * are accepted and have no effect on the result.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dtype.h"
#include "err.h"
#include "sgd.h"
#include "vec.h"
#include "workload.h"

__attribute__((format(printf, 2, 3)))
static void say(char *err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
}

/* weights_write: the weights to PATH.0, one "%.17g" value per line. */
static int weights_write(const char *path, const void *w, size_t n, int dtype, char *err)
{
    char file[CLI_PATH_MAX];
    FILE *f;
    int rc = 0;

    snprintf(file, sizeof file, "%s.0", path);
    f = fopen(file, "w");
    if (!f) {
        rc = -errno;
        say(err, "--weights-out: cannot write %s: %s", file, strerror(errno));
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.17g\n", vec_get(w, i, dtype));
    if (ferror(f))
        rc = -EIO;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc != 0)
        say(err, "--weights-out: writing %s: %s", file, err_str(rc));
    return rc;
}

int main(int argc, char **argv)
{
    struct cli_common o;
    const struct cli_opt *tables[2];
    struct workload_cfg cfg;
    struct workload w;
    void *weights = NULL, *grad = NULL;
    char err[ERR_LEN] = "";
    size_t elem;
    int rc, status = 1;

    cli_common_defaults(&o);
    tables[0] = cli_common_opts(&o);
    tables[1] = NULL;
    cli_main_parse("reference", "[common flags]\n"
                   "The single-process big-batch run of the same data: per step the gradient\n"
                   "sum over the whole batch, one SGD step; the loss per step on stdout,\n"
                   "--weights-out PATH writes PATH.0.", argc, argv, tables);
    if (cli_common_finish(&o, err) != 0) {
        fprintf(stderr, "reference: %s\n", err);
        cli_common_free(&o);
        return CLI_EXIT_USAGE;
    }
    if (o.workload == WORKLOAD_SYNTHETIC && o.params == 0) {
        fprintf(stderr, "reference: --params: the synthetic workload needs --params N\n");
        cli_common_free(&o);
        return CLI_EXIT_USAGE;
    }
    cfg = (struct workload_cfg){ .kind = o.workload, .dtype = o.dtype, .seed = o.seed,
                                 .params = o.params, .batch = o.batch };
    rc = workload_create(&w, &cfg);
    if (rc != 0) {
        fprintf(stderr, "reference: cannot build the %s workload (params %llu, batch %llu): %s\n",
                workload_name(o.workload), (unsigned long long)o.params,
                (unsigned long long)o.batch, err_str(rc));
        cli_common_free(&o);
        return rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
    }
    elem = dtype_size(o.dtype);
    weights = malloc(w.n * elem);
    grad = malloc(w.n * elem);
    if (!weights || !grad) {
        fprintf(stderr, "reference: out of memory for %zu parameters\n", w.n);
        goto out;
    }
    workload_init_weights(&w, weights);

    printf("# reference: %s n=%zu %s, batch %llu, lr %g, seed %llu, %d steps\n",
           workload_name(o.workload), w.n, dtype_name(o.dtype), (unsigned long long)w.batch,
           o.lr, (unsigned long long)o.seed, o.steps);
    printf("# step loss\n");
    for (int s = 0; s < o.steps; s++) {
        double loss = 0.0;
        vec_zero(grad, w.n, o.dtype);
        workload_grad_add(&w, weights, (uint64_t)s, 0, w.batch, grad, &loss);
        if ((rc = sgd_step(weights, grad, w.n, o.dtype, o.lr, w.batch)) != 0) {
            fprintf(stderr, "reference: step %d: %s\n", s, err_str(rc));
            goto out;
        }
        printf("%d %.17g\n", s, loss / (double)w.batch);
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "reference: writing stdout: %s\n", strerror(errno));
        goto out;
    }
    if (o.weights_out && weights_write(o.weights_out, weights, w.n, o.dtype, err) != 0) {
        fprintf(stderr, "reference: %s\n", err);
        goto out;
    }
    status = 0;
out:
    free(grad);
    free(weights);
    workload_destroy(&w);
    cli_common_free(&o);
    return status;
}
