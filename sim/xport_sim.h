/* xport_sim.h -- a simulated transport (xport.h) for SimGrid actors.
 *
 * Every rank is a SimGrid actor; each calls ring_allreduce / rd_allreduce
 * (or any algorithm over xport.h) on its own transport, opened here with the
 * algorithm's plan. A step is two simulated messages: one put to the
 * mailbox "TO<-RANK" and one get from "RANK<-FROM" (one mailbox per ordered
 * pair of the plan, so frames of one sender arrive in order). The network
 * model (SimGrid's, set up by sim/main.c) decides when each message is in.
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
 *                    large one (sim/main.c: K * 64 elements standing for n).
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

#include "xport.h"

enum xport_sim_mode { XPORT_SIM_REAL, XPORT_SIM_SIZES };

/* The simulated clock, for code that runs outside a transport (the PS). */
extern const struct clock_src xport_sim_clock;

/* xport_sim_open: rank's transport for plan pl (inside its actor). scale
 * >= 1 (SIZES only; REAL takes 1). OUT: *out. ERR_USAGE or -ENOMEM. */
int xport_sim_open(const struct xport_plan *pl, int rank, int world, int mode, double scale,
                   uint64_t *bytes_in, uint64_t *bytes_out, struct xport **out, char *err);

/* xport_sim_mailbox_name: "TO<-FROM" into buf (at least 32 bytes). */
void xport_sim_mailbox_name(char *buf, size_t len, int to, int from);

#endif /* XPORT_SIM_H */
