/* test_checkpoint.c -- the checkpoint file's encoder and decoder
 * (common/ps/checkpoint.h): a round trip, the write through outfile,
 * every truncation, a flipped byte (bad checksum), a bad magic and
 * version, an unknown required section and a skipped optional one, and a
 * checkpoint of another job refused by ckpt_match; version 2's seal: the
 * HMAC under the job's key (another secret's refused, an unkeyed file
 * refused by a job with a secret and a keyed one by a job without),
 * version 1 read only without a secret; the value checks, with the seal
 * recomputed as a forger (SHA-256) or a member (HMAC) would: NaN and Inf
 * weights, a negative Adam second moment, a step or t out of range; and
 * ckpt_sweep: a dead writer's temp files go, a live one's stay.
 */
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ps/checkpoint.h"
#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/optim.h"
#include "wire/auth.h"
#include "wire/proto.h"

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

    ckpt_encode(ck, NULL, put_mem, &m);
    return m;
}

/* reseal: the checksum of a buffer edited on purpose, made right again. */
static void reseal(struct mem *m)
{
    crypto_hash_sha256(m->p + m->len - CKPT_SUM_SIZE, m->p, m->len - CKPT_SUM_SIZE);
}

/* reseal_key: the trailer made right again under key (NULL: SHA-256). */
static void reseal_key(struct mem *m, const struct ckpt_key *key)
{
    if (key)
        crypto_auth_hmacsha256(m->p + m->len - CKPT_SUM_SIZE, m->p, m->len - CKPT_SUM_SIZE,
                               key->k);
    else
        reseal(m);
}

static void key_of(struct ckpt_key *key, const char *secret)
{
    struct auth_key a = { .keyed = 1, .len = strlen(secret) };

    memcpy(a.key, secret, a.len);
    ckpt_key_make(key, &a);
}

/* adam_sample: sample()'s job with Adam's sections (t 3, m then v). */
static double adam_m_v[10] = { 0.1, -0.2, 0.3, 0, 5, 1e-3, 0, 2, 1e-300, 4 };
static unsigned char adam_head[CKPT_OPTIM_HEAD];

static struct ckpt adam_sample(void)
{
    struct ckpt ck = sample();

    memset(adam_head, 0, sizeof adam_head);
    proto_put_u32(adam_head, OPTIM_ADAM);
    proto_put_u64(adam_head + 8, 3);
    proto_put_f64(adam_head + 16, 0.9);
    proto_put_f64(adam_head + 24, 0.9);
    proto_put_f64(adam_head + 32, 0.999);
    proto_put_f64(adam_head + 40, 1e-8);
    ck.sec[2] = (struct ckpt_section){ CKPT_SEC_OPTIM, CKPT_REQUIRED, sizeof adam_head,
                                       adam_head };
    ck.sec[3] = (struct ckpt_section){ CKPT_SEC_OPTIM_STATE, CKPT_REQUIRED, sizeof adam_m_v,
                                       adam_m_v };
    ck.nsec = 4;
    return ck;
}

/* forged: the encoding of ck under key, then `at` (an offset of the
 * file) set to the f64 x or, with x NaN and bits, the u64 bits; resealed
 * as a forger would. Is it refused, with `want` in the reason? */
static int forged_refused(const struct ckpt *ck, const struct ckpt_key *key, size_t at,
                          double x, const char *want)
{
    struct mem m = { NULL, 0, 0 };
    struct ckpt out;
    char err[ERR_LEN] = "";
    int rc;

    ckpt_encode(ck, key, put_mem, &m);
    proto_put_f64(m.p + at, x);
    reseal_key(&m, key);
    rc = ckpt_decode(m.p, m.len, key, &out, err);
    free(m.p);
    if (rc == ERR_FORMAT && strstr(err, want))
        return 1;
    fprintf(stderr, "     forged %g at %zu: rc %d, \"%s\" (wanted \"%s\")\n", x, at, rc, err,
            want);
    return 0;
}

