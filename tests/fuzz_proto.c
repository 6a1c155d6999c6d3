/* fuzz_proto.c -- fuzz target for the frame decoders (common/wire/proto.c).
 *
 * Arbitrary bytes go to proto_header_decode (under fixed limits and under
 * limits taken from the input itself), proto_hello_decode,
 * proto_push_meta_decode, proto_text_check, and the ring rendezvous'
 * proto_register_decode and proto_table_decode. Crashes and sanitizer
 * reports are the fuzzer's to find; this file adds the invariants a caller
 * relies on, each an abort() when broken: a header the decoder accepts is
 * within the caller's limits and the right size for its type; a refusal
 * carries the code of the FIRST failing check in proto.h's order (checked
 * against a plain re-statement of the rules below); *out always re-encodes
 * to the bytes that came in. Built two ways: with tests/fuzzdrv.c into a
 * deterministic mutation driver (any compiler, run by `make check`), or
 * with clang -fsanitize=fuzzer for coverage-guided runs (`make fuzz`).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "wire/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---------------------------------------------------------------- seeds */

/* Seeds for tests/fuzzdrv.c (libFuzzer ignores these symbols): one valid
 * frame of each type, the PUSH example of proto.h among them. */
const char *const fuzz_name = "proto-fuzz";

/* The bytes of a little-endian field, and the 40-byte header of proto.h
 * (magic, version 3, type, rank, world, step, aux, length). */
#define LE16(x) ((x) & 0xff), (((x) >> 8) & 0xff)
#define LE32(x) LE16(x), LE16((x) >> 16)
#define LE64(x) LE32((uint64_t)(x)), LE32((uint64_t)(x) >> 32)
#define HDR(type, rank, world, step, aux, len) \
    'P', 'S', 'R', 'G', LE16(3), LE16(type), LE32(rank), LE32(world), LE64(step), \
    LE64(aux), LE64(len)
#define SERVER 0xffffffffu     /* PROTO_RANK_SERVER */

/* WELCOME from the server to rank 1 of 4: it owns elements [300, 1000). */
static const uint8_t seed_welcome[] = {
    HDR(PROTO_WELCOME, SERVER, 4, 0, 0, 16), LE64(300), LE64(700),
};

/* A WELCOME whose range wraps: first 2^64 - 1, count 2 (refused). */
static const uint8_t seed_welcome_wrap[] = {
    HDR(PROTO_WELCOME, SERVER, 4, 0, 0, 16), LE64(UINT64_MAX), LE64(2),
};

/* The HELLO payload: n = 1000, f32, synthetic, seed 42, no token,
 * B = 1024. */
#define HELLO_1000 LE64(1000), LE32(1), LE32(2), LE64(42), LE64(0), LE64(1024)

/* HELLO from rank 0 of 4. */
static const uint8_t seed_hello[] = {
    HDR(PROTO_HELLO, 0, 4, 0, 0, 40), HELLO_1000,
};

/* The PUSH example of proto.h: rank 2 of 4, step 7, 512 examples, loss
 * 0.25 (f64 0x3fd0...), the f32 elements 1.5 and -2.0 from index 0. */
static const uint8_t seed_push[] = {
    HDR(PROTO_PUSH, 2, 4, 7, 0, 24), LE64(512), LE64(0x3fd0000000000000),
    LE32(0x3fc00000), LE32(0xc0000000),
};

/* ERROR from the server, aux = ERR_MISMATCH, 12 bytes of reason. */
static const uint8_t seed_error[] = {
    HDR(PROTO_ERROR, SERVER, 4, 0, (int64_t)ERR_MISMATCH, 12),
    'n', ' ', 'm', 'i', 's', 'm', 'a', 't', 'c', 'h', ' ', '!',
};

/* WEIGHTS from the server for step 7, elements [2, 4) as f32: 0.5, 1.0. */
static const uint8_t seed_weights[] = {
    HDR(PROTO_WEIGHTS, SERVER, 4, 7, 2, 8), LE32(0x3f000000), LE32(0x3f800000),
};

