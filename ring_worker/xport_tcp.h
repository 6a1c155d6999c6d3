/* xport_tcp.h -- the ring's TCP transport: neighbour connections, CHUNK
 * frames, the emulated link, and the ABORT relay that ends a broken ring.
 *
 * SET-UP (xport_tcp_open, proto.h steps R3). Rank r connects to its right
 * neighbour r+1 and sends HELLO; it accepts its left neighbour r-1 on its
 * data listener, checks that HELLO (the right rank, the same job: n, dtype,
 * workload, seed, token, batch) and answers with its own, which the right
 * checks in turn. A connection that fails the check (a stranger, another
 * job) gets ERROR, is closed and logged, and the accept goes on. K = 2
 * makes two connections between the same two ranks, one per direction.
 *
 * STEPS (xport.h). Each step is one CHUNK frame each way, sent and
 * received at the same time (net_sendrecv) through the process's link,
 * which paces and counts them. The left's header is checked before any of
 * its payload is read: from the left rank, CHUNK, the expected step
 * number, chunk index and byte count.
 *
 * FAULTS. Whatever breaks a step (the left closed or reset, the right
 * gone, --timeout with no progress, a bad frame, an ABORT from a
 * neighbour), the transport runs the abort protocol before it returns the
 * error, so that every rank can name the rank that was lost:
 *   1. claim: the lost rank and why. A closed or reset connection is
 *      certain; a timeout is only a suspicion (the left if our receive was
 *      waiting, else the right), since a rank that waits on a stopped rank
 *      looks just like a stopped rank to its own neighbour.
 *   2. tell: finish the CHUNK frame being sent to the right (its bytes are
 *      all there), then send ABORT(aux = lost rank, text) to the right;
 *      when the lost rank is the right, send ABORT to the left instead.
 *   3. listen, for at most --timeout/2 or until the left closes: an ABORT
 *      from a neighbour replaces a suspicion of ours (that neighbour is
 *      alive, so it was not the one lost) and a relayed claim, and is
 *      passed on to the right. The rank next to a stopped rank times out
 *      first; its ABORT so reaches ranks whose own timers fired at about
 *      the same time and corrects them.
 * A rank therefore exits at most --timeout after the fault (the timeout)
 * plus --timeout/2 (listening) plus what finishing a frame takes, within
 * docs/design.md's 2T. The returned line is one of
 *     lost rank 2 (127.0.0.1:40123): connection closed
 *     rank 3 reported: lost rank 2 (127.0.0.1:40123): connection closed (seen by rank 3)
 * OWNERSHIP. xport_tcp_open allocates the transport and owns the two
 * neighbour sockets; xport_tcp_close closes them and frees it. The
 * listener, the table and the link are the caller's; the link must
 * outlive the transport.
 */
#ifndef XPORT_TCP_H
#define XPORT_TCP_H

#include <stddef.h>

#include "link.h"
#include "proto.h"
#include "xport.h"

struct xport_tcp;

struct xport_tcp_cfg {
    int rank, world;                  /* world >= 2 */
    int lfd;                          /* this rank's data listener */
    const struct proto_peer *peers;   /* world entries: where each rank listens */
    struct proto_hello hello;         /* this job, as the neighbours must match it */
    struct link *link;                /* this process's NIC: pacing and counters */
    double timeout;                   /* --timeout: idle-progress, seconds, > 0 */
};

/* xport_tcp_open: connect to both neighbours and check them (above).
 * OUT: *out. On failure a line naming the neighbour in err. */
int xport_tcp_open(struct xport_tcp **out, const struct xport_tcp_cfg *cfg, char *err);

/* xport_tcp_attach: a transport over two connected sockets, without the
 * HELLO exchange (the unit tests' way in; they also write bad frames to
 * it). Takes ownership of left_fd and right_fd, closing them on failure. */
int xport_tcp_attach(struct xport_tcp **out, const struct xport_tcp_cfg *cfg,
                     int left_fd, int right_fd, char *err);

/* xport_tcp_base: the xport.h interface of t, for ring_init. */
struct xport *xport_tcp_base(struct xport_tcp *t);

/* xport_tcp_abort: this rank fails for a reason of its own (a NaN, a wrong
 * sum): ABORT(aux = this rank, "rank R failed: why") to both neighbours,
 * bounded by --timeout/4. Later steps fail. Returns 0. */
int xport_tcp_abort(struct xport_tcp *t, const char *why);

/* xport_tcp_close: close both connections and free t (NULL is fine). */
void xport_tcp_close(struct xport_tcp *t);

#endif /* XPORT_TCP_H */
