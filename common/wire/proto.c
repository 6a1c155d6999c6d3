/* proto.c -- encode and validate psring's frames (the format is in proto.h).
 *
 * This file is the only place where bytes from a peer become numbers, so it
 * is written to be boring and total: every field is assembled one byte at a
 * time in little-endian order (never a memcpy of the struct, so padding,
 * alignment and the host's layout cannot leak onto the wire), and every
 * check is a comparison or a remainder on the received values, never a
 * product that could overflow. proto_header_decode applies the checks in
 * the order proto.h documents, one err.h code per check, so a frame with
 * several faults always reports the first one and a caller can log exactly
 * what was wrong. Nothing here allocates, blocks or logs; what to do with a
 * bad frame (close that connection, fail the step) is the caller's choice.
 */
#include "proto.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"

/* The struct mirrors the wire so a debugger shows a header as it was sent;
 * encode/decode do not depend on it, but a reordered field should fail
 * here rather than confuse the next reader of the table in proto.h. */
_Static_assert(offsetof(struct proto_header, magic) == 0, "magic at offset 0");
_Static_assert(offsetof(struct proto_header, version) == 4, "version at offset 4");
_Static_assert(offsetof(struct proto_header, type) == 6, "type at offset 6");
_Static_assert(offsetof(struct proto_header, rank) == 8, "rank at offset 8");
_Static_assert(offsetof(struct proto_header, world) == 12, "world at offset 12");
_Static_assert(offsetof(struct proto_header, step) == 16, "step at offset 16");
_Static_assert(offsetof(struct proto_header, aux) == 24, "aux at offset 24");
_Static_assert(offsetof(struct proto_header, length) == 32, "length at offset 32");
_Static_assert(sizeof(struct proto_header) == PROTO_HEADER_SIZE,
               "struct proto_header has no padding: 40 bytes like the wire");

/* The rendezvous payloads (proto.h): REGISTER is the HELLO payload, then
 * port, address length and 4 reserved bytes, then the address; a TABLE
 * entry is port and address length, then the address. Lengths travel in
 * 16 bits, so the address cap must fit them. */
_Static_assert(PROTO_REGISTER_META == PROTO_HELLO_SIZE + 2 + 2 + 4,
               "REGISTER: the address starts at offset 48");
_Static_assert(PROTO_PEER_META == 2 + 2, "TABLE entry: the address starts at offset 4");
_Static_assert(PROTO_ADDR_MAX <= UINT16_MAX, "address length fits its 16-bit field");
_Static_assert(PROTO_TYPE_LAST == PROTO_AUTH, "PROTO_TYPE_LAST is the last type");
/* AUTH (proto.h): keyed, purpose, then the nonce at 8 and the MAC at 40. */
_Static_assert(offsetof(struct proto_auth, keyed) == 0, "AUTH keyed at offset 0");
_Static_assert(offsetof(struct proto_auth, purpose) == 4, "AUTH purpose at offset 4");
_Static_assert(offsetof(struct proto_auth, nonce) == 8, "AUTH nonce at offset 8");
_Static_assert(offsetof(struct proto_auth, mac) == 8 + PROTO_NONCE_SIZE, "AUTH mac at offset 40");
_Static_assert(sizeof(struct proto_auth) == PROTO_AUTH_SIZE, "AUTH payload: 72 bytes");

/* The header fields are byte-swapped portably below, but gradient and
 * weight arrays are sent and received with a plain copy of the host's
 * floats (proto.h, BYTE ORDER). On a big-endian host those copies would put
 * the wrong byte order on the wire, so such a build must fail, not run. */
#if !defined(__BYTE_ORDER__) || !defined(__ORDER_LITTLE_ENDIAN__)
#error "proto.c: the compiler does not say the host byte order (__BYTE_ORDER__)"
#endif
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "psring copies f32/f64 element arrays to the wire unchanged, "
               "so it needs a little-endian host");
/* The loss and the elements are IEEE-754 binary64/binary32 on the wire. */
_Static_assert(sizeof(double) == 8 && DBL_MANT_DIG == 53 && FLT_RADIX == 2,
               "double must be IEEE-754 binary64");
_Static_assert(sizeof(float) == 4 && FLT_MANT_DIG == 24,
               "float must be IEEE-754 binary32");

/* ---------------------------------------------------------------- bytes */

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void proto_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void proto_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

uint32_t proto_get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

