/* fuzz_ckpt.c -- fuzz target for the checkpoint decoder
 * (common/ps/checkpoint.c: ckpt_decode, ckpt_match).
 *
 * Arbitrary bytes go in as a checkpoint file, read by a job without a
 * secret and by one with a secret. The invariants, each an abort() when
 * broken: a refusal comes with a reason; what is accepted has its
 * sections inside the input, a WEIGHTS section of (hi - lo) elements, every
 * weight and every optimizer state element finite and Adam's second
 * moments >= 0 (checked again here, apart from the decoder's loop),
 * step <= steps; a job with a secret accepts only a version-2 file sealed
 * with the HMAC; and it encodes again to the very same bytes (a version-1
 * file: the same but for the version, seal field and trailer). Most
 * mutations break the seal, so the target also feeds each input with its
 * seal made right again, as a forger would (SHA-256, read without a
 * secret) and as a member holding the secret would (the HMAC under the
 * job's key, read with it): that reaches the value checks behind it.
 * Built like fuzz_proto.c: tests/fuzzdrv.c (make check) or libFuzzer
 * (make fuzz).
 */
#include <float.h>
#include <math.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps/checkpoint.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/optim.h"
#include "wire/auth.h"
#include "wire/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

const char *const fuzz_name = "ckpt-fuzz";

/* Seed 1, unkeyed: K 2, f32, n 8, shard 1/2 = [4, 8), step 2 with its
 * losses. Seed 2, keyed: the same shard in f64 with Adam's sections. Seed
 * 3: seed 1 as version 1. Each holds values one bit flip from a refusal:
 * FLT_MAX and DBL_MAX (an exponent bit away from Inf or NaN), Adam's v
 * of the least subnormal (the sign bit away from negative). */
#define SEED1_LEN (CKPT_HEADER_SIZE + 2 * CKPT_SECTION_HEAD + 16 + 16 + CKPT_SUM_SIZE)
#define SEED2_LEN (CKPT_HEADER_SIZE + 3 * CKPT_SECTION_HEAD + 32 + CKPT_OPTIM_HEAD + 64 + \
                   CKPT_SUM_SIZE)
static uint8_t seed_one[SEED1_LEN], seed_two[SEED2_LEN], seed_three[SEED1_LEN];
const uint8_t *const fuzz_seeds[] = { seed_one, seed_two, seed_three };
const size_t fuzz_seed_sizes[] = { SEED1_LEN, SEED2_LEN, SEED1_LEN };
const size_t fuzz_nseeds = 3;

static struct ckpt_key job_key;        /* the secret's; keyed */

struct mem {
    uint8_t *p;
    size_t len, cap;
};

static void put_mem(void *ctx, const void *p, size_t n)
{
    struct mem *m = ctx;

    if (m->len + n > m->cap)
        abort();                /* ckpt_size said how much */
    memcpy(m->p + m->len, p, n);
    m->len += n;
}

__attribute__((constructor)) static void make_seeds(void)
{
    static const float w[4] = { 1, FLT_MAX, 3, 4 };
    static const double w2[4] = { 1, -2, DBL_MAX, 0.5 }, loss[2] = { 0.5, 0.25 };
    static const double mv[8] = { 0.1, -0.2, 0.3, 0, 1e-3, 0, 2, 4.9406564584124654e-324 };
    static struct auth_key secret = { .keyed = 1, .len = 16 };
    unsigned char oh[CKPT_OPTIM_HEAD];
    struct ckpt ck;
    struct mem m = { seed_one, 0, SEED1_LEN };

    memcpy(secret.key, "a secret for us.", 16);
    ckpt_key_make(&job_key, &secret);
    memset(&ck, 0, sizeof ck);
    ck.job = (struct ckpt_job){ .world = 2, .dtype = DTYPE_F32, .workload = 1, .shard_i = 1,
                                .shard_s = 2, .per_step = 1, .n = 8, .lo = 4, .hi = 8,
                                .seed = 1, .batch = 64, .lr = 0.5 };
    ck.step = 2;
    ck.steps = 10;
    ck.nsec = 2;
    ck.sec[0] = (struct ckpt_section){ CKPT_SEC_WEIGHTS, CKPT_REQUIRED, sizeof w, w };
    ck.sec[1] = (struct ckpt_section){ CKPT_SEC_LOSS, 0, sizeof loss, loss };
    if (ckpt_size(&ck) != SEED1_LEN)
        abort();
    ckpt_encode(&ck, NULL, put_mem, &m);
    memcpy(seed_three, seed_one, SEED1_LEN);
    proto_put_u32(seed_three + 8, CKPT_VERSION_V1);
    crypto_hash_sha256(seed_three + SEED1_LEN - CKPT_SUM_SIZE, seed_three,
                       SEED1_LEN - CKPT_SUM_SIZE);

    memset(oh, 0, sizeof oh);
    proto_put_u32(oh, OPTIM_ADAM);
    proto_put_u64(oh + 8, 2);
    proto_put_f64(oh + 16, 0.9);
    proto_put_f64(oh + 24, 0.9);
    proto_put_f64(oh + 32, 0.999);
    proto_put_f64(oh + 40, 1e-8);
    ck.job.dtype = DTYPE_F64;
    ck.nsec = 3;
    ck.sec[0] = (struct ckpt_section){ CKPT_SEC_WEIGHTS, CKPT_REQUIRED, sizeof w2, w2 };
    ck.sec[1] = (struct ckpt_section){ CKPT_SEC_OPTIM, CKPT_REQUIRED, sizeof oh, oh };
    ck.sec[2] = (struct ckpt_section){ CKPT_SEC_OPTIM_STATE, CKPT_REQUIRED, sizeof mv, mv };
    m = (struct mem){ seed_two, 0, SEED2_LEN };
    if (ckpt_size(&ck) != SEED2_LEN)
        abort();
    ckpt_encode(&ck, &job_key, put_mem, &m);
}