/* refused_with: m (already resealed) refused with want in the reason;
 * want NULL: accepted. */
static int refused_with(const struct mem *m, const struct ckpt_key *key, const char *want)
{
    struct ckpt out;
    char err[ERR_LEN] = "";
    int rc = ckpt_decode(m->p, m->len, key, &out, err);

    if (want ? rc == ERR_FORMAT && strstr(err, want) : rc == 0)
        return 1;
    fprintf(stderr, "     rc %d, \"%s\" (wanted \"%s\")\n", rc, err, want ? want : "ok");
    return 0;
}

/* w_at: the file offset of weight i of sample(); state_at: of Adam's
 * state element i (m 0..4, v 5..9) in adam_sample(). */
static size_t w_at(int i)
{
    return CKPT_HEADER_SIZE + CKPT_SECTION_HEAD + 8 * (size_t)i;
}

static size_t state_at(int i)
{
    return CKPT_HEADER_SIZE + 4 * CKPT_SECTION_HEAD + sizeof w + sizeof loss +
           CKPT_OPTIM_HEAD + 8 * (size_t)i;
}

static void touch(const char *dir, const char *name)
{
    char p[256];
    FILE *f;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    if ((f = fopen(p, "w")) != NULL)
        fclose(f);
}

static int exists(const char *dir, const char *name)
{
    char p[256];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

/* dead_pid: a PID that existed and is gone (a child, reaped). */
static long dead_pid(void)
{
    pid_t p = fork();

    if (p == 0)
        _exit(0);
    if (p > 0)
        waitpid(p, NULL, 0);
    return (long)p;
}

static void test_v2(void)
{
    struct ckpt ck = sample(), ad = adam_sample(), out;
    struct ckpt_key ka, kb;
    struct mem m = { NULL, 0, 0 };
    char err[ERR_LEN] = "";
    int all;

    key_of(&ka, "secret-A-0123456789abcdef");
    key_of(&kb, "secret-B-0123456789abcdef");

    T_CASE("checkpoint-2.1", "keyed: round trip; another secret's, an unkeyed one under a secret "
           "and a keyed one without: refused");
    ckpt_encode(&ck, &ka, put_mem, &m);
    T_EQ_U(proto_get_u32(m.p + 8), CKPT_VERSION);
    T_EQ_U(proto_get_u32(m.p + 44), CKPT_SEAL_HMAC);
    T_EQ_I(ckpt_decode(m.p, m.len, &ka, &out, err), 0);
    T_EQ_I(ckpt_decode(m.p, m.len, &kb, &out, err), ERR_FORMAT);
    T_HAS(err, "MAC does not match this job's secret");
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), ERR_FORMAT);
    T_HAS(err, "this job has none");
    reseal(&m);         /* keyed header, SHA-256 trailer: still refused */
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), ERR_FORMAT);
    free(m.p);
    m = encode(&ck);
    T_EQ_U(proto_get_u32(m.p + 44), CKPT_SEAL_SHA256);
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), 0);
    T_EQ_I(ckpt_decode(m.p, m.len, &ka, &out, err), ERR_FORMAT);
    T_HAS(err, "written without a secret");
    proto_put_u32(m.p + 44, CKPT_SEAL_HMAC);     /* relabelled, MAC forged with no key */
    reseal(&m);
    T_EQ_I(ckpt_decode(m.p, m.len, &ka, &out, err), ERR_FORMAT);
    T_HAS(err, "MAC");

    T_CASE("checkpoint-2.2", "version 1 is read without a secret, refused with one");
    free(m.p);
    m = encode(&ck);
    proto_put_u32(m.p + 8, CKPT_VERSION_V1);
    reseal(&m);
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), 0);
    T_EQ_U(out.version, CKPT_VERSION_V1);
    T_EQ_I(ckpt_decode(m.p, m.len, &ka, &out, err), ERR_FORMAT);
    T_HAS(err, "version 1 has no MAC");
    proto_put_u32(m.p + 44, 1);                  /* version 1's field 44 is reserved */
    reseal(&m);
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), ERR_FORMAT);
    T_HAS(err, "reserved");
    free(m.p);

    T_CASE("checkpoint-2.3", "forged values, seal recomputed (SHA-256, and HMAC by a member): "
           "NaN, Inf weights, negative Adam v, NaN m, step and t out of range refused");
    all = 1;
    for (int keyed = 0; keyed < 2; keyed++) {
        const struct ckpt_key *k = keyed ? &ka : NULL;
        struct mem g = { NULL, 0, 0 };

        all &= forged_refused(&ck, k, w_at(0), NAN, "weight 0 (element 5) is nan");
        all &= forged_refused(&ck, k, w_at(4), INFINITY, "weight 4 (element 9) is inf");
        all &= forged_refused(&ck, k, w_at(2), -INFINITY, "is -inf");
        all &= forged_refused(&ad, k, state_at(6), -1e-300, "v (second moment) element 6 is "
                              "-1e-300, negative");
        all &= forged_refused(&ad, k, state_at(1), NAN, "state m element 6 is nan");
        all &= forged_refused(&ad, k, state_at(9), INFINITY, "v (second moment) element 9 is inf");
        /* step 21 > steps 20; steps past the bound; t 4 > step 3 (without
         * LOSS, whose length follows the step) */
        ck.nsec = 1;
        ckpt_encode(&ck, k, put_mem, &g);
        ck.nsec = 2;
        proto_put_u64(g.p + 96, 21);
        reseal_key(&g, k);
        all &= refused_with(&g, k, "step 21 out of range");
        proto_put_u64(g.p + 96, 3);
        proto_put_u64(g.p + 104, CKPT_STEPS_MAX + 1);
        reseal_key(&g, k);
        all &= refused_with(&g, k, "at most 2147483647");
        free(g.p);
        g = (struct mem){ NULL, 0, 0 };
        ckpt_encode(&ad, k, put_mem, &g);
        proto_put_u64(g.p + state_at(0) - CKPT_OPTIM_HEAD - CKPT_SECTION_HEAD + 8, 4);
        reseal_key(&g, k);
        all &= refused_with(&g, k, "t 4 past step 3");
        free(g.p);
        /* -0.0 is a second moment Adam can hold: accepted */
        g = (struct mem){ NULL, 0, 0 };
        ckpt_encode(&ad, k, put_mem, &g);
        proto_put_f64(g.p + state_at(6), -0.0);
        reseal_key(&g, k);
        all &= refused_with(&g, k, NULL);
        free(g.p);
    }
    T_TRUE(all);
}

