/* link.h -- the emulated NIC: bandwidth and latency for one process.
 *
 * EMULATED. On one 2-core machine, loopback moves gigabytes per second and
 * the CPU, not the network, is the bottleneck. The link module gives each
 * process one NIC of a chosen rate (--link-bw) and one-way latency
 * (--link-latency), shared by all its sockets, so that K processes on
 * 127.0.0.1 behave like K hosts on a switch: a parameter server's single
 * ingress link carries K*n bytes per step and saturates. Off by default.
 *
 * MODEL. Each direction is a token bucket of depth zero, kept as a
 * virtual clock, vclock: the time at which the wire is next free. There is
 * no burst: a link that was idle gives no credit, and every message pays
 * its serialization n/B and the latency L, exactly the model's a + n b
 * (common/measure/model.c). Egress, n bytes ready at time `now`:
 *
 *     start    = max(vclock, now)
 *     vclock   = start + n / rate
 *     deadline = vclock + latency_s     (hand them to the kernel then)
 *
 * The deadline is when their last byte would reach the far end.
 * Reservations made back to back pipeline (k pieces: start + total/rate +
 * latency, not k * latency), and a late sleep never accumulates, since the
 * next reservation starts from vclock, not from the time the sleep ended.
 *
 * Ingress, n bytes whose last byte reached the reader at time `t` (the
 * kernel's receive timestamp, or the best guess the caller has):
 *
 *     start  = max(vclock, t - n / rate)
 *     vclock = start + n / rate         (returned: the bytes count as
 *                                        received then)
 *
 * Bytes that came from one sender paced at the same rate arrive n/B apart
 * and are never held (their wire time is the sender's, already paid); K
 * senders into one reader are held to the reader's rate: this is what makes
 * the server's link the bottleneck when K workers push to it. The reader
 * holds what it read until the returned time and reads nothing more before
 * it. Ingress has no latency of its own (the sender's egress paid it).
 * Rate 0 means no bandwidth limit (egress deadline now + latency, ingress
 * returns t).
 *
 * PIECE (rate B bytes/s > 0):
 *
 *     piece = min(max(LINK_PIECE_MIN, B * LINK_PIECE_S),
 *                 max(LINK_PIECE_CAP, B * LINK_PIECE_FAST_S), LINK_PIECE_MAX)
 *           = min(max(4 KiB, B * 1 ms), max(60 KiB, B * 250 us), 16 MiB)
 *
 * the most a sender reserves or a reader reads at once. Each piece costs
 * a wake-up at both ends (a sleep until its deadline, a poll for its
 * arrival), and a wake-up, not the copy, is what the CPU pays per byte:
 * 1 ms of wire keeps that to a thousand a second per direction (a K = 2
 * ring at 500 Mbit/s, 1 ms: 0.06 of a core per rank against 0.14 with
 * the 250 us pieces of before; docs/link.md). Up to 60 KiB: below the
 * 64 KiB a frame's header carries (common/coll/xport_tcp.c, HEAD_MAX), so
 * that a reader's grid and the sender's stay one (link_ingress_next), and
 * below loopback's 65483-byte segments, so that the kernel keeps a piece
 * in one buffer with one stamp (a 64 KiB piece is two: at 1 Gbit/s a
 * K = 8-16 ring then read 1.14-1.24x its model on 16 cores). Above
 * 492 Mbit/s the piece is 60 KiB, and above 2 Gbit/s 250 us of wire as
 * before. The 4 KiB floor keeps low rates from per-packet syscalls. The
 * piece does not change any time: a message of n bytes costs L + n/B
 * whatever its pieces.
 *
 * WHAT A REAL NIC DOES OTHERWISE (docs/link.md says it at length): a real
 * sender's kernel hands the first bytes to the wire at once and a real
 * receiver sees them L + (bytes so far)/B later; here a piece is handed
 * over whole when its last byte would arrive, so a reader sees a piece's
 * first byte up to piece/B late (never the message's last byte). Real
 * switches and NICs also have buffers and bursts (tc tbf's bucket); this
 * link has none, so it is the model, not a particular NIC.
 *
 * LATE EVENT LOOPS. A libuv server's timers fire late. Egress loses
 * nothing: it reserves each piece at the time it was ready (`now` = the
 * readiness time, in the past when the loop is late), so pieces chain on
 * vclock and only their write is late. Ingress gets the same by passing
 * the time the bytes were there: a reader released late from the link's
 * hold books its next read from the time it was due to be released
 * (ps_server/main.c), a credit no larger than the loop's lateness, taken
 * only while the link was busy, never for idle time.
 *
 * BLOCKING SENDERS. An event loop reserves bytes when they are ready and
 * writes them when their deadline comes: pass that readiness time as
 * `now`. A sender that sleeps until each deadline (net_xfer.c) cannot: after
 * sleeping for the latency it is "late" by that latency, and its next
 * piece (a frame's payload after its header) would pay the latency again.
 * link_send_reserve() / link_send_woke() keep such a sender's own
 * timeline: the time it would have reached had the link not held it.
 * Pieces of one send continue that timeline; a new send continues it too
 * when it comes within latency/2 of the wire going free on that timeline
 * (back-to-back calls), and otherwise starts from real time (it waited
 * for a peer, as a ring step waits for its neighbour's chunk, or it
 * computed). Its oversleeps are held on the timeline instead of lost.
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
 * OWN CORES AND THE VIRTUAL TIMELINE. Each process is a host with a NIC of
 * its own, but K of them share this machine's cores. With more ranks than
 * cores, a rank woken when its neighbour's chunk is in waits for a CPU
 * another "host" holds, and so does a sender woken for a piece's
 * deadline: the piece is handed over late, its reader sees it late, and
 * every ring step forwards both waits to the next (a K = 16 ring on 2
 * cores: about 0.6 ms a step, 1.10-1.19x its model at 100 Mbit/s). A host
 * with cores of its own would have waited for neither. So the link keeps
 * each host's own timeline, as a discrete-event simulator would: a sender
 * stamps each frame with the wire start of its transmission (the
 * CHUNK header's aux, proto.h); the reader computes when each byte of it
 * arrived on that schedule (start + bytes/rate + latency), whenever the
 * process got to hand it over; and a send that forwards what was read
 * (link_send_restart with the CPU spent since) is booked from that
 * arrival plus that CPU, not from the real time it got a core. A send
 * that waited for anything else starts at real time, less the time it
 * waited for a CPU since it last blocked (the kernel's run delay,
 * net_queued_s). The CPU a host really used stays on its timeline; the
 * waits for somebody else's CPU do not. Pieces are still handed over at
 * their deadlines, so real time follows the timeline as long as the CPUs
 * keep up; where they do not, the pieces go late, real time falls behind
 * the timeline, and the records say by how much (link_lag_s; the
 * machine's signal 4, hostload.h). credited_s sums what was taken off.
 * docs/link.md has the measurements.
 *
 * All functions are non-blocking arithmetic on the clock (clock.h), so the
 * libuv server can turn a deadline into a timer and blocking code can sleep
 * with clock_sleep_until(). Not thread-safe as a whole; egress and ingress
 * are independent, so one thread may send while another receives.
 *
 * Byte counters live here too (every byte a process sends or receives goes
 * through its link, enabled or not): bytes_out, bytes_in.
 *
 * HOST LINKS. The link belongs to a host, not to a process: a worker and
 * the server shard colocated with it (experiments/launch.sh
 * --colocated-servers) share one NIC's budget. link_host_attach() moves
 * both directions' virtual clocks into a small file-backed shared mapping
 * (the host's file, e.g. DIR/host.3) that every process on that host
 * attaches to; each reservation is then one compare-and-swap on the
 * shared clock (start = max(clock, now), clock = start + n / rate), so
 * the host's bytes, whoever sends them, pass no faster than the host's
 * rate, and two processes charging it take twice as long for the same
 * bytes as one. The processes' clocks must be one clock (CLOCK_MONOTONIC
 * on one machine: clock.h's real clock); the shared clocks start at 0,
 * which is before any monotonic time. Everything else (the blocking
 * sender's timeline, the ingress join, the counters) stays per process;
 * the join takes a reservation back only when nobody booked in between
 * (the CAS fails otherwise, and the bytes are booked on their own). Bytes
 * between two roles on one host never cross its NIC: the caller gives
 * such a connection a link of its own with rate 0 (counters only).
 *
 * FLOW SHARES. A NIC shared by several flows of different sizes carries
 * them best when each gets the share of the rate its bytes are of the
 * host's, so that all of them finish together (weighted fair queueing);
 * first come, first served per piece would give the small flows as much
 * as the big ones, and the big ones would finish late (a BytePS mix at
 * K = 8 with 4 extra servers: 1.11x its model). link_set_share gives one
 * flow of a host link such a rate of its own: each egress piece is then
 * booked, from the same moment, on the flow's private clock at that rate
 * and on the host's clock at the host's, and may go when both have
 * passed. The host's clock still caps the sum. A share is a cap, not a
 * guarantee: the flows that hold shares must together be the bytes that
 * contend for the NIC (common/ps/client.c: a worker's pushes off the
 * host), or the NIC idles while they crawl at their fractions.
 *
 * The host's file also counts the bytes booked through it, the host's NIC
 * bytes (headers included; every byte of a paced link is booked, so with
 * a rate set these are all the bytes that cross the NIC, in both
 * directions, since the job began): native-endian unsigned 64-bit
 * integers at
 *
 *     OFFSET  SIZE  DESCRIPTION
 *     40      8     bytes out of the host (egress reservations)
 *     48      8     bytes into the host (ingress reservations)
 *     56      8     UTILIZATION's busy horizon (the bits of a double, s)
 *     64      8     UTILIZATION's idle total (nanoseconds)
 *     72      8     the same two of egress alone
 *     80      8
 *
 * (link_host_bytes, or `od -An -tu8 -j40 -N16 FILE` after the job).
 *
 * UTILIZATION (issue 27: a flag from the link itself). A paced link (rate
 * > 0) knows when it was busy: an egress reservation keeps it busy from
 * its start until its last byte reaches the far end (start .. end +
 * latency: transmitting, or in flight), an ingress reservation from its
 * start to its end. The link keeps the union of those intervals, both
 * directions together (a full-duplex NIC doing anything counts as busy),
 * as a busy horizon (the latest end so far) and an idle total: a
 * reservation that starts after the horizon adds the gap to the total.
 * link_util_mark(l, now) flushes the idle up to now and returns the
 * total, so a caller takes the idle over a window [t0, t1] as
 * mark(t1) - mark(t0). A reservation that starts before an earlier mark
 * (ingress is booked from t - n/B; a blocking sender books on its own
 * timeline) adds no idle: the mark already counted that time idle, and
 * the error is at most a piece's wire time. On a host link the horizon
 * and the total live in the host's file (offsets 56 and 64), updated
 * with one compare-and-swap and one atomic add, so that every process on
 * the host sees the host's NIC: a colocated server's link is busy while
 * its worker pushes. Private links keep them in struct link, atomically
 * too (the PS worker's pusher and receiver threads book the two
 * directions at once). Nothing is tracked at rate 0 (link_util_mark
 * returns NaN): an unlimited link is never the bottleneck.
 *
 * The link keeps the same record of its egress alone too
 * (link_util_mark_egress): a ring rank's critical path is its sends.
 * When its neighbour enters a step late by d, the rank's own chunk is
 * out and in flight while the neighbour's is still arriving: the union
 * of both directions reads busy (the rank's ingress is taking the late
 * bytes), the egress alone reads d idle (the rank had nothing to send:
 * it waited). The parameter server's link alternates its directions
 * (pushes in, then weights out), so there the union is the measure.
 *
 * The lead (egress alone). The model's ring step is L + n/B: the next
 * begins when the last step's bytes are in. A ring out of lockstep (its
 * ranks entered at different times, one reduced faster) has ranks whose
 * neighbour's chunk is in before their own chunk's last byte lands: they
 * forward at once, while that byte is in flight, ahead of the model's
 * step by the overlap (at most L), and later wait for the ring to catch
 * up. The union counts the overlap once for two steps, so the wait would
 * read idle although the call ends when the model says. So each new
 * transmission (link_send_restart) that starts before the egress's
 * horizon adds the overlap, at most L, to the link's lead, and a gap in
 * the egress record is idle only beyond the lead, which it uses up. The
 * lead is the call's own (link_enter zeroes it) and the sending
 * thread's (a plain field of struct link, not the host's): pieces of one
 * frame earn none, a frame that starts after the horizon (a slow
 * sender) earns none.
 */