/* value_at: element i of a section of dtype. */
static double value_at(const void *p, uint64_t i, uint32_t dtype)
{
    const unsigned char *b = p;

    if (dtype == DTYPE_F32) {
        float f;
        memcpy(&f, b + i * sizeof f, sizeof f);
        return f;
    } else {
        double d;
        memcpy(&d, b + i * sizeof d, sizeof d);
        return d;
    }
}

/* values_ok: what an accepted checkpoint must hold, checked apart from
 * the decoder. */
static void values_ok(const struct ckpt *ck)
{
    const struct ckpt_section *w = ckpt_find(ck, CKPT_SEC_WEIGHTS);
    const struct ckpt_section *oh = ckpt_find(ck, CKPT_SEC_OPTIM);
    const struct ckpt_section *os = ckpt_find(ck, CKPT_SEC_OPTIM_STATE);
    uint64_t count = ck->job.hi - ck->job.lo;

    if (ck->step > ck->steps || ck->steps > CKPT_STEPS_MAX || !!oh != !!os)
        abort();
    for (uint64_t i = 0; i < count; i++)
        if (!isfinite(value_at(w->data, i, ck->job.dtype)))
            abort();
    if (os) {
        uint32_t kind = proto_get_u32(oh->data);
        uint64_t all = os->len / dtype_size((int)ck->job.dtype);
        for (uint64_t i = 0; i < all; i++) {
            double x = value_at(os->data, i, ck->job.dtype);
            if (!isfinite(x) || (kind == OPTIM_ADAM && i >= count && x < 0))
                abort();
        }
    }
}

static void one(const uint8_t *data, size_t size, const struct ckpt_key *key)
{
    struct ckpt ck;
    char err[ERR_LEN] = "";
    int rc = ckpt_decode(data, size, key, &ck, err);

    if (rc != 0) {
        if (!err[0])
            abort();
        return;
    }
    {
        const struct ckpt_section *w = ckpt_find(&ck, CKPT_SEC_WEIGHTS);
        struct mem m;

        if (!w || ckpt_size(&ck) != size)
            abort();
        if (key && (ck.version != CKPT_VERSION || proto_get_u32(data + 44) != CKPT_SEAL_HMAC))
            abort();
        for (uint32_t i = 0; i < ck.nsec; i++) {
            const uint8_t *p = ck.sec[i].data;
            if (p < data || ck.sec[i].len > size || p + ck.sec[i].len > data + size)
                abort();
        }
        values_ok(&ck);
        m.p = malloc(size);
        m.len = 0;
        m.cap = size;
        if (!m.p)
            abort();
        ckpt_encode(&ck, key, put_mem, &m);
        if (m.len != size)
            abort();
        if (ck.version == CKPT_VERSION_V1) {
            /* Re-encoded as version 2: the same but for the version, the
             * seal field (still 0: SHA-256) and the trailer. */
            if (memcmp(m.p, data, 8) != 0 || memcmp(m.p + 12, data + 12, size - 12 - CKPT_SUM_SIZE) != 0)
                abort();
        } else if (memcmp(m.p, data, size) != 0) {
            abort();
        }
        free(m.p);
        (void)ckpt_match(&ck, &ck.job, err);
    }
}

/* reseal: the trailer of copy[0..size) made right again, under key (NULL:
 * SHA-256), as a forger or a member with the secret would. */
static void reseal(uint8_t *copy, size_t size, const struct ckpt_key *key)
{
    size_t body = size - CKPT_SUM_SIZE;

    if (key)
        crypto_auth_hmacsha256(copy + body, copy, body, key->k);
    else
        crypto_hash_sha256(copy + body, copy, body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy;

    one(data, size, NULL);
    one(data, size, &job_key);
    if (size < CKPT_SUM_SIZE || size > (1u << 20))
        return 0;
    copy = malloc(size);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    reseal(copy, size, NULL);
    one(copy, size, NULL);
    reseal(copy, size, &job_key);
    one(copy, size, &job_key);
    one(copy, size, NULL);      /* keyed file, no secret: refused */
    free(copy);
    return 0;
}
