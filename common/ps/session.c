/* session.c -- a worker connection's frames, checked and fed to the store
 * (see session.h for the table of what a worker may send).
 *
 * session_feed is a loop over three places a byte can go: the header
 * buffer, a small payload (HELLO, ERROR text, the 16 bytes of PUSH
 * metadata) kept in text[], or the store (PUSH elements). Each frame is
 * checked as soon as its header is complete, before a byte of its payload
 * is looked at, so a wrong length or a push for the wrong range is refused
 * without reading what follows; the step number is the store's to judge
 * (stale, duplicate, future), once the metadata is in.
 *
 * Events return at once with *used pointing just past the byte that caused
 * them, so the caller can act (join the rank, apply the step, start
 * sending) before the next frame's bytes are looked at.
 */
#include "session.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/workload.h"

/* dead: the session refuses everything from now on; returns code. */
static int dead(struct session *s, int code)
{
    s->state = SESSION_DEAD;
    return code;
}

/* elem_size: bytes of one PUSH element on the wire: the dtype's, or the
 * compressor's (store.h, COMPRESSED PUSHES). */
static uint64_t elem_size(const struct session_cfg *cfg)
{
    const struct compressor *k = compress_get(cfg->compress);

    if (k && k->frame)
        return 1;           /* NOT-LINEAR PUSHES: one frame of bytes (store.h) */
    return k ? compress_wire_size(k, cfg->dtype) : dtype_size(cfg->dtype);
}

/* frame_push: the compressor is not linear: a push is one frame of the
 * whole range, push_length bytes exactly (store.h, NOT-LINEAR PUSHES). */
static int frame_push(const struct session_cfg *cfg)
{
    const struct compressor *k = compress_get(cfg->compress);

    return k && k->frame;
}

static uint64_t push_length(const struct session_cfg *cfg)
{
    if (frame_push(cfg))
        return PROTO_PUSH_META + compress_frame_bytes(cfg->compress, (size_t)(cfg->hi - cfg->lo),
                                                      cfg->dtype);
    return PROTO_PUSH_META + (cfg->hi - cfg->lo) * elem_size(cfg);
}

struct proto_limits session_limits(const struct session_cfg *cfg)
{
    struct proto_limits lim;
    uint64_t cap = push_length(cfg);

    if (cap < PROTO_HELLO_SIZE)
        cap = PROTO_HELLO_SIZE;
    if (cap < PROTO_TEXT_MAX)
        cap = PROTO_TEXT_MAX;
    lim.max_payload = cap;
    lim.world = cfg->world;
    lim.elem_size = (uint32_t)elem_size(cfg);
    return lim;
}

void session_init(struct session *s, const struct session_cfg *cfg)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->state = SESSION_AUTH;
    auth_hs_init(&s->hs, cfg->key, PROTO_AUTH_PS);
}

/* The limits before the handshake: an AUTH frame and nothing else, and no
 * comparison with K or the payload cap, so a refusal says nothing of the
 * job. */
static const struct proto_limits auth_limits = { PROTO_AUTH_SIZE, 0, 0 };

/* auth_refused: a frame before or in the handshake that is not the AUTH
 * message expected: the reason auth.c gives, from the header alone. */
static int auth_refused(struct session *s, int rc, char *err)
{
    char why[ERR_LEN];
    int rc2 = s->hs.step == 1 ? auth_answer(&s->hs, s->hdr, PROTO_HEADER_SIZE, s->auth_out, why)
                              : auth_verify(&s->hs, s->hdr, PROTO_HEADER_SIZE, why);

    err_say(err, "%s", why);
    return dead(s, rc ? rc : rc2);
}