#ifndef LINK_H
#define LINK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* LINK_PIECE_S, _MIN, _CAP, _FAST_S, _MAX and the rule itself
 * (model_link_piece) are in measure/model.h: the cost model prices the
 * pieces the link sends (model_ps_sched). */
#include "measure/model.h"

#define LINK_PIECE_SLACK 64u            /* a frame's first piece may run over by this (link_frame_first) */
#define LINK_RATE_MIN   1.0             /* a rate below 1 byte/s is refused */
#define LINK_LATENCY_MAX 60.0           /* a latency above 60 s is refused */
#define LINK_STAMP_SPAN 1.0             /* a frame stamp older than this is not believed */
#define LINK_HOST_BYTES_OUT_OFF 40      /* HOST LINKS: the host file's byte counters */
#define LINK_HOST_BYTES_IN_OFF  48
#define LINK_HOST_BUSY_OFF      56      /* UTILIZATION: the host's busy horizon */
#define LINK_HOST_IDLE_OFF      64      /* ... and its idle total, ns */
#define LINK_HOST_EBUSY_OFF     72      /* the same of egress alone */
#define LINK_HOST_EIDLE_OFF     80

struct link_bucket {
    double rate;      /* bytes per second; 0 = unlimited */
    double vclock;    /* virtual time at which this wire is next free (a copy
                       * of the shared one after each reservation, when shared) */
    void *shared;     /* HOST LINKS: the host's clock (a 64-bit atomic in the
                       * mapping), NULL for a private link */
};

