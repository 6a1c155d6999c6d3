/* test_psgd_server.c -- PowerSGD through the parameter server, the
 * server's half (common/ps/psgd_server.c), without sockets: K workers
 * are K psgd states over the mlp's vector (the ring's table,
 * coll_psgd_init's), the server one psgd_server per owned range, and the
 * frames go between them by memcpy.
 *
 * Ids: psgd_server-1.x the two rounds: every worker decodes the server's
 * bits (one server, and two whose boundary cuts a matrix, which then
 * travels raw); the result is a rank-order all-reduce's bit for bit and
 * another order's within rounding; frames out of arrival order change
 * nothing. psgd_server-2.x hostile frames refused whole, one line naming
 * the worker, nothing changed; a sum that overflows fails the step; a
 * setting that is not PowerSGD is refused at init. psgd_server-3.x the
 * store's POWERSGD PUSHES (store_psgd.c): refusals keep nothing, round 1
 * waits for round 0's sum, the release applies the decoded sum.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/powersgd.h"
#include "base/vec.h"
#include "check.h"
#include "ps/psgd_server.h"
#include "ps/store.h"
#include "train/workload.h"

enum { K = 4, STEPS = 3 };

/* table: the workload's matrices as coll_psgd_init and psgd_server_init
 * take them; worker states with error feedback, Q from seed 7. */
static void workers_init(struct psgd *ps, const struct workload *w, int setting, int dtype)
{
    struct psgd_mat m[16];

    T_TRUE(w->nlayers <= 16);
    for (size_t l = 0; l < w->nlayers; l++)
        if (!workload_matrix(w, l, &m[l].first, &m[l].rows, &m[l].cols))
            psgd_near_square(m[l].rows, &m[l].rows, &m[l].cols);
    for (int r = 0; r < K; r++)
        T_EQ_I(psgd_init(&ps[r], w->n, 0, dtype, m, w->nlayers, COMPRESS_PSGD_RANK(setting),
                         COMPRESS_PSGD_EF(setting), 7), 0);
}

/* gradient: worker r's gradient of step s, n elements of dtype, varied in
 * sign and scale and full rank. */
static void gradient(void *g, size_t n, int dtype, int r, int s)
{
    for (size_t i = 0; i < n; i++)
        vec_set(g, i, dtype, sin(0.37 * (double)(i + 1) * (double)(r + 2) + (double)s) *
                (1.0 + 0.1 * (double)((i * 7 + (size_t)r) % 5)));
}

/* ps_round: one server range [first, first + count) through both rounds:
 * every worker's frames put (in the order `order`), summed, handed back;
 * the server's gradient into srv (count elements), each worker's decode
 * into g[r]. 0, or the first failing code. */
static int ps_round(struct psgd_server *sv, struct psgd *ps, void **g, const int *order,
                    size_t first, size_t count, uint64_t step, void *srv)
{
    const void *sum;
    size_t bad = 0;
    char err[ERR_LEN];
    int rc;

    for (int i = 0; i < K; i++)
        psgd_encode_p(&ps[order[i]], g[order[i]], first, count);
    for (int i = 0; i < K; i++)
        if ((rc = psgd_server_put(sv, (uint32_t)order[i], step, 0, ps[order[i]].round[0],
                                  psgd_server_frame_bytes(sv, 0), err)) != 0)
            return rc;
    if ((rc = psgd_server_sum(sv, &sum, err)) != 0)
        return rc;
    for (int r = 0; r < K; r++) {
        memcpy(ps[r].round[0], sum, psgd_server_frame_bytes(sv, 0));
        psgd_encode_q(&ps[r], first, count);
    }
    for (int i = 0; i < K; i++)
        if ((rc = psgd_server_put(sv, (uint32_t)order[i], step, 1, ps[order[i]].round[1],
                                  psgd_server_frame_bytes(sv, 1), err)) != 0)
            return rc;
    if ((rc = psgd_server_sum(sv, &sum, err)) != 0)
        return rc;
    for (int r = 0; r < K; r++) {
        memcpy(ps[r].round[1], sum, psgd_server_frame_bytes(sv, 1));
        if ((rc = psgd_decode(&ps[r], g[r], first, count, K, &bad)) != 0)
            return rc;
    }
    return psgd_server_decode(sv, srv, err);
}

