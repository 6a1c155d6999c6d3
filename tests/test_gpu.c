/* test_gpu.c -- every GPU kernel against its CPU twin, bit for bit; the
 * host waits' timeout; NCCL with one rank; and the refusals.
 *
 * Cases gpu-1.x need no GPU and run in every build. Cases gpu-2.x (CUDA)
 * and gpu-3.x (NCCL) need a device: without one they are skipped with ONE
 * line saying why ("skip gpu-2 ...: no CUDA device: ..."), unless
 * PSR_REQUIRE_GPU=1 (make check-gpu), where a missing GPU or NCCL is a
 * failure. Bitwise means memcmp of the buffers: the GPU must give the same
 * bits as common/base/vec.c, sgd.c and workload.c, not merely close values.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "gpu.h"
#include "base/rng.h"
#include "train/optim.h"
#include "train/sgd.h"
#include "base/vec.h"
#include "train/workload.h"

#define WAIT_S 60.0             /* generous: a device wait that should succeed */

static char err[ERR_LEN];
static struct gpu_stream *stream;

/* OK(call): the call returned 0, else fail printing its line. */
#define OK(call) do { int ok_rc_ = (call); if (ok_rc_ != 0) t_fail(__FILE__, __LINE__, #call, \
    "rc %d (%s): %s", ok_rc_, err_str(ok_rc_), err); } while (0)

static int require_gpu(void)
{
    const char *v = getenv("PSR_REQUIRE_GPU");
    return v && strcmp(v, "1") == 0;
}

/* Bitwise comparison of n elements; on a mismatch, the first one. */
static void expect_same(const void *got, const void *want, size_t n, int dtype, const char *what)
{
    const size_t es = dtype_size(dtype);
    for (size_t i = 0; i < n; i++) {
        if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0) {
            t_fail(__FILE__, __LINE__, what, "element %zu of %zu: got %.17g, want %.17g",
                   i, n, vec_get(got, i, dtype), vec_get(want, i, dtype));
            return;
        }
    }
}

/* Varied test values: normals over many exponents, zeros of both signs,
 * subnormals; never NaN (a NaN's payload may differ between CPU and GPU
 * and proves nothing about the arithmetic). */
static void fill(void *v, size_t n, int dtype, struct rng *r)
{
    for (size_t i = 0; i < n; i++) {
        double x = rng_normal(r) * ldexp(1.0, (int)(rng_next(r) % 40) - 20);
        switch (rng_next(r) % 64) {
        case 0: x = 0.0; break;
        case 1: x = -0.0; break;
        case 2: x = dtype == DTYPE_F32 ? 1e-40 : 1e-310; break;     /* subnormal */
        case 3: x = dtype == DTYPE_F32 ? -3e-39 : -4e-320; break;
        default: break;
        }
        vec_set(v, i, dtype, x);
    }
}

/* Device copies of host buffers, and back, waited for. */
static void *to_device(const void *h, size_t bytes)
{
    void *d = NULL;
    OK(gpu_malloc(&d, bytes, err));
    if (d) {
        OK(gpu_copy_async(d, h, bytes, stream, err));
        OK(gpu_stream_wait(stream, WAIT_S, err));
    }
    return d;
}

static void from_device(void *h, const void *d, size_t bytes)
{
    OK(gpu_copy_async(h, d, bytes, stream, err));
    OK(gpu_stream_wait(stream, WAIT_S, err));
}

/* ---------------------------------------------------------------- gpu-1: no GPU needed */

