/* link.h -- the emulated NIC: bandwidth and latency for one process.
 *
 * EMULATED. On one 2-core machine, loopback moves gigabytes per second and
 * the CPU, not the network, is the bottleneck. The link module gives each
 * process one NIC of a chosen rate (--link-bw) and one-way latency
 * (--link-latency), shared by all its sockets, so that K processes on
 * 127.0.0.1 behave like K hosts on a switch: a parameter server's single
 * ingress link carries K*n bytes per step and saturates. Off by default.
 *
 * MODEL. Each direction is a token bucket kept as a virtual clock: the time
 * at which the wire is next free. Reserving n bytes advances it by n/rate,
 * starting no earlier than now minus the burst (idle credit, so a link idle
 * for a while may send a small burst at once; this absorbs late wake-ups
 * without losing rate). Egress returns the time at which the bytes may be
 * handed to the kernel: when their last byte would arrive at the far end,
 * i.e. the end of their wire time plus the latency. So latency is a
 * delivery deadline per piece, computed from the virtual clock: back-to-back
 * frames pipeline (L + total/B, not k*L) and a late sleep never accumulates.
 * Ingress paces what a receiver consumes, summed over all its sockets: this
 * is what makes the server's link the bottleneck when K senders push to it.
 *
 * All functions are non-blocking arithmetic on the clock (clock.h), so the
 * libuv server can turn a deadline into a timer and blocking code can sleep
 * with clock_sleep_until(). Not thread-safe as a whole; egress and ingress
 * are independent, so one thread may send while another receives.
 *
 * Byte counters live here too (every byte a process sends or receives goes
 * through its link, enabled or not): bytes_out, bytes_in.
 */
#ifndef LINK_H
#define LINK_H

#include <stddef.h>
#include <stdint.h>

struct link_bucket {
    double rate;      /* bytes per second; 0 = unlimited */
    double burst_s;   /* idle credit, in seconds of wire time */
    double vclock;    /* virtual time at which this wire is next free */
};

struct link {
    struct link_bucket egress, ingress;
    double latency_s;     /* one-way, added to egress deadlines */
    uint64_t bytes_out;   /* counters, whether or not pacing is on */
    uint64_t bytes_in;
};

/* link_init: rate in bytes/s (0: no bandwidth limit), latency in seconds
 * (0: none). Negative, NaN or infinite values -> ERR_USAGE. */
int link_init(struct link *l, double rate, double latency_s);

/* link_active: nonzero when either rate or latency is set. */
int link_active(const struct link *l);

/* link_burst_bytes: the stated burst of one direction, in bytes. */
double link_burst_bytes(const struct link *l);

/* link_piece: the largest piece a sender or receiver should move between
 * two reservations (bounds how far a piece can run ahead of the rate). */
size_t link_piece(const struct link *l);

/* link_egress_reserve: book n bytes on the outgoing wire at time `now`;
 * returns the absolute time at which they may be written to the socket. */
double link_egress_reserve(struct link *l, size_t n, double now);

/* link_ingress_reserve: account n bytes just read at time `now`; returns
 * the absolute time before which the reader must not read more. */
double link_ingress_reserve(struct link *l, size_t n, double now);

#endif /* LINK_H */
