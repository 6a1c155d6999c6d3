/* setup.h -- bin/ring_worker's set-up between the flags and the run: the
 * GPU, the data listener, the rendezvous, and the transport opened with
 * the algorithm's peer table (or, with NCCL, the check that this host has a
 * GPU per local rank). main.c parses the flags; this file connects.
 *
 * OWNERSHIP. setup_connect returns the transport (xport_close frees it),
 * NULL when world is 1 or with NCCL. The listener and the rendezvous table
 * live only during the call.
 */
#ifndef SETUP_H
#define SETUP_H

#include "train/cli_common.h"
#include "wire/link.h"
#include "wire/proto.h"
#include "coll/xport.h"

struct setup_cfg {
    const struct cli_common *c;       /* rank, world, timeout, local rank */
    int kind, algo;                   /* coll.h: enum coll_kind, enum coll_algo */
    int op;                           /* enum coll_op: COLL_ALLTOALL opens a2a_plan's mesh */
    int group;                        /* --algo hring: G, ranks per host (hring_plan) */
    const char *coord_host;           /* the coordinator (world > 1) */
    int coord_port;
    const char *port_file;            /* rank 0: where to write the coordinator's port */
    const char *listen_host, *adv_host;   /* where the data port is bound / advertised */
    struct proto_hello hello;         /* the job, as the others must match it */
    struct link *link;                /* this process's emulated NIC */
    int *adopt;                       /* --algo auto, rank > 0: NULL, else OUT rank 0's
                                       * algorithm, taken from the rendezvous (auto.h) */
};

/* setup_gpu: the GPU of this local rank (--device cuda, NCCL), and with
 * NCCL on rank 0 the communicator's id, into nccl_id[GPU_NCCL_ID_BYTES]. */
int setup_gpu(int kind, const struct cli_common *c, unsigned char *nccl_id, char *err);

/* setup_connect: with world > 1, the listener, the rendezvous (its blob
 * carries the NCCL id to every rank, or else rank 0's --algo, checked, or
 * with s->adopt taken), then the TCP transport opened with ring_plan,
 * rd_plan, rab_plan, tree_plan, swing_plan, hring_plan (its G in the blob
 * too), student_plan or (--coll alltoall) a2a_plan, or NCCL's fit
 * check (which also runs when world is 1). OUT: *x; nccl_id (NCCL, from
 * rank 0). 0, or an err.h code with one line in err. */
int setup_connect(const struct setup_cfg *s, unsigned char *nccl_id, struct xport **x, char *err);

#endif /* SETUP_H */
