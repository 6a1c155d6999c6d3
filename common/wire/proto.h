/* proto.h -- psring's wire format, documented here and nowhere else.
 *
 * Every message between psring processes (worker <-> server, rank <-> rank,
 * rank <-> coordinator) is one frame: a fixed 40-byte header followed by
 * `length` payload bytes. A receiver reads the header, decodes and validates
 * it against its own limits (proto_header_decode) and only then allocates or
 * reads the payload, so a hostile or broken peer can never make it allocate
 * more than the cap it chose.
 *
 * BYTE ORDER: every integer field is little-endian; payload elements are
 * IEEE-754 binary32/binary64 in little-endian byte order. psring is built
 * for little-endian hosts only (checked at compile time in proto.c), so
 * element arrays go on the wire with a plain copy.
 *
 * MESSAGE FLOW (authentication: every connection starts with it)
 *
 *   A1. the side that connects (the initiator: a worker, a ring rank at the
 *       coordinator, the dialling rank of a data connection) sends
 *       AUTH(aux=1): whether it holds a secret, the purpose of the
 *       connection, and its fresh 32-byte nonce Ni.
 *   A2. the side that accepted (the responder) answers AUTH(aux=2): its
 *       fresh nonce Nr and MAC_R = HMAC-SHA256(secret, "psring-auth-2" 'R'
 *       purpose keyed Ni Nr); or ERROR and a close (keyed or purpose
 *       differ, or the frame is not AUTH).
 *   A3. the initiator checks MAC_R (constant time) and sends AUTH(aux=3):
 *       MAC_I = HMAC-SHA256(secret, "psring-auth-2" 'I' purpose keyed Ni
 *       Nr). The responder checks it; a wrong one gets ERROR and a close.
 *   Only then does either side send a byte of the job (HELLO, REGISTER,
 *   TABLE). The secret never crosses the wire; both nonces are fresh, so
 *   a recorded A2 or A3 is worth nothing on the next connection, and the
 *   direction letter keeps a MAC from being reflected back. AUTH frames
 *   say nothing of the job: their header has rank 0, world 1, step 0, and
 *   the responder's refusals before A3 have world 1 too. Without a secret
 *   (keyed 0; a job on loopback started by hand) the same three frames
 *   run with an empty HMAC key: they prove nothing, and say so
 *   (common/wire/auth.h, docs/security.md).
 *
 * MESSAGE FLOW (parameter server; ring frames are listed after it)
 *
 *   1. after A1-A3, the worker sends HELLO (its rank, K, n, dtype,
 *      workload, seed, global batch).
 *   2. server answers WELCOME if everything matches its own settings, else
 *      ERROR with the reason, and closes that connection. WELCOME carries
 *      the element range [first, first + count) of the parameter vector
 *      that server owns (--shard I/S or --range FIRST:COUNT); a worker
 *      checks that its servers' ranges tile [0, n) exactly.
 *   3. step s: each worker sends each server PUSH(step=s) frames: the SUM
 *      of its per-example gradients over elements [aux, aux+count) of that
 *      server's range, one frame for the whole range or one per bucket,
 *      from the top of the range down (each ending where the one before
 *      began; common/ps/store.h, BUCKETS). The first push of a pass carries
 *      the worker's example count and local loss, the others zeros.
 *   4. as soon as every worker has pushed a part of the range, the server
 *      applies the update to it and sends WEIGHTS(step=s, aux=first) with
 *      the new weights of that part to every worker, while the pushes of
 *      the parts below go on (per-bucket pull): per step and worker a
 *      series of WEIGHTS frames, from the top of the range down, each
 *      ending where the one before began, the last starting at the range's
 *      first element. The cuts are the server's choice (store.h, RELEASE).
 *      A worker pushes s+1 only after it has all the weights of s.
 *   5. after the last step, each worker sends BYE and closes.
 *   RESUME. WELCOME's step field is the server's step s, the step it
 *      collects next: 0 for a fresh server. A server that goes on from a
 *      checkpoint (ps_server --resume, or back from a lost worker; see
 *      common/ps/resume.h) has s > 0: once all K workers have joined it
 *      sends each WEIGHTS(step=s-1), its weights, and then takes PUSH(s).
 *      A worker that joins a server at step s starts at step s. (Version 2
 *      unchanged: a fresh server's flow is byte for byte the same, and an
 *      older worker joining a resumed one has its PUSH(0) refused, with
 *      the reason.)
 *   Ring: neighbours exchange CHUNK(step, aux=chunk index) frames; a rank
 *   that detects a failure sends ABORT(aux=lost rank) to the neighbour it
 *   still has before it exits. Any side may send ERROR before it closes.
 *
 * MESSAGE FLOW (ring rendezvous; rank 0 also serves the coordinator)
 *
 *   R1. every rank opens its data listener, connects to the coordinator,
 *       runs A1-A3 and sends REGISTER(rank, K): its HELLO fields and the address and port
 *       its left neighbour should connect to.
 *   R2. when all K ranks have registered and agree with rank 0's settings,
 *       the coordinator sends every rank TABLE(rank=0): a 128-byte opaque
 *       blob (rank 0's to fill: the GPU transport's NCCL id; zeros
 *       otherwise) and the K addresses in rank order. A disagreement (n,
 *       dtype, K, workload, seed, batch, a rank twice) or a rank
 *       missing at the timeout: ERROR(aux=err.h code) with the reason, to
 *       every rank that registered. Then the coordinator closes them all.
 *   R3. each rank connects to its right neighbour (rank+1 mod K), runs
 *       A1-A3 and sends HELLO; it accepts its left neighbour (rank-1 mod K), checks that
 *       HELLO (that rank, the same job) and answers with its own HELLO,
 *       which the connecting side checks in turn.
 *   R4. ring steps: CHUNK(step = the ring step's sequence number on that
 *       connection, from 0, every all-reduce using 2(K-1) of them; aux =
 *       chunk index; payload = that chunk's elements), one per step and
 *       direction, always complete: a rank that fails mid-frame finishes
 *       the frame it was sending before it sends ABORT, so the ABORT
 *       starts on a frame boundary.
 *
 * HEADER
 *
 *   OFFSET SIZE DESCRIPTION
 *   0      4    magic: the bytes "PSRG" (PROTO_MAGIC as a little-endian u32)
 *   4      2    version: PROTO_VERSION
 *   6      2    type: enum proto_type
 *   8      4    rank of the sender; PROTO_RANK_SERVER for a server
 *   12     4    world: K, the number of workers/ranks in the job (1..PROTO_MAX_WORLD)
 *   16     8    step: the training or benchmark step the frame belongs to
 *   24     8    aux: per type (PUSH/WEIGHTS: first element index; CHUNK:
 *               chunk index in bits 0-31, and in bits 32-63 the sender's
 *               STAMP (proto_chunk_aux; 0: none); ABORT: the lost rank; ERROR: the err.h code
 *               as a two's-complement i64; AUTH: the message number 1..3;
 *               otherwise 0)
 *   32     8    length: payload bytes that follow the header
 *   40          end of header (PROTO_HEADER_SIZE)
 *
 * PAYLOADS
 *
 *   HELLO (length exactly 40)
 *   0      8    n: number of parameters (elements) in the job
 *   8      4    dtype: enum dtype (1 = f32, 2 = f64)
 *   12     4    workload: enum proto_workload (1 linreg, 2 synthetic,
 *               3 mlp; train/workload.h's enum workload_kind is these)
 *   16     8    seed
 *   24     4    compress: the wire format of the gradient (PUSH elements,
 *               the ring's CHUNKs): base/compress.h's enum compress_kind,
 *               0 none (--dtype's elements), 1 fp16, 2 bf16, or a
 *               top-k or sign setting (kind 8 or 9 in bits 0-7, no
 *               error feedback in bit 8, top-k's F in millionths in
 *               bits 9-30: compress.h, THE SETTING); anything else is
 *               refused.
 *   28     4    sync_every: --sync-every H (local SGD), 0 for every step
 *               (H = 1), else 2 .. 2^32 - 1 (1 refused). (Bytes 24..31
 *               were version 1's token, always 0 since; the job's secret
 *               works through AUTH.)
 *   32     8    batch: global examples per step (B)
 *
 *   PUSH (length 16 + count * element size, count >= 0)
 *   0      8    examples: how many examples this gradient sums over
 *   8      8    loss: sum of per-example losses over those examples (f64)
 *   16     ...  count gradient elements (the SUM, not the mean)
 *
 *   WELCOME (length exactly 16; new in version 3)
 *   0      8    first: the first element this server owns
 *   8      8    count: how many it owns (>= 1; first + count does not wrap)
 *
 *   WEIGHTS, CHUNK: count elements, length = count * element size.
 *   ERROR, ABORT: a reason in UTF-8 text, at most PROTO_TEXT_MAX bytes,
 *                 no NUL byte.
 *   BYE: empty.
 *
 *   REGISTER (length 48 + a, a = address length, 1..PROTO_ADDR_MAX)
 *   0      40   the HELLO payload above (n, dtype, workload, seed, 0, batch)
 *   40     2    port: the rank's data listener, 1..65535
 *   42     2    a: address length in bytes
 *   44     4    reserved, 0
 *   48     a    address: a host name or IP literal (IPv6 without brackets),
 *               no NUL; bytes [0-9A-Za-z] and . - _ : % only
 *
 *   TABLE (length 128 + sum over the K ranks of (4 + a_r))
 *   0      128  blob: opaque bytes, set by rank 0 before it serves
 *   128    ...  K entries in rank order, back to back, each:
 *                 0  2  port (1..65535)   2  2  a_r   4  a_r  address
 *               (same rules as REGISTER's); the entries fill the payload
 *               exactly.
 *
 *   AUTH (length exactly 72; header rank 0, world 1, step 0, aux 1..3)
 *   0      4    keyed: 1 when the sender holds the job's secret, else 0
 *   4      4    purpose: 1 worker -> server, 2 rank -> coordinator,
 *               3 rank -> rank (enum proto_auth_purpose)
 *   8      32   nonce: aux 1 Ni, aux 2 Nr, aux 3 zeros
 *   40     32   mac: aux 1 zeros, aux 2 MAC_R, aux 3 MAC_I (see A2, A3)
 *
 *   EXAMPLE: a worker with a secret opens (A1), nonce 00 01 .. 1f:
 *   50 53 52 47  03 00  0b 00  00 00 00 00  01 00 00 00     magic ver AUTH rank 0 world 1
 *   00 00 00 00 00 00 00 00  01 00 00 00 00 00 00 00        step 0, aux 1 (A1)
 *   48 00 00 00 00 00 00 00                                 length = 72
 *   01 00 00 00  01 00 00 00                                keyed, purpose worker -> server
 *   00 01 02 03 .. 1f                                       Ni (32 bytes)
 *   00 .. 00                                                mac (32 zeros)
 *
 * EXAMPLE: rank 2 of 4 pushes step 7, 512 examples, loss 0.25, and the two
 * f32 gradient elements 1.5 and -2.0 (64 bytes on the wire):
 *
 *   50 53 52 47  03 00  03 00  02 00 00 00  04 00 00 00     magic ver type rank world
 *   07 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00        step aux
 *   18 00 00 00 00 00 00 00                                 length = 24
 *   00 02 00 00 00 00 00 00  00 00 00 00 00 00 d0 3f        examples, loss
 *   00 00 c0 3f  00 00 00 c0                                1.5f, -2.0f
 *
 * VALIDATION (proto_header_decode, in this order; each its own err.h code)
 *   magic -> ERR_PROTO_MAGIC; version -> ERR_PROTO_VERSION; type ->
 *   ERR_PROTO_TYPE; world 0, > PROTO_MAX_WORLD or != limits.world ->
 *   ERR_PROTO_WORLD; rank >= world (and not PROTO_RANK_SERVER) ->
 *   ERR_PROTO_RANK; length > limits.max_payload -> ERR_PROTO_LENGTH;
 *   length wrong for the type (fixed sizes: HELLO, WELCOME, BYE, AUTH; text cap, not a whole number of
 *   elements, REGISTER outside 49..48+PROTO_ADDR_MAX, TABLE outside
 *   128+5K..128+(4+PROTO_ADDR_MAX)K for the frame's own K, AUTH not
 *   PROTO_AUTH_SIZE) ->
 *   ERR_PROTO_SIZE. The step's meaning (stale, duplicate, future) is the
 *   receiver's business, not the decoder's.
 */
