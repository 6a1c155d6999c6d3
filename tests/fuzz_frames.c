/* fuzz_frames.c -- fuzz target for the top-k and sign frame decoders
 * (common/base/compress_sparse.c: compress_frame.add), what the PS store
 * and the ring's all-gather run on every frame a peer sends.
 *
 * The input's first byte picks the compressor (bit 0: top-k at F = 1/4,
 * or sign), the dtype (bit 1: f32 or f64) and n (bits 2-7: 1..64); the
 * rest is the frame, handed over as the exact byte range. Crashes and
 * undefined behaviour are the sanitizers' to find; the invariants callers
 * rely on are checked here, each an abort() when broken:
 *   - a frame refused as hostile (ERR_PROTO_FIELD) adds nothing;
 *   - an accepted frame leaves every element finite;
 *   - the only answers are 0, ERR_PROTO_FIELD and ERR_NONFINITE (with
 *     the bad element below n).
 * Built with tests/fuzzdrv.c (deterministic driver, `make check`) or with
 * clang -fsanitize=fuzzer (`make fuzz`).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

const char *const fuzz_name = "frames-fuzz";

/* A valid top-k frame (f32, n = 8, k = 2: indices 1 and 4, values 1 and
 * 2) and a valid sign frame (f32, n = 10, scale 1, elements 1 and 3
 * negative). */
static const uint8_t topk_seed[] = { 28, 2, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0,
                                     0, 0, 0x80, 0x3f, 0, 0, 0, 0x40 };
static const uint8_t sign_seed[] = { 37, 0, 0, 0x80, 0x3f, 0x0a, 0x00 };
const uint8_t *const fuzz_seeds[] = { topk_seed, sign_seed };
const size_t fuzz_seed_sizes[] = { sizeof topk_seed, sizeof sign_seed };
const size_t fuzz_nseeds = 2;

#define must(cond)                                                        \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "fuzz-frames: invariant broken: %s\n", #cond); \
            abort();                                                      \
        }                                                                 \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int set = 0, dtype;
    size_t n, bad = 0, es;
    double acc[64], before[64];
    unsigned char *frame;
    char why[ERR_LEN];
    int rc;

    if (size < 1)
        return 0;
    compress_parse(data[0] & 1 ? "sign" : "topk:0.25", &set);
    dtype = data[0] & 2 ? DTYPE_F64 : DTYPE_F32;
    es = dtype_size(dtype);
    n = (size_t)(data[0] >> 2) + 1;
    for (size_t i = 0; i < n; i++)
        vec_set(acc, i, dtype, (double)i - 7.5);
    memcpy(before, acc, sizeof acc);
    if (!(frame = malloc(size - 1 ? size - 1 : 1)))
        return 0;
    memcpy(frame, data + 1, size - 1);
    rc = compress_get(set)->frame->add(set, acc, frame, size - 1, n, dtype, &bad, why);
    must(rc == 0 || rc == ERR_PROTO_FIELD || rc == ERR_NONFINITE);
    if (rc == ERR_PROTO_FIELD)
        must(memcmp(before, acc, n * es) == 0);
    if (rc == ERR_NONFINITE)
        must(bad < n);
    for (size_t i = 0; rc == 0 && i < n; i++)
        must(isfinite(dtype == DTYPE_F32 ? (double)((float *)acc)[i] : acc[i]));
    free(frame);
    return 0;
}
