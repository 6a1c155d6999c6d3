/* test_proto.c -- the wire format (common/wire/proto.h) as a set of functions.
 *
 * No sockets here: every frame is built in memory, decoded, and the exact
 * err.h code is checked, so each case fails if the decoder accepts what it
 * should refuse, refuses for the wrong reason, or checks in the wrong
 * order. Ids: proto-1.x the header, proto-2.x the payloads, proto-3.x
 * malformed input (RELIABILITY.md, "Bad input to try against the wire
 * protocol", the parts that apply to a decoder as a function; the stream
 * cases -- cut frames, one byte per segment -- belong to the link tests).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "wire/proto.h"

#define MIB (1024u * 1024u)

/* The PUSH example from proto.h's opening comment, copied byte for byte. */
static const uint8_t push_example[64] = {
    0x50, 0x53, 0x52, 0x47, 0x03, 0x00, 0x03, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
    0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd0, 0x3f,
    0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0,
};

static struct proto_limits limits(uint64_t max_payload, uint32_t world, uint32_t elem)
{
    struct proto_limits lim = { max_payload, world, elem };
    return lim;
}

/* A header that passes every check under limits(8 MiB, 4, 4). */
static struct proto_header good(uint16_t type)
{
    uint64_t len = 0;
    switch (type) {
    case PROTO_HELLO: len = PROTO_HELLO_SIZE; break;
    case PROTO_PUSH: len = PROTO_PUSH_META + 3 * 4; break;
    case PROTO_WEIGHTS: case PROTO_CHUNK: len = 3 * 4; break;
    case PROTO_ERROR: case PROTO_ABORT: len = 17; break;
    case PROTO_REGISTER: len = PROTO_REGISTER_META + 9; break;        /* "127.0.0.1" */
    case PROTO_TABLE: len = PROTO_BLOB_SIZE + 4 * (PROTO_PEER_META + 9); break;
    case PROTO_AUTH: len = PROTO_AUTH_SIZE; break;
    case PROTO_WELCOME: len = PROTO_WELCOME_SIZE; break;
    default: break;
    }
    return proto_header_make(type, 1, 4, 9, 0, len);
}

/* expect_header: h's fields after magic and version are these. */
static void expect_header(const struct proto_header *h, uint16_t type, uint32_t rank,
                          uint32_t world, uint64_t step, uint64_t aux, uint64_t length)
{
    T_EQ_U(h->type, type);
    T_EQ_U(h->rank, rank);
    T_EQ_U(h->world, world);
    T_EQ_U(h->step, step);
    T_EQ_U(h->aux, aux);
    T_EQ_U(h->length, length);
}

/* encode h, decode it under lim: the decoder's answer. */
static int roundtrip(const struct proto_header *h, struct proto_limits lim,
                     struct proto_header *out)
{
    uint8_t buf[PROTO_HEADER_SIZE];
    proto_header_encode(h, buf);
    return proto_header_decode(buf, &lim, out);
}

/* decode h under lim, discarding the decoded fields. */
static int check_hdr(struct proto_header h, struct proto_limits lim)
{
    struct proto_header out;
    return roundtrip(&h, lim, &out);
}