struct link {
    struct link_bucket egress, ingress;
    struct link_bucket share;  /* FLOW SHARES: this flow's own egress clock
                                  (rate 0: none) */
    double latency_s;     /* one-way, added to egress deadlines */
    uint64_t bytes_out;   /* counters, whether or not pacing is on */
    uint64_t bytes_in;
    double send_app;      /* blocking sender: its timeline at the last reservation */
    double send_lag;      /* blocking sender: real time minus its timeline */
    int send_cont;        /* blocking sender: the next send continues a frame */
    int send_new;         /* blocking sender: link_send_restart was called */
    double send_fixed;    /* ... and where that transmission starts */
    double vt_floor;      /* link_enter: no restart starts before it */
    double util_lead;     /* UTILIZATION: the call's lead not yet waited off
                           * (the sending thread's; link_enter zeroes it) */
    double credited_s;    /* OWN CORES: CPU waits taken off the timeline, summed */
    /* link_ingress_join: the last reservation, to join the next one to */
    double in_stamp;      /* its kernel receive timestamp (NAN: none) */
    double in_t;          /* its arrival time t */
    double in_from;       /* ingress.vclock before it */
    double in_end;        /* ingress.vclock after it */
    size_t in_n;          /* its bytes */
    int in_cut;           /* its last part was cut short by the reader */
    double in_due;        /* when the last bytes read were in, in real time
                           * (NAN: none yet) */
    /* VIRTUAL TIMELINE: the stamped frame being read (NAN: none) */
    double vin_start;     /* its sender's wire start */
    double vin_bytes;     /* its bytes read so far, header included */
    double in_virt;       /* when its last byte read arrived on that schedule */
    void *host;           /* HOST LINKS: the mapping, NULL when private */
    /* UTILIZATION, private links (a host link uses the host's file);
     * [0] both directions, [1] egress alone: */
    _Atomic uint64_t util_busy[2];  /* the busy horizon (double bits; 0 = 0.0) */
    _Atomic uint64_t util_idle[2];  /* the idle total, nanoseconds */
};