/* Per-bucket pull: the next WEIGHTS frame of the same step 7, the part
 * below, elements [1, 2) as f32: -0.25. */
static const uint8_t seed_weights_part[] = {
    HDR(PROTO_WEIGHTS, SERVER, 4, 7, 1, 4), LE32(0xbe800000),
};

/* CHUNK 1 of step 3 from ring rank 0 of 2: one f64, -1.0. */
static const uint8_t seed_chunk[] = {
    HDR(PROTO_CHUNK, 0, 2, 3, 1, 8), LE64(0xbff0000000000000),
};

/* ABORT from ring rank 3 of 4: rank 2 is lost. */
static const uint8_t seed_abort[] = {
    HDR(PROTO_ABORT, 3, 4, 5, 2, 6), 'r', 'a', 'n', 'k', ' ', '2',
};

/* BYE from rank 3 of 4 after step 99. */
static const uint8_t seed_bye[] = {
    HDR(PROTO_BYE, 3, 4, 99, 0, 0),
};

/* REGISTER from ring rank 1 of 2: the hello of seed_hello, data port
 * 40123, address "127.0.0.1" (9 bytes). */
static const uint8_t seed_register[] = {
    HDR(PROTO_REGISTER, 1, 2, 0, 0, 57), HELLO_1000, LE16(40123), LE16(9), LE32(0),
    '1', '2', '7', '.', '0', '.', '0', '.', '1',
};

/* TABLE from the coordinator to a world of 2: a blob of 0x01..0x80, then
 * rank 0 at "::1" port 41000 and rank 1 at "h" port 41001. */
#define B16(x) x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7, \
               x + 8, x + 9, x + 10, x + 11, x + 12, x + 13, x + 14, x + 15
static const uint8_t seed_table[] = {
    HDR(PROTO_TABLE, 0, 2, 0, 0, 140),
    B16(0x01), B16(0x11), B16(0x21), B16(0x31),
    B16(0x41), B16(0x51), B16(0x61), B16(0x71),
    LE16(41000), LE16(3), ':', ':', '1',
    LE16(41001), LE16(1), 'h',
};
#undef B16

const uint8_t *const fuzz_seeds[] = {
    seed_welcome, seed_hello, seed_push, seed_error,
    seed_weights, seed_chunk, seed_abort, seed_bye,
    seed_register, seed_table, seed_welcome_wrap, seed_weights_part,
};
const size_t fuzz_seed_sizes[] = {
    sizeof seed_welcome, sizeof seed_hello, sizeof seed_push, sizeof seed_error,
    sizeof seed_weights, sizeof seed_chunk, sizeof seed_abort, sizeof seed_bye,
    sizeof seed_register, sizeof seed_table, sizeof seed_welcome_wrap,
    sizeof seed_weights_part,
};
const size_t fuzz_nseeds = sizeof fuzz_seeds / sizeof fuzz_seeds[0];

/* ---------------------------------------------------------------- checks */

/* must: an invariant; say which one broke, then abort for the fuzzer. */
#define must(c) do { if (!(c)) { \
    fprintf(stderr, "fuzz_proto.c:%d: invariant broken: %s\n", __LINE__, #c); \
    abort(); } } while (0)

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* expected: the rules of proto.h's VALIDATION paragraph, re-stated from
 * the raw bytes as plainly as possible, so the decoder's answer (code and
 * order) has something independent to be compared with. */