static int test_no_device(void)
{
    int avail, v = -1;
    const char *saved = getenv("PSRING_NCCL_LIB");
    char *keep = saved ? strdup(saved) : NULL;

    T_CASE("gpu-1.1", "build info, and availability says why not");
    T_TRUE(strlen(gpu_build_info()) > 0);
    printf("     build: %s\n", gpu_build_info());
    avail = gpu_available(err);
    if (avail != 0) {
        T_EQ_I(avail, -ENODEV);
        T_TRUE(strstr(err, "no CUDA device") || strstr(err, "built without CUDA"));
        if (require_gpu())
            t_fail(__FILE__, __LINE__, "gpu_available", "PSR_REQUIRE_GPU=1 and %s", err);
    }

    T_CASE("gpu-1.2", "NCCL refuses more local ranks than GPUs, and says what to use");
    T_EQ_I(gpu_nccl_fit(0, 1, 1, err), 0);
    T_EQ_I(gpu_nccl_fit(3, 4, 8, err), 0);
    T_EQ_I(gpu_nccl_fit(0, 2, 1, err), ERR_USAGE);
    T_HAS(err, "2 local ranks");
    T_HAS(err, "1 GPU");
    T_HAS(err, "--transport tcp");
    T_EQ_I(gpu_nccl_fit(1, 4, 2, err), ERR_USAGE);
    T_HAS(err, "4 local ranks");
    T_EQ_I(gpu_nccl_fit(0, 1, 0, err), ERR_USAGE);
    T_HAS(err, "no GPU");
    T_EQ_I(gpu_nccl_fit(2, 2, 4, err), ERR_USAGE);
    T_EQ_I(gpu_nccl_fit(-1, 2, 4, err), ERR_USAGE);

    T_CASE("gpu-1.3", "a bad PSRING_NCCL_LIB is named in the error");
    setenv("PSRING_NCCL_LIB", "/nonexistent/psring/libnccl.so.2", 1);
    if (strstr(gpu_build_info(), "NCCL by dlopen")) {
        T_EQ_I(gpu_nccl_load(&v, err), -ELIBACC);
        T_HAS(err, "PSRING_NCCL_LIB=/nonexistent/psring/libnccl.so.2");
    } else {
        T_EQ_I(gpu_nccl_load(&v, err), -ENODEV);
        T_HAS(err, "built without");
    }
    if (keep)
        setenv("PSRING_NCCL_LIB", keep, 1);
    else
        unsetenv("PSRING_NCCL_LIB");
    free(keep);

    T_CASE("gpu-1.4", "calls without a device fail cleanly, never crash");
    if (avail != 0) {
        void *p = (void *)1;
        int rc = gpu_malloc(&p, 64, err);
        T_TRUE(rc < 0);
        T_TRUE(p == NULL);
        T_TRUE(strlen(err) > 0);
        T_TRUE(gpu_device_select(0, NULL, err) < 0);
    }
    T_END();
    return avail;
}

/* ---------------------------------------------------------------- gpu-2: CUDA */

static void test_device(void)
{
    char desc[256];
    int dev = -1, count = 0;

    T_CASE("gpu-2.1", "device selection wraps local ranks over the devices");
    OK(gpu_device_count(&count, err));
    OK(gpu_device_select(0, &dev, err));
    T_EQ_I(dev, 0);
    OK(gpu_device_select(count, &dev, err));
    T_EQ_I(dev, 0);
    T_EQ_I(gpu_device_select(-1, &dev, err), ERR_USAGE);
    OK(gpu_device_describe(desc, sizeof desc, err));
    printf("     device: %s (%d in all)\n", desc, count);
    OK(gpu_stream_create(&stream, err));
}

/* acc += x on the GPU against vec_add, for n elements at element offsets
 * (offa, offx) into larger buffers (alignment paths). */
/* Two random vectors of n elements (a, b), room for a result (got), and
 * device copies of a and b (da, db). */
struct two {
    char *a, *b, *got, *da, *db;
};

/* two_make: t filled as above; 0, or -1 (a failed malloc counted as a
 * failure of the case; a device copy that failed has said so). */
static int two_make(struct two *t, size_t n, int dtype, struct rng *r)
{
    const size_t bytes = n * dtype_size(dtype);

    memset(t, 0, sizeof *t);
    t->a = malloc(bytes);
    t->b = malloc(bytes);
    t->got = malloc(bytes);
    if (!t->a || !t->b || !t->got) {
        t_fail(__FILE__, __LINE__, "malloc", "%zu elements", n);
        return -1;
    }
    fill(t->a, n, dtype, r);
    fill(t->b, n, dtype, r);
    t->da = to_device(t->a, bytes);
    t->db = to_device(t->b, bytes);
    return t->da && t->db ? 0 : -1;
}