/* link_init: rate in bytes/s (0: no bandwidth limit), latency in seconds
 * (0: none). Negative, NaN or infinite values, a rate in (0, 1) and a
 * latency above LINK_LATENCY_MAX -> ERR_USAGE. Counters start at 0. */
int link_init(struct link *l, double rate, double latency_s);

/* link_active: nonzero when either rate or latency is set. */
int link_active(const struct link *l);

/* link_piece: the largest piece a sender or receiver should move between
 * two reservations (bounds how far a piece can run ahead of the rate);
 * SIZE_MAX when the rate is unlimited. */
size_t link_piece(const struct link *l);

/* link_frame_first: how many of a frame's payload bytes a paced sender
 * puts in the first piece, with the frame's hdr-byte header: as many as
 * fill the piece, or all of them when at most LINK_PIECE_SLACK would be
 * left over. A 4 KiB chunk and its 40-byte header at a 4 KiB piece then
 * go as one piece, not as a piece and a 40-byte runt that costs a wait
 * and a wake-up of its own at both ends (rd at 4 KiB, K = 4 on 2 cores:
 * 1.49x its model with the runt, 1.15-1.19x without). The reader stays
 * on the sender's grid: it reads the header, the rest of the piece, then
 * the frame's last bytes, which the frame's end caps, all one kernel
 * buffer (link_ingress_join joins up to a piece plus the slack). payload
 * when the rate is unlimited. */