/* ref_step: the same step as an all-reduce that sums in rank order
 * (reverse: in reverse rank order), test_powersgd.c's reference. */
static void ref_step(struct psgd *ps, void **g, size_t n, int dtype, int reverse)
{
    size_t n0 = psgd_round_len(&ps[0], 0, n, 0), n1 = psgd_round_len(&ps[0], 0, n, 1), bad;
    size_t es = dtype_size(dtype);
    int a = reverse ? K - 1 : 0;

    for (int r = 0; r < K; r++)
        psgd_encode_p(&ps[r], g[r], 0, n);
    for (int i = 1; i < K; i++)
        vec_add(ps[a].round[0], ps[reverse ? K - 1 - i : i].round[0], n0, dtype);
    for (int r = 0; r < K; r++) {
        if (r != a)
            memcpy(ps[r].round[0], ps[a].round[0], n0 * es);
    }
    for (int r = 0; r < K; r++)
        psgd_encode_q(&ps[r], 0, n);
    for (int i = 1; i < K; i++)
        vec_add(ps[a].round[1], ps[reverse ? K - 1 - i : i].round[1], n1, dtype);
    for (int r = 0; r < K; r++) {
        if (r != a)
            memcpy(ps[r].round[1], ps[a].round[1], n1 * es);
        T_EQ_I(psgd_decode(&ps[r], g[r], 0, n, K, &bad), 0);
    }
}

