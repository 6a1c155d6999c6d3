/* checkpoint.c -- the checkpoint file's encoder, decoder (its seal and
 * its values), the atomic write and the sweep of a killed writer's temp
 * files (the format, the checks and the test hook: checkpoint.h).
 *
 * The decoder is written for hostile input (tests/fuzz_ckpt.c): every
 * length is checked against what is left of the buffer before it is used,
 * in 64-bit arithmetic that cannot wrap, and the seal (SHA-256, or the
 * HMAC under the job's key) is checked before any field is trusted; the
 * values are checked after the sizes, since a forger without a secret, or
 * a member with it, can always make the seal right. No libuv, no sockets:
 * the server's hooks (ps_server/setup.c, server.c) call in here.
 */
#include "checkpoint.h"

#include <assert.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/infile.h"
#include "base/outfile.h"
#include "train/optim.h"
#include "wire/auth.h"
#include "wire/proto.h"

/* ------------------------------------------------------------ bytes */

/* The integers and doubles are little-endian, as on the wire (proto.h's
 * byte helpers). */

/* ----------------------------------------------------------- encode */

uint64_t ckpt_size(const struct ckpt *ck)
{
    uint64_t sz = CKPT_HEADER_SIZE + CKPT_SUM_SIZE;

    for (uint32_t i = 0; i < ck->nsec; i++)
        sz += CKPT_SECTION_HEAD + ck->sec[i].len;
    return sz;
}

static void encode_header(const struct ckpt *ck, unsigned char *h)
{
    const struct ckpt_job *j = &ck->job;

    memset(h, 0, CKPT_HEADER_SIZE);
    memcpy(h, CKPT_MAGIC, 8);
    proto_put_u32(h + 8, CKPT_VERSION);
    proto_put_u32(h + 12, ck->nsec);
    proto_put_u32(h + 16, j->world);
    proto_put_u32(h + 20, j->dtype);
    proto_put_u32(h + 24, j->workload);
    proto_put_u32(h + 28, j->mistake);
    proto_put_u32(h + 32, j->shard_i);
    proto_put_u32(h + 36, j->shard_s);
    proto_put_u32(h + 40, j->per_step);
    proto_put_u64(h + 48, j->n);
    proto_put_u64(h + 56, j->lo);
    proto_put_u64(h + 64, j->hi);
    proto_put_u64(h + 72, j->seed);
    proto_put_u64(h + 80, j->batch);
    proto_put_f64(h + 88, j->lr);
    proto_put_u64(h + 96, ck->step);
    proto_put_u64(h + 104, ck->steps);
}

void ckpt_key_make(struct ckpt_key *key, const struct auth_key *secret)
{
    memset(key, 0, sizeof *key);
    if (secret && secret->keyed) {
        auth_key_derive(secret, CKPT_KEY_LABEL, key->k);
        key->keyed = 1;
    }
}

/* struct seal: the trailer being computed, SHA-256 or HMAC-SHA256. */
struct seal {
    int keyed;
    crypto_hash_sha256_state sha;
    crypto_auth_hmacsha256_state mac;
};

static void seal_init(struct seal *s, const struct ckpt_key *key)
{
    s->keyed = key && key->keyed;
    if (s->keyed)
        crypto_auth_hmacsha256_init(&s->mac, key->k, CKPT_KEY_SIZE);
    else
        crypto_hash_sha256_init(&s->sha);
}

/* seal_update: in pieces, because the hash's length argument is an
 * unsigned long long and a caller's is a size_t; 1 GiB at a time keeps
 * both happy. */
