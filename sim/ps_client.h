/* ps_client.h -- a simulated PS worker's connections: the SimGrid
 * transport under bin/ps_worker's own client (common/ps/client.c,
 * client_sync.c, frames.c). psc_open fills the client's transport table
 * (struct ps_client_io, client.h) with the simulated byte streams of
 * ps_wire.h, one pair per server, and its executor with SimGrid's actors
 * (xport_sim_exec: the receiver and pusher threads are actors on the
 * worker's host), so the simulated worker pushes and pulls through the
 * same code as the real one. Code: ps_client.c.
 *
 * The transport: dial runs the AUTH handshake (unkeyed: the simulated
 * job has no secret) over the streams; a send joins the writes of one
 * frame, and of one push's parts (PS_IO_MORE), into one message
 * (ps_wire.h COALESCED), put at once and not waited for (a socket's
 * buffer; the server keeps a get posted, so the stream's messages still
 * cross one after the other); a receive reads the messages in, keeping a
 * get posted. The element bytes (PS_IO_ELEMENTS) across the host's link
 * are counted in the slot (bytes_in, bytes_out). Not simulated: the idle
 * timeouts (a server that is gone ends the stream with an eof instead)
 * and the emulated link (the network is simulated).
 *
 * ERRORS: the client's own lines (client.h), the server named "server S
 * (simulated host hH)"; a stream that ended: "lost server S (simulated
 * host hH): connection closed", or the server's claim, "server S
 * reported: TEXT".
 *
 * OWNERSHIP: psc_open allocates the per-server state and the client;
 * psc_close frees them (after a failed psc_open too).
 */
#ifndef SIM_PS_CLIENT_H
#define SIM_PS_CLIENT_H

#include <stdint.h>

#include "ps/client.h"
#include "ps_wire.h"
#include "sim.h"
#include "wire/proto.h"

struct psc_conn {
    struct psc *cl;
    int s;                      /* the job's server */
    struct wire_out out;
    struct wire_in in;
    struct wire_pend pend;      /* the message being written */
    int shut_rd, shut_wr;       /* shutdown(SHUT_RD / SHUT_RDWR) */
    int closed;                 /* its streams ended (sim_close, or psc_close) */
};

struct psc {
    struct sim_slot *sl;
    const struct sim_job *j;
    int S;                      /* the servers the split gives elements */
    struct psc_conn *conn;      /* S, in the client's order */
    struct ps_client client;
    int inited;
};

/* psc_open: the client (hello: n, dtype, workload, seed, batch) connected
 * to every server that owns elements: ps_client_init and
 * ps_client_connect. 0, or a negative err.h code with sl->err. */
int psc_open(struct psc *cl, struct sim_slot *sl, const struct proto_hello *hello);

/* psc_gone: this worker is gone (killed: claim ""; failed: sl->err): an
 * eof with the claim to every server. */
void psc_gone(struct psc *cl, int killed);

/* psc_close: the client closed (its actors joined), the streams ended. */
void psc_close(struct psc *cl);

#endif /* SIM_PS_CLIENT_H */