uint64_t proto_get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* A double travels as the little-endian bytes of its binary64 pattern; the
 * memcpy is the defined way in C to read that pattern (no aliasing UB). */
void proto_put_f64(uint8_t *p, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    proto_put_u64(p, bits);
}

double proto_get_f64(const uint8_t *p)
{
    uint64_t bits = proto_get_u64(p);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* ---------------------------------------------------------------- header */

struct proto_header proto_header_make(uint16_t type, uint32_t rank, uint32_t world,
                                      uint64_t step, uint64_t aux, uint64_t length)
{
    return (struct proto_header){ .magic = PROTO_MAGIC, .version = PROTO_VERSION, .type = type,
                                  .rank = rank, .world = world, .step = step, .aux = aux,
                                  .length = length };
}

void proto_header_encode(const struct proto_header *h, uint8_t *out)
{
    proto_put_u32(out + 0, h->magic);
    put_u16(out + 4, h->version);
    put_u16(out + 6, h->type);
    proto_put_u32(out + 8, h->rank);
    proto_put_u32(out + 12, h->world);
    proto_put_u64(out + 16, h->step);
    proto_put_u64(out + 24, h->aux);
    proto_put_u64(out + 32, h->length);
}

/* size_ok: is `len` a legal payload length for `type`? Called only after
 * the type is known and len <= the cap. Only remainders and comparisons:
 * a length near UINT64_MAX cannot wrap anything here, and PUSH subtracts
 * its metadata only once len >= PROTO_PUSH_META. */
static int size_ok(unsigned type, uint64_t len, uint32_t elem, uint32_t world)
{
    switch (type) {
    case PROTO_HELLO:
        return len == PROTO_HELLO_SIZE;
    case PROTO_WELCOME:
        return len == PROTO_WELCOME_SIZE;
    case PROTO_BYE:
        return len == 0;
    case PROTO_ERROR:
    case PROTO_ABORT:
        return len <= PROTO_TEXT_MAX;
    case PROTO_PUSH:
        if (len < PROTO_PUSH_META)
            return 0;
        return elem == 0 || (len - PROTO_PUSH_META) % elem == 0;
    case PROTO_WEIGHTS:
    case PROTO_CHUNK:
        return elem == 0 || len % elem == 0;
    case PROTO_REGISTER:
        return len > PROTO_REGISTER_META && len <= PROTO_REGISTER_MAX;
    case PROTO_AUTH:
        return len == PROTO_AUTH_SIZE;
    case PROTO_TABLE:
        /* world <= PROTO_MAX_WORLD here: the products stay below 2^25. */
        return len >= PROTO_BLOB_SIZE + (uint64_t)world * (PROTO_PEER_META + 1)
            && len <= PROTO_BLOB_SIZE + (uint64_t)world * (PROTO_PEER_META + PROTO_ADDR_MAX);
    default:
        return 0;
    }
}

int proto_header_decode(const uint8_t *in, const struct proto_limits *lim,
                        struct proto_header *out)
{
    /* Decode everything first, so *out is complete whatever fails. */
    out->magic = proto_get_u32(in + 0);
    out->version = get_u16(in + 4);
    out->type = get_u16(in + 6);
    out->rank = proto_get_u32(in + 8);
    out->world = proto_get_u32(in + 12);
    out->step = proto_get_u64(in + 16);
    out->aux = proto_get_u64(in + 24);
    out->length = proto_get_u64(in + 32);

    /* The order below is the one documented in proto.h; tests rely on it. */
    if (out->magic != PROTO_MAGIC)
        return ERR_PROTO_MAGIC;
    if (out->version != PROTO_VERSION)
        return ERR_PROTO_VERSION;
    if (out->type < PROTO_HELLO || out->type > PROTO_TYPE_LAST)
        return ERR_PROTO_TYPE;
    if (out->world == 0 || out->world > PROTO_MAX_WORLD
        || (lim->world != 0 && out->world != lim->world))
        return ERR_PROTO_WORLD;
    /* PROTO_MAX_WORLD < PROTO_RANK_SERVER, so the server's rank can never
     * be mistaken for a worker's. */
    if (out->rank >= out->world && out->rank != PROTO_RANK_SERVER)
        return ERR_PROTO_RANK;
    /* The cap comes before the per-type rule so that an oversized frame is
     * always reported as such, whatever its type claims. */
    if (out->length > lim->max_payload)
        return ERR_PROTO_LENGTH;
    if (!size_ok(out->type, out->length, lim->elem_size, out->world))
        return ERR_PROTO_SIZE;
    return 0;
}

const char *proto_type_name(unsigned type)
{
    switch (type) {
    case PROTO_HELLO: return "HELLO";
    case PROTO_WELCOME: return "WELCOME";
    case PROTO_PUSH: return "PUSH";
    case PROTO_WEIGHTS: return "WEIGHTS";
    case PROTO_CHUNK: return "CHUNK";
    case PROTO_ERROR: return "ERROR";
    case PROTO_ABORT: return "ABORT";
    case PROTO_BYE: return "BYE";
    case PROTO_REGISTER: return "REGISTER";
    case PROTO_TABLE: return "TABLE";
    case PROTO_AUTH: return "AUTH";
    default: return "?";
    }
}

/* ---------------------------------------------------------------- payloads */

void proto_hello_encode(const struct proto_hello *h, uint8_t *out)
{
    proto_put_u64(out + 0, h->n);
    proto_put_u32(out + 8, h->dtype);
    proto_put_u32(out + 12, h->workload);
    proto_put_u64(out + 16, h->seed);
    /* once version 1's token: compress in the low u32, --sync-every H in the high
     * one (0: every step) */
    proto_put_u64(out + 24, (uint64_t)(h->sync_every > 1 ? h->sync_every : 0) << 32 |
                            h->compress);
    proto_put_u64(out + 32, h->batch);
}

/* Only the hello's own shape is checked here: known dtype and workload,
 * at least one parameter. Whether it matches the receiver's job (n, dtype,
 * K, workload) is the receiver's ERR_MISMATCH, not a format error.
 * batch is not checked: B = 0 is a setting the receiver refuses if it
 * cares. A wrong length leaves *out zeroed: there are no fields to trust. */
int proto_hello_decode(const uint8_t *in, size_t len, struct proto_hello *out)
{
    memset(out, 0, sizeof *out);
    if (len != PROTO_HELLO_SIZE)
        return ERR_PROTO_SIZE;
    out->n = proto_get_u64(in + 0);
    out->dtype = proto_get_u32(in + 8);
    out->workload = proto_get_u32(in + 12);
    out->seed = proto_get_u64(in + 16);
    out->batch = proto_get_u64(in + 32);
    if (!compress_get((int)(proto_get_u64(in + 24) & 0xffffffffu)) ||
        proto_get_u64(in + 24) >> 32 == 1)
        return ERR_PROTO_FIELD;     /* every step is 0 on the wire */
    out->compress = (uint32_t)(proto_get_u64(in + 24) & 0xffffffffu);
    out->sync_every = (uint32_t)(proto_get_u64(in + 24) >> 32);

    /* dtype_size takes an int; a u32 above INT_MAX is no dtype anyway. */
    if (out->dtype > INT_MAX || dtype_size((int)out->dtype) == 0)
        return ERR_PROTO_FIELD;
    if (out->workload < PROTO_WORKLOAD_FIRST || out->workload > PROTO_WORKLOAD_LAST)
        return ERR_PROTO_FIELD;
    if (out->n < 1 || out->batch < 1)
        return ERR_PROTO_FIELD;
    return 0;
}

void proto_welcome_encode(const struct proto_welcome *w, uint8_t *out)
{
    proto_put_u64(out + 0, w->first);
    proto_put_u64(out + 8, w->count);
}

int proto_welcome_decode(const uint8_t *in, size_t len, struct proto_welcome *out)
{
    memset(out, 0, sizeof *out);
    if (len != PROTO_WELCOME_SIZE)
        return ERR_PROTO_SIZE;
    out->first = proto_get_u64(in + 0);
    out->count = proto_get_u64(in + 8);
    if (out->count == 0 || out->first > UINT64_MAX - out->count) {
        memset(out, 0, sizeof *out);
        return ERR_PROTO_FIELD;
    }
    return 0;
}

void proto_push_meta_encode(const struct proto_push_meta *m, uint8_t *out)
{
    proto_put_u64(out + 0, m->examples);
    proto_put_f64(out + 8, m->loss);
}

/* `len` is how many payload bytes the caller has (the whole PUSH payload
 * is fine); only the first PROTO_PUSH_META are read. A NaN or infinite
 * loss is refused here so it never reaches the server's sums; subnormals
 * are finite and pass. Fewer than PROTO_PUSH_META bytes leave *out zeroed. */
int proto_push_meta_decode(const uint8_t *in, size_t len, struct proto_push_meta *out)
{
    memset(out, 0, sizeof *out);
    if (len < PROTO_PUSH_META)
        return ERR_PROTO_SIZE;
    out->examples = proto_get_u64(in + 0);
    out->loss = proto_get_f64(in + 8);
    if (!isfinite(out->loss))
        return ERR_NONFINITE;
    return 0;
}

void proto_auth_encode(const struct proto_auth *a, uint8_t *out)
{
    proto_put_u32(out + 0, a->keyed);
    proto_put_u32(out + 4, a->purpose);
    memcpy(out + 8, a->nonce, PROTO_NONCE_SIZE);
    memcpy(out + 8 + PROTO_NONCE_SIZE, a->mac, PROTO_MAC_SIZE);
}

int proto_auth_decode(const uint8_t *in, size_t len, struct proto_auth *out)
{
    memset(out, 0, sizeof *out);
    if (len != PROTO_AUTH_SIZE)
        return ERR_PROTO_SIZE;
    out->keyed = proto_get_u32(in + 0);
    out->purpose = proto_get_u32(in + 4);
    memcpy(out->nonce, in + 8, PROTO_NONCE_SIZE);
    memcpy(out->mac, in + 8 + PROTO_NONCE_SIZE, PROTO_MAC_SIZE);
    if (out->keyed > 1 || out->purpose < PROTO_AUTH_PS || out->purpose > PROTO_AUTH_DATA) {
        memset(out, 0, sizeof *out);
        return ERR_PROTO_FIELD;
    }
    return 0;
}

/* The size is checked first, so an oversized reason is refused without
 * being scanned. UTF-8 validity is not checked: the text is only logged,
 * and a NUL is what would silently cut it short when printed with %s. */
int proto_text_check(const uint8_t *text, size_t len)
{
    if (len > PROTO_TEXT_MAX)
        return ERR_PROTO_SIZE;
    if (len > 0 && memchr(text, 0, len) != NULL)
        return ERR_PROTO_FIELD;
    return 0;
}

/* ---------------------------------------------------------------- ring rendezvous */

/* The address alphabet: enough for host names, IPv4 and IPv6 literals
 * (with a %zone), and nothing a log line or a shell could misread. */
int proto_addr_check(const char *addr, size_t len)
{
    if (len == 0 || len > PROTO_ADDR_MAX)
        return ERR_PROTO_FIELD;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)addr[i];
        int ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                 || c == '.' || c == '-' || c == '_' || c == ':' || c == '%';
        if (!ok)
            return ERR_PROTO_FIELD;
    }
    return 0;
}