/* auth_frame: a whole AUTH frame (header in hdr, payload in text). */
static int auth_frame(struct session *s, char *err)
{
    uint8_t frame[AUTH_FRAME];
    char why[ERR_LEN];
    int rc;

    memcpy(frame, s->hdr, PROTO_HEADER_SIZE);
    memcpy(frame + PROTO_HEADER_SIZE, s->text, PROTO_AUTH_SIZE);
    if (s->hs.step == 1) {
        if ((rc = auth_answer(&s->hs, frame, sizeof frame, s->auth_out, why)) == 0)
            return SESSION_AUTH_REPLY;
    } else {
        if ((rc = auth_verify(&s->hs, frame, sizeof frame, why)) == 0) {
            s->state = SESSION_NEW;
            s->authed = 1;
            return SESSION_AUTHED;
        }
    }
    err_say(err, "%s", why);
    return dead(s, rc);
}

void session_join(struct session *s)
{
    if (s->state == SESSION_NEW)
        s->state = SESSION_JOINED;
}

/* who: "worker R" once joined, for the start of a message. */
static const char *who(const struct session *s, char *buf, size_t len)
{
    if (s->state == SESSION_NEW || s->state == SESSION_AUTH || !s->authed)
        snprintf(buf, len, "connection");
    else
        snprintf(buf, len, "worker %u", (unsigned)s->rank);
    return buf;
}

/* bad_header: the reason proto_header_decode gave, with the fields. */
static int bad_header(struct session *s, const struct store *st, int rc, char *err)
{
    const struct proto_header *h = &s->h;
    const struct proto_limits lim = session_limits(s->cfg);
    char why[160], w[32];

    switch (rc) {
    case ERR_PROTO_MAGIC:
        snprintf(why, sizeof why, "magic 0x%08x is not \"PSRG\" (not a psring peer?)",
                 (unsigned)h->magic);
        break;
    case ERR_PROTO_VERSION:
        snprintf(why, sizeof why, "protocol version %u, this server speaks %u",
                 (unsigned)h->version, (unsigned)PROTO_VERSION);
        break;
    case ERR_PROTO_TYPE:
        snprintf(why, sizeof why, "unknown frame type %u", (unsigned)h->type);
        break;
    case ERR_PROTO_WORLD:
        snprintf(why, sizeof why, "%s says K = %u, this server has K = %u",
                 proto_type_name(h->type), (unsigned)h->world, (unsigned)s->cfg->world);
        break;
    case ERR_PROTO_RANK:
        snprintf(why, sizeof why, "%s from rank %u, not below K = %u",
                 proto_type_name(h->type), (unsigned)h->rank, (unsigned)h->world);
        break;
    case ERR_PROTO_LENGTH:
        snprintf(why, sizeof why, "%s of %llu payload bytes, over this server's cap of %llu",
                 proto_type_name(h->type), ull(h->length), ull(lim.max_payload));
        break;
    default:
        snprintf(why, sizeof why, "%s with %llu payload bytes, a wrong size for its type",
                 proto_type_name(h->type), ull(h->length));
        break;
    }
    if (s->state == SESSION_NEW)
        err_say(err, "bad frame: %s", why);
    else
        err_say(err, "%s: bad frame at step %llu: %s", who(s, w, sizeof w),
            ull(store_step(st)), why);
    return dead(s, rc);
}