static void two_free(struct two *t)
{
    gpu_free(t->da);
    gpu_free(t->db);
    free(t->a);
    free(t->b);
    free(t->got);
}

static void check_add(size_t n, int dtype, size_t offa, size_t offx, struct rng *r)
{
    const size_t es = dtype_size(dtype), span = n + 4;
    struct two t;

    if (two_make(&t, span, dtype, r) == 0) {
        OK(gpu_vec_add(t.da + offa * es, t.db + offx * es, n, dtype, stream, err));
        from_device(t.got, t.da, span * es);
        vec_add(t.a + offa * es, t.b + offx * es, n, dtype);
        expect_same(t.got, t.a, span, dtype, "gpu_vec_add == vec_add");
    }
    two_free(&t);
}

static void test_vec_add(void)
{
    static const size_t sizes[] = { 1, 2, 3, 5, 17, 1000, 4097, (1u << 20) + 3 };
    struct rng r;

    rng_seed(&r, 11);
    T_CASE("gpu-2.2", "reduce-add f32 is bit-identical to vec_add (sizes 1..2^20+3, alignments)");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_add(sizes[i], DTYPE_F32, 0, 0, &r);
        check_add(sizes[i], DTYPE_F32, 1, 1, &r);     /* a head before the vectors */
        check_add(sizes[i], DTYPE_F32, 3, 1, &r);     /* misaligned to each other */
    }
    T_CASE("gpu-2.3", "reduce-add f64 is bit-identical to vec_add");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_add(sizes[i], DTYPE_F64, 0, 0, &r);
        check_add(sizes[i], DTYPE_F64, 1, 1, &r);
        check_add(sizes[i], DTYPE_F64, 1, 0, &r);
    }
    T_CASE("gpu-2.4", "reduce-add over more than 2^24 elements (f32 and f64)");
    check_add((1u << 24) + 5, DTYPE_F32, 0, 0, &r);
    check_add((1u << 24) + 1, DTYPE_F64, 1, 1, &r);
    T_CASE("gpu-2.5", "reduce-add refuses a bad dtype; n = 0 does nothing");
    T_EQ_I(gpu_vec_add(NULL, NULL, 4, 9, stream, err), ERR_USAGE);
    T_HAS(err, "dtype");
    OK(gpu_vec_add(NULL, NULL, 0, DTYPE_F32, stream, err));
}

static void check_sgd(size_t n, int dtype, double lr, uint64_t batch, struct rng *r)
{
    struct two t;

    if (two_make(&t, n, dtype, r) == 0) {
        OK(gpu_sgd_step(t.da, t.db, n, dtype, lr, batch, stream, err));
        from_device(t.got, t.da, n * dtype_size(dtype));
        T_EQ_I(sgd_step(t.a, t.b, n, dtype, lr, batch), 0);
        expect_same(t.got, t.a, n, dtype, "gpu_sgd_step == sgd_step");
    }
    two_free(&t);
}

/* check_optim: 3 updates of momentum or Adam on the GPU against
 * optim_apply on the host, from the same random weights, gradient and
 * (zero) state: the weights and the state, bit for bit. */
static void check_optim(size_t n, int dtype, int kind, struct rng *r)
{
    const size_t es = dtype_size(dtype);
    const struct optim_cfg oc = { kind, 0.01, 0.9, 0.9, 0.999, 1e-8 };
    char *w = malloc(n * es), *g = malloc(n * es), *st = calloc(2 * n, es), *got = malloc(2 * n * es);
    char *dw = NULL, *dg = NULL, *dst = NULL;

    if (!w || !g || !st || !got)
        goto out;
    fill(w, n, dtype, r);
    fill(g, n, dtype, r);
    dw = to_device(w, n * es);
    dg = to_device(g, n * es);
    dst = to_device(st, 2 * n * es);
    if (!dw || !dg || !dst)
        goto out;
    for (uint64_t t = 1; t <= 3; t++) {
        struct optim_coef k;
        optim_scalars(&oc, t, &k);
        OK(gpu_optim_update(&k, dtype, dw, dg, dst, kind == OPTIM_ADAM ? dst + n * es : NULL, n,
                            1000003, stream, err));
        optim_apply(&k, dtype, w, g, st, kind == OPTIM_ADAM ? st + n * es : NULL, n, 1000003);
    }
    from_device(got, dw, n * es);
    expect_same(got, w, n, dtype, "gpu_optim_update == optim_apply (weights)");
    from_device(got, dst, 2 * n * es);
    expect_same(got, st, 2 * n, dtype, "gpu_optim_update == optim_apply (state)");
out:
    gpu_free(dw);
    gpu_free(dg);
    gpu_free(dst);
    free(w);
    free(g);
    free(st);
    free(got);
}

