/* session.h -- one worker connection of the parameter server, without
 * sockets: the bytes a worker sends, cut into frames, checked, and turned
 * into store calls.
 *
 * The server (server_conn.c, under its transport) reads bytes and hands them to
 * session_feed in pieces of any size; the session reassembles the 40-byte
 * header, decodes it against the server's limits (proto_header_decode:
 * nothing oversized is ever read or allocated), checks that the frame is
 * one this worker may send now, and streams a PUSH payload straight into
 * the store (store_push_data) as it arrives: a session holds a header, at
 * most PROTO_TEXT_MAX bytes of a small payload (HELLO, ERROR text, PUSH
 * metadata) and a few counters, never a gradient. Whatever the session
 * cannot decide alone (is this rank already taken? is the job full?) it
 * reports as an event and the caller decides.
 *
 * WHAT A WORKER MAY SEND (proto.h, MESSAGE FLOW)
 *
 *   state    frame   checks (besides proto_header_decode)           next
 *   AUTH     AUTH 1  purpose and keying ours (auth_answer)           AUTH, event
 *                                                                    AUTH_REPLY: the caller
 *                                                                    sends s->auth_out (A2)
 *   AUTH     AUTH 3  MAC_I right (auth_verify, constant time)        NEW, event AUTHED
 *   AUTH     other   refused "not authenticated: ...", saying
 *                    nothing of the job (decoded without K or caps)
 *   NEW      HELLO   rank field not the server's; n (the            NEW, event
 *                    FULL count), dtype, workload, seed, batch      HELLO: the caller
 *                    equal to the server's (ERR_MISMATCH)           calls session_join
 *   NEW      ERROR   text well formed                               event PEER_ERROR
 *   JOINED   PUSH    header rank = the joined rank; lo <= aux < hi; JOINED, events
 *                    length = 16 + c * elem_size, 1 <= c <= hi-aux  PUSH_BEGIN, then
 *                    (the whole range, or a bucket: store.h);
 *                    step < steps; not while its weights of the     PUSH_END
 *                    step before are still being written (pulling);
 *                    then the store: step, duplicate, NaN/Inf
 *   JOINED   BYE     every step applied; not pulling                DONE, event BYE
 *   JOINED   ERROR   (the worker gave up) text well formed          event PEER_ERROR
 *   any      other   refused
 *   DONE     any     refused (nothing follows BYE)
 *
 * A refusal returns a negative err.h code with one line in err: before the
 * join it starts "HELLO refused" or "bad frame"; after it, "worker R:" and
 * the step, as the store's own messages do. The session is then DEAD and
 * refuses everything: the caller closes the connection (before the join)
 * or fails the run (after it). Store refusals and failures come back
 * unchanged (store.h: REFUSED versus FAILED).
 *
 * OWNERSHIP. The session keeps pointers to the caller's session_cfg and
 * nothing else; it allocates nothing. Bytes given to session_feed are
 * read during the call only.
 */
#ifndef SESSION_H
#define SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "wire/auth.h"
#include "base/err.h"
#include "wire/proto.h"
#include "store.h"

/* The server's settings a HELLO must match, and its share of the vector. */
struct session_cfg {
    uint32_t world;          /* K */
    uint64_t n;              /* the FULL parameter count (HELLO n) */
    uint64_t lo, hi;         /* elements this server owns (PUSH aux, count) */
    int dtype;               /* enum dtype */
    int workload;            /* enum workload_kind */
    uint64_t seed;
    const struct auth_key *key;  /* the job's secret (auth.h; unkeyed: none) */
    uint64_t batch;          /* B, global examples per step */
    uint64_t steps;          /* a push for step >= steps is refused */
    int compress;            /* --compress: the PUSH elements' format (store.h,
                                COMPRESSED PUSHES); the HELLO must say the same */
    uint32_t sync_every;     /* --sync-every H: 0 or 1 every step (HELLO's must agree) */
};