/* check_hello: the HELLO payload (in text[]) against the server's settings. */
static int check_hello(struct session *s, char *err)
{
    const struct session_cfg *c = s->cfg;
    const struct proto_hello *m = &s->hello;
    int rc = proto_hello_decode((const uint8_t *)s->text, s->small_have, &s->hello);
    char la[COMPRESS_LABEL_MAX], lb[COMPRESS_LABEL_MAX];

    if (rc != 0) {
        err_say(err, "HELLO refused: rank %u: malformed (%s)", (unsigned)s->h.rank, err_str(rc));
        return dead(s, rc);
    }
    if (m->n != c->n)
        err_say(err, "HELLO refused: rank %u: n = %llu parameters, this server has n = %llu",
            (unsigned)s->h.rank, ull(m->n), ull(c->n));
    else if ((int)m->dtype != c->dtype)
        err_say(err, "HELLO refused: rank %u: dtype %s, this server has %s", (unsigned)s->h.rank,
            dtype_name((int)m->dtype), dtype_name(c->dtype));
    else if ((int)m->workload != c->workload)
        err_say(err, "HELLO refused: rank %u: workload %s, this server has %s",
            (unsigned)s->h.rank, workload_name((int)m->workload), workload_name(c->workload));
    else if (m->seed != c->seed)
        err_say(err, "HELLO refused: rank %u: seed %llu, this server has %llu",
            (unsigned)s->h.rank, ull(m->seed), ull(c->seed));
    else if (m->batch != c->batch)
        err_say(err, "HELLO refused: rank %u: batch B = %llu, this server has B = %llu",
            (unsigned)s->h.rank, ull(m->batch), ull(c->batch));
    else if ((int)m->compress != c->compress)
        err_say(err, "HELLO refused: rank %u: --compress %s, this server has %s",
            (unsigned)s->h.rank, compress_label((int)m->compress, la, sizeof la),
            compress_label(c->compress, lb, sizeof lb));
    else if ((m->sync_every > 1 ? m->sync_every : 1) != (c->sync_every > 1 ? c->sync_every : 1))
        err_say(err, "HELLO refused: rank %u: --sync-every %u, this server has --sync-every %u",
            (unsigned)s->h.rank, m->sync_every > 1 ? m->sync_every : 1,
            c->sync_every > 1 ? c->sync_every : 1);
    else
        return 0;
    return dead(s, ERR_MISMATCH);
}

/* check_frame: may this worker send the frame whose header was just
 * decoded, now? 0 or a refusal (the table in session.h). */