static void test_sweep(void)
{
    char dir[] = "/tmp/test_ckpt_sweep.XXXXXX", path[128], name[128], live[128], other[128],
         keep2[128];
    long dead = dead_pid();

    T_CASE("checkpoint-3.1", "ckpt_sweep: a dead writer's temp files go; a live one's, another "
           "file's and odd names stay");
    T_TRUE(mkdtemp(dir) != NULL);
    T_TRUE(dead > 0 && kill((pid_t)dead, 0) != 0);
    snprintf(path, sizeof path, "%s/run.ck", dir);
    touch(dir, "run.ck");
    snprintf(name, sizeof name, ".run.ck.tmp.%ld.0", dead);
    touch(dir, name);
    snprintf(live, sizeof live, ".run.ck.tmp.%ld.3", (long)getppid());
    touch(dir, live);
    snprintf(other, sizeof other, ".other.ck.tmp.%ld.0", dead);
    touch(dir, other);
    snprintf(keep2, sizeof keep2, ".run.ck.tmp.%ld.0x", dead);
    touch(dir, keep2);
    touch(dir, ".run.ck.tmp.0.0");
    T_EQ_I(ckpt_sweep(path), 1);
    T_TRUE(!exists(dir, name));
    T_TRUE(exists(dir, live));
    T_TRUE(exists(dir, other));
    T_TRUE(exists(dir, keep2));
    T_TRUE(exists(dir, ".run.ck.tmp.0.0"));
    T_TRUE(exists(dir, "run.ck"));
    T_EQ_I(ckpt_sweep(path), 0);
    {
        char p[256];
        const char *all[] = { live, other, keep2, ".run.ck.tmp.0.0", "run.ck" };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
            snprintf(p, sizeof p, "%s/%s", dir, all[i]);
            unlink(p);
        }
        rmdir(dir);
    }
}

