/* xport_sim.h -- a simulated transport (xport.h) for SimGrid actors.
 *
 * Every rank is a SimGrid actor; each calls ring_allreduce / rd_allreduce
 * (or any algorithm over xport.h) on its own transport, opened here with the
 * algorithm's plan. A step is two simulated messages: one put to the
 * mailbox "TO<-RANK" and one get from "RANK<-FROM" (one mailbox per ordered
 * pair of the plan, so frames of one sender arrive in order). The network
 * model (SimGrid's, set up by sim/engine.c) decides when each message is in.
 *
 * DATA MODES.
 *   XPORT_SIM_REAL   the outgoing bytes are copied into the frame at begin
 *                    (so recv's promise holds trivially: the algorithm may
 *                    overwrite sbuf at once) and copied out by recv: real
 *                    sums, bit for bit the algorithm's.
 *   XPORT_SIM_SIZES  no bytes travel: the frame carries its tag and size
 *                    only, and recv leaves dst untouched. Every frame is
 *                    simulated at `scale` times its size, so an algorithm
 *                    can run on a small proxy vector that stands for a
 *                    large one (sim/flags.c: K * 64 elements standing for n).
 *
 * THE CLOCK is SimGrid's simulated clock (simgrid_get_clock,
 * sg_actor_sleep_until): everything above reads virtual time.
 *
 * FAULTS. A frame with the wrong tag or size fails the step with one line
 * naming the rank it came from. abort() marks this rank failed; the peers
 * then wait for frames that never come, and SimGrid ends the run with its
 * deadlock report (a simulated rank does not die on its own: the fault
 * protocol of xport_tcp.h is not simulated). patience is ignored.
 *
 * COUNTERS. *bytes_in / *bytes_out (may be NULL) get the simulated bytes
 * of every frame, as the emulated link's counters would.
 *
 * OWNERSHIP. xport_sim_open allocates the transport; xport_close frees it.
 * Frames in flight are malloc'd by the sender and freed by the receiver.
 */
#ifndef XPORT_SIM_H
#define XPORT_SIM_H

#include <stdint.h>

#include <simgrid/comm.h>

#include "train/overlap.h"
#include "xport.h"

enum xport_sim_mode { XPORT_SIM_REAL, XPORT_SIM_SIZES };

/* The simulated clock, for code that runs outside a transport (the PS). */
extern const struct clock_src xport_sim_clock;

/* The simulated communication thread (overlap.h, THE EXECUTOR): an actor
 * on the caller's host, SimGrid's mutex and condition variable. With it a
 * rank's step overlaps its simulated backward pass with its bucket's
 * transfers (step.c, --bucket-size without --no-overlap), as the real
 * thread does. */
extern const struct overlap_exec xport_sim_exec;

/* xport_sim_open: rank's transport for plan pl (inside its actor). scale
 * >= 1 (SIZES only; REAL takes 1). OUT: *out. ERR_USAGE or -ENOMEM. */
int xport_sim_open(const struct xport_plan *pl, int rank, int world, int mode, double scale,
                   uint64_t *bytes_in, uint64_t *bytes_out, struct xport **out, char *err);

/* xport_sim_pace: the link's rate, bytes/s, as xport_tcp uses it
 * (xport_sim.c, EAGER AND RENDEZVOUS): every frame leaves one after the
 * other on this host's egress and its sender goes on; one that fits its
 * first piece moves at once, a longer one once its receiver is there.
 * rate 0 (the default): every frame so, its sender waiting for it. */
void xport_sim_pace(struct xport *x, double rate);

/* FAULTS (simulated; --kill RANK@STEP). An actor that ends without
 * finishing (killed by --kill, or failed) is GONE: it marks a board shared
 * by all actors (by slot, sim.h: ring ranks, PS workers 0..K-1 then
 * servers; actors run one at a time) and "closes its connections": a
 * POISON frame, size 0, carrying its claim (empty: it was killed), goes to
 * every mailbox a peer may be waiting on from it (xport_sim_poison; the PS
 * actors send theirs). A peer waiting for a frame gets the poison instead
 * and fails naming it -- "lost rank D (simulated host hD): connection
 * closed (seen by rank r)", or "rank P reported: CLAIM" when P relays a
 * claim, as xport_tcp's ABORT relay reads -- and is gone in turn, so the
 * news travels the way the real fault protocol carries it. A SEND that
 * can never complete (its receiver is gone) is waited for --timeout of
 * SIMULATED time at a time: the board then names the receiver ("no
 * progress for T s"); after XPORT_SIM_MAX_IDLE timeouts with every peer
 * still there, "no progress" anyway (a long transfer is progress). A gone
 * actor then stays as a zombie (xport_sim_zombie) until the run ends. */
#define XPORT_SIM_MAX_IDLE 1000
#define XPORT_SIM_POISON 0xffffffffu    /* a frame's tag: the sender is gone */

/* xport_sim_faults_init: the board (slots entries, zeroed by the caller)
 * and the timeout (seconds, > 0), before the simulation starts. */
void xport_sim_faults_init(unsigned char *board, int slots, double timeout);
/* xport_sim_gone / xport_sim_set_gone: ask or mark the board (slot out of
 * range: not gone / nothing). */
int xport_sim_gone(int slot);
void xport_sim_set_gone(int slot);
/* xport_sim_poison: this rank is gone: a POISON frame with `claim` (NULL
 * or "": killed) to every peer of its plan, detached. */
void xport_sim_poison(struct xport *x, const char *claim);
/* xport_sim_zombie: the calling actor, gone and poisoned, never returns:
 * it becomes a sleeping daemon that SimGrid ends with the run, so that
 * the messages already flowing to or from it complete (an actor that
 * ended would fail them under its peers) and its buffers stay valid. */
__attribute__((noreturn)) void xport_sim_zombie(void);

/* xport_sim_mailbox_name: "TO<-FROM" into buf (at least 32 bytes). */
void xport_sim_mailbox_name(char *buf, size_t len, int to, int from);

#endif /* XPORT_SIM_H */