#ifndef PROTO_H
#define PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_MAGIC       0x47525350u   /* "PSRG" read as little-endian */
#define PROTO_VERSION     3             /* 2: AUTH first; HELLO's token gone.
                                           3: WELCOME carries the range;
                                           WEIGHTS per released part */
#define PROTO_HEADER_SIZE 40
#define PROTO_HELLO_SIZE  40
#define PROTO_PUSH_META   16            /* PUSH payload bytes before elements */
#define PROTO_WELCOME_SIZE 16           /* WELCOME payload: first, count */
#define PROTO_TEXT_MAX    1024          /* ERROR and ABORT reasons */
#define PROTO_MAX_WORLD   65536
#define PROTO_RANK_SERVER 0xFFFFFFFFu   /* rank field of server frames */
#define PROTO_ADDR_MAX    255           /* REGISTER/TABLE address bytes */
#define PROTO_REGISTER_META 48          /* REGISTER payload bytes before the address */
#define PROTO_REGISTER_MAX (PROTO_REGISTER_META + PROTO_ADDR_MAX)
#define PROTO_BLOB_SIZE   128           /* TABLE's opaque blob */
#define PROTO_PEER_META   4             /* TABLE entry bytes before the address */
#define PROTO_AUTH_SIZE   72            /* AUTH payload */
#define PROTO_NONCE_SIZE  32
#define PROTO_MAC_SIZE    32            /* HMAC-SHA256 */