static void test_optim(void)
{
    static const size_t sizes[] = { 1, 7, 65537 };
    struct rng r;

    rng_seed(&r, 18);
    T_CASE("gpu-2.18", "momentum and Adam: bit-identical to optim_apply (f32, f64; 3 updates)");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int kind = OPTIM_MOMENTUM; kind <= OPTIM_ADAM; kind++) {
            check_optim(sizes[i], DTYPE_F32, kind, &r);
            check_optim(sizes[i], DTYPE_F64, kind, &r);
        }
}

static void test_sgd(void)
{
    static const size_t sizes[] = { 1, 7, 1000, 65537 };
    struct rng r;
    double w = 3.0, g = 1.0, *dw, *dg;

    rng_seed(&r, 12);
    T_CASE("gpu-2.6", "SGD step is bit-identical to sgd_step (f32, f64; lr and B varied)");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_sgd(sizes[i], DTYPE_F32, 0.05, 4096, &r);
        check_sgd(sizes[i], DTYPE_F64, 0.05, 4096, &r);
        check_sgd(sizes[i], DTYPE_F32, 0.3, 3, &r);     /* B not a power of two */
        check_sgd(sizes[i], DTYPE_F64, 1.7e-3, 1000003, &r);
    }
    T_CASE("gpu-2.7", "SGD refuses batch 0 and a non-finite lr, weights untouched");
    dw = to_device(&w, sizeof w);
    dg = to_device(&g, sizeof g);
    T_EQ_I(gpu_sgd_step(dw, dg, 1, DTYPE_F64, 0.5, 0, stream, err), ERR_USAGE);
    T_EQ_I(gpu_sgd_step(dw, dg, 1, DTYPE_F64, NAN, 4, stream, err), ERR_USAGE);
    T_EQ_I(gpu_sgd_step(dw, dg, 1, DTYPE_F64, INFINITY, 4, stream, err), ERR_USAGE);
    T_EQ_I(gpu_sgd_step(dw, dg, 1, 9, 0.5, 4, stream, err), ERR_USAGE);
    w = 0.0;
    if (dw)
        from_device(&w, dw, sizeof w);
    T_EQ_D(w, 3.0);
    gpu_free(dw);
    gpu_free(dg);
}

/* A workload's gradient on both sides: the same ranges and steps added
 * into the same starting grad; grad and (linreg) loss must match bitwise. */
static void check_grad(const struct workload_cfg *cfg, const uint64_t (*ranges)[3], size_t nr,
                       struct rng *r)
{
    struct workload w;
    struct gpu_workload *gw = NULL;
    size_t n, es = dtype_size(cfg->dtype);
    char *wt = NULL, *g = NULL, *got = NULL, *dwt = NULL, *dg = NULL;
    double loss = 0.0, dloss_host = 0.0, *dloss = NULL;

