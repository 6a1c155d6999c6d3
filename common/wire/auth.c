/* auth.c -- the AUTH handshake as functions without sockets (auth.h, THE
 * HANDSHAKE). The secret and the policy are auth_secret.c's; the
 * handshake on sockets (auth_dial, auth_client, auth_server) and the gate
 * are auth_net.c's.
 *
 * No cryptography is written here: the MACs are libsodium's
 * crypto_auth_hmacsha256 (multi-part, so the key may be any length), the
 * nonces randombytes_buf, the comparisons sodium_memcmp (constant time).
 * What is MACed, in this order (mac_of):
 *
 *     AUTH_LABEL with its NUL (14 bytes)   "psring-auth-2"
 *     direction (1 byte)                   'R' in A2, 'I' in A3
 *     purpose (4 bytes, little-endian)     enum proto_auth_purpose
 *     keyed (4 bytes, little-endian)       0 or 1
 *     Ni (32 bytes), Nr (32 bytes)
 *
 * so a MAC is good for one connection (both nonces), one direction (a
 * responder's proof reflected back as an initiator's fails) and one
 * purpose. The responder refuses a frame that is not A1 before it spends
 * anything on it, and says no more than "not authenticated" and why.
 */
#include "auth.h"
#include "auth_internal.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"

/* ---------------------------------------------------------- the handshake */

static void mac_of(const struct auth_hs *hs, char dir, uint8_t *mac)
{
    crypto_auth_hmacsha256_state st;
    uint8_t meta[1 + 4 + 4];
    uint32_t keyed = (uint32_t)hs->key->keyed;

    meta[0] = (uint8_t)dir;
    for (int i = 0; i < 4; i++) {
        meta[1 + i] = (uint8_t)(hs->purpose >> (8 * i));
        meta[5 + i] = (uint8_t)(keyed >> (8 * i));
    }
    crypto_auth_hmacsha256_init(&st, hs->key->key, hs->key->len);
    crypto_auth_hmacsha256_update(&st, (const uint8_t *)AUTH_LABEL, sizeof AUTH_LABEL);
    crypto_auth_hmacsha256_update(&st, meta, sizeof meta);
    crypto_auth_hmacsha256_update(&st, hs->ni, sizeof hs->ni);
    crypto_auth_hmacsha256_update(&st, hs->nr, sizeof hs->nr);
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_memzero(&st, sizeof st);
}

void auth_hs_init(struct auth_hs *hs, const struct auth_key *k, uint32_t purpose)
{
    /* Safe to call again and from any thread; fails only without a
     * source of randomness, and then nothing can be trusted to run. */
    if (sodium_init() < 0) {
        fprintf(stderr, "psring: libsodium cannot start (no randomness source)\n");
        abort();
    }
    memset(hs, 0, sizeof *hs);
    hs->key = k;
    hs->purpose = purpose;
    hs->step = 1;
}

/* send_msg: AUTH message `step` of hs's side into out (AUTH_FRAME bytes):
 * its keyed flag and purpose, nonce (NULL: none) and the MAC in direction
 * dir (0: none); hs then waits for message step + 1. */
static void send_msg(struct auth_hs *hs, uint64_t step, const uint8_t *nonce, char dir,
                     uint8_t *out)
{
    struct proto_header h = proto_header_make(PROTO_AUTH, 0, 1, 0, step, PROTO_AUTH_SIZE);
    struct proto_auth a;

    memset(&a, 0, sizeof a);
    a.keyed = (uint32_t)hs->key->keyed;
    a.purpose = hs->purpose;
    if (nonce)
        memcpy(a.nonce, nonce, sizeof a.nonce);
    if (dir)
        mac_of(hs, dir, a.mac);
    proto_header_encode(&h, out);
    proto_auth_encode(&a, out + PROTO_HEADER_SIZE);
    hs->step = (int)step + 1;
}

static const char *purpose_name(uint32_t p)
{
    switch (p) {
    case PROTO_AUTH_PS: return "a worker of a parameter server";
    case PROTO_AUTH_RDV: return "a ring rank at its coordinator";
    case PROTO_AUTH_DATA: return "a ring rank at a peer";
    default: return "?";
    }
}

int auth_frame_take(const struct auth_hs *hs, const uint8_t *in, size_t len, uint64_t step,
                    struct proto_auth *a, char *why)
{
    const struct proto_limits lim = { PROTO_AUTH_SIZE, 0, 0 };
    struct proto_header h;
    int rc;