/* forge: tests/t_ps_ckpt.sh's forger (test_checkpoint forge IN OUT WHAT):
 * the checkpoint IN (read under PSRING_SECRET's key, or none) with one
 * value spoiled, its seal recomputed under the same key, into OUT. WHAT:
 * nan (weight 0), inf (the last weight), negv (Adam's v of element 0),
 * step (steps + 1), v1 (rewritten as version 1, SHA-256). Exit 0, or 1
 * with a line. */
static int forge(const char *in, const char *outpath, const char *what)
{
    const char *env = getenv("PSRING_SECRET");
    struct ckpt_key key;
    struct auth_key a;
    struct ckpt ck;
    struct mem m;
    unsigned char *buf;
    size_t len, es;
    char err[ERR_LEN];
    const struct ckpt_section *ws, *st;
    uint64_t count;
    unsigned char *at = NULL;
    FILE *f;

    if (auth_key_load(&a, NULL, env, err) != 0)
        return fprintf(stderr, "forge: %s\n", err), 1;
    ckpt_key_make(&key, &a);
    if (ckpt_load(in, &key, &buf, &len, &ck, err) != 0)
        return fprintf(stderr, "forge: %s\n", err), 1;
    m = (struct mem){ buf, len, len };
    ws = ckpt_find(&ck, CKPT_SEC_WEIGHTS);
    st = ckpt_find(&ck, CKPT_SEC_OPTIM_STATE);
    es = dtype_size((int)ck.job.dtype);
    count = ck.job.hi - ck.job.lo;
    if (strcmp(what, "nan") == 0 || strcmp(what, "inf") == 0) {
        at = (unsigned char *)ws->data + (what[0] == 'n' ? 0 : (count - 1) * es);
        if (es == 4) {
            float x = what[0] == 'n' ? NAN : INFINITY;
            memcpy(at, &x, 4);
        } else {
            double x = what[0] == 'n' ? NAN : INFINITY;
            memcpy(at, &x, 8);
        }
    } else if (strcmp(what, "negv") == 0 && st && st->len == 2 * count * es) {
        at = (unsigned char *)st->data + count * es;
        if (es == 4) {
            float x = -1;
            memcpy(at, &x, 4);
        } else {
            double x = -1;
            memcpy(at, &x, 8);
        }
    } else if (strcmp(what, "step") == 0 && !ckpt_find(&ck, CKPT_SEC_LOSS)) {
        proto_put_u64(buf + 96, ck.steps + 1);
    } else if (strcmp(what, "v1") == 0) {
        proto_put_u32(buf + 8, CKPT_VERSION_V1);
        proto_put_u32(buf + 44, 0);
        key.keyed = 0;
    } else {
        fprintf(stderr, "forge: cannot %s %s\n", what, in);
        free(buf);
        return 1;
    }
    reseal_key(&m, key.keyed ? &key : NULL);
    if (!(f = fopen(outpath, "wb")) || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "forge: cannot write %s\n", outpath);
        free(buf);
        return 1;
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "forge") == 0)
        return forge(argv[2], argv[3], argv[4]);

    struct ckpt ck = sample(), out;
    struct mem m = encode(&ck);
    char err[ERR_LEN] = "";
    int rc, all;

    T_CASE("checkpoint-1.1", "round trip: every header field and section comes back");
    T_EQ_U(m.len, ckpt_size(&ck));
    rc = ckpt_decode(m.p, m.len, NULL, &out, err);
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
        if (ckpt_decode(m.p, k, NULL, &out, err) != ERR_FORMAT)
            all = 0;
    T_TRUE(all);
    ckpt_decode(m.p, m.len - 1, NULL, &out, err);
    T_HAS(err, "checksum");

    T_CASE("checkpoint-1.3", "each flipped byte fails the checksum (or the magic)");
    all = 1;
    for (size_t k = 0; k < m.len; k++) {
        m.p[k] ^= 0x01;
        if (ckpt_decode(m.p, m.len, NULL, &out, err) != ERR_FORMAT)
            all = 0;
        m.p[k] ^= 0x01;
    }
    T_TRUE(all);
    m.p[CKPT_HEADER_SIZE + 20] ^= 0x40;
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), ERR_FORMAT);
    T_HAS(err, "checksum");
    m.p[CKPT_HEADER_SIZE + 20] ^= 0x40;

    T_CASE("checkpoint-1.4", "bad magic, newer version, a byte too many: refused by name");
    m.p[0] = 'X';
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), ERR_FORMAT);
    T_HAS(err, "magic");
    m.p[0] = 'P';
    m.p[8] = 3;
    reseal(&m);
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), ERR_FORMAT);
    T_HAS(err, "version 3");
    m.p[8] = 2;
    reseal(&m);
    T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), 0);
    {
        struct mem big = { NULL, 0, 0 };
        put_mem(&big, m.p, m.len - CKPT_SUM_SIZE);
        put_mem(&big, "x", 1);
        put_mem(&big, m.p + m.len - CKPT_SUM_SIZE, CKPT_SUM_SIZE);
        reseal(&big);
        T_EQ_I(ckpt_decode(big.p, big.len, NULL, &out, err), ERR_FORMAT);
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
        T_EQ_I(ckpt_decode(m2.p, m2.len, NULL, &out, err), ERR_FORMAT);
        T_HAS(err, "section id 18");
        free(m2.p);
        c2.sec[2].flags = 0;
        m2 = encode(&c2);
        T_EQ_I(ckpt_decode(m2.p, m2.len, NULL, &out, err), 0);
        T_EQ_U(out.nsec, 3);
        free(m2.p);
        c2.sec[0].len = sizeof w - 8;
        m2 = encode(&c2);
        T_EQ_I(ckpt_decode(m2.p, m2.len, NULL, &out, err), ERR_FORMAT);
        T_HAS(err, "WEIGHTS");
        free(m2.p);
        c2 = sample();
        c2.sec[1] = c2.sec[0];
        m2 = encode(&c2);
        T_EQ_I(ckpt_decode(m2.p, m2.len, NULL, &out, err), ERR_FORMAT);
        T_HAS(err, "twice");
        free(m2.p);
    }

    T_CASE("checkpoint-1.6", "a checkpoint of another job is refused, naming the field");
    {
        struct ckpt_job j = ck.job;

        T_EQ_I(ckpt_decode(m.p, m.len, NULL, &out, err), 0);
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
        T_EQ_I(ckpt_write(path, &ck, NULL, err), 0);
        rc = ckpt_load(path, NULL, &buf, &len, &out, err);
        T_EQ_I(rc, 0);
        T_EQ_U(len, m.len);
        T_TRUE(buf && memcmp(buf, m.p, m.len) == 0);
        free(buf);
        T_TRUE(ckpt_load("/nonexistent/ck", NULL, &buf, &len, &out, err) == -ENOENT);
        T_HAS(err, "cannot read");
        T_TRUE(buf == NULL);
        unlink(path);
        rmdir(dir);
    }
    free(m.p);
    test_v2();
    test_sweep();
    return t_done();
}