    if (workload_create(&w, cfg) != 0) {
        t_fail(__FILE__, __LINE__, "workload_create", "kind %d", cfg->kind);
        return;
    }
    n = w.n;
    wt = malloc(n * es);
    g = malloc(n * es);
    got = malloc(n * es);
    if (!wt || !g || !got)
        goto out;
    fill(wt, n, cfg->dtype, r);
    for (size_t i = 0; i < n; i++)      /* moderate weights: residuals stay sane */
        vec_set(wt, i, cfg->dtype, vec_get(wt, i, cfg->dtype) * 1e-3);
    fill(g, n, cfg->dtype, r);          /* start from a non-zero grad: it ADDS */
    OK(gpu_workload_create(&gw, &w, err));
    dwt = to_device(wt, n * es);
    dg = to_device(g, n * es);
    dloss = to_device(&loss, sizeof loss);
    if (!gw || !dwt || !dg || !dloss)
        goto out;
    for (size_t k = 0; k < nr; k++) {
        OK(gpu_workload_grad_add(gw, dwt, ranges[k][0], ranges[k][1], ranges[k][2], dg, dloss,
                                 stream, err));
        workload_grad_add(&w, wt, ranges[k][0], ranges[k][1], ranges[k][2], g, &loss);
    }
    from_device(got, dg, n * es);
    from_device(&dloss_host, dloss, sizeof dloss_host);
    expect_same(got, g, n, cfg->dtype, "gpu_workload_grad_add == workload_grad_add");
    T_EQ_D(dloss_host, loss);
out:
    gpu_workload_destroy(gw);
    gpu_free(dwt);
    gpu_free(dg);
    gpu_free(dloss);
    free(wt);
    free(g);
    free(got);
    workload_destroy(&w);
}

static void test_workload(void)
{
    /* { step, lo, hi } */
    static const uint64_t synth_ranges[][3] = {
        { 0, 0, 1024 }, { 1, 0, 300 }, { 1, 300, 1024 }, { 7, 5, 5 }, { 123456789, 17, 999 },
    };
    static const uint64_t linreg_ranges[][3] = {
        { 0, 0, 4096 }, { 1, 0, 1000 }, { 1, 1000, 4096 }, { 2, 7, 7 }, { 5, 100, 103 },
    };
    static const uint64_t wrap_ranges[][3] = {   /* rows 100, batch 64: rows wrap */
        { 3, 0, 64 }, { 4, 10, 50 }, { 5, 63, 64 },
    };
    static const uint64_t sizes[] = { 1, 7, 1000, 100003 };
    struct workload_cfg c;
    struct rng r;

    rng_seed(&r, 13);
    T_CASE("gpu-2.8", "synthetic gradient is bit-identical to the CPU's (f32, f64, any range and step)");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int dt = DTYPE_F32; dt <= DTYPE_F64; dt++) {
            c = (struct workload_cfg){ .kind = WORKLOAD_SYNTHETIC, .dtype = dt, .seed = 42 + i,
                                       .params = sizes[i], .batch = 1024 };
            check_grad(&c, synth_ranges, 5, &r);
        }
    }
    T_CASE("gpu-2.9", "synthetic gradient over more than 2^24 elements");
    c = (struct workload_cfg){ .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F32, .seed = 9,
                               .params = (1u << 24) + 3, .batch = 1024 };
    check_grad(&c, synth_ranges, 2, &r);

    T_CASE("gpu-2.10", "linreg gradient and loss are bit-identical to the CPU's (seeds' 4096 x 12)");
    for (int dt = DTYPE_F32; dt <= DTYPE_F64; dt++) {
        c = (struct workload_cfg){ .kind = WORKLOAD_LINREG, .dtype = dt, .seed = 7 };
        check_grad(&c, linreg_ranges, 5, &r);
    }
    T_CASE("gpu-2.11", "linreg with rows wrapping around the dataset, odd dim");
    for (int dt = DTYPE_F32; dt <= DTYPE_F64; dt++) {
        c = (struct workload_cfg){ .kind = WORKLOAD_LINREG, .dtype = dt, .seed = 3,
                                   .rows = 100, .dim = 33, .batch = 64 };
        check_grad(&c, wrap_ranges, 3, &r);
    }
    T_CASE("gpu-2.12", "a range outside the batch is refused");
    {
        struct workload w;
        struct gpu_workload *gw = NULL;
        c = (struct workload_cfg){ .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F32, .seed = 1,
                                   .params = 10, .batch = 16 };
        T_EQ_I(workload_create(&w, &c), 0);
        OK(gpu_workload_create(&gw, &w, err));
        if (gw) {
            T_EQ_I(gpu_workload_grad_add(gw, NULL, 0, 0, 17, NULL, NULL, stream, err), ERR_USAGE);
            T_HAS(err, "not within the batch of 16");
            T_EQ_I(gpu_workload_grad_add(gw, NULL, 0, 5, 4, NULL, NULL, stream, err), ERR_USAGE);
        }
        gpu_workload_destroy(gw);
        workload_destroy(&w);
    }
}

