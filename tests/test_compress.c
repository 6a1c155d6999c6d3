/* test_compress.c -- the compressors (common/base/compress.c) and the
 * all-reduces on a compressed wire (common/coll/coll_cmp.c).
 *
 * Ids: compress-1.x the conversions (edge cases: zeros, the largest
 * finite, overflow to Inf, NaN, subnormals, ties to even; every fp16 and
 * bf16 pattern round-trips; fp16 against the compiler's _Float16 where it
 * has one); compress-2.x K ranks as threads on socketpairs (tests/
 * fake_peer.h): the ring and rd with fp16 and bf16, K = 2..5, odd n, f32
 * and f64, bit for bit equal to the same order simulated here in one
 * process (coll_cmp.h, THE ORDER), every rank identical; the payload
 * bytes, counted by the links, half the uncompressed run's (f32); a sum
 * that overflows fp16 fails as ERR_NONFINITE; compress-3.x the record's
 * compress and wire_bytes, the CSV's compress column, model_s on the
 * wire's bytes, the HELLO's compress field and the rendezvous' check.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/compress.h"
#include "check.h"
#include "coll/coll_cmp.h"
#include "fake_peer.h"
#include "measure/metrics.h"
#include "measure/model.h"
#include "coll/rendezvous.h"
#include "wire/proto.h"

/* ------------------------------------------------------- conversions */