enum session_state {
    SESSION_NEW = 0,         /* connected, no HELLO accepted yet */
    SESSION_JOINED,          /* session_join done: worker `rank` */
    SESSION_DONE,            /* said BYE */
    SESSION_DEAD,            /* refused something; refuses everything */
    SESSION_AUTH,            /* connected, the AUTH handshake not done (the
                                state session_init starts in) */
};

/* What session_feed stopped for. */
enum session_event {
    SESSION_NONE = 0,        /* every byte consumed, nothing to report */
    SESSION_HELLO,           /* a matching HELLO: s->rank; join or refuse */
    SESSION_PUSH_BEGIN,      /* the store took a PUSH's metadata (step s->step) */
    SESSION_PUSH_END,        /* that push is complete in the store */
    SESSION_BYE,             /* the worker is done */
    SESSION_PEER_ERROR,      /* the worker sent ERROR: its text in s->text */
    SESSION_AUTH_REPLY,      /* A1 taken: send s->auth_out (AUTH_FRAME bytes) */
    SESSION_AUTHED,          /* A3 checked: the peer holds the secret */
};

struct session {
    const struct session_cfg *cfg;
    int state;               /* enum session_state */
    uint32_t rank;           /* from the HELLO (valid from event HELLO on) */
    int pulling;             /* SET BY THE CALLER while the WEIGHTS frames of
                                the last complete step are still being
                                written to this worker (from the step's last
                                release on: server.c): a PUSH or BYE then is
                                refused. Earlier parts go out while the
                                step's pushes still come: not pulling */
    uint64_t pushes;         /* complete pushes, all steps (P per step, store.h) */
    uint64_t step;           /* step of the frame in progress */
    /* the frame being received */
    unsigned char hdr[PROTO_HEADER_SIZE];
    size_t hdr_have;         /* header bytes so far; PROTO_HEADER_SIZE: decoded */
    struct proto_header h;   /* valid once the header is decoded */
    uint64_t left;           /* payload bytes of the frame still to come */
    size_t small_have;       /* bytes of text[] filled (HELLO, ERROR, meta) */
    char text[PROTO_TEXT_MAX + 1];   /* small payloads; ERROR text, NUL-ended,
                                        control bytes made '?' */
    struct proto_hello hello;        /* the last HELLO decoded */
    int authed;              /* passed the AUTH handshake */
    struct auth_hs hs;       /* the handshake, while state is AUTH */
    uint8_t auth_out[AUTH_FRAME];    /* A2, after event AUTH_REPLY */
    uint64_t bytes;          /* bytes fed so far */
};

/* session_limits: the decode limits for a server with this cfg: max payload
 * the largest of a full PUSH, a HELLO and an ERROR text; world K; the
 * element size. */
struct proto_limits session_limits(const struct session_cfg *cfg);

/* session_init: a session for cfg (kept by pointer), in state AUTH. */
void session_init(struct session *s, const struct session_cfg *cfg);

/* session_join: after event HELLO, the caller accepts the worker. */
void session_join(struct session *s);

/* session_feed: consume bytes p[0..len) until an event or the end. OUT:
 * *used, the bytes consumed (all of them for SESSION_NONE; up to and
 * including the event's last byte otherwise: feed the rest again). Returns
 * an enum session_event, or a negative err.h code with the reason in err
 * (the session is DEAD then, and *used says where it stopped). */
int session_feed(struct session *s, struct store *st, const void *p, size_t len,
                 size_t *used, char *err);

/* session_lost: the connection ended (EOF, error, timeout). Returns 0 when
 * that is a clean end (no HELLO yet: err says how far it got; or every
 * step done, nothing pending); else a negative code, err naming the worker
 * and the step, and the store is FAILED (store_push_abort) so the partial
 * step is never applied. */
int session_lost(struct session *s, struct store *st, char *err);

/* session_waiting: one phrase for a timeout message, saying what this
 * joined worker owes the current step: "push 1024 of 4112 bytes", "no push
 * yet", "BYE" ...; empty when it owes nothing. OUT: buf (len bytes). */
void session_waiting(const struct session *s, const struct store *st, char *buf, size_t len);

#endif /* SESSION_H */