static int check_frame(struct session *s, const struct store *st, char *err)
{
    const struct proto_header *h = &s->h;
    const char *type = proto_type_name(h->type);
    char w[32];

    if (s->state == SESSION_AUTH) {
        if (h->type != PROTO_AUTH)
            return auth_refused(s, ERR_PROTO_TYPE, err);
        return 0;
    }
    if (s->state == SESSION_NEW) {
        if (h->type == PROTO_HELLO || h->type == PROTO_ERROR) {
            if (h->rank == PROTO_RANK_SERVER) {
                err_say(err, "HELLO refused: the rank field says it comes from a server");
                return dead(s, ERR_PROTO_RANK);
            }
            return 0;
        }
        err_say(err, "bad frame: %s before HELLO (rank %u)", type, (unsigned)h->rank);
        return dead(s, ERR_PROTO_TYPE);
    }
    who(s, w, sizeof w);
    if (s->state == SESSION_DONE) {
        err_say(err, "%s: %s after BYE", w, type);
        return dead(s, ERR_PROTO_TYPE);
    }
    if (h->rank != s->rank) {
        err_say(err, "%s: %s at step %llu says it is from rank %u", w, type,
            ull(store_step(st)), (unsigned)h->rank);
        return dead(s, ERR_PROTO_RANK);
    }
    switch (h->type) {
    case PROTO_PUSH:
        if (h->aux < s->cfg->lo || h->aux >= s->cfg->hi) {
            err_say(err, "%s: push for step %llu starts at element %llu, this server owns "
                "[%llu, %llu)", w, ull(h->step), ull(h->aux), ull(s->cfg->lo), ull(s->cfg->hi));
            return dead(s, ERR_PROTO_FIELD);
        }
        if (frame_push(s->cfg) && (h->aux != s->cfg->lo || h->length != push_length(s->cfg))) {
            char lab[COMPRESS_LABEL_MAX];
            err_say(err, "%s: push for step %llu from element %llu has %llu payload bytes; "
                "--compress %s takes the whole range from %llu in %llu", w, ull(h->step),
                ull(h->aux), ull(h->length), compress_label(s->cfg->compress, lab, sizeof lab),
                ull(s->cfg->lo), ull(push_length(s->cfg)));
            return dead(s, ERR_PROTO_SIZE);
        }
        if (h->length < PROTO_PUSH_META + elem_size(s->cfg) ||
            (h->length - PROTO_PUSH_META) % elem_size(s->cfg) != 0 ||
            (h->length - PROTO_PUSH_META) / elem_size(s->cfg) > s->cfg->hi - h->aux) {
            err_say(err, "%s: push for step %llu from element %llu has %llu payload bytes, "
                "this server takes 16 + 1 to %llu elements of %s there", w, ull(h->step),
                ull(h->aux), ull(h->length), ull(s->cfg->hi - h->aux),
                s->cfg->compress ? compress_name(s->cfg->compress) : dtype_name(s->cfg->dtype));
            return dead(s, ERR_PROTO_SIZE);
        }
        if (h->step >= s->cfg->steps) {
            err_say(err, "%s: push for step %llu after the last step (%llu steps)", w,
                ull(h->step), ull(s->cfg->steps));
            return dead(s, ERR_PROTO_FIELD);
        }
        if (s->pulling) {
            if (st->per_worker)     /* the store counts versions, not steps */
                err_say(err, "%s: push for step %llu refused: the server is still sending it "
                    "the weights (version %llu) it must take first", w, ull(h->step),
                    ull(store_step(st)));
            else
                err_say(err, "%s: push for step %llu refused: the server is still sending it "
                    "the weights of step %llu, which it must take first", w, ull(h->step),
                    ull(store_step(st) ? store_step(st) - 1 : 0));
            return dead(s, ERR_PROTO_FIELD);
        }
        return 0;
    case PROTO_BYE:
        if (store_clock(st, s->rank) < s->cfg->steps) {
            err_say(err, "%s: BYE at step %llu, before the last step (%llu steps)", w,
                ull(store_clock(st, s->rank)), ull(s->cfg->steps));
            return dead(s, ERR_PROTO_FIELD);
        }
        if (s->pulling) {
            err_say(err, "%s: BYE before it received the weights of the last step", w);
            return dead(s, ERR_PROTO_FIELD);
        }
        return 0;
    case PROTO_ERROR:
        return 0;
    default:
        err_say(err, "%s: unexpected %s frame at step %llu", w, type, ull(store_step(st)));
        return dead(s, ERR_PROTO_TYPE);
    }
}

/* take_small: copy payload bytes into text[] until it holds `want`.
 * Returns the bytes taken. */
static size_t take_small(struct session *s, const unsigned char *p, size_t len, size_t want)
{
    size_t n = want - s->small_have;

    if (n > len)
        n = len;
    memcpy(s->text + s->small_have, p, n);
    s->small_have += n;
    s->left -= n;
    return n;
}

/* frame_end: a frame whose payload is complete (not PUSH). */
static int frame_end(struct session *s, char *err)
{
    int rc;

    s->hdr_have = 0;
    switch (s->h.type) {
    case PROTO_AUTH:
        return auth_frame(s, err);
    case PROTO_HELLO:
        if ((rc = check_hello(s, err)) != 0)
            return rc;
        s->rank = s->h.rank;
        return SESSION_HELLO;
    case PROTO_BYE:
        s->state = SESSION_DONE;
        return SESSION_BYE;
    case PROTO_ERROR:
        if ((rc = proto_text_check((const uint8_t *)s->text, s->small_have)) != 0) {
            char w[32];

            err_say(err, "%s: malformed ERROR frame (%s)", who(s, w, sizeof w), err_str(rc));
            return dead(s, rc);
        }
        /* The text goes into the server's log and into the ERROR it sends
         * the other workers: one line, no terminal control sequences, even
         * from a stranger. */
        for (size_t i = 0; i < s->small_have; i++)
            if ((unsigned char)s->text[i] < 0x20 || s->text[i] == 0x7f)
                s->text[i] = '?';
        s->text[s->small_have] = '\0';
        return SESSION_PEER_ERROR;
    default:
        return 0;   /* check_frame let nothing else through */
    }
}

