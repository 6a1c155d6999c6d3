/* fuzz_auth.c -- fuzz target for the AUTH handshake's parsers
 * (common/wire/auth.c: auth_answer, auth_prove, auth_verify; proto.c:
 * proto_auth_decode) and the server's session in its AUTH state
 * (common/ps/session.c is not linked here: the session feeds the same
 * three functions).
 *
 * Arbitrary bytes go in as each of the three messages, to a keyed and an
 * unkeyed side, and to proto_auth_decode. The invariants, each an abort()
 * when broken: nothing is accepted but by knowing the secret (a forged A2
 * or A3 from the input never passes a keyed side: the input cannot know
 * the MAC over a nonce drawn after it was made); a refusal always comes
 * with a reason; an accepted A1 makes an A2 that decodes as AUTH aux 2,
 * rank 0, world 1; proto_auth_decode accepts exactly 72 bytes with keyed
 * 0/1 and purpose 1..3, and what it accepts re-encodes to the same bytes.
 * Built like fuzz_proto.c: tests/fuzzdrv.c (make check) or libFuzzer
 * (make fuzz).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/auth.h"
#include "base/err.h"
#include "wire/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

const char *const fuzz_name = "auth-fuzz";

/* A1 of proto.h's example: keyed, worker -> server, Ni = 00 01 .. 1f. */
static const uint8_t seed_a1[AUTH_FRAME] = {
    'P', 'S', 'R', 'G', 0x03, 0x00, 0x0b, 0x00, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
    0x48, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 0, 1, 0, 0, 0,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
    0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
    0x1c, 0x1d, 0x1e, 0x1f,
};
/* A3 with a zero MAC, unkeyed, rank -> rank. */
static const uint8_t seed_a3[AUTH_FRAME] = {
    'P', 'S', 'R', 'G', 0x03, 0x00, 0x0b, 0x00, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
    0x48, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 3, 0, 0, 0,
};
/* A stranger's HELLO instead of A1. */
static const uint8_t seed_hello[PROTO_HEADER_SIZE] = {
    'P', 'S', 'R', 'G', 0x03, 0x00, 0x01, 0x00, 1, 0, 0, 0, 4, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0x28, 0, 0, 0, 0, 0, 0, 0,
};
const uint8_t *const fuzz_seeds[] = { seed_a1, seed_a3, seed_hello };
const size_t fuzz_seed_sizes[] = { sizeof seed_a1, sizeof seed_a3, sizeof seed_hello };
const size_t fuzz_nseeds = 3;

#define must(c) do { if (!(c)) { \
    fprintf(stderr, "fuzz_auth.c:%d: invariant broken: %s\n", __LINE__, #c); \
    abort(); } } while (0)

static struct auth_key keyed, unkeyed;
static int ready;

static void check_decode(const uint8_t *in, size_t len)
{
    struct proto_auth a;
    uint8_t again[PROTO_AUTH_SIZE];
    int rc = proto_auth_decode(in, len, &a);

    must(rc == 0 || rc == ERR_PROTO_SIZE || rc == ERR_PROTO_FIELD);
    must((rc == ERR_PROTO_SIZE) == (len != PROTO_AUTH_SIZE));
    if (rc != 0)
        return;
    must(a.keyed <= 1 && a.purpose >= 1 && a.purpose <= 3);
    proto_auth_encode(&a, again);
    must(memcmp(again, in, PROTO_AUTH_SIZE) == 0);
}

static void check_side(const struct auth_key *k, uint32_t purpose, const uint8_t *in,
                       size_t len)
{
    struct auth_hs r, i;
    uint8_t out[AUTH_FRAME], a1[AUTH_FRAME];
    char why[ERR_LEN];
    int rc;

    /* As A1 at a responder. */
    why[0] = '\0';
    auth_hs_init(&r, k, purpose);
    rc = auth_answer(&r, in, len, out, why);
    must(rc != 0 ? why[0] != '\0' : 1);
    if (rc == 0) {
        struct proto_header h;
        const struct proto_limits lim = { PROTO_AUTH_SIZE, 0, 0 };
        must(len == AUTH_FRAME);
        must(proto_header_decode(out, &lim, &h) == 0 && h.type == PROTO_AUTH && h.aux == 2 &&
             h.rank == 0 && h.world == 1 && h.step == 0);
        /* The same input as A3 next: a forged proof. */
        why[0] = '\0';
        rc = auth_verify(&r, in, len, why);
        must(rc != 0 && why[0] != '\0');        /* it has aux 1, and no MAC */
    }
    /* As A2 at an initiator that opened with a fresh Ni. */
    auth_hs_init(&i, k, purpose);
    auth_open(&i, a1);
    why[0] = '\0';
    rc = auth_prove(&i, in, len, out, why);
    if (k->keyed)
        must(rc != 0 && why[0] != '\0');        /* it cannot know MAC_R over our Ni */
    /* As A3 at a responder that answered a real A1. */
    auth_hs_init(&r, k, purpose);
    auth_hs_init(&i, k, purpose);
    auth_open(&i, a1);
    must(auth_answer(&r, a1, sizeof a1, out, why) == 0);
    why[0] = '\0';
    rc = auth_verify(&r, in, len, why);
    if (k->keyed)
        must(rc != 0 && why[0] != '\0');        /* nor MAC_I over our Nr */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        char err[ERR_LEN];
        must(auth_key_load(&keyed, NULL, "fuzz-secret-0123456789abcdef", err) == 0);
        ready = 1;
    }
    check_decode(data, size);
    if (size > PROTO_HEADER_SIZE)
        check_decode(data + PROTO_HEADER_SIZE, size - PROTO_HEADER_SIZE);
    for (uint32_t p = PROTO_AUTH_PS; p <= PROTO_AUTH_DATA; p++) {
        check_side(&keyed, p, data, size);
        check_side(&unkeyed, p, data, size);
    }
    return 0;
}
