/* test_buckets.c -- the bucket plan (buckets.h): reverse layer order,
 * whole layers, DDP's fill rule, every element in exactly one bucket, and
 * the readiness count; also the workloads' layer tables cut into buckets
 * with the layers reported by a real backward pass. */
#include <stdlib.h>
#include <string.h>

#include "train/buckets.h"
#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/workload.h"

/* covers: the buckets tile [0, n) backwards, contiguous, whole layers. */
static int covers(const struct buckets *p, const size_t *off, size_t nlayers)
{
    size_t end = off[nlayers];

    for (size_t i = 0; i < p->count; i++) {
        const struct bucket *b = &p->b[i];
        if (b->first + b->count != end || b->first != off[b->first_layer] ||
            off[b->last_layer + 1] != end || b->first_layer > b->last_layer)
            return 0;
        for (size_t l = b->first_layer; l <= b->last_layer; l++)
            if (p->layer_bucket[l] != i)
                return 0;
        end = b->first;
    }
    return end == 0;
}

static void test_plan(void)
{
    const size_t off[] = { 0, 100, 150, 200, 400 };     /* buckets.h's example */
    const size_t big[] = { 0, 10, 1010, 1020, 1030 };
    const size_t empty[] = { 0, 0, 8, 8 };
    struct buckets p;
    char err[ERR_LEN];

    T_CASE("buckets-1.1", "the header's example: [200,400) [100,200) [0,100), last layer first");
    T_EQ_I(buckets_plan(&p, off, 4, 8, 800, err), 0);
    T_EQ_U(p.count, 3);
    T_EQ_U(p.b[0].first, 200); T_EQ_U(p.b[0].count, 200);
    T_EQ_U(p.b[0].first_layer, 3); T_EQ_U(p.b[0].last_layer, 3);
    T_EQ_U(p.b[1].first, 100); T_EQ_U(p.b[1].count, 100);
    T_EQ_U(p.b[1].first_layer, 1); T_EQ_U(p.b[1].last_layer, 2);
    T_EQ_U(p.b[2].first, 0); T_EQ_U(p.b[2].count, 100);
    T_TRUE(covers(&p, off, 4));
    T_EQ_U(buckets_bytes_max(&p, 8), 1600);
    buckets_free(&p);

    T_CASE("buckets-1.2", "a size of n bytes or more: one bucket of everything");
    T_EQ_I(buckets_plan(&p, off, 4, 8, 3200, err), 0);
    T_EQ_U(p.count, 1);
    T_EQ_U(p.b[0].first, 0); T_EQ_U(p.b[0].count, 400);
    buckets_free(&p);
    T_EQ_I(buckets_plan(&p, off, 4, 8, 1ull << 40, err), 0);
    T_EQ_U(p.count, 1);
    buckets_free(&p);

    T_CASE("buckets-1.3", "1 byte: one bucket per layer, never a split layer");
    T_EQ_I(buckets_plan(&p, off, 4, 8, 1, err), 0);
    T_EQ_U(p.count, 4);
    for (size_t i = 0; i < 4; i++)
        T_EQ_U(p.b[i].first_layer, 3 - i);
    T_TRUE(covers(&p, off, 4));
    buckets_free(&p);

    T_CASE("buckets-1.4", "a layer larger than the size is not split; it joins an open bucket");
    /* layers 10, 1000, 10, 10 elements, 1-byte elements, size 15: layers 3+2
     * make 20 >= 15 (closed), layer 1 (1000) opens its own, layer 0 alone */
    T_EQ_I(buckets_plan(&p, big, 4, 1, 15, err), 0);
    T_EQ_U(p.count, 3);
    T_EQ_U(p.b[0].count, 20);
    T_EQ_U(p.b[1].count, 1000);
    T_EQ_U(p.b[2].count, 10);
    T_TRUE(covers(&p, big, 4));
    buckets_free(&p);
    /* size 5: layer 3 alone, layer 2 alone, 1 alone, 0 alone */
    T_EQ_I(buckets_plan(&p, big, 4, 1, 5, err), 0);
    T_EQ_U(p.count, 4);
    buckets_free(&p);

    T_CASE("buckets-1.5", "empty layers ride along; the plan still covers every element");
    T_EQ_I(buckets_plan(&p, empty, 3, 4, 4, err), 0);
    T_TRUE(covers(&p, empty, 3));
    buckets_free(&p);

    T_CASE("buckets-1.6", "size 0 and a bad layer table are refused with one line");
    err[0] = '\0';
    T_EQ_I(buckets_plan(&p, off, 4, 8, 0, err), ERR_USAGE);
    T_TRUE(strlen(err) > 0 && strchr(err, '\n') == NULL);
    T_EQ_I(buckets_plan(&p, (const size_t[]){ 0, 10, 5 }, 2, 8, 16, err), ERR_USAGE);
    T_EQ_I(buckets_plan(&p, (const size_t[]){ 3, 10 }, 1, 8, 16, err), ERR_USAGE);
    T_EQ_I(buckets_plan(&p, off, 0, 8, 16, err), ERR_USAGE);
    buckets_free(&p);       /* harmless after a refusal */
    T_END();
}