/* peer_ok: what decode would accept, checked before encoding. */
static int peer_ok(const struct proto_peer *p)
{
    if (p->port == 0 || p->addr_len == 0 || p->addr_len > PROTO_ADDR_MAX
        || memchr(p->addr, 0, p->addr_len) != NULL || p->addr[p->addr_len] != '\0')
        return 0;
    return proto_addr_check(p->addr, p->addr_len) == 0;
}

int proto_register_encode(const struct proto_register *r, uint8_t *out, size_t cap,
                          size_t *len)
{
    size_t n;

    if (!peer_ok(&r->peer))
        return ERR_PROTO_FIELD;
    n = PROTO_REGISTER_META + r->peer.addr_len;
    if (cap < n)
        return ERR_PROTO_SIZE;
    proto_hello_encode(&r->hello, out);
    put_u16(out + 40, r->peer.port);
    put_u16(out + 42, r->peer.addr_len);
    proto_put_u32(out + 44, 0);
    memcpy(out + PROTO_REGISTER_META, r->peer.addr, r->peer.addr_len);
    *len = n;
    return 0;
}

int proto_register_decode(const uint8_t *in, size_t len, struct proto_register *out)
{
    size_t alen;
    int rc;

    memset(out, 0, sizeof *out);
    if (len <= PROTO_REGISTER_META || len > PROTO_REGISTER_MAX)
        return ERR_PROTO_SIZE;
    alen = get_u16(in + 42);
    if (alen != len - PROTO_REGISTER_META)
        return ERR_PROTO_SIZE;
    rc = proto_hello_decode(in, PROTO_HELLO_SIZE, &out->hello);
    if (rc == 0 && (get_u16(in + 40) == 0 || proto_get_u32(in + 44) != 0))
        rc = ERR_PROTO_FIELD;
    if (rc == 0)
        rc = proto_addr_check((const char *)in + PROTO_REGISTER_META, alen);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->peer.port = get_u16(in + 40);
    out->peer.addr_len = (uint16_t)alen;
    memcpy(out->peer.addr, in + PROTO_REGISTER_META, alen);
    out->peer.addr[alen] = '\0';
    return 0;
}