int session_feed(struct session *s, struct store *st, const void *bytes, size_t len,
                 size_t *used, char *err)
{
    const unsigned char *p = bytes;
    const struct proto_limits slim = session_limits(s->cfg);
    size_t i = 0;
    int rc = SESSION_NONE;

    if (s->state == SESSION_DEAD) {
        *used = 0;
        err_say(err, "session already refused");
        return ERR_PROTO_FIELD;
    }
    while (i < len) {
        if (s->hdr_have < PROTO_HEADER_SIZE) {
            size_t n = PROTO_HEADER_SIZE - s->hdr_have;

            if (n > len - i)
                n = len - i;
            memcpy(s->hdr + s->hdr_have, p + i, n);
            s->hdr_have += n;
            i += n;
            if (s->hdr_have < PROTO_HEADER_SIZE)
                break;
            if (s->state == SESSION_AUTH) {
                if ((rc = proto_header_decode(s->hdr, &auth_limits, &s->h)) != 0) {
                    rc = auth_refused(s, rc, err);
                    break;
                }
            } else if ((rc = proto_header_decode(s->hdr, &slim, &s->h)) != 0) {
                rc = bad_header(s, st, rc, err);
                break;
            }
            if ((rc = check_frame(s, st, err)) != 0)
                break;
            s->left = s->h.length;
            s->small_have = 0;
            s->step = s->h.step;
            if (s->left == 0 && s->h.type != PROTO_PUSH) {
                rc = frame_end(s, err);
                if (rc != 0)
                    break;
            }
            continue;
        }
        /* Inside a payload. */
        if (s->h.type != PROTO_PUSH) {
            i += take_small(s, p + i, len - i, (size_t)s->h.length);
            if (s->left == 0 && (rc = frame_end(s, err)) != 0)
                break;
            continue;
        }
        if (s->small_have < PROTO_PUSH_META) {
            struct proto_push_meta meta;
            char w[32];

            i += take_small(s, p + i, len - i, PROTO_PUSH_META);
            if (s->small_have < PROTO_PUSH_META)
                break;
            if ((rc = proto_push_meta_decode((const uint8_t *)s->text, s->small_have,
                                             &meta)) != 0) {
                err_say(err, "%s: push for step %llu has a non-finite loss",
                    who(s, w, sizeof w), ull(s->h.step));
                rc = dead(s, rc);
                break;
            }
            rc = store_push_begin(st, s->rank, s->h.step, &meta, s->h.aux,
                                  frame_push(s->cfg) ? s->cfg->hi - s->h.aux
                                  : (s->h.length - PROTO_PUSH_META) / elem_size(s->cfg), err);
            if (rc != 0) {
                rc = dead(s, rc);
                break;
            }
            rc = SESSION_PUSH_BEGIN;
            break;
        }
        if (s->left > 0) {
            size_t n = len - i;

            if ((uint64_t)n > s->left)
                n = (size_t)s->left;
            if ((rc = store_push_data(st, s->rank, p + i, n, err)) != 0) {
                rc = dead(s, rc);
                break;
            }
            i += n;
            s->left -= n;
        }
        if (s->left == 0) {
            if ((rc = store_push_end(st, s->rank, err)) != 0) {
                rc = dead(s, rc);
                break;
            }
            s->hdr_have = 0;
            s->pushes++;
            rc = SESSION_PUSH_END;
            break;
        }
    }
    s->bytes += i;
    *used = i;
    return rc;
}