static uint32_t fbits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static void conversions(void)
{
    T_CASE("compress-1.1", "fp16: exact values, the largest finite, overflow, NaN, signs");
    T_EQ_U(compress_f32_to_f16(0.0f), 0x0000);
    T_EQ_U(compress_f32_to_f16(-0.0f), 0x8000);
    T_EQ_U(compress_f32_to_f16(1.0f), 0x3c00);
    T_EQ_U(compress_f32_to_f16(-2.0f), 0xc000);
    T_EQ_U(compress_f32_to_f16(65504.0f), 0x7bff);
    T_EQ_U(compress_f32_to_f16(65519.0f), 0x7bff);      /* below halfway: stays */
    T_EQ_U(compress_f32_to_f16(65520.0f), 0x7c00);      /* halfway, odd: up, Inf */
    T_EQ_U(compress_f32_to_f16(1e9f), 0x7c00);
    T_EQ_U(compress_f32_to_f16(-1e9f), 0xfc00);
    T_EQ_U(compress_f32_to_f16(INFINITY), 0x7c00);
    T_EQ_U(compress_f32_to_f16(-INFINITY), 0xfc00);
    T_TRUE((compress_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (compress_f32_to_f16(NAN) & 0x3ff));
    T_TRUE(isnan(compress_f16_to_f32(compress_f32_to_f16(NAN))));
    T_TRUE(isinf(compress_f16_to_f32(0x7c00)) && compress_f16_to_f32(0xfc00) < 0);
    T_EQ_D(compress_f16_to_f32(0x7bff), 65504.0);

    T_CASE("compress-1.2", "fp16: ties to even in normals and subnormals, underflow");
    T_EQ_U(compress_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);          /* tie, even: down */
    T_EQ_U(compress_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);      /* tie, odd: up */
    T_EQ_U(compress_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); /* above tie */
    T_EQ_U(compress_f32_to_f16(0x1p-24f), 0x0001);                 /* least subnormal */
    T_EQ_U(compress_f32_to_f16(0x1p-25f), 0x0000);                 /* tie with 0: even */
    T_EQ_U(compress_f32_to_f16(0x1.8p-25f), 0x0001);               /* above the tie */
    T_EQ_U(compress_f32_to_f16(3 * 0x1p-25f), 0x0002);             /* 1.5 ulp: tie, to 2 */
    T_EQ_U(compress_f32_to_f16(-0x1p-30f), 0x8000);
    T_EQ_U(compress_f32_to_f16(0x1p-14f), 0x0400);                 /* least normal */
    T_EQ_U(compress_f32_to_f16(0x1p-14f - 0x1p-25f), 0x0400);      /* rounds up into it */
    T_EQ_D(compress_f16_to_f32(0x0001), 0x1p-24);
    T_EQ_D(compress_f16_to_f32(0x83ff), -1023 * 0x1p-24);

    T_CASE("compress-1.3", "fp16 and bf16: every pattern round-trips (NaN stays NaN)");
    size_t bad16 = 0, badb = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = compress_f16_to_f32((uint16_t)h), g = compress_bf16_to_f32((uint16_t)h);
        if (isnan(f) ? !isnan(compress_f16_to_f32(compress_f32_to_f16(f)))
                     : compress_f32_to_f16(f) != h)
            bad16++;
        if (isnan(g) ? !isnan(compress_bf16_to_f32(compress_f32_to_bf16(g)))
                     : compress_f32_to_bf16(g) != h)
            badb++;
    }
    T_EQ_U(bad16, 0);
    T_EQ_U(badb, 0);

    T_CASE("compress-1.4", "bf16: ties to even, overflow to Inf, NaN quiet, subnormals kept");
    T_EQ_U(compress_f32_to_bf16(1.0f), 0x3f80);
    T_EQ_U(compress_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);          /* tie, even */
    T_EQ_U(compress_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);      /* tie, odd: up */
    T_EQ_U(compress_f32_to_bf16(FLT_MAX), 0x7f80);                 /* rounds past: Inf */
    T_EQ_U(compress_f32_to_bf16(-INFINITY), 0xff80);
    T_TRUE(isnan(compress_bf16_to_f32(compress_f32_to_bf16(NAN))));
    T_EQ_U(compress_f32_to_bf16(0x1p-130f), 0x0008);               /* subnormal */
    T_EQ_U(fbits(compress_bf16_to_f32(0x0008)), fbits(0x1p-130f));
    T_EQ_U(compress_f32_to_bf16(-0.0f), 0x8000);

#ifdef __FLT16_MAX__
    T_CASE("compress-1.5", "fp16: 2^20 f32 patterns against the compiler's _Float16");
    size_t diff = 0;
    for (uint32_t i = 0; i < (1u << 20); i++) {
        uint32_t x = i * 4099u + (i << 22);     /* every exponent, spread mantissas */
        float f;
        memcpy(&f, &x, sizeof f);
        _Float16 h = (_Float16)f;
        uint16_t want;
        memcpy(&want, &h, sizeof want);
        if (!isnan(f) && compress_f32_to_f16(f) != want && diff++ == 0)
            printf("     %a: 0x%04x, want 0x%04x\n", (double)f, compress_f32_to_f16(f), want);
    }
    T_EQ_U(diff, 0);
#endif

    T_CASE("compress-1.6", "the table: names, parse, wire sizes, linear; an unknown name");
    int kind = -1;
    T_EQ_I(compress_parse("fp16", &kind), 0);
    T_EQ_I(kind, COMPRESS_FP16);
    T_EQ_I(compress_parse("bf16", &kind), 0);
    T_EQ_I(kind, COMPRESS_BF16);
    T_EQ_I(compress_parse("fp8", &kind), ERR_USAGE);
    T_STR(compress_name(COMPRESS_NONE), "none");
    T_EQ_U(compress_wire_size(compress_get(COMPRESS_NONE), DTYPE_F64), 8);
    T_EQ_U(compress_wire_size(compress_get(COMPRESS_BF16), DTYPE_F64), 2);
    T_TRUE(compress_get(COMPRESS_FP16)->linear && compress_get(99) == NULL);

    T_CASE("compress-1.7", "compress_cost: each operation's positive finite cost per element for fp16, "
           "bf16, topk, sign (no plain decode for the framed ones); all 0 for none and powersgd (psgd_cost's)");
    const char *costed[] = { "fp16", "bf16", "topk:0.01", "sign" };
    struct compress_costs cc;
    for (size_t i = 0; i < sizeof costed / sizeof *costed; i++) {
        int framed = i >= 2;
        T_EQ_I(compress_parse(costed[i], &kind), 0);
        T_EQ_I(compress_cost(kind, 4096, DTYPE_F32, &cc), 0);
        /* seconds per element: nanoseconds, never a millisecond */
        T_TRUE(cc.enc > 0 && cc.enc < 1e-3 && cc.dec_add > 0 && cc.dec_add < 1e-3);
        T_TRUE(cc.check > 0 && cc.check < 1e-3);
        T_TRUE(framed ? cc.dec == 0 : cc.dec > 0 && cc.dec < 1e-3);
    }
    T_EQ_I(compress_cost(COMPRESS_NONE, 4096, DTYPE_F32, &cc), 0);
    T_TRUE(cc.enc == 0 && cc.dec_add == 0 && cc.dec == 0 && cc.check == 0);
    T_EQ_I(compress_parse("powersgd:2", &kind), 0);
    T_EQ_I(compress_cost(kind, 4096, DTYPE_F32, &cc), 0);
    T_TRUE(cc.enc == 0 && cc.dec_add == 0 && cc.dec == 0 && cc.check == 0);
}

