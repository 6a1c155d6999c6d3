/* test_compress_sparse.c -- the not-linear compressors (top-k and sign,
 * common/base/compress_sparse.c) and --compress's settings.
 *
 * Ids: compress-sparse-1.x the settings (parse, label, the HELLO's
 * check, refusals); 2.x top-k (the k largest |g|, ties to the lower index,
 * the frame bytes, error feedback carrying the residual, noef keeping
 * none); 3.x sign (the scale is mean |p|, the bits, error feedback); 4.x
 * hostile frames refused whole with one line (count too large, index out
 * of range or out of order, a short frame, padding bits, a NaN scale); 5.x
 * the ring's all-gather of top-k frames (coll_sparse.h) on socketpairs,
 * two rounds so the error feedback is in it: every rank bit-identical to
 * the rank-order sum of the same frames computed here.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "check.h"
#include "coll/coll_sparse.h"
#include "fake_peer.h"

static int setting(const char *s)
{
    int k = -1;
    return compress_parse(s, &k) == 0 ? k : -1;
}

static void settings(void)
{
    char buf[COMPRESS_LABEL_MAX];
    int s;

    T_CASE("compress-sparse-1.1", "topk:F[:noef] and sign[:noef] parse, label back, and "
           "leave none, fp16 and bf16 as they were");
    T_EQ_I(setting("none"), COMPRESS_NONE);
    T_EQ_I(setting("fp16"), COMPRESS_FP16);
    T_EQ_I(setting("bf16"), COMPRESS_BF16);
    s = setting("topk:0.01");
    T_EQ_I(COMPRESS_KIND(s), COMPRESS_TOPK);
    T_EQ_U(COMPRESS_PARAM(s), 10000);
    T_TRUE(compress_get(s) != NULL && !compress_get(s)->linear);
    T_STR(compress_label(s, buf, sizeof buf), "topk:0.01");
    s = setting("topk:1:noef");
    T_TRUE((s & COMPRESS_NOEF) != 0);
    T_STR(compress_label(s, buf, sizeof buf), "topk:1:noef");
    T_STR(compress_label(setting("sign"), buf, sizeof buf), "sign");
    T_STR(compress_label(setting("sign:noef"), buf, sizeof buf), "sign:noef");
    T_STR(compress_label(COMPRESS_FP16, buf, sizeof buf), "fp16");

    T_CASE("compress-sparse-1.2", "bad settings are refused: topk without F, F 0, above 1, "
           "finer than a millionth, trailing junk; noef on fp16; params on sign");
    const char *bad[] = { "topk", "topk:", "topk:0", "topk:1.5", "topk:-0.1", "topk:0.0000001",
                          "topk:0.01x", "topk:0.01:ef", "sign:", "signx", "fp16:noef", "topk:nan",
                          "topk:inf", NULL };
    for (int i = 0; bad[i]; i++) {
        int k = 77;
        T_EQ_I(compress_parse(bad[i], &k), ERR_USAGE);
    }
    T_TRUE(compress_get(COMPRESS_FP16 | COMPRESS_NOEF) == NULL);
    T_TRUE(compress_get(COMPRESS_TOPK) == NULL);                    /* F = 0 */
    T_TRUE(compress_get(COMPRESS_TOPK | (1000001 << 9)) == NULL);   /* F > 1 */
    T_TRUE(compress_get(COMPRESS_SIGN | (1 << 9)) == NULL);
    T_TRUE(compress_get(5) == NULL);
}

/* ---------------------------------------------------------------- top-k */