size_t proto_table_size(const struct proto_peer *peers, uint32_t k)
{
    size_t n = PROTO_BLOB_SIZE;
    for (uint32_t i = 0; i < k; i++)
        n += PROTO_PEER_META + peers[i].addr_len;
    return n;
}

int proto_table_encode(const uint8_t *blob, const struct proto_peer *peers, uint32_t k,
                       uint8_t *out, size_t cap, size_t *len)
{
    size_t off = PROTO_BLOB_SIZE;

    for (uint32_t i = 0; i < k; i++)
        if (!peer_ok(&peers[i]))
            return ERR_PROTO_FIELD;
    if (cap < proto_table_size(peers, k))
        return ERR_PROTO_SIZE;
    memcpy(out, blob, PROTO_BLOB_SIZE);
    for (uint32_t i = 0; i < k; i++) {
        put_u16(out + off, peers[i].port);
        put_u16(out + off + 2, peers[i].addr_len);
        memcpy(out + off + PROTO_PEER_META, peers[i].addr, peers[i].addr_len);
        off += PROTO_PEER_META + peers[i].addr_len;
    }
    *len = off;
    return 0;
}

/* Every entry's bounds are checked against the bytes left before it is
 * read, so a lying address length can only end the decode, never read
 * past len. */
int proto_table_decode(const uint8_t *in, size_t len, uint32_t k, uint8_t *blob,
                       struct proto_peer *peers)
{
    size_t off = PROTO_BLOB_SIZE;
    int rc = 0;