size_t link_frame_first(const struct link *l, size_t hdr, size_t payload);
/* link_first_at: the same for a link of that rate, bytes/s (0: payload;
 * the simulated transport's twin, xport_sim.c, EAGER). */
size_t link_first_at(double rate, size_t hdr, size_t payload);

/* link_set_share: this flow's share of its host's egress, in bytes/s
 * (FLOW SHARES; 0 removes it). ERR_USAGE for a negative, NaN or infinite
 * rate or one in (0, LINK_RATE_MIN), which changes nothing. */
int link_set_share(struct link *l, double rate);

/* link_egress_reserve: book n bytes on the outgoing wire at time `now`
 * (and on the flow's share, when it has one: FLOW SHARES); returns the
 * absolute time at which they may be written to the socket. */
double link_egress_reserve(struct link *l, size_t n, double now);

/* link_ingress_reserve: account n bytes just read, whose last byte arrived
 * at time t; returns the absolute time at which they count as received:
 * the reader holds them, and reads nothing more, until then (MODEL). */
double link_ingress_reserve(struct link *l, size_t n, double t);

/* link_ingress_join: link_ingress_reserve for a reader that knows the
 * kernel's receive timestamp of the bytes it read (`stamp`, as the kernel
 * gave it; NAN when there is none), and whether the read was cut short by
 * the reader (`cut`: it got all it asked for, so the kernel may hold more
 * of the same buffer; link_ingress_next). TCP stamps a kernel buffer once,
 * with the time of the newest bytes put in it, and a reader taking at most
 * a piece at a time reads one buffer in parts: a frame's header, then its
 * payload; or a backlog that piled up while the reader was busy sending.
 * Booked one after the other, each part would start where the last one
 * ended, and bytes that arrived together would be held as though they
 * were still on the wire: the sender's pacing paid twice. So bytes read
 * with the same stamp as the last reservation, nothing else reserved in
 * between, and at most a piece (link_piece) in all, are booked together
 * with it as one reservation of both parts at the first part's t (from the
 * vclock it started from). The piece bounds the credit to what a reader
 * behind an unpaced sender already gets (its first piece early): a
 * backlog of many pieces under one stamp is still paced piece by piece,
 * so a reader must not let one build up (common/coll/xport_tcp.c reads
 * while it sends). Any other read is link_ingress_reserve(l, n, t).
 * Returns the same as that. */