/* ------------------------------------------------ the all-reduces */

enum algo { ALGO_RING, ALGO_RD };
static const struct compressor *g_comp;     /* the case's compressor */
static double g_scale = 1.0;                /* the values' scale (overflow: large) */
static size_t g_exact;                      /* the exact tail's elements (coll_cmp.h) */
static int g_raw;                           /* rt(): the tail's identity, not d(e(x)) */

static double value(int r, size_t i)
{
    return random_value(r, i, 0x30) * g_scale;
}

static void fill(struct rank_job *j, uint64_t round)
{
    (void)round;
    for (size_t i = 0; i < j->n; i++)
        vec_set(j->buf, i, j->dtype, value(j->rank, i));
}

static void *rank_main(void *arg)
{
    struct rank_job *j = arg;
    struct xport_plan plan;
    struct xport *t = NULL;
    struct ring ring;
    struct rd rd;
    void *wire = malloc(j->n * 8 + 1);
    int rc;

    if (j->op == ALGO_RING)
        ring_plan(j->rank, j->world, &plan);
    else
        rd_plan(j->rank, j->world, &plan);
    rc = job_connect(&t, &plan, j->rank, j->world, j->n, j->dtype, -1, NULL, j->fds, &j->link,
                     10.0, j->err);
    if (rc == 0 && j->op == ALGO_RING && (rc = ring_init(&ring, t, j->rank, j->world, j->piece)) == 0) {
        rc = g_comp ? ring_allreduce_cmp(&ring, j->buf, j->n, g_exact, j->dtype, g_comp, wire, j->err)
                    : ring_allreduce(&ring, j->buf, j->n, j->dtype, j->err);
        ring_destroy(&ring);
    }
    if (rc == 0 && j->op == ALGO_RD && (rc = rd_init(&rd, t, j->rank, j->world, j->piece)) == 0) {
        rc = g_comp ? rd_allreduce_cmp(&rd, j->buf, j->n, g_exact, j->dtype, g_comp, wire, j->err)
                    : rd_allreduce(&rd, j->buf, j->n, j->dtype, j->err);
        rd_destroy(&rd);
    }
    if (rc != 0 && t)
        xport_abort(t, j->err);
    xport_close(t);
    free(wire);
    j->rc = rc;
    return NULL;
}

static int index_of(const int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (a[i] == v)
            return i;
    return -1;
}

/* run: k ranks of algo on socketpairs: the ring's right-then-left, rd's
 * one pair per partner (test_ring.c's and test_rd.c's wiring). */
static int run(struct rank_job *jobs, int k, size_t n, int dtype, enum algo algo, size_t piece)
{
    int part[MAXK][RD_PARTNERS_MAX], np[MAXK], sp[MAXK][2];

    if (jobs_init(jobs, k, n, dtype, algo, FILL_RANDOM, piece, 1, NULL, NULL, fill) != 0)
        return -ENOMEM;
    if (algo == ALGO_RING) {
        for (int r = 0; r < k; r++)
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[r]) != 0)
                return -errno;
        for (int r = 0; r < k; r++) {
            jobs[r].fds[0] = sp[r][0];
            jobs[r].fds[1] = sp[(r + k - 1) % k][1];
        }
    } else {
        for (int r = 0; r < k; r++)
            np[r] = rd_partners(r, k, part[r]);
        for (int r = 0; r < k; r++)
            for (int i = 0; i < np[r]; i++) {
                int q = part[r][i], back = index_of(part[q], np[q], r), p2[2];
                if (q < r)
                    continue;
                if (back < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p2) != 0)
                    return -1;
                jobs[r].fds[i] = p2[0];
                jobs[q].fds[back] = p2[1];
            }
    }
    threads_run(rank_main, jobs, sizeof jobs[0], k);
    return 0;
}