static void topk(void)
{
    int s = setting("topk:0.25"), s1 = setting("topk:0.5:noef");
    float g[8] = { 0.5f, -3.0f, 1.0f, -1.0f, 2.0f, 0.25f, 1.0f, -0.125f };
    float st[16] = { 0 }, acc[8] = { 0 };
    unsigned char f[64];
    size_t bad = 99;
    char why[ERR_LEN] = "";

    T_CASE("compress-sparse-2.1", "top-k picks the k = ceil(F n) largest |g|, in index order, "
           "values exact; the frame is 4 + k x 8 bytes (f32)");
    T_EQ_U(compress_topk_k(s, 8), 2);
    T_EQ_U(compress_topk_k(s, 9), 3);
    T_EQ_U(compress_topk_k(setting("topk:0.000001"), 10), 1);
    T_EQ_U(compress_frame_bytes(s, 8, DTYPE_F32), 4 + 2 * 8);
    T_EQ_U(compress_frame_bytes(s, 8, DTYPE_F64), 4 + 2 * 12);
    T_EQ_U(compress_state_bytes(s, 8, DTYPE_F32), 2 * 8 * 4);
    compress_get(s)->frame->encode(s, f, g, 8, DTYPE_F32, st);
    T_EQ_U(f[0], 2);
    T_EQ_U(f[4], 1);            /* -3 */
    T_EQ_U(f[8], 4);            /* 2 */
    T_EQ_I(compress_get(s)->frame->add(s, acc, f, 20, 8, DTYPE_F32, &bad, why), 0);
    T_EQ_D(acc[1], -3.0);
    T_EQ_D(acc[4], 2.0);
    T_EQ_D(acc[0] + acc[2] + acc[3] + acc[5] + acc[6] + acc[7], 0.0);

    T_CASE("compress-sparse-2.2", "error feedback: the residual is what was not sent (sent "
           "elements 0), and the next step sends g + e");
    T_EQ_D(st[1], 0.0);
    T_EQ_D(st[4], 0.0);
    T_EQ_D(st[0], 0.5);
    T_EQ_D(st[2], 1.0);
    T_EQ_D(st[7], -0.125);
    {
        float z[8] = { 0.6f, 0, 0, 0, 0, 0, 0, 0 };
        compress_get(s)->frame->encode(s, f, z, 8, DTYPE_F32, st);
        /* p = (1.1, 0, 1, -1, 0, .25, 1, -.125): 0 (1.1) and then the tie
         * of |1| at 2, 3, 6: the lower index, 2. */
        T_EQ_U(f[4], 0);
        T_EQ_U(f[8], 2);
        T_NEAR(st[3], -1.0, 0);
        T_NEAR(st[6], 1.0, 0);
        T_EQ_D(st[0], 0.0);
    }

    T_CASE("compress-sparse-2.3", "ties go to the lower index; noef sends g alone and keeps "
           "nothing from the step before");
    {
        float t[6] = { 1, -1, 1, -1, 1, -1 }, st2[12] = { 5, 5, 5, 5, 5, 5 };
        compress_get(s1)->frame->encode(s1, f, t, 6, DTYPE_F32, st2);
        T_EQ_U(f[0], 3);
        T_EQ_U(f[4], 0);
        T_EQ_U(f[8], 1);
        T_EQ_U(f[12], 2);
        float v;
        memcpy(&v, f + 4 + 12, sizeof v);
        T_EQ_D(v, 1.0);         /* not 6: the 5s were not added */
    }

    T_CASE("compress-sparse-2.4", "f64, n = 1000, k = 10: the ten largest |g| chosen whatever "
           "their places; a permutation does not change the set");
    {
        int s10 = setting("topk:0.01");
        double *x = calloc(1000, sizeof *x), *st3 = calloc(2000, sizeof *st3);
        double *sum = calloc(1000, sizeof *sum);
        unsigned char *fr = malloc(compress_frame_bytes(s10, 1000, DTYPE_F64));
        size_t fb = compress_frame_bytes(s10, 1000, DTYPE_F64);
        for (int i = 0; i < 1000; i++)
            x[i] = sin(i * 0.37) * 0.001 * (i % 17);
        for (int j = 0; j < 10; j++)
            x[(j * 97 + 13) % 1000] = (j % 2 ? -1.0 : 1.0) * (1 + j);
        compress_get(s10)->frame->encode(s10, fr, x, 1000, DTYPE_F64, st3);
        T_EQ_I(compress_get(s10)->frame->add(s10, sum, fr, fb, 1000, DTYPE_F64, &bad, why), 0);
        int hits = 0;
        for (int j = 0; j < 10; j++)
            hits += sum[(j * 97 + 13) % 1000] == x[(j * 97 + 13) % 1000];
        T_EQ_I(hits, 10);
        free(x);
        free(st3);
        free(sum);
        free(fr);
    }
}