enum proto_type {
    PROTO_HELLO = 1,
    PROTO_WELCOME = 2,
    PROTO_PUSH = 3,
    PROTO_WEIGHTS = 4,
    PROTO_CHUNK = 5,
    PROTO_ERROR = 6,
    PROTO_ABORT = 7,
    PROTO_BYE = 8,
    PROTO_REGISTER = 9,
    PROTO_TABLE = 10,
    PROTO_AUTH = 11,
};
#define PROTO_TYPE_LAST PROTO_AUTH     /* types are 1..PROTO_TYPE_LAST */

/* The header, decoded into host order. The struct mirrors the wire layout
 * exactly (no padding; asserted in proto.c), but encode/decode never rely
 * on that: they assemble bytes one field at a time. */
struct proto_header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t rank;
    uint32_t world;
    uint64_t step;
    uint64_t aux;
    uint64_t length;
};

/* What a receiver accepts. max_payload is the largest payload it will ever
 * allocate for; world is its K (0: accept any 1..PROTO_MAX_WORLD, e.g.
 * before the hello); elem_size is the agreed element size in bytes (0:
 * unknown yet, skip the whole-elements check). */
struct proto_limits {
    uint64_t max_payload;
    uint32_t world;
    uint32_t elem_size;
};

/* The workloads' ids on the wire (HELLO, offset 12). The training layer's
 * enum workload_kind (train/workload.h) takes its values from these, so
 * the wire checks a hello without knowing the workloads. */
