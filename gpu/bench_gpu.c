/* bench_gpu.c -- how fast is the reduction kernel, and NCCL? (bin/bench_gpu)
 *
 * Two figures, as columns under `#` headers (gnuplot blocks, two blank
 * lines apart):
 *
 *   1. the reduce-add kernel (gpu_vec_add, acc += x) against a
 *      device-to-device copy (cudaMemcpyAsync) on the same GPU, at 16, 64
 *      and 256 MiB per vector. Bandwidth counts the bytes each must move
 *      at least: the add reads 2 and writes 1 element per element, the
 *      copy reads 1 and writes 1. The copy is what the memory system
 *      gives a simple streaming kernel, so their ratio says how far the
 *      reduction is from the best it can be (goal: at least 0.80). A third
 *      column times the add with acc and x misaligned to each other (the
 *      one-element-per-thread path of gpu_vec.cu);
 *   2. NCCL's all-reduce with the one rank a one-GPU machine allows, same
 *      sizes, out of place: its time, algbw (bytes / time, nccl-tests'
 *      definition), and whether the result is right (with one rank, the
 *      sum is the input, bit for bit).
 *
 * Each time is the median of --reps runs, timed with CUDA events around
 * the operation alone, after 3 warm-up runs; run r works on slice r mod k
 * of buffers k times the size (256 MiB), so that no run finds its inputs in
 * the L2 cache (50 MB on an H100) where the previous one left them (one
 * measurement without this put the add at 16 MiB above the copy, and the
 * memory's peak: the cache's figure). The inputs are the synthetic
 * workload's gradient (non-zero, computed on the GPU; never zeros). This
 * is a benchmark: it prints figures and never passes or fails on them; it
 * exits 1 when it cannot run (no GPU) or a result is wrong.
 *
 * Its main lives in gpu/, not experiments/: gpu.mk links it with libgpu.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/cli_common.h"
#include "base/dtype.h"
#include "base/err.h"
#include "gpu.h"
#include "train/workload.h"

#define WARMUP 3
#define MAX_REPS 999
#define WAIT_S 60.0

static const size_t size_mib[] = { 16, 64, 256 };
#define NSIZES (sizeof size_mib / sizeof size_mib[0])

static char err[ERR_LEN];

static void die(const char *what)
{
    fprintf(stderr, "bench_gpu: %s: %s\n", what, err);
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* What one timed operation does. OP_SKEW is the reduce-add with acc one
 * element past x's alignment (acc + 1, x): the one-element-per-thread path
 * a ring chunk takes when the two buffers' offsets differ modulo 16 bytes. */
enum op { OP_ADD, OP_SKEW, OP_COPY, OP_NCCL };

struct bench {
    struct gpu_stream *s;
    struct gpu_event *t0, *t1;
    struct gpu_nccl *nccl;
    char *a, *x, *c;        /* device vectors of the largest size, maxn elements */
    size_t maxn;
    int dtype;
};

/* op over n elements of slice `slice` (element offset slice * n). */
static int run_op(struct bench *b, enum op op, size_t n, size_t slice)
{
    const size_t es = dtype_size(b->dtype), off = slice * n * es;

    switch (op) {
    case OP_ADD: return gpu_vec_add(b->a + off, b->x + off, n, b->dtype, b->s, err);
    case OP_SKEW: return gpu_vec_add(b->a + off + es, b->x + off, n - 1, b->dtype, b->s, err);
    case OP_COPY: return gpu_copy_async(b->c + off, b->a + off, n * es, b->s, err);
    case OP_NCCL:
        return gpu_nccl_all_reduce_start(b->nccl, b->x + off, b->c + off, n, b->dtype, b->s, err);
    }
    return ERR_USAGE;
}

/* The median seconds of reps timed runs of op over n elements. Run r uses
 * slice r mod (maxn / n) of the buffers, so that below 256 MiB a run does
 * not find its inputs in the 50 MB L2 cache where the previous run left
 * them: the figures are the memory's, not the cache's. */