/* The reference, one element at a time in one process (coll_cmp.h, THE
 * ORDER): e() and d() through the compressor's own table on one element,
 * the adds in the dtype (a double holds an f32 sum exactly when it is
 * rounded back to float after every add). */
static double rt(double x, int dtype)            /* d(e(x)) */
{
    unsigned char w[8];
    double out;
    float outf;

    if (g_raw)
        return dtype == DTYPE_F32 ? (double)(float)x : x;
    if (dtype == DTYPE_F32) {
        float xf = (float)x;
        g_comp->encode(w, &xf, 1, dtype, NULL);
        g_comp->decode(&outf, w, 1, dtype);
        return outf;
    }
    g_comp->encode(w, &x, 1, dtype, NULL);
    g_comp->decode(&out, w, 1, dtype);
    return out;
}

static double add(double a, double b, int dtype)
{
    return dtype == DTYPE_F32 ? (double)((float)a + (float)b) : a + b;
}

static double own(int r, size_t i, int dtype)
{
    return dtype == DTYPE_F32 ? (double)(float)value(r, i) : value(r, i);
}

static double ref_ring(int k, size_t n, size_t i, int dtype)
{
    size_t lo, hi;
    int c = 0;
    double a;

    for (int q = 0; q < k; q++) {
        ring_chunk(n, k, q, &lo, &hi);
        if (i >= lo && i < hi)
            c = q;
    }
    a = own((c + 1) % k, i, dtype);                     /* rank c+1 starts */
    for (int s = 2; s <= k; s++)
        a = add(rt(a, dtype), own((c + s) % k, i, dtype), dtype);
    return rt(a, dtype);
}

static double ref_rd(int k, size_t i, int dtype)
{
    double w[MAXK];
    int p = 1;

    while (p * 2 <= k)
        p *= 2;
    for (int r = 0; r < k; r++)
        w[r] = rt(own(r, i, dtype), dtype);
    for (int r = 0; r < k - p; r++)
        w[r] = rt(add(w[r], w[r + p], dtype), dtype);
    for (int s = 1; s < p; s *= 2)
        for (int r = 0; r < p; r++)
            if ((r & s) == 0) {
                w[r] = rt(add(w[r], w[r ^ s], dtype), dtype);
                w[r ^ s] = w[r];
            }
    return w[0];
}

/* exact: every rank ok, identical, equal to the reference; 0 wrong. */
static size_t exact(struct rank_job *jobs, int k, size_t n, int dtype, enum algo algo)
{
    size_t wrong = 0;

    for (int r = 0; r < k; r++)
        if (jobs[r].rc != 0) {
            printf("     rank %d: %s\n", r, jobs[r].err);
            return 1;
        }
    for (size_t i = 0; i < n; i++) {
        double want, got = vec_get(jobs[0].buf, i, dtype);
        g_raw = i >= n - g_exact;                   /* the exact tail: no roundings */
        want = algo == ALGO_RING ? ref_ring(k, n, i, dtype) : ref_rd(k, i, dtype);
        g_raw = 0;
        if (memcmp(&got, &want, sizeof got) != 0 && wrong++ == 0)
            printf("     %s %s K=%d n=%zu %s: element %zu = %a, want %a\n", g_comp->name,
                   algo == ALGO_RING ? "ring" : "rd", k, n, dtype_name(dtype), i, got, want);
    }
    for (int r = 1; r < k; r++)
        if (memcmp(jobs[r].buf, jobs[0].buf, n * dtype_size(dtype)) != 0 && wrong++ == 0)
            printf("     K=%d: rank %d differs from rank 0\n", k, r);
    return wrong;
}

