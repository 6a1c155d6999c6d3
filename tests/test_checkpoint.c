/* test_checkpoint.c -- the checkpoint file's encoder and decoder
 * (common/ps/checkpoint.h): a round trip, the write through outfile,
 * every truncation, a flipped byte (bad checksum), a bad magic and
 * version, an unknown required section and a skipped optional one, and a
 * checkpoint of another job refused by ckpt_match.
 */
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "ps/checkpoint.h"
#include "check.h"
#include "base/dtype.h"
#include "base/err.h"

struct mem {
    unsigned char *p;
    size_t len, cap;
};

static void put_mem(void *ctx, const void *p, size_t n)
{
    struct mem *m = ctx;

    if (m->len + n > m->cap) {
        m->cap = (m->len + n) * 2;
        m->p = realloc(m->p, m->cap);
        if (!m->p)
            abort();
    }
    memcpy(m->p + m->len, p, n);
    m->len += n;
}

static double w[5] = { 0.5, -1.25, 3.0, 1e-300, -0.0 };
static double loss[3] = { 10.5, 8.25, 7.0 };

static struct ckpt sample(void)
{
    struct ckpt ck;

    memset(&ck, 0, sizeof ck);
    ck.job = (struct ckpt_job){ .world = 3, .dtype = DTYPE_F64, .workload = 1, .mistake = 0,
                                .shard_i = 1, .shard_s = 2, .per_step = 1, .n = 10, .lo = 5,
                                .hi = 10, .seed = 7, .batch = 96, .lr = 0.1 };
    ck.step = 3;
    ck.steps = 20;
    ck.nsec = 2;
    ck.sec[0] = (struct ckpt_section){ CKPT_SEC_WEIGHTS, CKPT_REQUIRED, sizeof w, w };
    ck.sec[1] = (struct ckpt_section){ CKPT_SEC_LOSS, 0, sizeof loss, loss };
    return ck;
}

static struct mem encode(const struct ckpt *ck)
{
    struct mem m = { NULL, 0, 0 };

    ckpt_encode(ck, put_mem, &m);
    return m;
}

/* reseal: the checksum of a buffer edited on purpose, made right again. */
static void reseal(struct mem *m)
{
    crypto_hash_sha256(m->p + m->len - CKPT_SUM_SIZE, m->p, m->len - CKPT_SUM_SIZE);
}

