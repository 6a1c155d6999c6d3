/* fuzz_ckpt.c -- fuzz target for the checkpoint decoder
 * (common/ps/checkpoint.c: ckpt_decode, ckpt_match).
 *
 * Arbitrary bytes go in as a checkpoint file. The invariants, each an
 * abort() when broken: a refusal comes with a reason; what is accepted
 * has its sections inside the input and a WEIGHTS section of (hi - lo)
 * elements, and encodes again to the very same bytes. Most mutations
 * break the SHA-256 checksum, so the driver also feeds each input with
 * its checksum made right again: that reaches the checks behind it.
 * Built like fuzz_proto.c: tests/fuzzdrv.c (make check) or libFuzzer
 * (make fuzz).
 */
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps/checkpoint.h"
#include "base/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

const char *const fuzz_name = "ckpt-fuzz";

#define SEED_LEN (CKPT_HEADER_SIZE + 2 * CKPT_SECTION_HEAD + 16 + 16 + CKPT_SUM_SIZE)
static uint8_t seed_one[SEED_LEN];
const uint8_t *const fuzz_seeds[] = { seed_one };
const size_t fuzz_seed_sizes[] = { SEED_LEN };
const size_t fuzz_nseeds = 1;

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

/* The seed: K 2, f32, n 8, shard 1/2 = [4, 8), step 4 with its losses. */
__attribute__((constructor)) static void make_seed(void)
{
    static const float w[4] = { 1, 2, 3, 4 };
    static const double loss[2] = { 0.5, 0.25 };
    struct ckpt ck;
    struct mem m = { seed_one, 0, SEED_LEN };

    memset(&ck, 0, sizeof ck);
    ck.job = (struct ckpt_job){ .world = 2, .dtype = 1, .workload = 1, .shard_i = 1,
                                .shard_s = 2, .per_step = 1, .n = 8, .lo = 4, .hi = 8,
                                .seed = 1, .batch = 64, .lr = 0.5 };
    ck.step = 2;
    ck.steps = 10;
    ck.nsec = 2;
    ck.sec[0] = (struct ckpt_section){ CKPT_SEC_WEIGHTS, CKPT_REQUIRED, sizeof w, w };
    ck.sec[1] = (struct ckpt_section){ CKPT_SEC_LOSS, 0, sizeof loss, loss };
    if (ckpt_size(&ck) != SEED_LEN)
        abort();
    ckpt_encode(&ck, put_mem, &m);
}

static void one(const uint8_t *data, size_t size)
{
    struct ckpt ck;
    char err[ERR_LEN] = "";
    int rc = ckpt_decode(data, size, &ck, err);

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
        for (uint32_t i = 0; i < ck.nsec; i++) {
            const uint8_t *p = ck.sec[i].data;
            if (p < data || ck.sec[i].len > size || p + ck.sec[i].len > data + size)
                abort();
        }
        m.p = malloc(size);
        m.len = 0;
        m.cap = size;
        if (!m.p)
            abort();
        ckpt_encode(&ck, put_mem, &m);
        if (m.len != size || memcmp(m.p, data, size) != 0)
            abort();
        free(m.p);
        (void)ckpt_match(&ck, &ck.job, err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy;

    one(data, size);
    if (size < CKPT_SUM_SIZE || size > (1u << 20))
        return 0;
    copy = malloc(size);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    crypto_hash_sha256(copy + size - CKPT_SUM_SIZE, copy, size - CKPT_SUM_SIZE);
    one(copy, size);
    free(copy);
    return 0;
}