enum proto_workload {
    PROTO_WORKLOAD_LINREG = 1,
    PROTO_WORKLOAD_SYNTHETIC = 2,
    PROTO_WORKLOAD_MLP = 3,
};
#define PROTO_WORKLOAD_FIRST PROTO_WORKLOAD_LINREG  /* the valid range of the id */
#define PROTO_WORKLOAD_LAST  PROTO_WORKLOAD_MLP

struct proto_hello {
    uint64_t n;
    uint32_t dtype;
    uint32_t workload;
    uint64_t seed;
    uint64_t batch;
    uint32_t compress;      /* the PUSH's and the ring's wire format (base/compress.h) */
    uint32_t sync_every;    /* --sync-every H (local SGD): 0 or 1 every step */
};

/* What an AUTH frame is for (its purpose field): a MAC made for one
 * purpose is no good for another. */
enum proto_auth_purpose {
    PROTO_AUTH_PS = 1,          /* worker -> server */
    PROTO_AUTH_RDV = 2,         /* ring rank -> coordinator */
    PROTO_AUTH_DATA = 3,        /* ring rank -> ring rank */
};

struct proto_auth {
    uint32_t keyed;             /* 0 or 1 */
    uint32_t purpose;           /* enum proto_auth_purpose */
    uint8_t nonce[PROTO_NONCE_SIZE];
    uint8_t mac[PROTO_MAC_SIZE];
};