/* ----------------------------------------------------------------- sign */

static void sign(void)
{
    int s = setting("sign");
    float g[10] = { 1, -2, 3, -4, 0, 1, 1, 1, 1, 1 }, st[10] = { 0 }, acc[10] = { 0 };
    unsigned char f[16];
    size_t bad = 0;
    char why[ERR_LEN];

    T_CASE("compress-sparse-3.1", "sign: the scale is mean |p| (1.5 here), one bit per element "
           "(1 = negative), 4 + ceil(10/8) = 6 bytes; decoding gives +-scale");
    T_EQ_U(compress_frame_bytes(s, 10, DTYPE_F32), 6);
    compress_get(s)->frame->encode(s, f, g, 10, DTYPE_F32, st);
    float sc;
    memcpy(&sc, f, sizeof sc);
    T_EQ_D(sc, 1.5);
    T_EQ_U(f[4], 0x0a);         /* elements 1 and 3 negative */
    T_EQ_U(f[5], 0x00);
    T_EQ_I(compress_get(s)->frame->add(s, acc, f, 6, 10, DTYPE_F32, &bad, why), 0);
    T_EQ_D(acc[0], 1.5);
    T_EQ_D(acc[1], -1.5);
    T_EQ_D(acc[4], 1.5);

    T_CASE("compress-sparse-3.2", "sign's error feedback: e = p - decode, carried into the "
           "next frame; with noef the state is not added");
    T_EQ_D(st[0], -0.5);
    T_EQ_D(st[1], -0.5);
    T_EQ_D(st[3], -2.5);
    T_EQ_D(st[4], -1.5);
    {
        float z[10] = { 0 };
        compress_get(s)->frame->encode(s, f, z, 10, DTYPE_F32, st);
        memcpy(&sc, f, sizeof sc);
        T_NEAR(sc, (0.5 + 0.5 + 1.5 + 2.5 + 1.5 + 0.5 * 5) / 10, 1e-7);
        T_EQ_U(f[4], 0xfb);     /* every residual but element 2's (+1.5) negative */
        T_EQ_U(f[5], 0x03);
    }
    {
        int sn = setting("sign:noef");
        float st2[10] = { 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 };
        compress_get(sn)->frame->encode(sn, f, g, 10, DTYPE_F32, st2);
        memcpy(&sc, f, sizeof sc);
        T_EQ_D(sc, 1.5);
    }
}

/* -------------------------------------------------------------- hostile */