static int expected(const uint8_t *in, const struct proto_limits *lim)
{
    uint64_t magic = le(in, 4), version = le(in + 4, 2), type = le(in + 6, 2);
    uint64_t rank = le(in + 8, 4), world = le(in + 12, 4), len = le(in + 32, 8);
    uint64_t elem = lim->elem_size;

    if (magic != PROTO_MAGIC)
        return ERR_PROTO_MAGIC;
    if (version != PROTO_VERSION)
        return ERR_PROTO_VERSION;
    if (type < 1 || type > 11)
        return ERR_PROTO_TYPE;
    if (world < 1 || world > PROTO_MAX_WORLD || (lim->world && world != lim->world))
        return ERR_PROTO_WORLD;
    if (rank >= world && rank != PROTO_RANK_SERVER)
        return ERR_PROTO_RANK;
    if (len > lim->max_payload)
        return ERR_PROTO_LENGTH;
    switch (type) {
    case PROTO_HELLO: return len == 40 ? 0 : ERR_PROTO_SIZE;
    case PROTO_WELCOME: return len == 16 ? 0 : ERR_PROTO_SIZE;
    case PROTO_BYE: return len == 0 ? 0 : ERR_PROTO_SIZE;
    case PROTO_ERROR: case PROTO_ABORT: return len <= 1024 ? 0 : ERR_PROTO_SIZE;
    case PROTO_PUSH:
        if (len < 16)
            return ERR_PROTO_SIZE;
        return elem == 0 || (len - 16) % elem == 0 ? 0 : ERR_PROTO_SIZE;
    case PROTO_REGISTER: return len >= 49 && len <= 48 + 255 ? 0 : ERR_PROTO_SIZE;
    case PROTO_AUTH: return len == 72 ? 0 : ERR_PROTO_SIZE;
    case PROTO_TABLE:
        return len >= 128 + 5 * world && len <= 128 + 259 * world ? 0 : ERR_PROTO_SIZE;
    default:    /* WEIGHTS, CHUNK */
        return elem == 0 || len % elem == 0 ? 0 : ERR_PROTO_SIZE;
    }
}

static void check_header(const uint8_t *in, struct proto_limits lim)
{
    struct proto_header h;
    uint8_t again[PROTO_HEADER_SIZE];
    int rc;

    memset(&h, 0x5a, sizeof h);
    rc = proto_header_decode(in, &lim, &h);
    must(rc == expected(in, &lim));

    /* *out is filled on success and failure alike: it re-encodes exactly. */
    proto_header_encode(&h, again);
    must(memcmp(again, in, PROTO_HEADER_SIZE) == 0);
    if (rc != 0)
        return;

    /* What a caller does next with an accepted header must be safe. */
    must(h.magic == PROTO_MAGIC && h.version == PROTO_VERSION);
    must(strcmp(proto_type_name(h.type), "?") != 0);
    must(h.world >= 1 && h.world <= PROTO_MAX_WORLD);
    must(lim.world == 0 || h.world == lim.world);
    must(h.rank < h.world || h.rank == PROTO_RANK_SERVER);
    must(h.length <= lim.max_payload);
    if (h.type == PROTO_PUSH)
        must(h.length >= PROTO_PUSH_META);
    if (lim.elem_size != 0 && (h.type == PROTO_WEIGHTS || h.type == PROTO_CHUNK))
        must(h.length % lim.elem_size == 0);
    if (h.type == PROTO_HELLO)
        must(h.length == PROTO_HELLO_SIZE);
    if (h.type == PROTO_ERROR || h.type == PROTO_ABORT)
        must(h.length <= PROTO_TEXT_MAX);
    if (h.type == PROTO_WELCOME)
        must(h.length == PROTO_WELCOME_SIZE);
    if (h.type == PROTO_BYE)
        must(h.length == 0);
    if (h.type == PROTO_REGISTER)
        must(h.length > PROTO_REGISTER_META && h.length <= PROTO_REGISTER_MAX);
    if (h.type == PROTO_TABLE)
        must(h.length >= PROTO_BLOB_SIZE + 5ull * h.world &&
             h.length <= PROTO_BLOB_SIZE + (4ull + PROTO_ADDR_MAX) * h.world);
}

/* fixed_size: a decoder of a payload of exactly `size` bytes answered rc
 * for len bytes: only the documented codes, ERR_PROTO_SIZE exactly when
 * the length is wrong. */
static void fixed_size(int rc, size_t len, size_t size)
{
    must(rc == 0 || rc == ERR_PROTO_SIZE || rc == ERR_PROTO_FIELD);
    must((rc == ERR_PROTO_SIZE) == (len != size));
}