static void rounds(void)
{
    static const int in_order[K] = { 0, 1, 2, 3 }, shuffled[K] = { 2, 0, 3, 1 };
    static const int dtypes[2] = { DTYPE_F32, DTYPE_F64 };

    for (int d = 0; d < 2; d++) {
        int dt = dtypes[d], setting = COMPRESS_PSGD(2, 0);
        struct workload_cfg cfg = { .kind = WORKLOAD_MLP, .dtype = dt, .seed = 7, .batch = 8 };
        struct workload w;
        struct psgd ps[K], ref[K], rev[K];
        struct psgd_server sv[2];
        void *g[K], *gr[K], *gv[K], *srv;
        size_t es = dtype_size(dt), cut;
        char err[ERR_LEN];
        double worst = 0, scale = 0;
        int same = 1, same_ref = 1;

        T_EQ_I(workload_create(&w, &cfg), 0);
        es = dtype_size(dt);
        /* a cut inside W2 (layer 1's matrix): W2 travels raw in both halves */
        cut = w.layer_off[1] + 100;
        workers_init(ps, &w, setting, dt);
        workers_init(ref, &w, setting, dt);
        workers_init(rev, &w, setting, dt);
        srv = malloc(w.n * es);
        for (int r = 0; r < K; r++) {
            g[r] = malloc(w.n * es);
            gr[r] = malloc(w.n * es);
            gv[r] = malloc(w.n * es);
        }
        T_CASE(d == 0 ? "psgd_server-1.1" : "psgd_server-1.2",
               d == 0 ? "f32, K 4, R 2, mlp, 3 steps, one server: every worker decodes the "
                        "server's bits; a rank-order all-reduce's bits exactly; the frames' "
                        "arrival order changes nothing"
                      : "f64: the same");
        T_EQ_I(psgd_server_init(&sv[0], &w, 0, w.n, setting, dt, K, err), 0);
        T_TRUE(psgd_server_frame_bytes(&sv[0], 0) < w.n * es / 4);
        for (int s = 0; s < STEPS; s++) {
            for (int r = 0; r < K; r++) {
                gradient(g[r], w.n, dt, r, s);
                gradient(gr[r], w.n, dt, r, s);
                gradient(gv[r], w.n, dt, r, s);
            }
            T_EQ_I(ps_round(&sv[0], ps, g, s % 2 ? shuffled : in_order, 0, w.n, (uint64_t)s,
                            srv), 0);
            ref_step(ref, gr, w.n, dt, 0);
            ref_step(rev, gv, w.n, dt, 1);
            for (int r = 0; r < K; r++) {
                same &= memcmp(g[r], srv, w.n * es) == 0;
                same_ref &= memcmp(gr[r], srv, w.n * es) == 0;
            }
            for (size_t i = 0; i < w.n; i++) {
                worst = fmax(worst, fabs(vec_get(gv[0], i, dt) - vec_get(srv, i, dt)));
                scale = fmax(scale, fabs(vec_get(srv, i, dt)));
            }
        }
        T_TRUE(same);
        T_TRUE(same_ref);
        /* another summation order: within rounding of the K-term sums,
         * carried through Gram-Schmidt and three steps of error feedback */
        printf("     %s: reverse-order sums differ by %.3g of the largest |g| %.3g\n",
               dtype_name(dt), worst / scale, scale);
        T_LE(worst / scale, dt == DTYPE_F32 ? 1e-5 : 1e-13);
        psgd_server_destroy(&sv[0]);

        if (d == 0) {
            T_CASE("psgd_server-1.3", "two servers, the boundary inside W2: W2 travels raw "
                   "(round 1 carries W1's Q only), every worker decodes both servers' bits");
            for (int r = 0; r < K; r++)
                psgd_destroy(&ps[r]);
            workers_init(ps, &w, setting, dt);
            T_EQ_I(psgd_server_init(&sv[0], &w, 0, cut, setting, dt, K, err), 0);
            T_EQ_I(psgd_server_init(&sv[1], &w, cut, w.n - cut, setting, dt, K, err), 0);
            T_EQ_U(psgd_server_frame_bytes(&sv[0], 1), 32 * 2 * es);    /* W1: 64 x 32 */
            T_EQ_U(psgd_server_frame_bytes(&sv[1], 1), 0);
            same = 1;
            for (int s = 0; s < STEPS; s++) {
                for (int r = 0; r < K; r++)
                    gradient(g[r], w.n, dt, r, s);
                T_EQ_I(ps_round(&sv[0], ps, g, in_order, 0, cut, (uint64_t)s, srv), 0);
                T_EQ_I(ps_round(&sv[1], ps, g, shuffled, cut, w.n - cut, (uint64_t)s,
                                (unsigned char *)srv + cut * es), 0);
                for (int r = 0; r < K; r++)
                    same &= memcmp(g[r], srv, w.n * es) == 0;
            }
            T_TRUE(same);
            psgd_server_destroy(&sv[0]);
            psgd_server_destroy(&sv[1]);
        }
        for (int r = 0; r < K; r++) {
            psgd_destroy(&ps[r]);
            psgd_destroy(&ref[r]);
            psgd_destroy(&rev[r]);
            free(g[r]);
            free(gr[r]);
            free(gv[r]);
        }
        free(srv);
        workload_destroy(&w);
    }
}