static void test_ready(void)
{
    const size_t off[] = { 0, 100, 150, 200, 400 };
    struct buckets p;
    char err[ERR_LEN];

    T_CASE("buckets-2.1", "reverse order: a bucket is ready at its lowest layer, in bucket order");
    T_EQ_I(buckets_plan(&p, off, 4, 8, 800, err), 0);
    T_EQ_I(buckets_layer_done(&p, 3), 0);
    T_EQ_I(buckets_layer_done(&p, 2), -1);
    T_EQ_I(buckets_layer_done(&p, 1), 1);
    T_EQ_I(buckets_layer_done(&p, 0), 2);

    T_CASE("buckets-2.2", "a second pass after reset; twice or out of range is not ready");
    buckets_reset(&p);
    T_EQ_I(buckets_layer_done(&p, 2), -1);
    T_EQ_I(buckets_layer_done(&p, 2), -1);     /* twice: bucket 1 still misses layer 1 */
    T_EQ_I(buckets_layer_done(&p, 9), -1);
    T_EQ_I(buckets_layer_done(&p, 1), 1);

    T_CASE("buckets-2.3", "out of order: never early (layer 1 before 2)");
    buckets_reset(&p);
    T_EQ_I(buckets_layer_done(&p, 1), -1);
    T_EQ_I(buckets_layer_done(&p, 2), 1);
    buckets_free(&p);
    T_END();
}

struct seen {
    struct buckets *p;
    long order[16];
    int n;
};

static void on_layer(size_t layer, size_t first, size_t count, void *arg)
{
    struct seen *s = arg;
    long i = buckets_layer_done(s->p, layer);

    (void)first;
    (void)count;
    if (i >= 0 && s->n < 16)
        s->order[s->n++] = i;
}

static void test_workloads(void)
{
    static const int kinds[] = { WORKLOAD_MLP, WORKLOAD_SYNTHETIC };
    char err[ERR_LEN];

    T_CASE("buckets-3.1", "mlp and synthetic backward passes make buckets ready 0, 1, 2, ...");
    for (size_t k = 0; k < 2; k++) {
        struct workload_cfg cfg = { .kind = kinds[k], .dtype = DTYPE_F64, .seed = 3,
                                    .params = kinds[k] == WORKLOAD_SYNTHETIC ? 800 : 0,
                                    .batch = 8 };
        struct workload w;
        struct buckets p;
        struct seen s;
        double *g, loss = 0;

        T_EQ_I(workload_create(&w, &cfg), 0);
        g = calloc(w.n, sizeof *g);
        T_TRUE(g != NULL);
        /* about a third of the vector per bucket */
        T_EQ_I(buckets_plan(&p, w.layer_off, w.nlayers, 8, w.n * 8 / 3, err), 0);
        T_TRUE(p.count >= 2);
        T_TRUE(covers(&p, w.layer_off, w.nlayers));
        memset(&s, 0, sizeof s);
        s.p = &p;
        workload_grad_add_layers(&w, g, 0, 0, 8, g, &loss, on_layer, &s);
        T_EQ_I(s.n, (long)p.count);
        for (int i = 0; i < s.n; i++)
            T_EQ_I(s.order[i], i);
        buckets_free(&p);
        free(g);
        workload_destroy(&w);
    }
    T_END();
}

int main(void)
{
    test_plan();
    test_ready();
    test_workloads();
    return t_done();
}