static int check_len(uint16_t type, uint64_t len, struct proto_limits lim)
{
    struct proto_header h = good(type);
    h.length = len;
    return check_hdr(h, lim);
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A double and its IEEE-754 bits, both ways. */
union bits { uint64_t u; double d; };

static double from_bits(uint64_t bits)
{
    return (union bits){ .u = bits }.d;
}

static uint64_t to_bits(double d)
{
    return (union bits){ .d = d }.u;
}

static struct proto_hello good_hello(void)
{
    struct proto_hello h = { 1000, DTYPE_F32, 2, 42, 1024, 0, 0 };
    return h;
}

int main(void)
{
    struct proto_limits std = limits(8 * MIB, 4, 4);
    struct proto_header out;
    uint8_t buf[256];
    int rc;


    /* ------------------------------------------------------------ header */

    T_CASE("proto-1.1", "header_make fills magic, version and every field");
    {
        struct proto_header h = proto_header_make(PROTO_CHUNK, 3, 5, 11, 2, 96);
        T_EQ_U(h.magic, PROTO_MAGIC);
        T_EQ_U(h.version, PROTO_VERSION);
        expect_header(&h, PROTO_CHUNK, 3, 5, 11, 2, 96);
        proto_header_encode(&h, buf);
        T_TRUE(memcmp(buf, "PSRG", 4) == 0);    /* the magic reads as text */
    }

    T_CASE("proto-1.2", "every type survives encode -> decode unchanged");
    for (uint16_t t = PROTO_HELLO; t <= PROTO_TYPE_LAST; t++) {
        struct proto_header h = good(t);
        h.step = UINT64_MAX - t;
        h.aux = 0x0123456789abcdefull + t;
        memset(&out, 0xa5, sizeof out);
        rc = roundtrip(&h, std, &out);
        T_EQ_I(rc, 0);
        T_EQ_U(out.magic, h.magic);
        T_EQ_U(out.version, h.version);
        expect_header(&out, t, h.rank, h.world, h.step, h.aux, h.length);
    }

    T_CASE("proto-1.3", "each field at its documented offset, little-endian");
    {
        struct proto_header h = proto_header_make(0x0201, 0x06050403, 0x0a090807,
                                                  0x1211100f0e0d0c0bull,
                                                  0x1a19181716151413ull,
                                                  0x2221201f1e1d1c1bull);
        static const uint8_t want[PROTO_HEADER_SIZE] = {
            'P', 'S', 'R', 'G', 0x03, 0x00, 0x01, 0x02,
            0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
            0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12,
            0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a,
            0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22,
        };
        memset(buf, 0xee, sizeof buf);
        proto_header_encode(&h, buf);
        for (int i = 0; i < PROTO_HEADER_SIZE; i++)
            T_EQ_U(buf[i], want[i]);
        T_EQ_U(buf[PROTO_HEADER_SIZE], 0xee);     /* writes 40 bytes, no more */
    }

    T_CASE("proto-1.4", "type names, and '?' for unknown types");
    T_STR(proto_type_name(PROTO_HELLO), "HELLO");
    T_STR(proto_type_name(PROTO_WELCOME), "WELCOME");
    T_STR(proto_type_name(PROTO_PUSH), "PUSH");
    T_STR(proto_type_name(PROTO_WEIGHTS), "WEIGHTS");
    T_STR(proto_type_name(PROTO_CHUNK), "CHUNK");
    T_STR(proto_type_name(PROTO_ERROR), "ERROR");
    T_STR(proto_type_name(PROTO_ABORT), "ABORT");
    T_STR(proto_type_name(PROTO_BYE), "BYE");
    T_STR(proto_type_name(PROTO_REGISTER), "REGISTER");
    T_STR(proto_type_name(PROTO_TABLE), "TABLE");
    T_STR(proto_type_name(0), "?");
    T_STR(proto_type_name(PROTO_TYPE_LAST + 1), "?");
    T_STR(proto_type_name(0xFFFF), "?");

    T_CASE("proto-1.5", "rank PROTO_RANK_SERVER and rank world-1 accepted");
    {
        struct proto_header h = good(PROTO_WEIGHTS);
        h.rank = PROTO_RANK_SERVER;
        T_EQ_I(check_hdr(h, std), 0);
        h.rank = 3;
        T_EQ_I(check_hdr(h, std), 0);
        h.rank = 0;
        T_EQ_I(check_hdr(h, std), 0);
        h.world = PROTO_MAX_WORLD;
        h.rank = PROTO_MAX_WORLD - 1;
        T_EQ_I(check_hdr(h, limits(8 * MIB, 0, 4)), 0);
        h.rank = PROTO_RANK_SERVER;
        T_EQ_I(check_hdr(h, limits(8 * MIB, 0, 4)), 0);
    }

    T_CASE("proto-1.6", "limits.world 0 accepts any world 1..PROTO_MAX_WORLD");
    {
        struct proto_header h = proto_header_make(PROTO_HELLO, 0, 1, 0, 0, PROTO_HELLO_SIZE);
        struct proto_limits any = limits(8 * MIB, 0, 0);
        T_EQ_I(check_hdr(h, any), 0);
        h.world = 77;
        T_EQ_I(check_hdr(h, any), 0);
        h.world = PROTO_MAX_WORLD;
        T_EQ_I(check_hdr(h, any), 0);
    }

    T_CASE("proto-1.7", "legal boundary lengths accepted");
    T_EQ_I(check_len(PROTO_WEIGHTS, 8 * MIB, std), 0);            /* == cap */
    T_EQ_I(check_len(PROTO_PUSH, PROTO_PUSH_META, std), 0);       /* zero elements */
    T_EQ_I(check_len(PROTO_WEIGHTS, 0, std), 0);
    T_EQ_I(check_len(PROTO_CHUNK, 0, std), 0);
    T_EQ_I(check_len(PROTO_ERROR, 0, std), 0);
    T_EQ_I(check_len(PROTO_ERROR, PROTO_TEXT_MAX, std), 0);
    T_EQ_I(check_len(PROTO_ABORT, PROTO_TEXT_MAX, std), 0);
    T_EQ_I(check_len(PROTO_HELLO, PROTO_HELLO_SIZE, limits(PROTO_HELLO_SIZE, 4, 4)), 0);
    /* elem_size 0 (not agreed yet): any whole number of bytes goes. */
    T_EQ_I(check_len(PROTO_WEIGHTS, 13, limits(8 * MIB, 4, 0)), 0);
    T_EQ_I(check_len(PROTO_PUSH, PROTO_PUSH_META + 13, limits(8 * MIB, 4, 0)), 0);
    T_EQ_I(check_len(PROTO_CHUNK, 8 * 5, limits(8 * MIB, 4, 8)), 0);

    T_CASE("proto-1.8", "decode fills *out even when it refuses the frame");
    {
        struct proto_header h = good(PROTO_PUSH);
        h.magic = 0xdeadbeef;
        h.step = 12345;
        h.length = UINT64_MAX;
        memset(&out, 0, sizeof out);
        rc = roundtrip(&h, std, &out);
        T_EQ_I(rc, ERR_PROTO_MAGIC);
        T_EQ_U(out.magic, 0xdeadbeef);
        expect_header(&out, PROTO_PUSH, 1, 4, 12345, 0, UINT64_MAX);
    }

    /* ------------------------------------------------------------ payloads */

    T_CASE("proto-2.1", "the PUSH example in proto.h, byte for byte");
    {
        struct proto_header h = proto_header_make(PROTO_PUSH, 2, 4, 7, 0,
                                                  PROTO_PUSH_META + 2 * sizeof(float));
        struct proto_push_meta m = { 512, 0.25 };
        struct proto_push_meta mo;
        float g[2] = { 1.5f, -2.0f }, go[2];

        memset(buf, 0xee, sizeof buf);
        proto_header_encode(&h, buf);
        proto_push_meta_encode(&m, buf + PROTO_HEADER_SIZE);
        /* Elements go out with a plain copy: the host is little-endian. */
        memcpy(buf + PROTO_HEADER_SIZE + PROTO_PUSH_META, g, sizeof g);
        T_EQ_U(h.length, 24);
        for (size_t i = 0; i < sizeof push_example; i++)
            T_EQ_U(buf[i], push_example[i]);

        /* And back: the example decodes to what it says. */
        rc = proto_header_decode(push_example, &std, &out);
        T_EQ_I(rc, 0);
        expect_header(&out, PROTO_PUSH, 2, 4, 7, 0, 24);
        rc = proto_push_meta_decode(push_example + PROTO_HEADER_SIZE, 24, &mo);
        T_EQ_I(rc, 0);
        T_EQ_U(mo.examples, 512);
        T_EQ_D(mo.loss, 0.25);
        memcpy(go, push_example + PROTO_HEADER_SIZE + PROTO_PUSH_META, sizeof go);
        T_EQ_D(go[0], 1.5);
        T_EQ_D(go[1], -2.0);
    }

    T_CASE("proto-2.2", "hello round trip and field offsets");
    {
        struct proto_hello h = { 0x0807060504030201ull, DTYPE_F64, 3,
                                 0x1817161514131211ull,
                                 0x2827262524232221ull, 0, 0 };
        struct proto_hello ho;
        memset(buf, 0xee, sizeof buf);
        proto_hello_encode(&h, buf);
        T_EQ_U(buf[0], 0x01);
        T_EQ_U(buf[7], 0x08);
        T_EQ_U(buf[8], DTYPE_F64);
        T_EQ_U(buf[11], 0);
        T_EQ_U(buf[12], 3);
        T_EQ_U(buf[16], 0x11);
        T_EQ_U(buf[24], 0);                     /* reserved */
        T_EQ_U(buf[32], 0x21);
        T_EQ_U(buf[39], 0x28);
        T_EQ_U(buf[PROTO_HELLO_SIZE], 0xee);
        rc = proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho);
        T_EQ_I(rc, 0);
        T_EQ_U(ho.n, h.n);
        T_EQ_U(ho.dtype, h.dtype);
        T_EQ_U(ho.workload, h.workload);
        T_EQ_U(ho.seed, h.seed);
        for (int i = 24; i < 32; i++)
            T_EQ_U(buf[i], 0);                  /* reserved (version 1's token) */
        T_EQ_U(ho.batch, h.batch);
        /* Every dtype and workload, n = 1 (the smallest job). */
        for (uint32_t dt = DTYPE_F32; dt <= DTYPE_F64; dt++)
            for (uint32_t wl = 1; wl <= 3; wl++) {
                struct proto_hello e = good_hello();
                e.dtype = dt;
                e.workload = wl;
                e.n = 1;
                proto_hello_encode(&e, buf);
                T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), 0);
                T_EQ_U(ho.dtype, dt);
                T_EQ_U(ho.workload, wl);
            }
    }

    T_CASE("proto-2.3", "push meta round trip: signs, zero, extremes, whole payload");
    {
        static const double losses[] = { 0.0, -0.0, 1.0, -3.5, DBL_MAX, -DBL_MAX,
                                         DBL_MIN, 1e-300 };
        struct proto_push_meta m, mo;
        for (size_t i = 0; i < sizeof losses / sizeof losses[0]; i++) {
            m.examples = i == 0 ? UINT64_MAX : i;
            m.loss = losses[i];
            proto_push_meta_encode(&m, buf);
            rc = proto_push_meta_decode(buf, PROTO_PUSH_META, &mo);
            T_EQ_I(rc, 0);
            T_EQ_U(mo.examples, m.examples);
            T_EQ_U(to_bits(mo.loss), to_bits(m.loss));  /* -0.0 stays -0.0 */
        }
        /* Given the whole PUSH payload, it reads the first 16 bytes only. */
        T_EQ_I(proto_push_meta_decode(buf, PROTO_PUSH_META + 8, &mo), 0);
        T_EQ_U(mo.examples, m.examples);
    }

    T_CASE("proto-2.4", "text check accepts empty, UTF-8 and PROTO_TEXT_MAX bytes");
    {
        static uint8_t text[PROTO_TEXT_MAX];
        static const char utf8[] = "rank 3 (127.0.0.1:5000): n diff\xc3\xa8re";
        memset(text, 'x', sizeof text);
        T_EQ_I(proto_text_check(NULL, 0), 0);
        T_EQ_I(proto_text_check((const uint8_t *)utf8, strlen(utf8)), 0);
        T_EQ_I(proto_text_check(text, PROTO_TEXT_MAX), 0);
        text[0] = 0xff;      /* not UTF-8, but only a NUL would cut a log line */
        T_EQ_I(proto_text_check(text, 1), 0);
    }

    T_CASE("proto-2.5", "hello's sync_every (--sync-every H) in bytes 28..31: 0 and 1 send 0, "
           "H round-trips beside compress, 1 refused");
    {
        struct proto_hello h = good_hello(), ho;
        h.sync_every = 1;
        proto_hello_encode(&h, buf);
        for (int i = 24; i < 32; i++)
            T_EQ_U(buf[i], 0);                  /* every step: today's bytes */
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), 0);
        T_EQ_U(ho.sync_every, 0);
        h.sync_every = 4;
        h.compress = 2;
        proto_hello_encode(&h, buf);
        T_EQ_U(buf[24], 2);
        T_EQ_U(buf[28], 4);
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), 0);
        T_EQ_U(ho.sync_every, 4);
        T_EQ_U(ho.compress, 2);
        h.sync_every = UINT32_MAX;
        proto_hello_encode(&h, buf);
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), 0);
        T_EQ_U(ho.sync_every, UINT32_MAX);
        buf[28] = 1;
        buf[29] = buf[30] = buf[31] = 0;
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), ERR_PROTO_FIELD);
    }

    /* ------------------------------------------------------------ malformed */

    T_CASE("proto-3.1", "wrong magic refused (each byte, byte-swapped, zero)");
    for (int i = 0; i < 4; i++) {
        memcpy(buf, push_example, PROTO_HEADER_SIZE);
        buf[i] ^= 0x20;                   /* "pSRG", "PsRG", ... */
        T_EQ_I(proto_header_decode(buf, &std, &out), ERR_PROTO_MAGIC);
    }
    {
        struct proto_header h = good(PROTO_BYE);
        h.magic = 0x50535247;             /* "GRSP": a big-endian writer */
        T_EQ_I(check_hdr(h, std), ERR_PROTO_MAGIC);
        h.magic = 0;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_MAGIC);
        h.magic = UINT32_MAX;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_MAGIC);
    }

    T_CASE("proto-3.2", "wrong version refused (0, 1: before AUTH, 0xFFFF)");
    {
        static const uint16_t bad[] = { 0, 1, 0xFFFF };
        for (size_t i = 0; i < 3; i++) {
            struct proto_header h = good(PROTO_BYE);
            h.version = bad[i];
            T_EQ_I(check_hdr(h, std), ERR_PROTO_VERSION);
        }
    }

    T_CASE("proto-3.3", "unknown type refused (0, last + 1, 0xFFFF)");
    {
        static const uint16_t bad[] = { 0, PROTO_TYPE_LAST + 1, 0xFFFF };
        for (size_t i = 0; i < 3; i++) {
            struct proto_header h = good(PROTO_BYE);
            h.type = bad[i];
            T_EQ_I(check_hdr(h, std), ERR_PROTO_TYPE);
            T_EQ_I(check_hdr(h, limits(UINT64_MAX, 0, 0)), ERR_PROTO_TYPE);
        }
    }

    T_CASE("proto-3.4", "world 0, > PROTO_MAX_WORLD, or not ours refused");
    {
        struct proto_limits any = limits(8 * MIB, 0, 4);
        struct proto_header h = good(PROTO_BYE);
        h.world = 0;
        T_EQ_I(check_hdr(h, any), ERR_PROTO_WORLD);
        T_EQ_I(check_hdr(h, std), ERR_PROTO_WORLD);
        h.world = PROTO_MAX_WORLD + 1;
        T_EQ_I(check_hdr(h, any), ERR_PROTO_WORLD);
        h.world = UINT32_MAX;
        T_EQ_I(check_hdr(h, any), ERR_PROTO_WORLD);
        h.world = 5;                       /* we are K = 4 */
        T_EQ_I(check_hdr(h, std), ERR_PROTO_WORLD);
        h.world = 3;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_WORLD);
        T_EQ_I(check_hdr(h, any), 0);      /* ... but fine before the hello */
    }

    T_CASE("proto-3.5", "rank >= world refused (world, world+1, 'negative')");
    {
        static const uint32_t bad[] = { 4, 5, 0x80000000u, PROTO_RANK_SERVER - 1 };
        for (size_t i = 0; i < 4; i++) {
            struct proto_header h = good(PROTO_PUSH);
            h.rank = bad[i];
            T_EQ_I(check_hdr(h, std), ERR_PROTO_RANK);
        }
    }

    T_CASE("proto-3.6", "lengths 0 and expected +-1 refused per type");
    T_EQ_I(check_len(PROTO_HELLO, 0, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_HELLO, PROTO_HELLO_SIZE - 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_HELLO, PROTO_HELLO_SIZE + 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_WELCOME, 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_BYE, 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_PUSH, 0, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_PUSH, PROTO_PUSH_META - 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_PUSH, PROTO_PUSH_META + 12 - 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_PUSH, PROTO_PUSH_META + 12 + 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_PUSH, PROTO_PUSH_META - 1, limits(8 * MIB, 4, 0)),
           ERR_PROTO_SIZE);               /* the meta is needed even unagreed */
    T_EQ_I(check_len(PROTO_WEIGHTS, 12 - 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_WEIGHTS, 12 + 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_CHUNK, 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_ERROR, PROTO_TEXT_MAX + 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_ABORT, PROTO_TEXT_MAX + 1, std), ERR_PROTO_SIZE);

    T_CASE("proto-3.7", "length not a whole number of elements refused");
    {
        struct proto_limits f64 = limits(8 * MIB, 4, 8);
        T_EQ_I(check_len(PROTO_WEIGHTS, 4 * 1000 + 2, std), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_CHUNK, 4 * 1000 + 3, std), ERR_PROTO_SIZE);
        /* 15 f32 elements' worth of bytes in an f64 job. */
        T_EQ_I(check_len(PROTO_WEIGHTS, 8 * 7 + 4, f64), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_CHUNK, 8 * 7 + 4, f64), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_PUSH, PROTO_PUSH_META + 8 * 7 + 4, f64), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_PUSH, PROTO_PUSH_META + 8 * 7, f64), 0);
    }

    T_CASE("proto-3.8", "huge lengths refused by the cap before the type rule");
    {
        static const uint64_t huge[] = { 0x7FFFFFFFull, 0xFFFFFFFFull, UINT64_MAX,
                                         8ull * MIB + 1, 8ull * MIB + 4 };
        for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
            for (uint16_t t = PROTO_HELLO; t <= PROTO_TYPE_LAST; t++)
                T_EQ_I(check_len(t, huge[i], std), ERR_PROTO_LENGTH);
        /* A fixed-size type still obeys a cap below its size. */
        T_EQ_I(check_len(PROTO_HELLO, PROTO_HELLO_SIZE,
                         limits(PROTO_HELLO_SIZE - 1, 4, 4)), ERR_PROTO_LENGTH);
        /* A cap of 0 lets through only the empty frames. */
        T_EQ_I(check_len(PROTO_BYE, 0, limits(0, 4, 4)), 0);
        T_EQ_I(check_len(PROTO_ERROR, 1, limits(0, 4, 4)), ERR_PROTO_LENGTH);
    }

    T_CASE("proto-3.9", "no count x size overflow or len-16 wrap, even with no cap");
    {
        /* With max_payload = UINT64_MAX the cap stops nothing, so these
         * depend on the size rule alone. A decoder that computed count *
         * elem_size, or len - 16 before checking len >= 16, would accept
         * some of the refused ones: 12 - 16 wraps to 2^64 - 4, a multiple
         * of 4, and (2^62 + 1) * 4 wraps to 4. */
        struct proto_limits nocap = limits(UINT64_MAX, 4, 4);
        struct proto_limits nocap8 = limits(UINT64_MAX, 4, 8);
        T_EQ_I(check_len(PROTO_PUSH, 12, nocap), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_PUSH, 0, nocap), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_WEIGHTS, UINT64_MAX, nocap), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_PUSH, UINT64_MAX, nocap), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_CHUNK, 0xFFFFFFFFull, nocap), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_CHUNK, 0x7FFFFFFFull, nocap8), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_HELLO, UINT64_MAX, nocap), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_ERROR, UINT64_MAX, nocap), ERR_PROTO_SIZE);
        T_EQ_I(check_len(PROTO_WELCOME, (uint64_t)1 << 63, nocap), ERR_PROTO_SIZE);
        /* Whole numbers of elements near 2^64 are exact, not wrapped. */
        T_EQ_I(check_len(PROTO_WEIGHTS, UINT64_MAX - 3, nocap), 0);
        T_EQ_I(check_len(PROTO_CHUNK, UINT64_MAX - 7, nocap8), 0);
        T_EQ_I(check_len(PROTO_PUSH, UINT64_MAX - 3, nocap), 0);
        /* A hostile elem_size is only a divisor. */
        struct proto_limits odd = limits(UINT64_MAX, 4, UINT32_MAX);
        T_EQ_I(check_len(PROTO_WEIGHTS, UINT32_MAX, odd), 0);
        T_EQ_I(check_len(PROTO_WEIGHTS, 5, odd), ERR_PROTO_SIZE);
    }

    T_CASE("proto-3.10", "two faults in one frame: the first in order is reported");
    {
        struct proto_header h;
        h = good(PROTO_PUSH); h.magic = 1; h.version = 9;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_MAGIC);
        h = good(PROTO_PUSH); h.magic = 1; h.length = UINT64_MAX;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_MAGIC);
        h = good(PROTO_PUSH); h.version = 9; h.type = 0;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_VERSION);
        h = good(PROTO_PUSH); h.type = 0; h.world = 0;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_TYPE);
        h = good(PROTO_PUSH); h.world = 0; h.rank = 7;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_WORLD);
        h = good(PROTO_PUSH); h.world = 5; h.rank = 9;      /* not ours, and rank */
        T_EQ_I(check_hdr(h, std), ERR_PROTO_WORLD);
        h = good(PROTO_PUSH); h.rank = 4; h.length = UINT64_MAX;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_RANK);
        h = good(PROTO_PUSH); h.rank = 4; h.length = 3;
        T_EQ_I(check_hdr(h, std), ERR_PROTO_RANK);
        h = good(PROTO_HELLO); h.length = 41;                 /* over cap and wrong */
        T_EQ_I(check_hdr(h, limits(40, 4, 4)), ERR_PROTO_LENGTH);
        h = good(PROTO_WEIGHTS); h.length = 8 * MIB + 1;      /* over cap, not whole */
        T_EQ_I(check_hdr(h, std), ERR_PROTO_LENGTH);
    }

    T_CASE("proto-3.11", "text with a NUL or over PROTO_TEXT_MAX refused");
    {
        static uint8_t text[PROTO_TEXT_MAX + 2];
        memset(text, 'x', sizeof text);
        text[0] = 0;
        T_EQ_I(proto_text_check(text, 1), ERR_PROTO_FIELD);
        T_EQ_I(proto_text_check(text, 10), ERR_PROTO_FIELD);
        text[0] = 'x';
        text[5] = 0;
        T_EQ_I(proto_text_check(text, 10), ERR_PROTO_FIELD);
        T_EQ_I(proto_text_check(text, 5), 0);          /* NUL just past the end */
        text[5] = 'x';
        text[PROTO_TEXT_MAX - 1] = 0;
        T_EQ_I(proto_text_check(text, PROTO_TEXT_MAX), ERR_PROTO_FIELD);
        text[PROTO_TEXT_MAX - 1] = 'x';
        T_EQ_I(proto_text_check(text, PROTO_TEXT_MAX + 1), ERR_PROTO_SIZE);
        text[3] = 0;                                   /* too long and a NUL */
        T_EQ_I(proto_text_check(text, PROTO_TEXT_MAX + 1), ERR_PROTO_SIZE);
        T_EQ_I(proto_text_check(text, SIZE_MAX), ERR_PROTO_SIZE);
    }

    T_CASE("proto-3.12", "hello: wrong size, bad dtype, workload, n = 0, batch = 0 refused");
    {
        struct proto_hello h = good_hello(), ho;
        static const uint32_t bad_dtype[] = { 0, 3, 0x7FFFFFFF, 0x80000000u, UINT32_MAX };
        static const uint32_t bad_wl[] = { 0, 4, UINT32_MAX };

        proto_hello_encode(&h, buf);
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), 0);
        T_EQ_I(proto_hello_decode(buf, 0, &ho), ERR_PROTO_SIZE);
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE - 1, &ho), ERR_PROTO_SIZE);
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE + 1, &ho), ERR_PROTO_SIZE);
        T_EQ_I(proto_hello_decode(buf, SIZE_MAX, &ho), ERR_PROTO_SIZE);
        for (size_t i = 0; i < sizeof bad_dtype / sizeof bad_dtype[0]; i++) {
            struct proto_hello e = good_hello();
            e.dtype = bad_dtype[i];
            proto_hello_encode(&e, buf);
            T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), ERR_PROTO_FIELD);
            T_EQ_U(ho.dtype, bad_dtype[i]);           /* filled for the log */
        }
        for (size_t i = 0; i < sizeof bad_wl / sizeof bad_wl[0]; i++) {
            struct proto_hello e = good_hello();
            e.workload = bad_wl[i];
            proto_hello_encode(&e, buf);
            T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), ERR_PROTO_FIELD);
        }
        h.n = 0;
        proto_hello_encode(&h, buf);
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), ERR_PROTO_FIELD);
        T_EQ_U(ho.batch, 1024);
        h = good_hello();
        h.batch = 0;
        proto_hello_encode(&h, buf);
        T_EQ_I(proto_hello_decode(buf, PROTO_HELLO_SIZE, &ho), ERR_PROTO_FIELD);
    }

    T_CASE("proto-3.13", "push meta: NaN and +-Inf loss refused, subnormal accepted");
    {
        static const uint64_t bad[] = {
            0x7FF8000000000000ull,     /* quiet NaN */
            0xFFF8000000000000ull,     /* negative quiet NaN */
            0x7FF0000000000001ull,     /* signalling NaN */
            0x7FFFFFFFFFFFFFFFull,     /* NaN, all payload bits */
            0x7FF0000000000000ull,     /* +Inf */
            0xFFF0000000000000ull,     /* -Inf */
        };
        struct proto_push_meta mo;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            put_le(buf, 3, 8);
            put_le(buf + 8, bad[i], 8);
            T_EQ_I(proto_push_meta_decode(buf, PROTO_PUSH_META, &mo), ERR_NONFINITE);
            T_EQ_U(mo.examples, 3);
        }
        /* The smallest and largest subnormals, both signs: finite, kept. */
        static const uint64_t sub[] = { 1, 0x000FFFFFFFFFFFFFull,
                                        0x8000000000000001ull };
        for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
            struct proto_push_meta m = { 3, from_bits(sub[i]) };
            proto_push_meta_encode(&m, buf);
            T_EQ_I(proto_push_meta_decode(buf, PROTO_PUSH_META, &mo), 0);
            T_EQ_U(to_bits(mo.loss), sub[i]);
            T_TRUE(fpclassify(mo.loss) == FP_SUBNORMAL);
        }
        T_EQ_I(proto_push_meta_decode(buf, PROTO_PUSH_META - 1, &mo), ERR_PROTO_SIZE);
        T_EQ_I(proto_push_meta_decode(buf, 0, &mo), ERR_PROTO_SIZE);
    }

    T_CASE("proto-3.14", "a stranger (HTTP, zeros, all ones) is refused as bad magic");
    {
        static const char http[PROTO_HEADER_SIZE + 1] =
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:5000\r\n\r\n";
        struct proto_limits any = limits(UINT64_MAX, 0, 0);
        T_EQ_I(proto_header_decode((const uint8_t *)http, &any, &out), ERR_PROTO_MAGIC);
        memset(buf, 0, PROTO_HEADER_SIZE);
        T_EQ_I(proto_header_decode(buf, &any, &out), ERR_PROTO_MAGIC);
        memset(buf, 0xff, PROTO_HEADER_SIZE);
        T_EQ_I(proto_header_decode(buf, &any, &out), ERR_PROTO_MAGIC);
    }

    /* ------------------------------------------------ ring rendezvous */

    T_CASE("proto-5.1", "WELCOME: the range round trip at offsets 0 and 8; wrong size, "
           "count 0 and a wrapping range refused");
    {
        struct proto_welcome w = { 0x0807060504030201ull, 0x100f0e0d0c0b0a09ull }, wo;
        static const uint8_t want[PROTO_WELCOME_SIZE] = {
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
        };

        proto_welcome_encode(&w, buf);
        T_TRUE(memcmp(buf, want, sizeof want) == 0);
        T_EQ_I(proto_welcome_decode(buf, PROTO_WELCOME_SIZE, &wo), 0);
        T_EQ_U(wo.first, w.first);
        T_EQ_U(wo.count, w.count);
        T_EQ_I(proto_welcome_decode(buf, PROTO_WELCOME_SIZE - 1, &wo), ERR_PROTO_SIZE);
        T_EQ_I(proto_welcome_decode(buf, PROTO_WELCOME_SIZE + 1, &wo), ERR_PROTO_SIZE);
        T_EQ_U(wo.count, 0);
        w = (struct proto_welcome){ 5, 0 };
        proto_welcome_encode(&w, buf);
        T_EQ_I(proto_welcome_decode(buf, PROTO_WELCOME_SIZE, &wo), ERR_PROTO_FIELD);
        w = (struct proto_welcome){ UINT64_MAX, 1 };
        proto_welcome_encode(&w, buf);
        T_EQ_I(proto_welcome_decode(buf, PROTO_WELCOME_SIZE, &wo), ERR_PROTO_FIELD);
        w = (struct proto_welcome){ UINT64_MAX - 1, 1 };
        proto_welcome_encode(&w, buf);
        T_EQ_I(proto_welcome_decode(buf, PROTO_WELCOME_SIZE, &wo), 0);
        T_EQ_I(check_len(PROTO_WELCOME, 0, std), ERR_PROTO_SIZE);     /* version 2's */
        T_EQ_I(check_len(PROTO_WELCOME, PROTO_WELCOME_SIZE, std), 0);
    }

    T_CASE("proto-4.1", "REGISTER: round trip, fields at their offsets");
    {
        struct proto_register r = { good_hello(), { 40123, 9, "127.0.0.1" } }, ro;
        uint8_t p[PROTO_REGISTER_MAX];
        size_t n = 0;
        T_EQ_I(proto_register_encode(&r, p, sizeof p, &n), 0);
        T_EQ_U(n, PROTO_REGISTER_META + 9);
        T_EQ_U(p[40] | p[41] << 8, 40123);             /* port, little-endian */
        T_EQ_U(p[42] | p[43] << 8, 9);                 /* address length */
        T_EQ_U(p[44] | p[45] | p[46] | p[47], 0);      /* reserved */
        T_TRUE(memcmp(p + 48, "127.0.0.1", 9) == 0);
        memset(&ro, 0xa5, sizeof ro);
        T_EQ_I(proto_register_decode(p, n, &ro), 0);
        T_EQ_U(ro.hello.n, 1000);
        T_EQ_U(ro.hello.batch, 1024);
        T_EQ_U(ro.peer.port, 40123);
        T_EQ_U(ro.peer.addr_len, 9);
        T_STR(ro.peer.addr, "127.0.0.1");
        /* The longest address, and an IPv6 literal with a zone. */
        memset(r.peer.addr, 'h', PROTO_ADDR_MAX);
        r.peer.addr[PROTO_ADDR_MAX] = '\0';
        r.peer.addr_len = PROTO_ADDR_MAX;
        T_EQ_I(proto_register_encode(&r, p, sizeof p, &n), 0);
        T_EQ_U(n, PROTO_REGISTER_MAX);
        T_EQ_I(proto_register_decode(p, n, &ro), 0);
        T_EQ_U(ro.peer.addr_len, PROTO_ADDR_MAX);
        strcpy(r.peer.addr, "fe80::1%eth0");
        r.peer.addr_len = 12;
        T_EQ_I(proto_register_encode(&r, p, sizeof p, &n), 0);
        T_EQ_I(proto_register_decode(p, n, &ro), 0);
        T_STR(ro.peer.addr, "fe80::1%eth0");
    }

    T_CASE("proto-4.2", "REGISTER: sizes, port 0, reserved, bad address refused");
    {
        struct proto_register r = { good_hello(), { 5000, 4, "host" } }, ro;
        uint8_t p[PROTO_REGISTER_MAX + 8];
        size_t n = 0;
        T_EQ_I(proto_register_encode(&r, p, sizeof p, &n), 0);
        T_EQ_I(proto_register_decode(p, PROTO_REGISTER_META, &ro), ERR_PROTO_SIZE);
        T_EQ_I(proto_register_decode(p, n - 1, &ro), ERR_PROTO_SIZE);   /* length lies */
        T_EQ_I(proto_register_decode(p, n + 1, &ro), ERR_PROTO_SIZE);
        T_EQ_I(proto_register_decode(p, PROTO_REGISTER_MAX + 1, &ro), ERR_PROTO_SIZE);
        T_EQ_I(proto_register_decode(p, 0, &ro), ERR_PROTO_SIZE);
        p[40] = p[41] = 0;                                    /* port 0 */
        T_EQ_I(proto_register_decode(p, n, &ro), ERR_PROTO_FIELD);
        T_EQ_U(ro.peer.port, 0);                              /* zeroed on failure */
        T_EQ_U(ro.hello.n, 0);
        proto_register_encode(&r, p, sizeof p, &n);
        p[47] = 1;                                            /* reserved */
        T_EQ_I(proto_register_decode(p, n, &ro), ERR_PROTO_FIELD);
        proto_register_encode(&r, p, sizeof p, &n);
        put_le(p + 8, 3, 4);                                  /* dtype 3 */
        T_EQ_I(proto_register_decode(p, n, &ro), ERR_PROTO_FIELD);
        static const char bad[] = { ' ', '/', '[', ']', '\0', '\n', 0x7f, (char)0xc3 };
        for (size_t i = 0; i < sizeof bad; i++) {
            proto_register_encode(&r, p, sizeof p, &n);
            p[48 + 1] = (uint8_t)bad[i];
            T_EQ_I(proto_register_decode(p, n, &ro), ERR_PROTO_FIELD);
        }
        /* Encode refuses what decode would refuse, and a short buffer. */
        r.peer.port = 0;
        T_EQ_I(proto_register_encode(&r, p, sizeof p, &n), ERR_PROTO_FIELD);
        r.peer.port = 5000;
        r.peer.addr_len = 3;                                  /* != strlen */
        T_EQ_I(proto_register_encode(&r, p, sizeof p, &n), ERR_PROTO_FIELD);
        r.peer.addr_len = 4;
        strcpy(r.peer.addr, "a b.");
        T_EQ_I(proto_register_encode(&r, p, sizeof p, &n), ERR_PROTO_FIELD);
        strcpy(r.peer.addr, "host");
        T_EQ_I(proto_register_encode(&r, p, PROTO_REGISTER_META + 3, &n), ERR_PROTO_SIZE);
        T_EQ_I(proto_addr_check("", 0), ERR_PROTO_FIELD);
        T_EQ_I(proto_addr_check("a.b-c_d:e%f9", 12), 0);
    }

    T_CASE("proto-4.3", "TABLE: round trip of blob and K addresses");
    {
        static struct proto_peer peers[3] = {
            { 41000, 9, "127.0.0.1" }, { 41001, 3, "::1" }, { 65535, 11, "node-7.lab1" },
        };
        struct proto_peer back[3];
        uint8_t blob[PROTO_BLOB_SIZE], blob2[PROTO_BLOB_SIZE], p[512];
        size_t n = 0;
        for (int i = 0; i < PROTO_BLOB_SIZE; i++)
            blob[i] = (uint8_t)(i * 7 + 1);
        T_EQ_U(proto_table_size(peers, 3), PROTO_BLOB_SIZE + 3 * 4 + 9 + 3 + 11);
        T_EQ_I(proto_table_encode(blob, peers, 3, p, sizeof p, &n), 0);
        T_EQ_U(n, proto_table_size(peers, 3));
        T_TRUE(memcmp(p, blob, PROTO_BLOB_SIZE) == 0);
        T_EQ_U(p[128] | p[129] << 8, 41000);
        T_EQ_U(p[130] | p[131] << 8, 9);
        T_TRUE(memcmp(p + 132, "127.0.0.1", 9) == 0);
        T_EQ_I(proto_table_decode(p, n, 3, blob2, back), 0);
        T_TRUE(memcmp(blob, blob2, PROTO_BLOB_SIZE) == 0);
        for (int i = 0; i < 3; i++) {
            T_EQ_U(back[i].port, peers[i].port);
            T_EQ_U(back[i].addr_len, peers[i].addr_len);
            T_STR(back[i].addr, peers[i].addr);
        }
        /* The header rule for the same frame, K = 3. */
        struct proto_header h = proto_header_make(PROTO_TABLE, 0, 3, 0, 0, n);
        T_EQ_I(check_hdr(h, limits(1 * MIB, 3, 0)), 0);
    }

    T_CASE("proto-4.4", "TABLE: entries not filling the payload, lying lengths refused");
    {
        static struct proto_peer peers[2] = { { 41000, 4, "host" }, { 41001, 4, "hast" } };
        struct proto_peer back[3];
        uint8_t blob[PROTO_BLOB_SIZE] = { 0 }, p[512];
        size_t n = 0;
        T_EQ_I(proto_table_encode(blob, peers, 2, p, sizeof p, &n), 0);
        T_EQ_I(proto_table_decode(p, n + 1, 2, blob, back), ERR_PROTO_SIZE);   /* a byte over */
        T_EQ_I(proto_table_decode(p, n - 1, 2, blob, back), ERR_PROTO_SIZE);   /* cut short */
        T_EQ_I(proto_table_decode(p, n, 1, blob, back), ERR_PROTO_SIZE);       /* K says 1 */
        T_EQ_I(proto_table_decode(p, n, 3, blob, back), ERR_PROTO_SIZE);       /* K says 3 */
        T_EQ_I(proto_table_decode(p, 100, 2, blob, back), ERR_PROTO_SIZE);
        T_EQ_U(back[0].port, 0);                                             /* zeroed */
        p[128 + 2] = 0xff;                                  /* address length 0xff04 */
        T_EQ_I(proto_table_decode(p, n, 2, blob, back), ERR_PROTO_SIZE);
        proto_table_encode(blob, peers, 2, p, sizeof p, &n);
        p[128 + 8 + 0] = 0;                                  /* second port 0 */
        p[128 + 8 + 1] = 0;
        T_EQ_I(proto_table_decode(p, n, 2, blob, back), ERR_PROTO_FIELD);
        proto_table_encode(blob, peers, 2, p, sizeof p, &n);
        p[128 + 4] = '/';
        T_EQ_I(proto_table_decode(p, n, 2, blob, back), ERR_PROTO_FIELD);
        T_EQ_I(proto_table_encode(blob, peers, 2, p, n - 1, &n), ERR_PROTO_SIZE);
        peers[1].port = 0;
        T_EQ_I(proto_table_encode(blob, peers, 2, p, sizeof p, &n), ERR_PROTO_FIELD);
        peers[1].port = 41001;
    }

    T_CASE("proto-4.5", "REGISTER and TABLE lengths in the header: bounds +-1");
    T_EQ_I(check_len(PROTO_REGISTER, PROTO_REGISTER_META, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_REGISTER, PROTO_REGISTER_META + 1, std), 0);
    T_EQ_I(check_len(PROTO_REGISTER, PROTO_REGISTER_MAX, std), 0);
    T_EQ_I(check_len(PROTO_REGISTER, PROTO_REGISTER_MAX + 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_TABLE, PROTO_BLOB_SIZE + 4 * 5 - 1, std), ERR_PROTO_SIZE);
    T_EQ_I(check_len(PROTO_TABLE, PROTO_BLOB_SIZE + 4 * 5, std), 0);
    T_EQ_I(check_len(PROTO_TABLE, PROTO_BLOB_SIZE + 4 * (4 + PROTO_ADDR_MAX), std), 0);
    T_EQ_I(check_len(PROTO_TABLE, PROTO_BLOB_SIZE + 4 * (4 + PROTO_ADDR_MAX) + 1, std),
           ERR_PROTO_SIZE);
    {
        /* The largest world: the bound is computed without overflow. */
        struct proto_header h = proto_header_make(PROTO_TABLE, 0, PROTO_MAX_WORLD, 0, 0,
                                                  PROTO_BLOB_SIZE + (uint64_t)PROTO_MAX_WORLD * 5);
        T_EQ_I(check_hdr(h, limits(UINT64_MAX, 0, 0)), 0);
        h.length = UINT64_MAX;
        T_EQ_I(check_hdr(h, limits(UINT64_MAX, 0, 0)), ERR_PROTO_SIZE);
    }

    return t_done();
}