int session_lost(struct session *s, struct store *st, char *err)
{
    const char *why;
    char w[32];
    int mid = s->hdr_have > 0;      /* a frame started and not finished */

    if (s->state == SESSION_AUTH || (s->state == SESSION_DEAD && !s->authed)) {
        err_say(err, "closed before authenticating (%llu bytes received)", ull(s->bytes));
        return 0;
    }
    if (s->state == SESSION_NEW) {
        err_say(err, "closed before a complete HELLO (%llu bytes received)", ull(s->bytes));
        return 0;
    }
    if (s->state == SESSION_DONE && !mid)
        return 0;
    if (s->state == SESSION_JOINED && !mid && !s->pulling &&
        store_clock(st, s->rank) >= s->cfg->steps && !store_failed(st, NULL))
        return 0;           /* closed without BYE after the last step: fine */
    who(s, w, sizeof w);
    if (s->state == SESSION_DEAD)
        why = "after a refused frame";
    else if (s->pulling)
        why = "while receiving the weights";
    else
        why = NULL;
    if (mid && s->h.type == PROTO_PUSH && s->hdr_have == PROTO_HEADER_SIZE &&
        s->small_have == PROTO_PUSH_META && s->state == SESSION_JOINED) {
        /* Cut off inside the elements: the store says how far it got. */
        return store_push_abort(st, s->rank, err);
    }
    (void)store_push_abort(st, s->rank, err);   /* FAILED: nothing applied */
    if (why)
        err_say(err, "%s: connection lost at step %llu %s of step %llu", w,
            ull(store_step(st)), why, ull(store_step(st) ? store_step(st) - 1 : 0));
    else if (mid)
        err_say(err, "%s: connection lost at step %llu inside a frame (%llu bytes in)", w,
            ull(store_step(st)), ull(s->hdr_have < PROTO_HEADER_SIZE ? s->hdr_have :
                                     PROTO_HEADER_SIZE + s->h.length - s->left));
    else
        err_say(err, "%s: connection lost at step %llu", w, ull(store_step(st)));
    return ERR_EOF;
}

void session_waiting(const struct session *s, const struct store *st, char *buf, size_t len)
{
    buf[0] = '\0';
    if (s->state == SESSION_NEW || s->state == SESSION_AUTH) {
        snprintf(buf, len, "no HELLO yet");
        return;
    }
    if (s->state != SESSION_JOINED)
        return;
    if (s->pulling)
        return;             /* the server owes it bytes, not the other way */
    if (store_clock(st, s->rank) >= s->cfg->steps) {
        snprintf(buf, len, "no BYE yet");
        return;
    }
    if (store_pushes_owed(st, s->rank) == 0)
        return;             /* its push(es) for this step are in */
    if (s->hdr_have == PROTO_HEADER_SIZE && s->h.type == PROTO_PUSH)
        snprintf(buf, len, "push for step %llu: %llu of %llu bytes", ull(s->h.step),
                 ull(PROTO_HEADER_SIZE + s->h.length - s->left),
                 ull(PROTO_HEADER_SIZE + s->h.length));
    /* The worker's own next step (store_clock), not the server's: in the
     * modes other than sync the store counts versions, K or more a step. */
    else if (s->hdr_have > 0)
        snprintf(buf, len, "its push for step %llu (its next step): %zu of %d header bytes",
                 ull(store_clock(st, s->rank)), s->hdr_have, PROTO_HEADER_SIZE);
    else if (store_pass_left(st, s->rank) < st->n)
        snprintf(buf, len, "push for step %llu: elements [%llu, %llu) not yet pushed",
                 ull(store_clock(st, s->rank)), ull(s->cfg->lo),
                 ull(s->cfg->lo + store_pass_left(st, s->rank)));
    else if (st->per_step > 1)
        snprintf(buf, len, "push %u of %u for step %llu not yet begun",
                 (unsigned)(st->per_step - store_pushes_owed(st, s->rank) + 1),
                 (unsigned)st->per_step, ull(store_clock(st, s->rank)));
    else
        snprintf(buf, len, "no push for step %llu yet", ull(store_clock(st, s->rank)));
}