static void test_waits(void)
{
    volatile int *flag = NULL;
    struct gpu_event *ev = NULL, *t0 = NULL, *t1 = NULL;
    double sec = -1.0;
    int rc;

    T_CASE("gpu-2.13", "a stream wait on a stuck kernel times out, then completes when released");
    OK(gpu_host_alloc((void **)&flag, sizeof *flag, err));
    OK(gpu_event_create(&ev, 0, err));
    if (!flag || !ev)
        goto out;
    *flag = 0;
    OK(gpu_spin_async(flag, 30.0, stream, err));
    OK(gpu_event_record(ev, stream, err));
    rc = gpu_stream_wait(stream, 0.2, err);
    T_EQ_I(rc, ERR_TIMEOUT);
    T_HAS(err, "timeout");
    rc = gpu_event_wait(ev, 0.1, err);
    T_EQ_I(rc, ERR_TIMEOUT);
    T_EQ_I(gpu_stream_wait(stream, 0, err), ERR_TIMEOUT);     /* 0: look once */
    *flag = 1;
    OK(gpu_stream_wait(stream, WAIT_S, err));
    OK(gpu_event_wait(ev, WAIT_S, err));

    T_CASE("gpu-2.14", "pinned copies, zeroing, cross-stream events, elapsed time");
    {
        struct gpu_stream *s2 = NULL;
        double *h = NULL, *back = NULL, *d = NULL;
        OK(gpu_stream_create(&s2, err));
        OK(gpu_host_alloc((void **)&h, 1000 * sizeof *h, err));
        OK(gpu_host_alloc((void **)&back, 1000 * sizeof *back, err));
        OK(gpu_malloc((void **)&d, 1000 * sizeof *d, err));
        OK(gpu_event_create(&t0, 1, err));
        OK(gpu_event_create(&t1, 1, err));
        if (s2 && h && back && d && t0 && t1) {
            for (int i = 0; i < 1000; i++) {
                h[i] = i + 0.5;
                back[i] = -1.0;
            }
            OK(gpu_event_record(t0, stream, err));
            OK(gpu_copy_async(d, h, 1000 * sizeof *h, stream, err));
            OK(gpu_zero_async(d, 10 * sizeof *d, stream, err));
            OK(gpu_event_record(t1, stream, err));
            OK(gpu_stream_wait_event(s2, t1, err));       /* s2 copies back after */
            OK(gpu_copy_async(back, d, 1000 * sizeof *back, s2, err));
            OK(gpu_stream_wait(s2, WAIT_S, err));
            T_EQ_D(back[0], 0.0);
            T_EQ_D(back[9], 0.0);
            T_EQ_D(back[10], 10.5);
            T_EQ_D(back[999], 999.5);
            OK(gpu_event_elapsed(t0, t1, &sec, err));
            T_TRUE(sec >= 0.0);
        }
        gpu_stream_destroy(s2);
        gpu_host_free(h);
        gpu_host_free(back);
        gpu_free(d);
    }
out:
    gpu_event_destroy(ev);
    gpu_event_destroy(t0);
    gpu_event_destroy(t1);
    gpu_host_free((void *)flag);
}

/* ---------------------------------------------------------------- gpu-3: NCCL */