int main(void)
{
    struct ckpt ck = sample(), out;
    struct mem m = encode(&ck);
    char err[ERR_LEN] = "";
    int rc, all;

    T_CASE("checkpoint-1.1", "round trip: every header field and section comes back");
    T_EQ_U(m.len, ckpt_size(&ck));
    rc = ckpt_decode(m.p, m.len, &out, err);
    T_EQ_I(rc, 0);
    if (rc == 0) {
        T_EQ_U(out.step, 3);
        T_EQ_U(out.steps, 20);
        T_EQ_U(out.job.world, 3);
        T_EQ_U(out.job.lo, 5);
        T_EQ_U(out.job.hi, 10);
        T_EQ_D(out.job.lr, 0.1);
        T_EQ_I(ckpt_match(&out, &ck.job, err), 0);
        T_TRUE(ckpt_find(&out, CKPT_SEC_WEIGHTS) != NULL);
        T_TRUE(memcmp(ckpt_find(&out, CKPT_SEC_WEIGHTS)->data, w, sizeof w) == 0);
        T_TRUE(memcmp(ckpt_find(&out, CKPT_SEC_LOSS)->data, loss, sizeof loss) == 0);
    }

    T_CASE("checkpoint-1.2", "every truncation is refused as not a checkpoint");
    all = 1;
    for (size_t k = 0; k < m.len; k++)
        if (ckpt_decode(m.p, k, &out, err) != ERR_FORMAT)
            all = 0;
    T_TRUE(all);
    ckpt_decode(m.p, m.len - 1, &out, err);
    T_HAS(err, "checksum");

    T_CASE("checkpoint-1.3", "each flipped byte fails the checksum (or the magic)");
    all = 1;
    for (size_t k = 0; k < m.len; k++) {
        m.p[k] ^= 0x01;
        if (ckpt_decode(m.p, m.len, &out, err) != ERR_FORMAT)
            all = 0;
        m.p[k] ^= 0x01;
    }
    T_TRUE(all);
    m.p[CKPT_HEADER_SIZE + 20] ^= 0x40;
    T_EQ_I(ckpt_decode(m.p, m.len, &out, err), ERR_FORMAT);
    T_HAS(err, "checksum");
    m.p[CKPT_HEADER_SIZE + 20] ^= 0x40;

    T_CASE("checkpoint-1.4", "bad magic, newer version, a byte too many: refused by name");
    m.p[0] = 'X';
    T_EQ_I(ckpt_decode(m.p, m.len, &out, err), ERR_FORMAT);
    T_HAS(err, "magic");
    m.p[0] = 'P';
    m.p[8] = 2;
    reseal(&m);
    T_EQ_I(ckpt_decode(m.p, m.len, &out, err), ERR_FORMAT);
    T_HAS(err, "version 2");
    m.p[8] = 1;
    reseal(&m);
    T_EQ_I(ckpt_decode(m.p, m.len, &out, err), 0);
    {
        struct mem big = { NULL, 0, 0 };
        put_mem(&big, m.p, m.len - CKPT_SUM_SIZE);
        put_mem(&big, "x", 1);
        put_mem(&big, m.p + m.len - CKPT_SUM_SIZE, CKPT_SUM_SIZE);
        reseal(&big);
        T_EQ_I(ckpt_decode(big.p, big.len, &out, err), ERR_FORMAT);
        T_HAS(err, "after the sections");
        free(big.p);
    }

    T_CASE("checkpoint-1.5", "sections: unknown required refused, unknown optional skipped, "
           "WEIGHTS of the wrong size refused");
    {
        struct ckpt c2 = sample();
        uint32_t opt[2] = { 1, 2 };
        struct mem m2;

        c2.sec[2] = (struct ckpt_section){ 18, CKPT_REQUIRED, sizeof opt, opt };
        c2.nsec = 3;
        m2 = encode(&c2);
        T_EQ_I(ckpt_decode(m2.p, m2.len, &out, err), ERR_FORMAT);
        T_HAS(err, "section id 18");
        free(m2.p);
        c2.sec[2].flags = 0;
        m2 = encode(&c2);
        T_EQ_I(ckpt_decode(m2.p, m2.len, &out, err), 0);
        T_EQ_U(out.nsec, 3);
        free(m2.p);
        c2.sec[0].len = sizeof w - 8;
        m2 = encode(&c2);
        T_EQ_I(ckpt_decode(m2.p, m2.len, &out, err), ERR_FORMAT);
        T_HAS(err, "WEIGHTS");
        free(m2.p);
        c2 = sample();
        c2.sec[1] = c2.sec[0];
        m2 = encode(&c2);
        T_EQ_I(ckpt_decode(m2.p, m2.len, &out, err), ERR_FORMAT);
        T_HAS(err, "twice");
        free(m2.p);
    }

    T_CASE("checkpoint-1.6", "a checkpoint of another job is refused, naming the field");
    {
        struct ckpt_job j = ck.job;

        T_EQ_I(ckpt_decode(m.p, m.len, &out, err), 0);
        j.world = 4;
        T_EQ_I(ckpt_match(&out, &j, err), ERR_MISMATCH);
        T_HAS(err, "K 3 in the checkpoint, 4 here");
        j = ck.job;
        j.lr = 0.2;
        T_EQ_I(ckpt_match(&out, &j, err), ERR_MISMATCH);
        T_HAS(err, "lr");
        j = ck.job;
        j.shard_i = 0;
        j.lo = 0;
        j.hi = 5;
        T_EQ_I(ckpt_match(&out, &j, err), ERR_MISMATCH);
        T_HAS(err, "shard index");
    }

    T_CASE("checkpoint-1.7", "ckpt_write then ckpt_load: the same bytes, atomically named");
    {
        char dir[] = "/tmp/test_ckpt.XXXXXX", path[128];
        unsigned char *buf = NULL;
        size_t len = 0;

        T_TRUE(mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/ck", dir);
        T_EQ_I(ckpt_write(path, &ck, err), 0);
        rc = ckpt_load(path, &buf, &len, &out, err);
        T_EQ_I(rc, 0);
        T_EQ_U(len, m.len);
        T_TRUE(buf && memcmp(buf, m.p, m.len) == 0);
        free(buf);
        T_TRUE(ckpt_load("/nonexistent/ck", &buf, &len, &out, err) == -ENOENT);
        T_HAS(err, "cannot read");
        T_TRUE(buf == NULL);
        unlink(path);
        rmdir(dir);
    }
    free(m.p);
    return t_done();
}