static void hostile(void)
{
    struct workload_cfg cfg = { .kind = WORKLOAD_MLP, .dtype = DTYPE_F32, .seed = 7, .batch = 8 };
    struct workload w;
    struct psgd_server sv;
    char err[ERR_LEN];
    const void *sum;
    float *f;
    size_t b0;

    T_EQ_I(workload_create(&w, &cfg), 0);
    T_EQ_I(psgd_server_init(&sv, &w, 0, w.n, COMPRESS_PSGD(2, 1), DTYPE_F32, K, err), 0);
    b0 = psgd_server_frame_bytes(&sv, 0);
    f = calloc(b0 / 4 + 1, 4);
    T_TRUE(f != NULL);

    T_CASE("psgd_server-2.1", "refused whole, one line naming the worker: a wrong size, a NaN, "
           "rank >= K, another step or round, a second frame; nothing kept");
    T_EQ_I(psgd_server_put(&sv, 1, 0, 0, f, b0 - 4, err), ERR_PROTO_SIZE);
    T_HAS(err, "worker 1");
    T_EQ_I(psgd_server_put(&sv, 1, 0, 0, f, b0 + 4, err), ERR_PROTO_SIZE);
    f[3] = NAN;
    T_EQ_I(psgd_server_put(&sv, 2, 0, 0, f, b0, err), ERR_NONFINITE);
    T_HAS(err, "worker 2");
    T_HAS(err, "element 3");
    f[3] = INFINITY;
    T_EQ_I(psgd_server_put(&sv, 2, 0, 0, f, b0, err), ERR_NONFINITE);
    f[3] = 0;
    T_EQ_I(psgd_server_put(&sv, K, 0, 0, f, b0, err), ERR_PROTO_RANK);
    T_HAS(err, "worker 4");
    T_EQ_I(psgd_server_put(&sv, 0, 1, 0, f, b0, err), ERR_PROTO_FIELD);
    T_EQ_I(psgd_server_put(&sv, 0, 0, 1, f, psgd_server_frame_bytes(&sv, 1), err),
           ERR_PROTO_FIELD);
    T_EQ_U(sv.in, 0);
    T_EQ_I(psgd_server_sum(&sv, &sum, err), ERR_PROTO_FIELD);
    T_EQ_I(psgd_server_put(&sv, 0, 0, 0, f, b0, err), 0);
    T_EQ_I(psgd_server_put(&sv, 0, 0, 0, f, b0, err), ERR_PROTO_FIELD);
    T_HAS(err, "has this worker's frame");
    T_EQ_U(sv.in, 1);

    T_CASE("psgd_server-2.2", "finite frames whose sum overflows (f32 3e38 x 2): the step "
           "fails, ERR_NONFINITE naming the element");
    f[5] = 3e38f;
    for (uint32_t r = 1; r < K; r++)
        T_EQ_I(psgd_server_put(&sv, r, 0, 0, f, b0, err), 0);
    T_TRUE(psgd_server_ready(&sv));
    T_EQ_I(psgd_server_sum(&sv, &sum, err), ERR_NONFINITE);
    T_HAS(err, "element 5");

    T_CASE("psgd_server-2.3", "init refuses a setting that is not PowerSGD and a range "
           "outside the vector");
    psgd_server_destroy(&sv);
    T_EQ_I(psgd_server_init(&sv, &w, 0, w.n, COMPRESS_FP16, DTYPE_F32, K, err), ERR_USAGE);
    T_EQ_I(psgd_server_init(&sv, &w, 1, w.n, COMPRESS_PSGD(2, 0), DTYPE_F32, K, err),
           ERR_USAGE);
    T_EQ_I(psgd_server_init(&sv, &w, 0, 0, COMPRESS_PSGD(2, 0), DTYPE_F32, K, err), ERR_USAGE);
    free(f);
    workload_destroy(&w);
}

/* store_path: the store's POWERSGD PUSHES (store_psgd.c) with one worker's
 * frames fed as the session would: refusals name the worker and keep
 * nothing; the two rounds and the release give the weights. */