static void allreduces(void)
{
    static const int dtypes[2] = { DTYPE_F32, DTYPE_F64 };
    static const int kinds[2] = { COMPRESS_FP16, COMPRESS_BF16 };
    static const char *ids[2][2] = { { "compress-2.1", "compress-2.2" },
                                     { "compress-2.3", "compress-2.4" } };
    static const char *names[2][2] = {
        { "ring fp16: K = 2..5, odd n, f32 and f64, bit for bit the same-order reference",
          "ring bf16: K = 2..5, odd n, f32 and f64, bit for bit the same-order reference" },
        { "rd fp16: K = 2..5, odd n, f32 and f64, bit for bit the same-order reference",
          "rd bf16: K = 2..5, odd n, f32 and f64, bit for bit the same-order reference" } };
    struct rank_job jobs[MAXK];

    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 2; c++) {
            g_comp = compress_get(kinds[c]);
            T_CASE(ids[a][c], names[a][c]);
            for (int k = 2; k <= 5; k++)
                for (int d = 0; d < 2; d++) {
                    size_t n = (size_t)(1001 + 2 * k);     /* odd; pieces of 64 B: many */
                    T_EQ_I(run(jobs, k, n, dtypes[d], a, 64), 0);
                    T_EQ_U(exact(jobs, k, n, dtypes[d], a), 0);
                    free_jobs(jobs, k);
                }
        }

    T_CASE("compress-2.5", "payload bytes, counted by the links: fp16 half of f32 (ring, rd)");
    for (int a = 0; a < 2; a++) {
        uint64_t out[2][MAXK];
        int k = 3;
        size_t n = 3001;
        for (int c = 0; c < 2; c++) {
            g_comp = c == 0 ? NULL : compress_get(COMPRESS_FP16);
            T_EQ_I(run(jobs, k, n, DTYPE_F32, a, 0), 0);
            for (int r = 0; r < k; r++) {
                T_EQ_I(jobs[r].rc, 0);
                out[c][r] = jobs[r].link.bytes_out;
            }
            free_jobs(jobs, k);
        }
        for (int r = 0; r < k; r++) {
            /* the same frames, so the same headers: f32 - fp16 = the fp16 payload */
            uint64_t payload16 = out[0][r] - out[1][r], hdr = out[1][r] - payload16;
            T_TRUE(payload16 > 0 && out[1][r] > payload16);
            T_EQ_U(out[0][r] - hdr, 2 * (out[1][r] - hdr));
            if (a == ALGO_RING) {        /* each rank sends every chunk but one, twice */
                size_t lo, hi, want = 0;
                for (int q = 0; q < k; q++) {
                    ring_chunk(n, k, q, &lo, &hi);
                    want += (q != r ? hi - lo : 0) + (q != (r + 1) % k ? hi - lo : 0);
                }
                T_EQ_U(payload16, want * 2);
            }
        }
    }

    T_CASE("compress-2.7", "an exact tail of 3 rides raw in fp16's frames: the tail the exact "
           "sum in the algorithm's order, the rest the same-order reference (ring, rd; K = 2..5, "
           "pieces of 64 B)");
    g_comp = compress_get(COMPRESS_FP16);
    g_exact = 3;
    for (int a = 0; a < 2; a++)
        for (int k = 2; k <= 5; k++)
            for (int d = 0; d < 2; d++) {
                size_t n = (size_t)(301 + 2 * k);
                T_EQ_I(run(jobs, k, n, dtypes[d], a, 64), 0);
                T_EQ_U(exact(jobs, k, n, dtypes[d], a), 0);
                free_jobs(jobs, k);
            }
    g_exact = 0;

    T_CASE("compress-2.6", "a sum past fp16's 65504 fails as ERR_NONFINITE (ring, rd)");
    g_comp = compress_get(COMPRESS_FP16);
    g_scale = 300.0;             /* |v| up to ~1e5: encodes and sums overflow */
    for (int a = 0; a < 2; a++) {
        int nonfinite = 0;
        T_EQ_I(run(jobs, 2, 101, DTYPE_F32, a, 0), 0);
        for (int r = 0; r < 2; r++)
            nonfinite += jobs[r].rc == ERR_NONFINITE;
        T_TRUE(nonfinite >= 1);
        for (int r = 0; r < 2; r++)
            if (jobs[r].rc == ERR_NONFINITE)
                T_HAS(jobs[r].err, "element");
        free_jobs(jobs, 2);
    }
    g_scale = 1.0;
}