static double time_op(struct bench *b, enum op op, size_t n, int reps)
{
    const size_t slices = b->maxn / n;
    double t[MAX_REPS];

    for (int r = 0; r < WARMUP + reps; r++) {
        if (gpu_event_record(b->t0, b->s, err) != 0 || run_op(b, op, n, (size_t)r % slices) != 0 ||
            gpu_event_record(b->t1, b->s, err) != 0)
            die("enqueue");
        if ((op == OP_NCCL ? gpu_nccl_wait(b->nccl, b->s, err) : gpu_event_wait(b->t1, WAIT_S, err)) != 0)
            die("wait");
        if (r >= WARMUP && gpu_event_elapsed(b->t0, b->t1, &t[r - WARMUP], err) != 0)
            die("elapsed");
    }
    return median(t, reps);
}

/* Fill v (n elements) with step `step` of the synthetic gradient. */
static void fill(struct bench *b, void *v, size_t n, uint64_t step)
{
    struct workload w;
    struct gpu_workload *gw = NULL;
    struct workload_cfg cfg = { .kind = WORKLOAD_SYNTHETIC, .dtype = b->dtype, .seed = 1,
                                .params = n, .batch = 1024 };

    if (workload_create(&w, &cfg) != 0) {
        snprintf(err, sizeof err, "workload_create failed");
        die("fill");
    }
    if (gpu_workload_create(&gw, &w, err) != 0 || gpu_zero_async(v, n * dtype_size(b->dtype), b->s, err) != 0 ||
        gpu_workload_grad_add(gw, NULL, step, 0, 1024, v, NULL, b->s, err) != 0 ||
        gpu_stream_wait(b->s, WAIT_S, err) != 0)
        die("fill");
    gpu_workload_destroy(gw);
    workload_destroy(&w);
}

/* One all-reduce of n elements, x -> c (slice 0, c zeroed first); with one
 * rank its result must be x, bit for bit: compared on the host. */
static int nccl_correct(struct bench *b, size_t n)
{
    const size_t bytes = n * dtype_size(b->dtype);
    char *h1 = malloc(bytes), *h2 = malloc(bytes);
    int same = 0;

    if (h1 && h2 && gpu_zero_async(b->c, bytes, b->s, err) == 0 &&
        run_op(b, OP_NCCL, n, 0) == 0 && gpu_nccl_wait(b->nccl, b->s, err) == 0 &&
        gpu_copy_async(h1, b->c, bytes, b->s, err) == 0 &&
        gpu_copy_async(h2, b->x, bytes, b->s, err) == 0 && gpu_stream_wait(b->s, WAIT_S, err) == 0)
        same = memcmp(h1, h2, bytes) == 0;
    free(h1);
    free(h2);
    return same;
}