double link_ingress_join(struct link *l, size_t n, double t, double stamp, int cut);

/* link_ingress_next: the most a paced reader's next read should take: a
 * piece, or, after a read cut short inside a piece (a frame's header),
 * the rest of that piece. A psring sender's pieces start at its frame's
 * first byte (the header travels with the payload's first bytes,
 * common/coll/xport_tcp.c), so a reader that keeps to this grid reads one
 * kernel buffer at a time and every read carries its own buffer's stamp.
 * A read that ran on into the next buffer would carry that buffer's later
 * stamp for all its bytes, and booked at that time after the header the
 * older bytes would pay their wire time twice: a 4 KiB frame at 32
 * Mbit/s (header and payload in one piece, then a 40-byte tail) cost
 * a + 2 n b whenever the reader came to the payload after the tail was in
 * (issue 13: the ring and rd ran 2x their model on 4 KiB messages).
 * SIZE_MAX when the rate is unlimited. */
size_t link_ingress_next(const struct link *l);

/* link_send_reserve: link_egress_reserve for a sender that sleeps until
 * each deadline (see BLOCKING SENDERS). cont: nonzero when this piece
 * follows the previous one within the same send. The sender then waits
 * for the deadline and calls link_send_woke() before it writes. */
double link_send_reserve(struct link *l, size_t n, double now, int cont);

/* link_send_woke: the blocking sender's wait for its deadline ended at
 * `now` (the time it spent held is kept off its timeline). */
void link_send_woke(struct link *l, double now);

/* link_send_restart: the blocking sender's next send is a new
 * transmission (a ring step forwards what the step before brought in),
 * not the continuation of the last send, however soon it follows: it
 * pays the latency once more, and the time the link held the sender is
 * forgotten. Where it starts (VIRTUAL TIMELINE, OWN CORES): cpu_s >= 0
 * says the sender only computed (cpu_s seconds of its CPU), waited for a
 * CPU or waited for the link since it read the last bytes in: it starts
 * at link_in_ready() + cpu_s; otherwise (cpu_s < 0 or NAN: it waited for
 * something else) at now - queued_s, its wait for a CPU since it last
 * blocked taken off; never later than now, nor before the last bytes were
 * in or the last link_enter, nor more than a piece's wire time and the
 * latency before now. The next link_send_reserve books from there (behind
 * the wire's backlog: the rate still holds). Returns the wire start that booking
 * will have on a private link: the frame's stamp. Call it before that
 * send's first piece. */
double link_send_restart(struct link *l, double now, double queued_s, double cpu_s);

/* link_in_ready: when the last bytes read were in: on their sender's
 * schedule when their frame was stamped (link_ingress_frame), else when
 * they arrived or the link released them, whichever was later; NAN before
 * any. */
double link_in_ready(const struct link *l);

/* link_enter: a collective call (a timed one: its clock starts here)
 * entered at now; no restarted send starts before it on the timeline, so
 * a call never takes less than its sends' own wire time and latency after
 * its start, whatever the timeline carried over from the call before. */
void link_enter(struct link *l, double now);

/* link_enter_vt: link_enter for a timed call that follows what this
 * thread last read with only cpu_s of its CPU in between (cpu_s >= 0:
 * net_forward_cpu_s; the calls of a benchmark's loop, back to back): the
 * call starts on this host's own timeline, link_in_ready() + cpu_s, not
 * at now, which is later by the wait for a CPU another host held (OWN
 * CORES). A rank woken late for a call's first send would otherwise stamp
 * it with real time, and its partner, woken on time, would wait for it on
 * the timeline: each call paid the spread of the ranks' wake-ups (rd at
 * 4 KiB, K = 4 and 8, 32 Mbit/s, 1 ms: 0.1-0.9 ms a call, 1.05-1.06x its
 * model; docs/rd.md, "Against the formula"). Where the thread did anything else, read
 * nothing since the last link_enter, or lags by more than
 * LINK_STAMP_SPAN: now, as link_enter. Returns the start: the caller
 * times the call from it. Credits nothing itself: the first send's
 * reservation credits what it takes back (link_send_reserve). */