static void seal_update(struct seal *s, const unsigned char *p, uint64_t n)
{
    while (n > 0) {
        size_t k = n > ((uint64_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
        if (s->keyed)
            crypto_auth_hmacsha256_update(&s->mac, p, k);
        else
            crypto_hash_sha256_update(&s->sha, p, k);
        p += k;
        n -= k;
    }
}

static void seal_final(struct seal *s, unsigned char out[CKPT_SUM_SIZE])
{
    if (s->keyed)
        crypto_auth_hmacsha256_final(&s->mac, out);
    else
        crypto_hash_sha256_final(&s->sha, out);
    sodium_memzero(s, sizeof *s);
}

void ckpt_encode(const struct ckpt *ck, const struct ckpt_key *key,
                 void (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
    struct seal st;
    unsigned char h[CKPT_HEADER_SIZE], sum[CKPT_SUM_SIZE];

    assert(ck->nsec >= 1 && ck->nsec <= CKPT_MAX_SECTIONS);
    seal_init(&st, key);
    encode_header(ck, h);
    proto_put_u32(h + 44, st.keyed ? CKPT_SEAL_HMAC : CKPT_SEAL_SHA256);
    seal_update(&st, h, sizeof h);
    put(ctx, h, sizeof h);
    for (uint32_t i = 0; i < ck->nsec; i++) {
        const struct ckpt_section *s = &ck->sec[i];
        const unsigned char *p = s->data;
        uint64_t left = s->len;

        proto_put_u32(h, s->id);
        proto_put_u32(h + 4, s->flags);
        proto_put_u64(h + 8, s->len);
        seal_update(&st, h, CKPT_SECTION_HEAD);
        put(ctx, h, CKPT_SECTION_HEAD);
        seal_update(&st, p, left);
        while (left > 0) {
            size_t k = left > ((uint64_t)1 << 30) ? (size_t)1 << 30 : (size_t)left;
            put(ctx, p, k);
            p += k;
            left -= k;
        }
    }
    seal_final(&st, sum);
    put(ctx, sum, sizeof sum);
}

/* ----------------------------------------------------------- decode */

__attribute__((format(printf, 2, 3)))
static int bad(char *err, const char *fmt, ...)
{
    char msg[ERR_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    err_say(err, "%s", msg);
    return ERR_FORMAT;
}

static unsigned long long u(uint64_t x)
{
    return (unsigned long long)x;
}

const struct ckpt_section *ckpt_find(const struct ckpt *ck, uint32_t id)
{
    for (uint32_t i = 0; i < ck->nsec; i++)
        if (ck->sec[i].id == id)
            return &ck->sec[i];
    return NULL;
}

/* known: the sections this version reads. */
static int known(uint32_t id)
{
    return id == CKPT_SEC_WEIGHTS || id == CKPT_SEC_LOSS || id == CKPT_SEC_OPTIM ||
           id == CKPT_SEC_OPTIM_STATE;
}

/* check_job: the header's fields in range, the sections' sizes right. */
static int check_job(const struct ckpt *ck, char *err)
{
    const struct ckpt_job *j = &ck->job;
    const struct ckpt_section *w = ckpt_find(ck, CKPT_SEC_WEIGHTS), *l;
    size_t es = dtype_size((int)j->dtype);

    if (es == 0)
        return bad(err, "not a checkpoint: unknown dtype %u", (unsigned)j->dtype);
    if (j->world == 0 || j->world > 65536)
        return bad(err, "not a checkpoint: K %u out of range 1 .. 65536", (unsigned)j->world);
    if (j->shard_s == 0 || j->shard_i >= j->shard_s)
        return bad(err, "not a checkpoint: shard %u/%u", (unsigned)j->shard_i,
                   (unsigned)j->shard_s);
    if (!(j->lo < j->hi && j->hi <= j->n))
        return bad(err, "not a checkpoint: element range [%llu, %llu) empty or past n",
                   u(j->lo), u(j->hi));
    if (!(isfinite(j->lr) && j->lr > 0))
        return bad(err, "not a checkpoint: learning rate not finite and positive");
    if (!w)
        return bad(err, "not a checkpoint: no WEIGHTS section");
    if ((j->hi - j->lo) > UINT64_MAX / es || w->len != (j->hi - j->lo) * es)
        return bad(err, "not a checkpoint: WEIGHTS section of %llu bytes, %llu expected",
                   u(w->len), u((j->hi - j->lo) * es));
    l = ckpt_find(ck, CKPT_SEC_LOSS);
    if (l && (ck->step > UINT64_MAX / 8 || l->len != ck->step * 8))
        return bad(err, "not a checkpoint: LOSS section of %llu bytes, %llu expected",
                   u(l->len), u(ck->step * 8));
    return 0;
}

/* first_bad: the index of the first element of data[0..count) (dtype)
 * that is not finite or, with nonneg, is below zero; count if none. */
static uint64_t first_bad(const unsigned char *data, uint64_t count, uint32_t dtype,
                          int nonneg, double *x)
{
    for (uint64_t i = 0; i < count; i++) {
        if (dtype == DTYPE_F32) {
            float f;
            memcpy(&f, data + i * sizeof f, sizeof f);
            *x = f;
        } else {
            memcpy(x, data + i * sizeof *x, sizeof *x);
        }
        if (!isfinite(*x) || (nonneg && *x < 0))
            return i;
    }
    return count;
}

/* kind_slots: the state vectors of an optimizer kind (optim.h's
 * optim_slots, here so that the decoder needs no more than the enum); -1
 * for a kind this server does not know. */
static int kind_slots(uint32_t kind)
{
    switch (kind) {
    case OPTIM_SGD: return 0;
    case OPTIM_MOMENTUM: return 1;
    case OPTIM_ADAM: return 2;
    default: return -1;
    }
}

/* check_values: what the values may be (checkpoint.h, CHECKS), once the
 * sizes are known to be right: a forger who recomputed the seal, or a
 * member with the secret, gets this far, and nothing it wrote reaches the
 * store unchecked. */
static int check_values(const struct ckpt *ck, char *err)
{
    const struct ckpt_job *j = &ck->job;
    const struct ckpt_section *w = ckpt_find(ck, CKPT_SEC_WEIGHTS);
    const struct ckpt_section *oh = ckpt_find(ck, CKPT_SEC_OPTIM);
    const struct ckpt_section *os = ckpt_find(ck, CKPT_SEC_OPTIM_STATE);
    uint64_t count = j->hi - j->lo, i;
    size_t es = dtype_size((int)j->dtype);
    double x;

    if (ck->steps > CKPT_STEPS_MAX || ck->step > ck->steps)
        return bad(err, "checkpoint refused: step %llu out of range (0 .. steps %llu, "
                   "at most %llu)", u(ck->step), u(ck->steps), u(CKPT_STEPS_MAX));
    if ((i = first_bad(w->data, count, j->dtype, 0, &x)) < count)
        return bad(err, "checkpoint refused: weight %llu (element %llu) is %g, not finite",
                   u(i), u(j->lo + i), x);
    if (!oh && !os)
        return 0;
    if (!oh || !os || oh->len != CKPT_OPTIM_HEAD)
        return bad(err, "checkpoint refused: its optimizer sections are incomplete");
    {
        const unsigned char *p = oh->data;
        uint32_t kind = proto_get_u32(p);
        uint64_t t = proto_get_u64(p + 8);
        int slots = kind_slots(kind);

        if (slots < 0)
            return bad(err, "checkpoint refused: unknown optimizer kind %u", (unsigned)kind);
        if (proto_get_u32(p + 4) != 0)
            return bad(err, "checkpoint refused: optimizer field at 4 is %u, not 0",
                       (unsigned)proto_get_u32(p + 4));
        if (t > ck->step)
            return bad(err, "checkpoint refused: optimizer t %llu past step %llu", u(t),
                       u(ck->step));
        for (int k = 0; k < 4; k++)
            if (!isfinite(proto_get_f64(p + 16 + 8 * k)))
                return bad(err, "checkpoint refused: optimizer hyperparameter %d not finite",
                           k);
        if (os->len != (uint64_t)slots * count * es)
            return bad(err, "checkpoint refused: optimizer state of %llu bytes, %llu "
                       "expected", u(os->len), u((uint64_t)slots * count * es));
        for (int k = 0; k < slots; k++) {
            const unsigned char *v = (const unsigned char *)os->data + (uint64_t)k * count * es;
            int second = kind == OPTIM_ADAM && k == 1;

            if ((i = first_bad(v, count, j->dtype, second, &x)) < count)
                return bad(err, "checkpoint refused: optimizer state %s element %llu is %g, "
                           "%s", second ? "v (second moment)" : "m", u(j->lo + i), x,
                           second && isfinite(x) ? "negative" : "not finite");
        }
    }
    return 0;
}

/* check_seal: the version and the trailer against the key (checkpoint.h,
 * VERSIONS): 0 when buf[0..len) is sealed as this job's must be. */
static int check_seal(const unsigned char *buf, size_t len, const struct ckpt_key *key,
                      uint32_t ver, char *err)
{
    int keyed = key && key->keyed;
    uint32_t seal = ver == CKPT_VERSION_V1 ? CKPT_SEAL_SHA256 : proto_get_u32(buf + 44);
    unsigned char sum[CKPT_SUM_SIZE];
    uint64_t body = len - CKPT_SUM_SIZE;
    struct seal st;
    int rc;

    if (ver == CKPT_VERSION_V1 && proto_get_u32(buf + 44) != 0)
        return bad(err, "not a checkpoint: reserved field %u, not 0",
                   (unsigned)proto_get_u32(buf + 44));
    if (seal != CKPT_SEAL_SHA256 && seal != CKPT_SEAL_HMAC)
        return bad(err, "not a checkpoint: unknown seal %u", (unsigned)seal);
    if (keyed && ver == CKPT_VERSION_V1)
        return bad(err, "checkpoint version 1 has no MAC, and this job has a secret: "
                   "refused (resume it without a secret, or start afresh)");
    if (keyed && seal == CKPT_SEAL_SHA256)
        return bad(err, "checkpoint written without a secret (an unkeyed SHA-256), and "
                   "this job has one: refused");
    if (!keyed && seal == CKPT_SEAL_HMAC)
        return bad(err, "checkpoint sealed with a job's secret, and this job has none "
                   "(--secret-file, PSRING_SECRET): cannot check it");
    seal_init(&st, key);
    seal_update(&st, buf, body);
    seal_final(&st, sum);
    rc = sodium_memcmp(sum, buf + body, CKPT_SUM_SIZE);
    sodium_memzero(sum, sizeof sum);
    if (rc == 0)
        return 0;
    if (keyed)
        return bad(err, "checkpoint refused: its MAC does not match this job's secret "
                   "(written under another secret, or damaged; %zu bytes)", len);
    return bad(err, "checkpoint damaged: the SHA-256 checksum does not match "
               "(%zu bytes)", len);
}

int ckpt_decode(const unsigned char *buf, size_t len, const struct ckpt_key *key,
                struct ckpt *out, char *err)
{
    uint64_t off, body;
    uint32_t ver;
    int rc;

    memset(out, 0, sizeof *out);
    if (len < CKPT_HEADER_SIZE + CKPT_SUM_SIZE)
        return bad(err, "not a checkpoint: %zu bytes, at least %d", len,
                   CKPT_HEADER_SIZE + CKPT_SUM_SIZE);
    if (memcmp(buf, CKPT_MAGIC, 8) != 0)
        return bad(err, "not a checkpoint: wrong magic (not \"PSRGCKPT\")");
    ver = proto_get_u32(buf + 8);
    if (ver != CKPT_VERSION && ver != CKPT_VERSION_V1)
        return bad(err, "checkpoint version %u, this server reads versions %d and %d",
                   (unsigned)ver, CKPT_VERSION_V1, CKPT_VERSION);
    if ((rc = check_seal(buf, len, key, ver, err)) != 0)
        return rc;
    body = len - CKPT_SUM_SIZE;
    out->version = ver;
    out->nsec = proto_get_u32(buf + 12);
    if (out->nsec < 1 || out->nsec > CKPT_MAX_SECTIONS)
        return bad(err, "not a checkpoint: %u sections, 1 .. %d", (unsigned)out->nsec,
                   CKPT_MAX_SECTIONS);
    out->job = (struct ckpt_job){
        .world = proto_get_u32(buf + 16), .dtype = proto_get_u32(buf + 20), .workload = proto_get_u32(buf + 24),
        .mistake = proto_get_u32(buf + 28), .shard_i = proto_get_u32(buf + 32), .shard_s = proto_get_u32(buf + 36),
        .per_step = proto_get_u32(buf + 40), .n = proto_get_u64(buf + 48), .lo = proto_get_u64(buf + 56),
        .hi = proto_get_u64(buf + 64), .seed = proto_get_u64(buf + 72), .batch = proto_get_u64(buf + 80),
        .lr = proto_get_f64(buf + 88),
    };
    out->step = proto_get_u64(buf + 96);
    out->steps = proto_get_u64(buf + 104);
    off = CKPT_HEADER_SIZE;
    for (uint32_t i = 0; i < out->nsec; i++) {
        struct ckpt_section *s = &out->sec[i];

        if (body - off < CKPT_SECTION_HEAD)
            return bad(err, "checkpoint truncated: section %u of %u has no head",
                       (unsigned)i, (unsigned)out->nsec);
        s->id = proto_get_u32(buf + off);
        s->flags = proto_get_u32(buf + off + 4);
        s->len = proto_get_u64(buf + off + 8);
        off += CKPT_SECTION_HEAD;
        if (s->len > body - off)
            return bad(err, "checkpoint truncated: section id %u says %llu bytes",
                       (unsigned)s->id, u(s->len));
        if (s->flags & ~CKPT_REQUIRED)
            return bad(err, "not a checkpoint: section id %u has unknown flags %#x",
                       (unsigned)s->id, (unsigned)s->flags);
        for (uint32_t k = 0; k < i; k++)
            if (out->sec[k].id == s->id)
                return bad(err, "not a checkpoint: section id %u twice", (unsigned)s->id);
        if ((s->flags & CKPT_REQUIRED) && !known(s->id))
            return bad(err, "checkpoint needs section id %u, which this server does not "
                       "know (written by a newer one?)", (unsigned)s->id);
        s->data = buf + off;
        off += s->len;
    }
    if (off != body)
        return bad(err, "not a checkpoint: %llu bytes after the sections",
                   u(body - off));
    if ((rc = check_job(out, err)) != 0)
        return rc;
    return check_values(out, err);
}

int ckpt_match(const struct ckpt *ck, const struct ckpt_job *w, char *err)
{
    const struct ckpt_job *h = &ck->job;
    const char *what = NULL;
    unsigned long long a = 0, b = 0;

#define FIELD(f, name) \
    if (!what && h->f != w->f) { what = name; a = h->f; b = w->f; }
    FIELD(world, "K")
    FIELD(n, "n (parameters)")
    FIELD(dtype, "dtype")
    FIELD(workload, "workload")
    FIELD(seed, "seed")
    FIELD(batch, "B (batch)")
    FIELD(mistake, "mistake")
    FIELD(per_step, "pushes per step (--micro with sync-every-micro)")
    FIELD(shard_s, "shard count S")
    FIELD(shard_i, "shard index I")
    FIELD(lo, "first element")
    FIELD(hi, "end of the element range")
#undef FIELD
    if (what) {
        err_say(err, "checkpoint of another job: %s %llu in the checkpoint, %llu here", what,
                a, b);
        return ERR_MISMATCH;
    }
    if (memcmp(&h->lr, &w->lr, sizeof h->lr) != 0) {     /* the same bits */
        err_say(err, "checkpoint of another job: lr %.17g in the checkpoint, %.17g here",
                h->lr, w->lr);
        return ERR_MISMATCH;
    }
    return 0;
}

/* ------------------------------------------------------------- files */

static void put_outfile(void *ctx, const void *p, size_t n)
{
    outfile_write(ctx, p, n);
}

/* kill_before_rename: the test hook (checkpoint.h). */
static void kill_before_rename(const struct outfile *o)
{
    fprintf(stderr, "ps_server: %s: killing myself before the rename of %s (a test)\n",
            CKPT_KILL_ENV, o->tmp);
    raise(SIGKILL);
}

int ckpt_write(const char *path, const struct ckpt *ck, const struct ckpt_key *key, char *err)
{
    static struct outfile o;    /* 64 KiB: not on the event loop's stack */
    const char *hook = getenv(CKPT_KILL_ENV);
    int rc;

    if ((rc = outfile_open(&o, "--checkpoint", path, err)) != 0)
        return rc;
    if (hook && *hook && strtoull(hook, NULL, 10) == ck->step)
        o.before_rename = kill_before_rename;
    ckpt_encode(ck, key, put_outfile, &o);
    return outfile_commit(&o, err);
}

int ckpt_load(const char *path, const struct ckpt_key *key, unsigned char **buf, size_t *len,
              struct ckpt *out, char *err)
{
    struct stat st;
    size_t got = 0;
    int fd, rc;

    *buf = NULL;
    *len = 0;
    /* A FIFO, a device or a folder is refused unread (infile.h). */
    if ((fd = infile_open("--resume", path, err)) < 0)
        return fd;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        err_say(err, "--resume: cannot read %.300s: %s", path, strerror(-rc));
        close(fd);
        return rc;
    }
    if ((uint64_t)st.st_size > CKPT_FILE_MAX || (uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        err_say(err, "--resume: %.300s: not a checkpoint: %llu bytes", path,
                (unsigned long long)st.st_size);
        return ERR_FORMAT;
    }
    *buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
    if (!*buf) {
        close(fd);
        err_say(err, "--resume: %.300s: out of memory for %llu bytes", path,
                (unsigned long long)st.st_size);
        return -ENOMEM;
    }
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, *buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -errno : -EIO;
            err_say(err, "--resume: cannot read %.300s: %s", path,
                    r < 0 ? strerror(-rc) : "the file shrank while read");
            close(fd);
            free(*buf);
            *buf = NULL;
            return rc;
        }
        got += (size_t)r;
    }
    close(fd);
    *len = got;
    {
        char why[ERR_LEN];
        if ((rc = ckpt_decode(*buf, got, key, out, why)) != 0) {
            err_say(err, "--resume: %.300s: %s", path, why);
            free(*buf);
            *buf = NULL;
            return rc;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ sweep */

/* stale_pid: the PID of name when it is ".BASE.tmp.PID.N" (outfile.c's
 * make_tmp) for this base, else 0. */
static long stale_pid(const char *name, const char *base)
{
    size_t bl = strlen(base);
    const char *p;
    char *end;
    long pid;

    if (name[0] != '.' || strncmp(name + 1, base, bl) != 0 ||
        strncmp(name + 1 + bl, ".tmp.", 5) != 0)
        return 0;
    p = name + 1 + bl + 5;
    if (*p < '1' || *p > '9')
        return 0;
    errno = 0;
    pid = strtol(p, &end, 10);
    if (errno != 0 || *end != '.' || pid <= 0 || pid > INT32_MAX)
        return 0;
    for (p = end + 1; *p >= '0' && *p <= '9'; p++)
        ;
    if (p == end + 1 || *p != '\0')
        return 0;
    return pid;
}

/* sweep_one: the stale temp files of the checkpoint at path (not a
 * symlink's target). */
static int sweep_one(const char *path)
{
    char dir[OUTFILE_PATH_MAX];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    struct dirent *e;
    DIR *d;
    int removed = 0;

    if (!*base || strlen(path) >= sizeof dir)
        return 0;
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    if (!(d = opendir(dir)))
        return 0;
    while ((e = readdir(d)) != NULL) {
        long pid = stale_pid(e->d_name, base);
        struct stat st;

        if (pid == 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;       /* alive (or not ours to signal): not ours to remove */
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

int ckpt_sweep(const char *path)
{
    char real[PATH_MAX];
    struct stat st;
    int removed = sweep_one(path);

    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, real) &&
        strcmp(real, path) != 0)
        removed += sweep_one(real);
    return removed;
}
