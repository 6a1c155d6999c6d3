/* xport_peer.h -- the transport of recursive doubling (rd.c): one TCP
 * connection to each partner rank, CHUNK frames, the emulated link, and
 * the ABORT flood that ends a broken job.
 *
 * The ring's transport (xport_tcp.h) has two fixed neighbours; recursive
 * doubling talks to a different partner at every step (rank XOR 2^k, and
 * for K not a power of two a fold partner), so this one holds a connection
 * per partner and each step names the partner it exchanges with. The
 * algorithm decides who the partners are (rd_partners); this file only
 * connects to them and moves frames.
 *
 * SET-UP (xport_peer_open). From the rendezvous table: rank r connects to
 * each partner p < r and sends HELLO; it accepts each partner p > r on its
 * data listener, in any order, checks that HELLO (one of the partners it
 * expects, not yet connected, the same job) and answers with its own; last
 * it reads the answers of the partners it connected to. Connections never
 * wait on each other (a connect completes in the listener's backlog), so
 * set-up cannot deadlock. A stranger, another job or a rank that is not a
 * partner gets ERROR, is closed and logged, and the accept goes on. One
 * connection per pair carries both directions.
 *
 * STEPS. A step is one exchange with one partner: one CHUNK frame each
 * way, sent and received at the same time (net_sendrecv on the one
 * connection), paced and counted by the process's link:
 *   begin(step)    the partner, the round (the frame's aux), the outgoing
 *                  bytes (sbuf, sbytes; 0 bytes is an empty frame, still
 *                  sent) and the incoming size rbytes; sends the header
 *                  with the first bytes, receives the partner's header and
 *                  checks it before any payload is read: from that
 *                  partner, CHUNK, the connection's step number, the round
 *                  expected, exactly rbytes.
 *   recv(dst, len) the next len incoming bytes into dst. It returns only
 *                  when the outgoing frame has also been sent at least as
 *                  far as the incoming one has been received (both ends of
 *                  a step move the same bytes, so recursive doubling may
 *                  then overwrite sbuf up to there: the in-place sum).
 *   end()          the rest of the outgoing frame; every incoming byte
 *                  must have been received.
 * Each connection numbers its CHUNK frames from 0 (the header's step), the
 * same on both ends; the round tells the steps of one all-reduce apart.
 * A step's send starts a new transmission on the link (link_send_restart):
 * what it sends is what the step before received and added, so it could
 * not have left earlier; a step then costs the link's latency plus its
 * bytes at the link's rate, the model's a + n b.
 *
 * FAULTS. Whatever breaks a step (the partner closed or reset, --timeout
 * with no progress, a bad frame, an ABORT from the partner) or this rank's
 * own failure (xport_peer_abort), the transport runs the abort protocol
 * before it returns the error, so that every rank can name the rank lost:
 *   1. claim: the lost rank and why. A closed or reset connection and a
 *      bad frame are certain; a timeout is a suspicion of the partner
 *      waited on; an ABORT in place of the partner's CHUNK is relayed news.
 *      Whatever the connections already hold is read first: an ABORT
 *      there replaces a claim it contradicts (xport_claim_adopt).
 *   2. tell: send ABORT(aux = lost rank, text) on every connection but the
 *      lost rank's and the one the news came from, finishing first the
 *      CHUNK frame of the step in progress so that the ABORT starts on a
 *      frame boundary. Every other connection is at a frame boundary
 *      already (a step completes its frames), so the partner reads the
 *      ABORT where it expects its next CHUNK, whichever step that is.
 *   3. listen (not after a certain claim: the partner is gone), for at
 *      most --timeout/2: every connection is read for ABORTs (CHUNK
 *      payloads skipped); an adopted ABORT is passed on as in 2. Listening
 *      ends early when the peer the news came from has closed, or when
 *      every connection has.
 * Why this reaches every rank: a rank that is blocked waits on one
 * partner, and that partner is blocked on another, or failed, or is the
 * one lost; a failed rank tells every partner, and the one that waits on
 * it reads the ABORT on the very connection it is reading. So the news
 * walks back along the chain of waits, one hop per step, and a rank that
 * was not waiting meets the ABORT (or the EOF of a rank that told it and
 * exited) when it gets to that partner's step. A rank therefore exits at
 * most --timeout after the fault plus --timeout/2, as the ring does
 * (xport_tcp.h), within docs/design.md's 2T; the one exception is begin's
 * patience below.
 *
 * PATIENCE. A step may allow its wait `patience` times --timeout without
 * a byte: with K not a power of two, an extra rank sends its vector to its
 * fold partner and then waits for the result through all the doubling
 * steps it sits out, idle by design. rd.c asks for one --timeout per step
 * sat out plus one; and two for a rank whose first partner is still
 * folding in. A partner that dies is still seen at once (EOF, or its
 * ABORT); only one that is stopped (SIGSTOP) is seen by the rank that
 * waits on it with more patience after patience x --timeout (an extra rank
 * of K = 6: 3T), later than 2T. Said out loud: no heartbeat.
 *
 * Messages, as the ring's:
 *     lost rank 2 (127.0.0.1:40123): connection closed
 *     rank 3 reported: lost rank 2 (127.0.0.1:40123): connection closed (seen by rank 3)
 *
 * SIMPLIFICATIONS: the abort protocol's bytes and set-up (HELLO) are not
 * paced or counted: they are not measured.
 *
 * OWNERSHIP. xport_peer_open allocates the transport and owns its
 * connections; xport_peer_close closes them and frees it. The listener,
 * the table and the partner list are the caller's (read during the call
 * only); the link is the caller's and must outlive the transport.
 */