double link_enter_vt(struct link *l, double now, double cpu_s);

/* link_vt_late: a timed call (link_enter) returns at now, its sender
 * having used cpu_s of CPU since it read the call's last bytes in (and
 * waited for nothing but a CPU or the link: net_forward_cpu_s): how much
 * later than on its own timeline it ends (link_in_ready() + cpu_s; OWN
 * CORES AND THE VIRTUAL TIMELINE): the time it waited for a CPU another
 * host held, which its call's time leaves out (common/coll/bench.c,
 * train.c). 0 when unknown, when the call read nothing, or unpaced.
 * Counted in credited_s. */
double link_vt_late(struct link *l, double now, double cpu_s);

/* link_ingress_frame: the frame whose hdr header bytes were just read was
 * stamped by its sender with its wire start (VIRTUAL TIMELINE): its bytes
 * arrive, on the sender's schedule, at start + bytes/rate + latency (the
 * sender's rate and latency are this link's: one job, one setting). A
 * stamp later than now (the header is in) or older than LINK_STAMP_SPAN
 * (another machine's clock; a forgery) is ignored. */
void link_ingress_frame(struct link *l, double start, size_t hdr, double now);

/* link_send_continue: the blocking sender's next send carries the rest of
 * the frame its last send began (common/coll/xport_tcp.c: the header and
 * first piece go in one call, the payload in the calls after it), so it
 * is the same transmission whatever held the sender in between (it read
 * a peer's header; it added a piece): the next link_send_reserve books it
 * from where the wire went free on the sender's timeline, not from its
 * `now`, and the latency is not paid again. Without it the guess of
 * BLOCKING SENDERS decides, and a sender held past latency/2 by its peer
 * (ring ranks a little out of lockstep) restarts and pays the latency a
 * second time in that step; such a ring locks into that pattern, every
 * step (a K = 4 ring at 20 ms read 1.5x its model in some runs and 1.04x
 * in others). One send only: the flag is spent by it. */
void link_send_continue(struct link *l);

/* link_host_attach: share this link's two clocks with every process that
 * attaches the same file (HOST LINKS). The file is created (mode 0600) if
 * missing; the first process to attach records its rate and latency in
 * it, and a later one with other values is refused (the host has one
 * NIC). Call after link_init, before the first reservation. Returns 0, or
 * ERR_USAGE / a negative errno with the reason in err (ERR_LEN bytes).
 * The mapping is the link's until link_host_detach. */
int link_host_attach(struct link *l, const char *path, char *err);

/* link_setup: link_init, then link_host_attach when host is not NULL:
 * what a program does with --link-bw, --link-latency and --link-host.
 * Returns 0, or ERR_USAGE / a negative errno with the reason in err. */
int link_setup(struct link *l, double rate, double latency_s, const char *host, char *err);

/* link_host_bytes: the host's NIC bytes so far, all its processes
 * together (HOST LINKS); ERR_USAGE on a private link. */
int link_host_bytes(const struct link *l, uint64_t *in, uint64_t *out);

/* link_util_mark: flush the link's idle up to `now` (UTILIZATION) and
 * return its idle total in seconds since the link began (a host link:
 * the host's, every process's reservations together). The idle over a
 * window is the difference of two marks. NaN at rate 0 (not tracked).
 * Safe from any thread. */
double link_util_mark(struct link *l, double now);

/* link_util_mark_egress: the same for the link's egress alone (its
 * sends, transmitting or in flight). */
double link_util_mark_egress(struct link *l, double now);

/* link_host_detach: unmap the host's clocks; the link goes on privately
 * from where the host's clocks stood. Safe on a private link. */
void link_host_detach(struct link *l);

#endif /* LINK_H */