static void hostile(void)
{
    int s = setting("topk:0.25"), sg = setting("sign");
    const struct compress_frame *t = compress_get(s)->frame, *sf = compress_get(sg)->frame;
    float acc[10] = { 0 }, one = 1.0f, nan = NAN;
    unsigned char f[64] = { 0 };
    size_t bad = 0;
    char why[ERR_LEN];

    T_CASE("compress-sparse-4.1", "top-k: a count above k, a size that does not match the "
           "count, an index out of range, indices out of order are refused, nothing added");
    f[0] = 3;                                           /* k is 2 */
    T_EQ_I(t->add(s, acc, f, 4 + 3 * 8, 8, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    T_HAS(why, "at most k = 2");
    f[0] = 2;
    T_EQ_I(t->add(s, acc, f, 4 + 3 * 8, 8, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    T_EQ_I(t->add(s, acc, f, 3, 8, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    f[4] = 1;
    f[8] = 8;                                           /* n is 8 */
    memcpy(f + 12, &one, 4);
    memcpy(f + 16, &one, 4);
    T_EQ_I(t->add(s, acc, f, 20, 8, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    T_HAS(why, "index 8, out of range");
    f[8] = 1;
    T_EQ_I(t->add(s, acc, f, 20, 8, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    T_HAS(why, "not above the one before");
    f[8] = 0xff;
    f[9] = f[10] = f[11] = 0xff;                        /* 2^32 - 1 */
    T_EQ_I(t->add(s, acc, f, 20, 8, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    T_EQ_D(acc[1], 0.0);

    T_CASE("compress-sparse-4.2", "top-k: a NaN value is ERR_NONFINITE naming its index, "
           "nothing added; a sum that overflows is caught");
    f[8] = 5;
    f[9] = f[10] = f[11] = 0;
    memcpy(f + 16, &nan, 4);
    T_EQ_I(t->add(s, acc, f, 20, 8, DTYPE_F32, &bad, why), ERR_NONFINITE);
    T_EQ_U(bad, 5);
    T_EQ_D(acc[1], 0.0);
    {
        float big = FLT_MAX;
        memcpy(f + 12, &big, 4);
        memcpy(f + 16, &big, 4);
        acc[1] = FLT_MAX;
        T_EQ_I(t->add(s, acc, f, 20, 8, DTYPE_F32, &bad, why), ERR_NONFINITE);
        T_EQ_U(bad, 1);
    }

    T_CASE("compress-sparse-4.3", "sign: a wrong size, padding bits set, a negative or NaN "
           "scale are refused");
    memset(f, 0, sizeof f);
    memset(acc, 0, sizeof acc);
    T_EQ_I(sf->add(sg, acc, f, 6, 10, DTYPE_F32, &bad, why), 0);
    T_EQ_I(sf->add(sg, acc, f, 7, 10, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    f[5] = 0x04;                                        /* element 10 of 10 */
    T_EQ_I(sf->add(sg, acc, f, 6, 10, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    T_HAS(why, "bits set past element 10");
    f[5] = 0;
    one = -1.0f;
    memcpy(f, &one, 4);
    T_EQ_I(sf->add(sg, acc, f, 6, 10, DTYPE_F32, &bad, why), ERR_PROTO_FIELD);
    memcpy(f, &nan, 4);
    T_EQ_I(sf->add(sg, acc, f, 6, 10, DTYPE_F32, &bad, why), ERR_NONFINITE);
}

/* ------------------------------------------------- the ring's all-gather */

static int g_set;                           /* the case's setting */
static size_t g_tail;                       /* the exact tail's elements (coll_sparse.h) */

static void sp_fill(struct rank_job *j, uint64_t round)
{
    for (size_t i = 0; i < j->n; i++)
        vec_set(j->buf, i, j->dtype, random_value(j->rank, i, 0x51 + round) * (i % 7 ? 1 : 9));
}

/* sp_rank: two rounds of ring_allgather_frames (the second sends the
 * first's residual too); the result of the second stays in buf. */
static void *sp_rank(void *arg)
{
    struct rank_job *j = arg;
    struct xport_plan plan;
    struct xport *t = NULL;
    struct ring ring;
    unsigned char *frames = malloc((size_t)j->world * (compress_frame_bytes(g_set, j->n, j->dtype)
                                                       + g_tail * dtype_size(j->dtype)));
    void *st = calloc(1, compress_state_bytes(g_set, j->n, j->dtype));
    int rc = frames && st ? 0 : -ENOMEM;

    ring_plan(j->rank, j->world, &plan);
    if (rc == 0)
        rc = job_connect(&t, &plan, j->rank, j->world, j->n, j->dtype, -1, NULL, j->fds,
                         &j->link, 10.0, j->err);
    if (rc == 0 && (rc = ring_init(&ring, t, j->rank, j->world, j->piece)) == 0) {
        for (int r = 0; rc == 0 && r < 2; r++) {
            if (r > 0)
                sp_fill(j, (uint64_t)r);
            rc = ring_allgather_frames(&ring, j->buf, j->n, g_tail, j->dtype, g_set, frames, st, j->err);
        }
        ring_destroy(&ring);
    }
    if (rc != 0 && t)
        xport_abort(t, j->err);
    xport_close(t);
    free(frames);
    free(st);
    j->rc = rc;
    return NULL;
}

/* sp_reference: the same two rounds in one process: each rank's encoder
 * with its own state, then the K frames added in rank order; the exact
 * tail (g_tail) summed raw in rank order from zero. */
static void sp_reference(int k, size_t n, int dtype, void *out)
{
    size_t es = dtype_size(dtype), m = n - g_tail, fb = compress_frame_bytes(g_set, m, dtype), bad;
    unsigned char *frames = malloc((size_t)k * fb), *st = calloc((size_t)k, compress_state_bytes(g_set, m, dtype));
    unsigned char *tails = malloc((size_t)k * g_tail * es + 1);
    struct rank_job j = { .n = n, .dtype = dtype };
    char why[ERR_LEN];

    j.buf = malloc(n * es);
    for (int r = 0; r < 2; r++)
        for (int q = 0; q < k; q++) {
            j.rank = q;
            sp_fill(&j, (uint64_t)r);
            compress_get(g_set)->frame->encode(g_set, frames + (size_t)q * fb, j.buf, m, dtype,
                                               st + (size_t)q * compress_state_bytes(g_set, m, dtype));
            memcpy(tails + (size_t)q * g_tail * es, (unsigned char *)j.buf + m * es, g_tail * es);
        }
    vec_zero(out, n, dtype);
    for (int q = 0; q < k; q++) {
        compress_get(g_set)->frame->add(g_set, out, frames + (size_t)q * fb, fb, m, dtype, &bad, why);
        vec_add_finite((unsigned char *)out + m * es, tails + (size_t)q * g_tail * es, g_tail,
                       dtype, &bad);
    }
    free(j.buf);
    free(frames);
    free(tails);
    free(st);
}

static void ring_frames(void)
{
    struct rank_job jobs[MAXK];
    int sp[MAXK][2];
    double ref[1100];
    static const char *ids[2] = { "compress-sparse-5.1", "compress-sparse-5.2" };
    static const char *names[2] = {
        "the ring's all-gather of top-k frames, K = 2..5, f32 and f64, two rounds (error "
        "feedback): every rank bit-identical to the rank-order sum of the same frames "
        "computed in one process",
        "5.1 with an exact tail of 3 after each frame (the step's trailer): the frames' sum, "
        "and the tail the raw rank-order sum, bit for bit" };

    for (int c = 0; c < 2; c++) {
        T_CASE(ids[c], names[c]);
        g_tail = c == 0 ? 0 : 3;
        g_set = setting("topk:0.05");
        for (int k = 2; k <= 5; k++)
            for (int dt = DTYPE_F32; dt <= DTYPE_F64; dt++) {
                size_t n = 1003;
                T_EQ_I(jobs_init(jobs, k, n, dt, 0, FILL_RANDOM, 0, 2, NULL, NULL, sp_fill), 0);
                for (int r = 0; r < k; r++)     /* right, then left (test_compress.c's) */
                    T_EQ_I(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[r]), 0);
                for (int r = 0; r < k; r++) {
                    jobs[r].fds[0] = sp[r][0];
                    jobs[r].fds[1] = sp[(r + k - 1) % k][1];
                }
                threads_run(sp_rank, jobs, sizeof jobs[0], k);
                sp_reference(k, n, dt, ref);
                for (int r = 0; r < k; r++) {
                    if (jobs[r].rc != 0)
                        t_row("K %d dtype %d rank %d: %s", k, dt, r, jobs[r].err);
                    T_EQ_I(jobs[r].rc, 0);
                    T_TRUE(memcmp(jobs[r].buf, ref, n * dtype_size(dt)) == 0);
                }
                free_jobs(jobs, k);
            }
    }
    g_tail = 0;
}

int main(void)
{
    peers_init(42100);
    settings();
    topk();
    sign();
    hostile();
    ring_frames();
    return t_done();
}
