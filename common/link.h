/* link.h -- the emulated NIC: bandwidth and latency for one process.
 *
 * EMULATED. On one 2-core machine, loopback moves gigabytes per second and
 * the CPU, not the network, is the bottleneck. The link module gives each
 * process one NIC of a chosen rate (--link-bw) and one-way latency
 * (--link-latency), shared by all its sockets, so that K processes on
 * 127.0.0.1 behave like K hosts on a switch: a parameter server's single
 * ingress link carries K*n bytes per step and saturates. Off by default.
 *
 * MODEL. Each direction is a token bucket kept as a virtual clock, vclock:
 * the time at which the wire is next free. Reserving n bytes at time `now`
 *
 *     start  = max(vclock, now - burst_s)     idle credit, capped
 *     vclock = start + n / rate
 *
 * so a link idle for a while may pass up to one burst at once (this absorbs
 * an event loop's late timers without losing rate) and never more: N bytes
 * never pass faster than (N - burst) / rate. Egress returns the time at
 * which the bytes may be handed to the kernel, when their last byte would
 * reach the far end:
 *
 *     deadline = max(vclock, now) + latency_s
 *
 * The max() keeps the idle credit from eating the latency: a byte handed
 * over at `now` never arrives before now + latency. Reservations made at
 * the same `now` pipeline (k pieces: start + total/rate + latency, not
 * k * latency), and a late sleep never accumulates, since the next
 * reservation starts from vclock, not from the time the sleep ended.
 * Ingress returns vclock: the time before which a reader must not read
 * more. Ingress paces what a receiver consumes, summed over all its
 * sockets: this is what makes the server's link the bottleneck when K
 * senders push to it. Rate 0 means no bandwidth limit (egress deadline
 * now + latency, ingress never waits).
 *
 * BURST AND PIECE (the numbers; rate B bytes/s > 0):
 *
 *     burst = max(LINK_BURST_MIN, B * LINK_BURST_S)   = max(16 KiB, B * 1 ms)
 *     piece = min(burst / 4, LINK_PIECE_MAX)          <= 16 MiB
 *
 * 1 ms of wire covers libuv's millisecond timers and most scheduler
 * hiccups on a busy 2-core machine, and is small against the transfers
 * measured (an idle link's first burst is up to 1 ms early). The 16 KiB
 * floor (1.6 ms at 10 MB/s) keeps pieces at low rates at 4 KiB or more,
 * not per-packet syscalls. A piece of a quarter burst keeps the rate
 * smooth (4 reservations per burst). A reader takes one piece before it
 * reserves it, so the ingress bucket's credit is burst - piece: both
 * directions honour (N - burst) / B.
 *
 * BLOCKING SENDERS. An event loop reserves bytes when they are ready and
 * writes them when their deadline comes: pass that readiness time as
 * `now`. A sender that sleeps until each deadline (net.c) cannot: after
 * sleeping for the latency it is "late" by that latency, and its next
 * piece (a frame's payload after its header) would pay the latency again.
 * link_send_reserve() / link_send_woke() keep such a sender's own
 * timeline: the time it would have reached had the link not held it.
 * Pieces of one send continue that timeline; a new send continues it too
 * when it comes within latency/2 of the wire going free on that timeline
 * (back-to-back calls), and otherwise starts from real time (it waited
 * for a peer, as a ring step waits for its neighbour's chunk, or it
 * computed). Such a sender takes no idle credit: its oversleeps are held
 * on the timeline instead.
 *
 * That guess fails when the wait for a peer and the link's hold are the
 * same time: ring ranks in lockstep receive the neighbour's chunk just as
 * their own last piece is released, so the next step's send looks like a
 * back-to-back continuation, and K steps pay the latency once. A sender
 * that knows its next send depends on what it has just received says so
 * with link_send_restart(): that send starts a new transmission in real
 * time and pays the latency again, so a ring step costs latency + chunk/B
 * exactly.
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

#define LINK_BURST_S    1e-3            /* burst, in seconds of wire time */
#define LINK_BURST_MIN  16384.0         /* ... but at least this many bytes */
#define LINK_PIECE_MAX  (16u << 20)     /* largest piece at any rate */
#define LINK_RATE_MIN   1.0             /* a rate below 1 byte/s is refused */
#define LINK_LATENCY_MAX 60.0           /* a latency above 60 s is refused */

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
    double send_app;      /* blocking sender: its timeline at the last reservation */
    double send_lag;      /* blocking sender: real time minus its timeline */
};

/* link_init: rate in bytes/s (0: no bandwidth limit), latency in seconds
 * (0: none). Negative, NaN or infinite values, a rate in (0, 1) and a
 * latency above LINK_LATENCY_MAX -> ERR_USAGE. Counters start at 0. */
int link_init(struct link *l, double rate, double latency_s);

/* link_active: nonzero when either rate or latency is set. */
int link_active(const struct link *l);

/* link_burst_bytes: the stated burst of one direction, in bytes (0 when
 * the rate is unlimited). */
double link_burst_bytes(const struct link *l);

/* link_piece: the largest piece a sender or receiver should move between
 * two reservations (bounds how far a piece can run ahead of the rate);
 * SIZE_MAX when the rate is unlimited. */
size_t link_piece(const struct link *l);

/* link_egress_reserve: book n bytes on the outgoing wire at time `now`;
 * returns the absolute time at which they may be written to the socket. */
double link_egress_reserve(struct link *l, size_t n, double now);

/* link_ingress_reserve: account n bytes just read at time `now`; returns
 * the absolute time before which the reader must not read more. */
double link_ingress_reserve(struct link *l, size_t n, double now);

/* link_send_reserve: link_egress_reserve for a sender that sleeps until
 * each deadline (see BLOCKING SENDERS). cont: nonzero when this piece
 * follows the previous one within the same send. The sender then waits
 * for the deadline and calls link_send_woke() before it writes. */
double link_send_reserve(struct link *l, size_t n, double now, int cont);

/* link_send_woke: the blocking sender's wait for its deadline ended at
 * `now` (the time it spent held is kept off its timeline). */
void link_send_woke(struct link *l, double now);

/* link_send_restart: the blocking sender's next send carries data it has
 * just received (a ring step forwards what the step before brought in),
 * so it cannot have left earlier: it is a new transmission, not the
 * continuation of the last send, however soon it follows. The time the
 * link held the sender is forgotten; the next link_send_reserve starts at
 * its `now` (behind the wire's backlog, if any: the rate still holds) and
 * pays the latency once more. Call it before that send's first piece. */
void link_send_restart(struct link *l);

#endif /* LINK_H */