/* A server's element range, as WELCOME carries it. */
struct proto_welcome {
    uint64_t first, count;
};

struct proto_push_meta {
    uint64_t examples;
    double loss;
};

/* A rank's data address, as REGISTER and TABLE carry it. addr is the text
 * NUL-terminated (the wire has no NUL); addr_len = strlen(addr). */
struct proto_peer {
    uint16_t port;
    uint16_t addr_len;
    char addr[PROTO_ADDR_MAX + 1];
};

struct proto_register {
    struct proto_hello hello;
    struct proto_peer peer;
};

/* STAMP: where an emulated link's sender started a CHUNK frame's
 * transmission on its own timeline (common/wire/link.h, VIRTUAL
 * TIMELINE), in microseconds of its monotonic clock modulo PROTO_STAMP_MOD,
 * plus 1 (0: no stamp). Meaningful between processes on one machine (one
 * clock); the reader rebuilds the time as the latest one not after its own
 * now, and the link believes it only within LINK_STAMP_SPAN of the
 * header's arrival. */
#define PROTO_STAMP_MOD 4294967295ull

/* proto_stamp_of: t (seconds, clock.h) as a stamp, rounded up to the
 * microsecond; 0 for a negative or non-finite t. */
uint32_t proto_stamp_of(double t);

/* proto_stamp_time: the latest time not after now (seconds) that has this
 * stamp; NAN for stamp 0. */
double proto_stamp_time(uint32_t stamp, double now);

/* proto_chunk_aux, proto_chunk_tag, proto_chunk_stamp: a CHUNK header's
 * aux from its chunk index and stamp, and back. */
uint64_t proto_chunk_aux(uint32_t tag, uint32_t stamp);
uint32_t proto_chunk_tag(uint64_t aux);
uint32_t proto_chunk_stamp(uint64_t aux);

/* proto_header_make: a header with magic and version filled in. */
struct proto_header proto_header_make(uint16_t type, uint32_t rank, uint32_t world,
                                      uint64_t step, uint64_t aux, uint64_t length);

/* The wire's byte order, for every little-endian field psring writes (the
 * frames here, the checkpoint file): integers least significant byte
 * first, a double as its binary64 bits. */
void proto_put_u32(uint8_t *p, uint32_t v);
void proto_put_u64(uint8_t *p, uint64_t v);
void proto_put_f64(uint8_t *p, double d);
uint32_t proto_get_u32(const uint8_t *p);
uint64_t proto_get_u64(const uint8_t *p);
double proto_get_f64(const uint8_t *p);

/* proto_header_encode: h -> out[PROTO_HEADER_SIZE]. Never fails; it does not
 * validate (a test may encode a bad header on purpose). */
void proto_header_encode(const struct proto_header *h, uint8_t *out);

/* proto_header_decode: in[PROTO_HEADER_SIZE] -> *out, validated against
 * *lim as described above. Returns 0 or a negative ERR_PROTO_* code; *out
 * is filled even on failure, so a caller can log the bad fields. */
int proto_header_decode(const uint8_t *in, const struct proto_limits *lim,
                        struct proto_header *out);

/* proto_type_name: "PUSH", ...; "?" for an unknown type. */
const char *proto_type_name(unsigned type);

/* HELLO payload: encode into out[PROTO_HELLO_SIZE] (sync_every 0 or 1:
 * 0); decode needs len == PROTO_HELLO_SIZE (else ERR_PROTO_SIZE, *out
 * zeroed) and validates dtype (a known dtype), workload
 * (PROTO_WORKLOAD_FIRST .. PROTO_WORKLOAD_LAST, 1..3), n >= 1, batch >= 1
 * and sync_every 0 or 2 .. 2^32 - 1 (ERR_PROTO_FIELD). */