/* compress_ok: a compress field the HELLO accepts (compress.h, THE
 * SETTING): 0, 1 or 2 (none, fp16, bf16); powersgd 3 | R << 9 with R
 * 1..16; topk 8 | F << 9 with F 1..1e6 millionths; sign 9; topk, sign and
 * powersgd with the no-feedback bit 8. Written out, not compress_get's. */
static int compress_ok(uint64_t v)
{
    uint64_t kind = v & 0xff, noef = (v >> 8) & 1, p = v >> 9;
    if (v > 0x7fffffffu)
        return 0;
    return (kind <= 2 && !noef && p == 0) || (kind == 3 && p >= 1 && p <= 16)
           || (kind == 8 && p >= 1 && p <= 1000000) || (kind == 9 && p == 0);
}

static void check_hello(const uint8_t *in, size_t len)
{
    struct proto_hello h;
    uint8_t again[PROTO_HELLO_SIZE];
    int rc = proto_hello_decode(in, len, &h);

    fixed_size(rc, len, PROTO_HELLO_SIZE);
    if (rc == ERR_PROTO_SIZE)
        return;
    proto_hello_encode(&h, again);
    /* Bytes 24..27 are compress (compress_ok); 28..31 --sync-every
     * H: 0 (every step) or 2 .. 2^32 - 1; decode refuses others; an
     * accepted one round-trips. */
    must(memcmp(again, in, 24) == 0 && memcmp(again + 32, in + 32, 8) == 0);
    int ok = h.dtype <= 2 && dtype_size((int)h.dtype) != 0
             && h.workload >= 1 && h.workload <= 3 && h.n >= 1 && h.batch >= 1
             && compress_ok(le(in + 24, 4)) && le(in + 28, 4) != 1;
    must((rc == 0) == ok);
    must(rc != 0 || memcmp(again + 24, in + 24, 8) == 0);
}

/* WELCOME: only the documented codes; an accepted range is non-empty,
 * does not wrap and re-encodes to the same bytes. */
static void check_welcome(const uint8_t *in, size_t len)
{
    struct proto_welcome w;
    uint8_t again[PROTO_WELCOME_SIZE];
    int rc = proto_welcome_decode(in, len, &w);

    fixed_size(rc, len, PROTO_WELCOME_SIZE);
    if (rc != 0) {
        must(w.first == 0 && w.count == 0);
        if (rc == ERR_PROTO_FIELD)
            must(le(in + 8, 8) == 0 || le(in, 8) > UINT64_MAX - le(in + 8, 8));
        return;
    }
    must(w.count >= 1 && w.first <= UINT64_MAX - w.count);
    proto_welcome_encode(&w, again);
    must(memcmp(again, in, PROTO_WELCOME_SIZE) == 0);
}

static void check_push_meta(const uint8_t *in, size_t len)
{
    struct proto_push_meta m;
    uint8_t again[PROTO_PUSH_META];
    int rc = proto_push_meta_decode(in, len, &m);

    must(rc == 0 || rc == ERR_PROTO_SIZE || rc == ERR_NONFINITE);
    must((rc == ERR_PROTO_SIZE) == (len < PROTO_PUSH_META));
    if (rc == ERR_PROTO_SIZE)
        return;
    must((rc == 0) == (isfinite(m.loss) != 0));
    proto_push_meta_encode(&m, again);
    must(memcmp(again, in, PROTO_PUSH_META) == 0);
}

/* REGISTER: only the documented codes; an accepted payload re-encodes to
 * the same bytes and holds a NUL-terminated address of the right length. */
static void check_register(const uint8_t *in, size_t len)
{
    struct proto_register r;
    uint8_t again[PROTO_REGISTER_MAX];
    size_t n = 0;
    int rc = proto_register_decode(in, len, &r);

    must(rc == 0 || rc == ERR_PROTO_SIZE || rc == ERR_PROTO_FIELD);
    if (len <= PROTO_REGISTER_META || len > PROTO_REGISTER_MAX)
        must(rc == ERR_PROTO_SIZE);
    if (rc != 0) {
        must(r.peer.port == 0 && r.peer.addr_len == 0 && r.hello.n == 0);
        return;
    }
    must(r.peer.port != 0 && r.peer.addr_len == len - PROTO_REGISTER_META);
    must(strlen(r.peer.addr) == r.peer.addr_len);
    must(proto_register_encode(&r, again, sizeof again, &n) == 0);
    must(n == len && memcmp(again, in, len) == 0);
}