#ifndef XPORT_PEER_H
#define XPORT_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "link.h"
#include "proto.h"

#define XPORT_PEER_MAX 32           /* partners per rank (rd: log2 K + 1 <= 17) */

struct xport_peer;

struct xport_peer_cfg {
    int rank, world;                  /* world >= 2 */
    int lfd;                          /* this rank's data listener (open only) */
    const struct proto_peer *peers;   /* world entries: where each rank listens */
    const int *partners;              /* the ranks to connect to, distinct, not rank */
    int npartners;                    /* 1 .. XPORT_PEER_MAX */
    struct proto_hello hello;         /* this job, as every partner must match it */
    struct link *link;                /* this process's NIC: pacing and counters */
    double timeout;                   /* --timeout: idle-progress, seconds, > 0 */
};

/* One step (above). */
struct xport_peer_step {
    int peer;                         /* a partner's rank */
    uint32_t round;                   /* the frames' aux, checked on the way in */
    const void *sbuf;                 /* sbytes to send; untouched until end (but see recv) */
    size_t sbytes;
    size_t rbytes;                    /* bytes the partner must send */
    int patience;                     /* idle allowance in --timeouts, >= 1 (0 means 1) */
};

/* xport_peer_open: connect to every partner and check it (SET-UP). OUT:
 * *out. On failure a line naming the partner in err. */
int xport_peer_open(struct xport_peer **out, const struct xport_peer_cfg *cfg, char *err);

/* xport_peer_attach: a transport over connected sockets, without the HELLO
 * exchange (the unit tests' way in). fds[i] is the connection to
 * cfg->partners[i]; it takes ownership of them all, closing them on
 * failure. */
int xport_peer_attach(struct xport_peer **out, const struct xport_peer_cfg *cfg, const int *fds,
                      char *err);

/* The step calls (STEPS), made in order by one thread. On failure each
 * returns a negative err.h code with one line in err naming the rank
 * lost; the transport is then failed, and every later call returns the
 * same code and line. ERR_USAGE for a peer that is not a partner or calls
 * out of order. */
int xport_peer_begin(struct xport_peer *p, const struct xport_peer_step *s, char *err);
int xport_peer_recv(struct xport_peer *p, void *dst, size_t len, char *err);
int xport_peer_end(struct xport_peer *p, char *err);

/* xport_peer_abort: this rank fails for a reason of its own (a NaN, a
 * wrong sum): ABORT(aux = this rank, "rank R failed: why") to every
 * partner, bounded by --timeout/4. Later steps fail. Returns 0. */
int xport_peer_abort(struct xport_peer *p, const char *why);

/* xport_peer_close: close every connection and free p (NULL is fine). */
void xport_peer_close(struct xport_peer *p);

#endif /* XPORT_PEER_H */