static void store_path(void)
{
    struct workload_cfg cfg = { .kind = WORKLOAD_MLP, .dtype = DTYPE_F64, .seed = 7, .batch = 8 };
    struct workload w;
    struct store st;
    struct store_released rel;
    struct psgd ps;
    struct proto_push_meta meta = { 8, 1.0 }, none = { 0, 0.0 };
    char err[ERR_LEN];
    const void *sum;
    size_t cnt = 0, len0;
    int round = -1;
    double *g, *out;

    T_EQ_I(workload_create(&w, &cfg), 0);
    g = calloc(w.n, sizeof *g);
    out = calloc(w.n, sizeof *out);
    T_TRUE(g && out);
    gradient(g, w.n, DTYPE_F64, 0, 0);
    T_EQ_I(psgd_server_plan(&ps, &w, COMPRESS_PSGD(2, 0), DTYPE_F64, 1, 7, err), 0);
    T_EQ_I(store_init(&st, &(struct store_cfg){ .n = w.n, .dtype = DTYPE_F64, .world = 1,
                                                .lr = 0.5, .batch = 8,
                                                .compress = COMPRESS_PSGD(2, 0), .psgd_w = &w },
                      err), 0);
    T_TRUE(st.psgd != NULL);
    len0 = psgd_round_len(&ps, 0, w.n, 0);

    T_CASE("psgd_server-3.1", "the store: a round's push of the wrong length or place, a NaN "
           "in its frame: refused, worker named, nothing kept");
    T_EQ_I(store_push_begin(&st, 0, 0, &meta, 0, len0 + 1, err), ERR_PROTO_SIZE);
    T_HAS(err, "worker 0");
    T_EQ_I(store_push_begin(&st, 0, 0, &meta, 1, len0, err), ERR_PROTO_FIELD);
    psgd_encode_p(&ps, g, 0, w.n);
    vec_set(ps.round[0], 5, DTYPE_F64, NAN);
    T_EQ_I(store_push_begin(&st, 0, 0, &meta, 0, len0, err), 0);
    T_EQ_I(store_push_data(&st, 0, ps.round[0], len0 * 8, err), 0);
    T_EQ_I(store_push_end(&st, 0, err), ERR_NONFINITE);
    T_HAS(err, "worker 0");
    T_HAS(err, "element 5");
    T_EQ_I(store_psgd_reply(&st, &sum, &cnt, &round, err), 0);

    T_CASE("psgd_server-3.2", "K 1: round 1 before round 0's sum refused; round 0's sum is the "
           "worker's own frame; nothing released before round 1's decode; the release applies "
           "P^ Q^T / B at lr 0.5: the weights of the worker's decode, bit for bit");
    /* the refused push left nothing: the worker pushes round 0 again */
    psgd_encode_p(&ps, g, 0, w.n);
    T_EQ_I(store_push_begin(&st, 0, 0, &meta, 0, len0, err), 0);
    T_EQ_I(store_push_data(&st, 0, ps.round[0], len0 * 8, err), 0);
    T_EQ_I(store_push_end(&st, 0, err), 0);
    T_EQ_I(store_push_begin(&st, 0, 0, &none, 0, psgd_round_len(&ps, 0, w.n, 1), err),
           ERR_PROTO_FIELD);                    /* round 1 before round 0's sum went out */
    T_HAS(err, "before round 0's sum");
    T_EQ_I(store_release(&st, &rel, err), 0);
    T_EQ_U(rel.count, 0);                       /* nothing before the decode */
    T_EQ_I(store_psgd_reply(&st, &sum, &cnt, &round, err), 1);
    T_EQ_I(round, 0);
    T_EQ_U(cnt, len0);
    T_TRUE(memcmp(sum, ps.round[0], len0 * 8) == 0);
    psgd_encode_q(&ps, 0, w.n);
    T_EQ_I(store_push_begin(&st, 0, 0, &meta, 0, psgd_round_len(&ps, 0, w.n, 1), err),
           ERR_PROTO_FIELD);                    /* round 1 counts nothing */
    T_EQ_I(store_push_begin(&st, 0, 0, &none, 0, psgd_round_len(&ps, 0, w.n, 1), err), 0);
    T_EQ_I(store_push_data(&st, 0, ps.round[1], psgd_round_len(&ps, 0, w.n, 1) * 8, err), 0);
    T_EQ_I(store_push_end(&st, 0, err), 0);
    T_EQ_I(store_psgd_reply(&st, &sum, &cnt, &round, err), 1);
    T_EQ_I(round, 1);
    memcpy(ps.round[1], sum, cnt * 8);
    {
        size_t bad;
        T_EQ_I(psgd_decode(&ps, out, 0, w.n, 1, &bad), 0);
    }
    T_EQ_I(store_release(&st, &rel, err), 0);
    T_TRUE(rel.last && rel.count == w.n);
    {
        const double *nw = store_weights(&st);     /* from zeros (cfg.weights NULL) */
        double worst = 0;
        for (size_t i = 0; i < w.n; i++)
            worst = fmax(worst, fabs(nw[i] - (0.0 - 0.5 * (out[i] / 8))));
        T_EQ_D(worst, 0.0);
    }
    store_destroy(&st);
    psgd_destroy(&ps);
    free(g);
    free(out);
    workload_destroy(&w);
}

int main(void)
{
    rounds();
    hostile();
    store_path();
    return t_done();
}
