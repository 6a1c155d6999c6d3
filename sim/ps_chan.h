/* ps_chan.h -- the simulated parameter server's messaging, shared by its
 * server and worker actors (ps_actor.c): the frames, the mailboxes, the
 * CHANNELS (one direction of one connection: its frames one after the
 * other) and the LOOP (the comms an actor waits on), and the POISON frames
 * of an actor that is gone. Code: ps_chan.c.
 */
#ifndef SIM_PS_CHAN_H
#define SIM_PS_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include <simgrid/comm.h>
#include <simgrid/mailbox.h>

#include "sim.h"
#include "wire/proto.h"

struct ps_frame {
    int rank;                   /* the worker; -1 from a server */
    uint64_t step;
    double t0;                  /* push: when the worker started the step's pushes */
    struct proto_push_meta meta;
    uint64_t first, count;      /* elements (absolute indices) */
    const void *data;           /* REAL: the sender's bytes, alive until it is told */
    struct ps_frame *next;      /* a channel's queue */
};

#define PS_POISON (-3)          /* a frame's rank: its sender is gone */

/* A CHANNEL is one direction of one connection (the real worker has one
 * TCP connection per server): its frames go one after the other, in
 * order, never two at once. A LOOP is the comms an actor waits on: gets
 * (tag >= 0: from peer tag) and each channel's one put in flight (tag < 0:
 * to peer -tag - 1). */
struct chan {
    sg_mailbox_t mb;
    int host;                   /* the peer's */
    int busy;                   /* a put in flight */
    struct ps_frame *head, *tail;   /* queued, not yet posted */
};

struct loop {
    sg_comm_t *c;
    int *tag;
    size_t n;
};

/* ps_mailbox: "sS<-wW" (push = 1: worker W's pushes to server S) or
 * "wW<-sS" (server S's weights to worker W). */
sg_mailbox_t ps_mailbox(int push, int s, int w);

/* ps_elements: n, the job's elements. */
size_t ps_elements(const struct sim_job *j);

/* The loop: room for cap comms (-ENOMEM), freed by ps_loop_free; add a
 * comm with its tag; drop comm i (the last takes its place). */
int ps_loop_init(struct loop *l, size_t cap);
void ps_loop_free(struct loop *l);
void ps_loop_add(struct loop *l, sg_comm_t c, int tag);
void ps_loop_drop(struct loop *l, size_t i);

/* ps_chan_send: frame f onto channel `peer` from an actor on host `from`:
 * posted now when the channel is idle, else queued. A frame between two
 * actors on one host has size 0 (it never crosses the host's link; the
 * generated platforms give each host a free loopback) and is not counted;
 * any other is counted in *out. */
void ps_chan_send(struct loop *l, struct chan *chans, int peer, struct ps_frame *f,
                  size_t es, int from, uint64_t *out);

/* ps_put_done: comm i of the loop, a put, has completed: the channel's next
 * frame goes in its place, or the channel is idle. */
void ps_put_done(struct loop *l, size_t i, struct chan *chans, size_t es, int from);

/* ps_wait: the index of a completed comm of the loop. A peer that is gone
 * does not leave it waiting: its POISON frame completes a get
 * (xport_sim.h FAULTS). */
long ps_wait(struct loop *l, struct sim_slot *sl, uint64_t step);

/* ps_poison: this actor is gone: a POISON frame with its claim (sl->err; ""
 * when killed) on each of the n mailboxes, detached, size 0. */
void ps_poison(const sg_mailbox_t *mb, size_t stride, int n, const struct sim_slot *sl,
               int killed);

/* ps_poisoned: the failure a POISON frame from `who` (a "worker" or a
 * "server", index i on host h) means. */
int ps_poisoned(struct sim_slot *sl, uint64_t step, const struct ps_frame *f,
                const char *who, int i, int h);

/* ps_chans_free: frames still queued (a run that failed). */
void ps_chans_free(struct chan *chans, int n);

/* ps_loop_drain: wait until no put is in flight (the gets are done). */
int ps_loop_drain(struct loop *l, struct chan *chans, size_t es, struct sim_slot *sl,
                  uint64_t step);

#endif /* SIM_PS_CHAN_H */