/* TABLE for the worlds 1..3: accepted entries exactly fill the payload and
 * re-encode to it. */
static void check_table(const uint8_t *in, size_t len)
{
    struct proto_peer peers[3];
    uint8_t blob[PROTO_BLOB_SIZE], again[PROTO_BLOB_SIZE + 3 * (PROTO_PEER_META + PROTO_ADDR_MAX)];
    size_t n = 0;

    for (uint32_t k = 1; k <= 3; k++) {
        int rc = proto_table_decode(in, len, k, blob, peers);
        must(rc == 0 || rc == ERR_PROTO_SIZE || rc == ERR_PROTO_FIELD);
        if (len < PROTO_BLOB_SIZE + k * (PROTO_PEER_META + 1))
            must(rc != 0);
        if (rc != 0) {
            for (uint32_t i = 0; i < k; i++)
                must(peers[i].port == 0 && peers[i].addr_len == 0);
            continue;
        }
        must(proto_table_size(peers, k) == len);
        for (uint32_t i = 0; i < k; i++)
            must(peers[i].port != 0 && strlen(peers[i].addr) == peers[i].addr_len);
        must(proto_table_encode(blob, peers, k, again, sizeof again, &n) == 0);
        must(n == len && memcmp(again, in, len) == 0);
    }
}

static void check_text(const uint8_t *in, size_t len)
{
    int rc = proto_text_check(in, len);
    int want = len > PROTO_TEXT_MAX ? ERR_PROTO_SIZE
             : (len && memchr(in, 0, len)) ? ERR_PROTO_FIELD : 0;
    must(rc == want);
}

/* ---------------------------------------------------------------- target */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t hdr[PROTO_HEADER_SIZE];
    const uint8_t *in = data;
    const uint8_t *payload = data;
    size_t plen = size;

    /* A short input is a header with zeros after it, so short inputs still
     * reach the later checks; a long one is decoded in place, so ASan sees
     * any read past the 40 bytes. */
    if (size < PROTO_HEADER_SIZE) {
        memset(hdr, 0, sizeof hdr);
        if (size)
            memcpy(hdr, data, size);
        in = hdr;
    } else {
        payload = data + PROTO_HEADER_SIZE;
        plen = size - PROTO_HEADER_SIZE;
    }

    /* Fixed limits: nothing refused by the cap; a typical server (8 MiB,
     * K = 4, f32); a tight ring rank (1 KiB, K = the frame's own world,
     * f64) so that the later checks are reached; a cap of zero. */
    struct proto_limits fixed[] = {
        { UINT64_MAX, 0, 0 },
        { 8u << 20, 4, 4 },
        { 1024, (uint32_t)le(in + 12, 4), 8 },
        { 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_header(in, fixed[i]);

    /* Limits from the input: the 16 bytes after the header, when there,
     * are a cap, a world and an element size, any values at all (an
     * element size of 3 or 2^32-1 must still be only a divisor). */
    if (plen >= 16) {
        struct proto_limits lim = {
            le(payload, 8), (uint32_t)le(payload + 8, 4), (uint32_t)le(payload + 12, 4),
        };
        check_header(in, lim);
        lim.max_payload = le(in + 32, 8);       /* the frame's length, exactly */
        check_header(in, lim);
    }

    check_hello(payload, plen);
    check_hello(data, size);
    check_push_meta(payload, plen);
    check_push_meta(data, size);
    check_welcome(payload, plen);
    check_welcome(data, size < PROTO_WELCOME_SIZE ? size : PROTO_WELCOME_SIZE);
    check_text(payload, plen);
    check_text(data, size);
    check_register(payload, plen);
    check_table(payload, plen);
    return 0;
}
