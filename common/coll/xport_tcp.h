/* xport_tcp.h -- the TCP transport (xport.h) of every algorithm: one
 * connection per entry of the algorithm's peer table, CHUNK frames, the
 * emulated link, and the ABORT protocol that ends a broken job.
 *
 * SET-UP (xport_tcp_open, proto.h steps R3). From the rendezvous table and
 * the plan (xport.h): rank r connects to every peer it dials and sends
 * HELLO; it accepts every peer it does not dial on its data listener, in
 * any order, checks that HELLO (a peer it expects, not yet connected, the
 * same job: n, dtype, workload, seed, batch) and answers with its
 * own; last it reads the answers of the peers it dialled. Connections never
 * wait on each other (a connect completes in the listener's backlog), so
 * set-up cannot deadlock. A stranger, another job or a rank that is not in
 * the plan gets ERROR, is closed and logged, and the accept goes on.
 *   ring (ring_plan): dial the right, accept the left. K = 2 makes two
 *     connections between the same two ranks, one per direction.
 *   rd (rd_plan): one connection per partner (the higher rank dials the
 *     lower one); it carries both directions.
 *
 * STEPS (xport.h). Each step is one CHUNK frame each way, sent and
 * received at the same time (net_sendrecv) through the process's link,
 * which paces and counts them. The incoming header is checked before any
 * of its payload is read: from the rank the step names, CHUNK, the
 * connection's step number (each connection numbers its frames from 0, the
 * same on both ends), the tag expected (the ring's chunk index, rd's
 * round), exactly rbytes. A step's send starts a new transmission on the
 * link (link_send_restart): what it sends is what the step before received,
 * so it could not have left earlier; a step costs latency + bytes / rate.
 *
 * FAULTS. Whatever breaks a step (a peer closed or reset, --timeout with no
 * progress, a bad frame, an ABORT from a peer) or this rank's own failure
 * (xport_abort), the transport runs the abort protocol before it returns
 * the error, so that every rank can name the rank lost:
 *   1. claim: the lost rank and why. A closed or reset connection and a
 *      bad frame are certain; a timeout is only a suspicion (the peer we
 *      received from if our receive was waiting, else the one we sent to),
 *      since a rank that waits on a stopped rank looks just like a stopped
 *      rank to its own peer. An ABORT in place of a CHUNK is relayed news.
 *   2. tell: finish the CHUNK frame being sent (its bytes are all there),
 *      so that the ABORT(aux = lost rank, text) behind it starts on a frame
 *      boundary; every other connection is at a frame boundary already.
 *        RELAY (the ring): to the dialled peer (downstream), unless it is
 *        the rank lost; then to the accepted one (upstream) instead.
 *        FLOOD (rd): to every peer but the rank lost and the one the news
 *        came from; first, whatever the connections already hold is read,
 *        and an ABORT there replaces a claim it contradicts.
 *   3. listen, for at most --timeout/2, for ABORTs (CHUNK payloads
 *      skipped); one replaces a suspicion of ours (that peer is alive) or a
 *      relayed claim (xport_claim_adopt), and is passed on as in 2.
 *        RELAY: read both neighbours until the upstream one closes (not
 *        after a certain loss of the upstream neighbour: nothing to hear).
 *        FLOOD: not after a certain claim; read every connection until the
 *        peer the news came from has closed, or every connection has.
 *      In a ring the rank next to a stopped rank times out first; its ABORT
 *      reaches ranks whose own timers fired at about the same time and
 *      corrects them. In rd a blocked rank waits on one partner, which is
 *      blocked on another, or failed, or lost: the news walks back along
 *      the chain of waits, one hop per step.
 * A rank therefore exits at most --timeout after the fault plus --timeout/2
 * (listening) plus what finishing a frame takes, within docs/design.md's
 * 2T; the exception is a step's patience (xport.h; rd.c asks for it where
 * a rank is idle by design): a stopped (SIGSTOP) peer is seen after
 * patience x --timeout. Said out loud: no heartbeat. The line is one of
 *     lost rank 2 (127.0.0.1:40123): connection closed
 *     rank 3 reported: lost rank 2 (127.0.0.1:40123): connection closed (seen by rank 3)
 *
 * SIMPLIFICATIONS: the abort protocol's bytes and set-up (HELLO) are not
 * paced or counted: they are not measured.
 *
 * OWNERSHIP. xport_tcp_open allocates the transport and owns its
 * connections; xport_close closes them and frees it. The listener, the
 * table and the plan are the caller's (read during the call only); the
 * link is the caller's and must outlive the transport. Its clock is
 * clock_real.
 */
#ifndef XPORT_TCP_H
#define XPORT_TCP_H

#include <stddef.h>

#include "wire/link.h"
#include "wire/proto.h"
#include "xport.h"

struct xport_tcp_cfg {
    int rank, world;                  /* world >= 2 */
    int lfd;                          /* this rank's data listener (open only) */
    const struct proto_peer *peers;   /* world entries: where each rank listens */
    const struct xport_plan *plan;    /* the connections to make (ring_plan, rd_plan) */
    struct proto_hello hello;         /* this job, as every peer must match it */
    struct link *link;                /* this process's NIC: pacing and counters */
    double timeout;                   /* --timeout: idle-progress, seconds, > 0 */
};

/* xport_tcp_open: connect to every peer of the plan and check it (SET-UP).
 * OUT: *out. On failure a line naming the peer in err. */
int xport_tcp_open(struct xport **out, const struct xport_tcp_cfg *cfg, char *err);

/* xport_tcp_attach: a transport over connected sockets, without the HELLO
 * exchange (the unit tests' way in; they also write bad frames to it).
 * fds[i] is the connection of cfg->plan->peer[i]; it takes ownership of
 * them all, closing them on failure. */
int xport_tcp_attach(struct xport **out, const struct xport_tcp_cfg *cfg, const int *fds,
                     char *err);

/* xport_tcp_busy_s: the busy-poll time (net_busy_poll) a transport of
 * `world` ranks on a host of `cpus` CPUs sets, `paced` on an emulated
 * link: 100 us where the ranks are at most the CPUs (paced) or four times
 * the CPUs (unpaced; docs/link.md, "Unpaced loopback"), else 0. The environment's PSR_NET_BUSY (microseconds)
 * overrides it at open and attach. Pure. */
double xport_tcp_busy_s(int world, long cpus, int paced);

#endif /* XPORT_TCP_H */