/* SIGALRM during gpu-3.4: NCCL hung despite the timeout. */
static void on_hang(int sig)
{
    static const char msg[] = "FAIL gpu-3.4 hung: NCCL set-up did not return within 60 s\n";
    (void)sig;
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

static void check_nccl(struct gpu_nccl *c, size_t n, int dtype, int in_place, struct rng *r)
{
    const size_t es = dtype_size(dtype);
    char *x = malloc(n * es), *got = malloc(n * es), *dx = NULL, *dy = NULL;

    if (!x || !got)
        goto out;
    fill(x, n, dtype, r);
    dx = to_device(x, n * es);
    dy = in_place ? dx : to_device(x, n * es);
    if (!dx || !dy)
        goto out;
    if (!in_place)
        OK(gpu_zero_async(dy, n * es, stream, err));
    OK(gpu_nccl_all_reduce(c, dx, dy, n, dtype, stream, err));
    from_device(got, dy, n * es);
    expect_same(got, x, n, dtype, "all-reduce of one rank == its input");
out:
    gpu_free(dx);
    if (!in_place)
        gpu_free(dy);
    free(x);
    free(got);
}

static void test_nccl(void)
{
    unsigned char id[GPU_NCCL_ID_BYTES];
    struct gpu_nccl *c = NULL;
    struct rng r;
    int version = 0, rc;

    rng_seed(&r, 14);
    rc = gpu_nccl_load(&version, err);
    if (rc != 0 && !require_gpu()) {
        t_skip("gpu-3", "NCCL cases", err);
        return;
    }
    T_CASE("gpu-3.1", "NCCL loads (dlopen) and is new enough");
    OK(rc);
    printf("     NCCL %d\n", version);
    T_TRUE(version >= 21400);

    T_CASE("gpu-3.2", "world 1: non-blocking communicator, all-reduce sums (f32, f64, in place)");
    OK(gpu_nccl_unique_id(id, err));
    OK(gpu_nccl_create(&c, id, 0, 1, 30.0, err));
    if (c) {
        check_nccl(c, 1, DTYPE_F32, 0, &r);
        check_nccl(c, 1001, DTYPE_F64, 0, &r);
        check_nccl(c, (1u << 20) + 7, DTYPE_F32, 1, &r);
        check_nccl(c, (1u << 18) + 1, DTYPE_F64, 1, &r);
    }
    gpu_nccl_destroy(c);            /* the orderly way: finalize, destroy */
    c = NULL;

    T_CASE("gpu-3.3", "bad arguments are refused; an aborted communicator fails at once");
    {
        struct gpu_nccl *bad = NULL;
        T_EQ_I(gpu_nccl_create(&bad, id, 1, 1, 30.0, err), ERR_USAGE);
        T_EQ_I(gpu_nccl_create(&bad, id, 0, 1, 0.0, err), ERR_USAGE);
        T_TRUE(bad == NULL);
    }
    OK(gpu_nccl_unique_id(id, err));
    OK(gpu_nccl_create(&c, id, 0, 1, 30.0, err));
    if (c) {
        T_EQ_I(gpu_nccl_all_reduce(c, NULL, NULL, 4, 9, stream, err), ERR_USAGE);
        gpu_nccl_abort(c);
        T_EQ_I(gpu_nccl_all_reduce(c, NULL, NULL, 4, DTYPE_F32, stream, err), -EIO);
        T_HAS(err, "aborted");
    }
    gpu_nccl_destroy(c);

    /* The reliability promise itself: rank 0 of 2 whose peer never comes
     * must not hang in NCCL's set-up. An alarm turns a hang into a FAIL
     * line instead of the watchdog's kill. */
    T_CASE("gpu-3.4", "a peer that never joins: set-up times out and is aborted, no hang");
    signal(SIGALRM, on_hang);
    alarm(60);
    {
        struct gpu_nccl *lonely = NULL;
        double t0 = clock_now();
        OK(gpu_nccl_unique_id(id, err));
        rc = gpu_nccl_create(&lonely, id, 0, 2, 2.0, err);
        T_EQ_I(rc, ERR_TIMEOUT);
        T_HAS(err, "nccl rank 0 of 2");
        T_HAS(err, "aborted");
        T_TRUE(lonely == NULL);
        printf("     returned after %.1f s: %s\n", clock_now() - t0, err);
        gpu_nccl_destroy(lonely);
    }
    alarm(0);
    T_END();
}

int main(void)
{
    if (test_no_device() != 0) {
        if (!require_gpu()) {
            T_END();
            (void)gpu_available(err);
            t_skip("gpu-2", "CUDA and NCCL cases", err);
        }
        return t_done();
    }
    test_device();
    if (stream) {
        test_vec_add();
        test_sgd();
        test_optim();
        test_workload();
        test_waits();
        test_nccl();
    }
    gpu_stream_destroy(stream);
    return t_done();
}