void proto_hello_encode(const struct proto_hello *h, uint8_t *out);
int proto_hello_decode(const uint8_t *in, size_t len, struct proto_hello *out);

/* WELCOME payload: encode into out[PROTO_WELCOME_SIZE]; decode needs len
 * == PROTO_WELCOME_SIZE (ERR_PROTO_SIZE) and count >= 1 with first +
 * count not wrapping (ERR_PROTO_FIELD); *out zeroed on failure. Whether
 * the range fits the job's n is the worker's business. */
void proto_welcome_encode(const struct proto_welcome *w, uint8_t *out);
int proto_welcome_decode(const uint8_t *in, size_t len, struct proto_welcome *out);

/* PUSH metadata (the first PROTO_PUSH_META payload bytes). Decode takes
 * len = the payload bytes at hand (>= PROTO_PUSH_META, else ERR_PROTO_SIZE;
 * the whole PUSH payload is fine) and refuses a loss that is NaN or
 * infinite (ERR_NONFINITE). */
void proto_push_meta_encode(const struct proto_push_meta *m, uint8_t *out);
int proto_push_meta_decode(const uint8_t *in, size_t len, struct proto_push_meta *out);

/* AUTH payload: encode into out[PROTO_AUTH_SIZE]; decode needs len ==
 * PROTO_AUTH_SIZE (ERR_PROTO_SIZE) and keyed 0 or 1, purpose 1..3
 * (ERR_PROTO_FIELD); *out zeroed on failure. Whether the MAC is right is
 * common/wire/auth.c's business. */
void proto_auth_encode(const struct proto_auth *a, uint8_t *out);
int proto_auth_decode(const uint8_t *in, size_t len, struct proto_auth *out);

/* proto_text_check: an ERROR/ABORT payload is at most PROTO_TEXT_MAX bytes
 * and holds no NUL. 0 or ERR_PROTO_SIZE / ERR_PROTO_FIELD. */
int proto_text_check(const uint8_t *text, size_t len);

/* proto_addr_check: len bytes of address text follow REGISTER's rules
 * (1..PROTO_ADDR_MAX bytes of [0-9A-Za-z] . - _ : %). 0 or ERR_PROTO_FIELD. */
int proto_addr_check(const char *addr, size_t len);

/* REGISTER payload. Encode writes PROTO_REGISTER_META + addr_len bytes
 * into out (cap bytes; PROTO_REGISTER_MAX always suffice) and their count
 * into *len; it refuses a peer that decode would refuse (ERR_PROTO_FIELD:
 * port 0, addr_len != strlen(addr), a bad address) and a short out
 * (ERR_PROTO_SIZE). Decode checks, in order: len within
 * PROTO_REGISTER_META+1..PROTO_REGISTER_MAX and the address length equal
 * to the bytes left (ERR_PROTO_SIZE); the HELLO part as
 * proto_hello_decode; port 0, reserved bytes not 0, a bad address
 * (ERR_PROTO_FIELD). *out is zeroed on failure. */
int proto_register_encode(const struct proto_register *r, uint8_t *out, size_t cap,
                          size_t *len);
int proto_register_decode(const uint8_t *in, size_t len, struct proto_register *out);

/* TABLE payload for k ranks. proto_table_size: its length in bytes.
 * Encode: blob (PROTO_BLOB_SIZE bytes) and peers[0..k) into out (cap
 * bytes), *len = bytes written; ERR_PROTO_FIELD for a peer encode would
 * not send, ERR_PROTO_SIZE for a short out. Decode: into blob and
 * peers[0..k) (the caller's, k entries); ERR_PROTO_SIZE when the entries
 * do not fill len exactly, ERR_PROTO_FIELD for a port 0 or a bad
 * address. */
size_t proto_table_size(const struct proto_peer *peers, uint32_t k);
int proto_table_encode(const uint8_t *blob, const struct proto_peer *peers, uint32_t k,
                       uint8_t *out, size_t cap, size_t *len);
int proto_table_decode(const uint8_t *in, size_t len, uint32_t k, uint8_t *blob,
                       struct proto_peer *peers);

#endif /* PROTO_H */