    if (len < PROTO_HEADER_SIZE) {
        err_say(why, "not authenticated: a frame of %zu bytes", len);
        return ERR_PROTO_SIZE;
    }
    rc = proto_header_decode(in, &lim, &h);
    if (rc == 0 && h.type != PROTO_AUTH)
        rc = ERR_PROTO_TYPE;
    if (rc != 0) {
        if (h.magic == PROTO_MAGIC && h.version == PROTO_VERSION && h.type != PROTO_AUTH)
            err_say(why, "not authenticated: %s before the AUTH handshake",
                proto_type_name(h.type));
        else
            err_say(why, "not authenticated: not an AUTH frame (%s)", err_str(rc));
        return rc;
    }
    /* Each field its own words: the peer is told which one was wrong. */
    if (h.aux != step) {
        err_say(why, "not authenticated: AUTH message %llu out of place (expected %llu)",
            (unsigned long long)h.aux, (unsigned long long)step);
        return ERR_PROTO_FIELD;
    }
    if (h.world != 1 || h.rank != 0 || h.step != 0) {
        const char *field = h.world != 1 ? "world" : h.rank != 0 ? "rank" : "step";
        unsigned long long theirs = h.world != 1 ? h.world : h.rank != 0 ? h.rank : h.step;
        err_say(why, "not authenticated: AUTH message %llu says %s %llu, ours is %s %d "
            "(an AUTH frame's header carries rank 0, world 1, step 0)",
            (unsigned long long)h.aux, field, theirs, field, h.world != 1);
        return ERR_PROTO_FIELD;
    }
    if (len != PROTO_HEADER_SIZE + PROTO_AUTH_SIZE) {
        err_say(why, "not authenticated: AUTH message %llu is %zu bytes, not %d",
            (unsigned long long)h.aux, len, PROTO_HEADER_SIZE + PROTO_AUTH_SIZE);
        return ERR_PROTO_FIELD;
    }
    rc = proto_auth_decode(in + PROTO_HEADER_SIZE, PROTO_AUTH_SIZE, a);
    if (rc != 0) {
        err_say(why, "not authenticated: a malformed AUTH frame (%s)", err_str(rc));
        return rc;
    }
    if (a->purpose != hs->purpose) {
        err_say(why, "not authenticated: the peer is %s, this side expects %s",
            purpose_name(a->purpose), purpose_name(hs->purpose));
        return ERR_MISMATCH;
    }
    if (a->keyed != (uint32_t)hs->key->keyed) {
        if (hs->key->keyed)
            err_say(why, "not authenticated: the peer has no secret and this job has one "
                "(give it --secret-file or PSRING_SECRET)");
        else
            err_say(why, "not authenticated: the peer has a secret and this side runs "
                "without one (give both the same --secret-file or PSRING_SECRET)");
        return ERR_MISMATCH;
    }
    return 0;
}

void auth_open(struct auth_hs *hs, uint8_t *out)
{
    randombytes_buf(hs->ni, sizeof hs->ni);
    send_msg(hs, 1, hs->ni, 0, out);
}

/* take_msg: AUTH message `step` from in into *a, when hs expects it;
 * else the refusal in why (out_of_place: the words when it does not). */
static int take_msg(const struct auth_hs *hs, const uint8_t *in, size_t len, int step,
                    const char *out_of_place, struct proto_auth *a, char *why)
{
    if (hs->step != step) {
        err_say(why, "%s", out_of_place);
        return ERR_PROTO_FIELD;
    }
    return auth_frame_take(hs, in, len, (uint64_t)step, a, why);
}

/* mac_ok: 0 when a's MAC in direction dir is the one this job's secret
 * makes; else ERR_MISMATCH and the words `wrong` in why. */
static int mac_ok(const struct auth_hs *hs, char dir, const struct proto_auth *a,
                  const char *wrong, char *why)
{
    uint8_t want[PROTO_MAC_SIZE];

    mac_of(hs, dir, want);
    if (sodium_memcmp(want, a->mac, sizeof want) != 0) {
        err_say(why, "%s", wrong);
        return ERR_MISMATCH;
    }
    return 0;
}

int auth_answer(struct auth_hs *hs, const uint8_t *in, size_t len, uint8_t *out, char *why)
{
    struct proto_auth a;
    int rc;

    if ((rc = take_msg(hs, in, len, 1, "not authenticated: AUTH message 1 twice", &a,
                       why)) != 0)
        return rc;
    memcpy(hs->ni, a.nonce, sizeof hs->ni);
    randombytes_buf(hs->nr, sizeof hs->nr);
    send_msg(hs, 2, hs->nr, 'R', out);
    return 0;
}

int auth_prove(struct auth_hs *hs, const uint8_t *in, size_t len, uint8_t *out, char *why)
{
    struct proto_auth a;
    int rc;

    if ((rc = take_msg(hs, in, len, 2, "AUTH message 2 out of place", &a, why)) != 0)
        return rc;
    memcpy(hs->nr, a.nonce, sizeof hs->nr);
    if ((rc = mac_ok(hs, 'R', &a, "the peer failed to prove it holds this job's secret (a "
                     "different --secret-file or PSRING_SECRET?)", why)) != 0)
        return rc;
    send_msg(hs, 3, NULL, 'I', out);
    return 0;
}

int auth_verify(struct auth_hs *hs, const uint8_t *in, size_t len, char *why)
{
    struct proto_auth a;
    int rc;

    if ((rc = take_msg(hs, in, len, 3, "not authenticated: AUTH message 3 out of place", &a,
                       why)) != 0)
        return rc;
    if ((rc = mac_ok(hs, 'I', &a, "not authenticated: wrong proof (it does not hold this "
                     "job's secret)", why)) != 0)
        return rc;
    hs->step = 4;
    return 0;
}

size_t auth_refusal(uint8_t *out, int code, const char *why)
{
    size_t n = strlen(why) < PROTO_TEXT_MAX ? strlen(why) : PROTO_TEXT_MAX;
    struct proto_header h = proto_header_make(PROTO_ERROR, 0, 1, 0, (uint64_t)(int64_t)code, n);

    proto_header_encode(&h, out);
    memcpy(out + PROTO_HEADER_SIZE, why, n);
    return PROTO_HEADER_SIZE + n;
}
