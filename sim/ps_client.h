/* ps_client.h -- a simulated PS worker's side of the real protocol
 * (common/wire/proto.h), over the simulated byte streams of ps_wire.h, to
 * the server actors that run common/ps/server.c (sim/ps_server.c): the
 * AUTH handshake and HELLO/WELCOME with every server, then per step the
 * PUSH frames of each bucket and the WEIGHTS frames back, BYE at the end.
 * Code: ps_client.c.
 *
 * What it does not share with bin/ps_worker's client (common/ps/client.c
 * and frames.c, which run over sockets and POSIX threads): the waiting.
 * One actor does it all: pushes are posted and not waited for, and the
 * pull reads whichever server's frames come while the pushes go on, which
 * is what client.c's pusher and receiver threads achieve. A bucket goes
 * to a server as one PUSH frame (client.c cuts it into frames of the
 * server's share when S > 1: SERVER PARTS; the simulated PS never did).
 *
 * ERRORS: 0 or a negative err.h code with one line in sl->err naming the
 * step and the server; an ERROR frame is "server I reported: TEXT"; a
 * server that is gone, "lost server I (simulated host hH): connection
 * closed".
 *
 * OWNERSHIP: psc_open allocates the per-server state, psc_close frees it.
 */
#ifndef SIM_PS_CLIENT_H
#define SIM_PS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <simgrid/comm.h>

#include "ps_wire.h"
#include "sim.h"
#include "wire/proto.h"

struct psc {
    struct sim_slot *sl;
    const struct sim_job *j;
    int S;
    size_t es;
    struct wire_out *out;       /* S */
    struct wire_in *in;         /* S */
    sg_comm_t *comms;           /* 2S */
    int *tag;
};

/* psc_open: the streams to every server, AUTH and HELLO (hello: n, dtype,
 * workload, seed, batch), each server's WELCOME checked against the job's
 * ranges. */
int psc_open(struct psc *cl, struct sim_slot *sl, const struct proto_hello *hello);

/* psc_push: elements [first, first + count) of grad, to every server
 * owning a part of them, one PUSH frame each, posted and not waited for;
 * *meta with the part that ends at the server's last element. */
int psc_push(struct psc *cl, uint64_t step, const struct proto_push_meta *meta,
             const unsigned char *grad, uint64_t first, uint64_t count);

/* psc_pull: step `step`'s WEIGHTS frames from every server, into weights
 * (n elements), until each range is whole; the pushes go on meanwhile,
 * and are out when it returns. */
int psc_pull(struct psc *cl, uint64_t step, unsigned char *weights);

/* psc_bye: BYE (step = steps done) to every server, waited for. */
int psc_bye(struct psc *cl, uint64_t step);

/* psc_gone: this worker is gone (killed: claim NULL; failed: sl->err):
 * an eof with the claim to every server. */
void psc_gone(struct psc *cl, int killed);

void psc_close(struct psc *cl);

#endif /* SIM_PS_CLIENT_H */