int main(int argc, char **argv)
{
    struct cli_common common;
    int reps = 20, quick = 0, probe = 0, version = 0, wrong = 0;
    const struct cli_opt table[] = {
        { "reps", CLI_INT, &reps, "N", "timed runs per figure, median reported (default 20)", 1, MAX_REPS, NULL },
        { "quick", CLI_BOOL, &quick, NULL, "at most 5 runs per figure, 16 and 64 MiB only", 0, 0, NULL },
        { "probe", CLI_BOOL, &probe, NULL, "only say whether a GPU is usable (exit 0) or why not (exit 1)", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *tables[3] = { table, NULL, NULL };
    char desc[256];
    struct bench b = { 0 };
    size_t nsizes = NSIZES, es;
    unsigned char id[GPU_NCCL_ID_BYTES];

    cli_common_defaults(&common);
    tables[1] = cli_common_opts(&common);
    cli_main_parse("bench_gpu", "[--probe] [--reps N] [--quick] [--dtype f32|f64] [--timeout T]\n"
                   "The reduce-add kernel's bandwidth against a device-to-device copy, and\n"
                   "NCCL all-reduce with one rank, at 16, 64, 256 MiB (GPU). Columns under '#'.",
                   argc, argv, tables);
    if (cli_common_finish(&common, err) != 0) {
        fprintf(stderr, "bench_gpu: %s; see bench_gpu --help\n", err);
        return CLI_EXIT_USAGE;
    }
    if (probe) {
        if (gpu_available(err) != 0)
            die("probe");
        return 0;
    }
    if (quick) {
        reps = reps < 5 ? reps : 5;
        nsizes = 2;
    }
    b.dtype = common.dtype;
    es = dtype_size(b.dtype);
    b.maxn = size_mib[nsizes - 1] * 1024 * 1024 / es;

    if (gpu_device_select(common.local_rank > 0 ? common.local_rank : 0, NULL, err) != 0)
        die("device");
    if (gpu_device_describe(desc, sizeof desc, err) != 0 || gpu_stream_create(&b.s, err) != 0 ||
        gpu_event_create(&b.t0, 1, err) != 0 || gpu_event_create(&b.t1, 1, err) != 0 ||
        gpu_malloc((void **)&b.a, b.maxn * es, err) != 0 ||
        gpu_malloc((void **)&b.x, b.maxn * es, err) != 0 ||
        gpu_malloc((void **)&b.c, b.maxn * es, err) != 0)
        die("set-up");
    fill(&b, b.a, b.maxn, 1);
    fill(&b, b.x, b.maxn, 2);

    printf("# bench_gpu: reduce-add (acc += x, gpu_vec_add) against a device-to-device copy, %s\n",
           dtype_name(b.dtype));
    printf("# device %s\n# build: %s\n", desc, gpu_build_info());
    printf("# bytes moved: add 2 reads + 1 write per element, copy 1 read + 1 write;\n"
           "# GB/s = 10^9 bytes/s; median of %d runs (CUDA events) after %d warm-up, each run on\n"
           "# another slice of %zu MiB buffers (no L2 reuse); goal ratio add/copy >= 0.80;\n"
           "# skew: the add with acc and x misaligned to each other (one element per thread)\n",
           reps, WARMUP, size_mib[nsizes - 1]);
    printf("# %-8s %10s %10s %10s %10s %7s %10s\n", "size_MiB", "add_us", "add_GB/s", "copy_us",
           "copy_GB/s", "ratio", "skew_GB/s");
    for (size_t k = 0; k < nsizes; k++) {
        const size_t n = size_mib[k] * 1024 * 1024 / es;
        const double bytes = (double)(n * es);
        double ta = time_op(&b, OP_ADD, n, reps), tc = time_op(&b, OP_COPY, n, reps);
        double ts = time_op(&b, OP_SKEW, n, reps);
        double bwa = 3.0 * bytes / ta, bwc = 2.0 * bytes / tc, bws = 3.0 * (bytes - (double)es) / ts;
        printf("  %-8zu %10.1f %10.1f %10.1f %10.1f %7.3f %10.1f\n", size_mib[k], ta * 1e6,
               bwa / 1e9, tc * 1e6, bwc / 1e9, bwa / bwc, bws / 1e9);
        fflush(stdout);
    }

    printf("\n\n# NCCL all-reduce, world 1 (this GPU), out of place, %s\n", dtype_name(b.dtype));
    if (gpu_nccl_load(&version, err) != 0 || gpu_nccl_unique_id(id, err) != 0 ||
        gpu_nccl_create(&b.nccl, id, 0, 1, common.timeout, err) != 0) {
        printf("# not run: %s\n", err);
    } else {
        printf("# NCCL %d; algbw = bytes / time (GB/s = 10^9 bytes/s), same slices as above;\n"
               "# correct: one more all-reduce's result == its input, bitwise\n", version);
        printf("# %-8s %10s %10s %8s\n", "size_MiB", "time_us", "algbw_GB/s", "correct");
        for (size_t k = 0; k < nsizes; k++) {
            const size_t n = size_mib[k] * 1024 * 1024 / es;
            double t = time_op(&b, OP_NCCL, n, reps);
            int ok = nccl_correct(&b, n);
            wrong |= !ok;
            printf("  %-8zu %10.1f %10.1f %8s\n", size_mib[k], t * 1e6, (double)(n * es) / t / 1e9,
                   ok ? "yes" : "NO");
            fflush(stdout);
        }
        gpu_nccl_destroy(b.nccl);
    }

    gpu_free(b.a);
    gpu_free(b.x);
    gpu_free(b.c);
    gpu_event_destroy(b.t0);
    gpu_event_destroy(b.t1);
    gpu_stream_destroy(b.s);
    cli_common_free(&common);
    return wrong ? 1 : 0;
}