    memset(peers, 0, (size_t)k * sizeof *peers);
    if (len < PROTO_BLOB_SIZE)
        return ERR_PROTO_SIZE;
    for (uint32_t i = 0; i < k && rc == 0; i++) {
        size_t alen;
        if (len - off < PROTO_PEER_META) {
            rc = ERR_PROTO_SIZE;
            break;
        }
        alen = get_u16(in + off + 2);
        if (alen > len - off - PROTO_PEER_META) {
            rc = ERR_PROTO_SIZE;
            break;
        }
        if (get_u16(in + off) == 0)
            rc = ERR_PROTO_FIELD;
        else
            rc = proto_addr_check((const char *)in + off + PROTO_PEER_META, alen);
        if (rc == 0) {
            peers[i].port = get_u16(in + off);
            peers[i].addr_len = (uint16_t)alen;
            memcpy(peers[i].addr, in + off + PROTO_PEER_META, alen);
            peers[i].addr[alen] = '\0';
        }
        off += PROTO_PEER_META + alen;
    }
    if (rc == 0 && off != len)
        rc = ERR_PROTO_SIZE;
    if (rc != 0) {
        memset(peers, 0, (size_t)k * sizeof *peers);
        return rc;
    }
    memcpy(blob, in, PROTO_BLOB_SIZE);
    return 0;
}

uint32_t proto_stamp_of(double t)
{
    double us = ceil(t * 1e6);

    if (!(us >= 0.0) || !(us < 9e15))
        return 0;
    return (uint32_t)((uint64_t)us % PROTO_STAMP_MOD) + 1u;
}

double proto_stamp_time(uint32_t stamp, double now)
{
    uint64_t r, now_us, back;

    if (stamp == 0 || !(now >= 0.0) || !(now < 9e9))
        return NAN;
    r = (uint64_t)stamp - 1u;
    now_us = (uint64_t)floor(now * 1e6);
    back = (now_us % PROTO_STAMP_MOD + PROTO_STAMP_MOD - r) % PROTO_STAMP_MOD;
    if (back > now_us)
        return NAN;                     /* before the clock began */
    return (double)(now_us - back) * 1e-6;
}

uint64_t proto_chunk_aux(uint32_t tag, uint32_t stamp)
{
    return (uint64_t)tag | (uint64_t)stamp << 32;
}

uint32_t proto_chunk_tag(uint64_t aux)
{
    return (uint32_t)(aux & 0xffffffffu);
}

uint32_t proto_chunk_stamp(uint64_t aux)
{
    return (uint32_t)(aux >> 32);
}