/* ------------------------------------------------ the record and CSV */

static void records(void)
{
    struct metrics_record r;
    struct metrics_row row;
    char err[ERR_LEN], path[] = "/tmp/test_compress.XXXXXX", line[1024];
    int fd = mkstemp(path);
    FILE *f;

    T_CASE("compress-3.1", "the record carries compress and wire_bytes; the row's last column "
           "is compress and model_s models the wire's bytes (the PS: pushes only)");
    T_TRUE(fd >= 0);
    close(fd);
    T_EQ_I(metrics_record_init(&r, 4), 0);
    snprintf(r.system, sizeof r.system, "ring");
    snprintf(r.role, sizeof r.role, "rank");
    snprintf(r.algo, sizeof r.algo, "ring");
    snprintf(r.transport, sizeof r.transport, "tcp");
    snprintf(r.compress, sizeof r.compress, "fp16");
    r.world = 3;
    r.bytes = 4000000;
    r.wire_bytes = 2000000;
    r.link_bw = 1e8;
    for (uint64_t s = 0; s < 3; s++)
        T_EQ_I(metrics_record_add(&r, &(struct metrics_step){ s, 0.1, NAN, NAN, 1000, 1000,
                                                               NAN, NAN }), 0);
    T_EQ_I(metrics_record_write(&r, path, err), 0);
    metrics_record_free(&r);
    T_EQ_I(metrics_record_read(&r, path, err), 0);
    T_STR(r.compress, "fp16");
    T_EQ_U(r.wire_bytes, 2000000);
    T_EQ_I(metrics_merge(&r, 1, &row, err), 0);
    T_NEAR(row.model_s, model_ring(3, 2000000, 1e8, 0), 1e-12);
    f = tmpfile();
    metrics_row_write(f, &row);
    rewind(f);
    T_TRUE(fgets(line, sizeof line, f) != NULL);
    T_TRUE(strlen(line) > 6 && strcmp(line + strlen(line) - 6, ",fp16\n") == 0);
    fclose(f);
    /* A PS worker's record: its pushes at wire_bytes, the weights in full. */
    snprintf(r.system, sizeof r.system, "ps");
    snprintf(r.role, sizeof r.role, "worker");
    r.algo[0] = '\0';
    T_EQ_I(metrics_merge(&r, 1, &row, err), 0);
    T_NEAR(row.model_s, model_ps_sched(3, 1, 2000000, 4000000, 1e8, 0), 1e-12);   /* its egress's schedule */
    T_TRUE(row.model_s < model_query(MODEL_PS, MODEL_TIME, 3, 1, 4000000, 1e8, 0));
    metrics_record_free(&r);
    unlink(path);
}

/* ------------------------------------------------ the HELLO */

static void hello(void)
{
    struct proto_hello h = { .n = 10, .dtype = DTYPE_F32, .workload = 2, .seed = 7,
                             .batch = 64, .compress = COMPRESS_BF16 }, o, h2;
    uint8_t buf[PROTO_HELLO_SIZE];
    char why[ERR_LEN];

    T_CASE("compress-3.2", "HELLO carries compress at offset 24; an unknown one is refused; "
           "ranks that disagree are a mismatch naming --compress");
    proto_hello_encode(&h, buf);
    T_EQ_U(buf[24], COMPRESS_BF16);
    T_EQ_I(proto_hello_decode(buf, sizeof buf, &o), 0);
    T_EQ_U(o.compress, COMPRESS_BF16);
    buf[24] = 3;
    T_EQ_I(proto_hello_decode(buf, sizeof buf, &o), ERR_PROTO_FIELD);
    h2 = h;
    h2.compress = COMPRESS_NONE;
    T_EQ_I(rdv_hello_diff(&h, &h2, why), ERR_MISMATCH);
    T_HAS(why, "compress bf16 vs none (--compress)");
}

int main(void)
{
    peers_init(42000);
    conversions();
    allreduces();
    records();
    hello();
    return t_done();
}
