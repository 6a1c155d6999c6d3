/* net.h -- TCP for psring: listen, connect with retry, send/recv in full.
 *
 * Sockets returned here are non-blocking with TCP_NODELAY and receive
 * timestamps (SO_TIMESTAMPNS: a paced reader books bytes at the time they
 * arrived, not the time it got around to reading them) set; the
 * send/recv helpers wait with poll() under an idle-progress timeout: a wait
 * that sees no byte move for idle_s seconds fails with ERR_TIMEOUT (this is
 * docs/design.md's --timeout). They pace through the process's link (link.h)
 * when one is given and count bytes in it. On failure they return a
 * negative code (err.h) and write one line naming the peer into err
 * (ERR_LEN bytes, may be NULL).
 *
 * Addresses: "HOST:PORT", "[IPv6]:PORT"; port 0 asks the kernel for a free
 * port. Listeners bind where they are told (callers default to 127.0.0.1;
 * a NULL or empty host means 127.0.0.1 here too).
 *
 * Timeouts: idle_s <= 0 (and net_accept's timeout_s <= 0) wait without
 * limit; psring's callers always pass --timeout. Time the link holds a
 * transfer back (pacing, latency) is not idle time. Messages look like
 *   connect 127.0.0.1:5000: Connection refused (12 tries in 10.0 s)
 *   recv from rank 3 (127.0.0.1:40112): timed out after 3.0 s without progress (...)
 *   recv from rank 3 (127.0.0.1:40112): connection closed after 10 of 40 bytes
 * with the peer text the caller passed. Sends use MSG_NOSIGNAL: a closed
 * peer is -EPIPE or -ECONNRESET, never SIGPIPE.
 */
#ifndef NET_H
#define NET_H

#include <stddef.h>

#include "link.h"

#define NET_HOST_LEN 256
#define NET_ADDR_LEN 300    /* "host:port" text of a peer */

/* net_parse_hostport: split "HOST:PORT" / "[V6]:PORT"; port 0..65535.
 * ERR_USAGE (with a reason in err) on anything else. */
int net_parse_hostport(const char *s, char *host, size_t hostlen, int *port, char *err);

/* net_host_check: does host resolve (for listening or connecting)? 0 when
 * it does, when it is empty (127.0.0.1, as net_listen takes it), or when
 * the resolver failed only for now (EAI_AGAIN: net_connect retries);
 * else ERR_USAGE with the resolver's reason in err. For the flag checks,
 * before anything is said or bound. */
int net_host_check(const char *host, char *err);

/* net_listen: bind host:port (port 0: any free port) and listen.
 * OUT: *fd, *bound_port (the port actually bound). */
int net_listen(const char *host, int port, int *fd, int *bound_port, char *err);

/* net_accept: wait up to timeout_s for one connection.
 * OUT: *fd, peer ("ip:port", NET_ADDR_LEN bytes). */
int net_accept(int lfd, double timeout_s, int *fd, char *peer, char *err);

/* net_connect: connect to host:port, retrying refused/unreachable with
 * backoff (10 ms doubling to 500 ms) until timeout_s has passed (<= 0: one
 * try); a host that does not resolve fails at once (ERR_RESOLVE; only a
 * temporary resolver failure is retried). IPv4 and IPv6. OUT: *fd. */
int net_connect(const char *host, int port, double timeout_s, int *fd, char *err);

/* net_send_all / net_recv_all: move exactly len bytes or fail. peer names
 * the other end in messages. ERR_EOF when the peer closed mid-way. */
int net_send_all(int fd, const void *buf, size_t len, struct link *l,
                 double idle_s, const char *peer, char *err);
int net_recv_all(int fd, void *buf, size_t len, struct link *l,
                 double idle_s, const char *peer, char *err);

/* FRAME DEADLINES (docs/security.md, "A member that trickles"). The idle
 * timeout alone lets a peer that holds the secret keep a receiver waiting
 * forever with one byte every idle_s - 1 seconds. A receive given a
 * struct net_frame also holds the frame to a deadline: once its first
 * byte is in, all of its len bytes must be in within
 *
 *     net_frame_budget(l, len, idle_s) = idle_s + latency + len / rate
 *
 * of receiving time, where rate is the link's ingress rate but never more
 * than NET_FLOOR_RATE (1 MB/s: unpaced, or paced faster, a frame still
 * gets its time at 1 MB/s). The frame's clock runs only inside receive
 * calls (a ring rank reducing between two calls is not its peer's
 * delay) and stops while the emulated link holds the bytes back (that
 * wait is the link's). The caller keeps the struct across the calls that
 * read one frame (its header, then its payload in parts): net_frame_begin
 * at the frame's start with what it knows of its size (the header's),
 * and len raised once the header says how long the payload is (and
 * flows set where the sender shares its link among that many frames at
 * once, round-robin: a parameter server's K weights streams). Before
 * the first byte only the idle timeout applies, so a frame is done within
 * 2 * idle_s + its time at the rate. A peer silent for idle_s fails as
 * before ("without progress"), even when the frame's deadline has passed
 * too. Failure: ERR_TIMEOUT, f->expired set, with
 *   recv from rank 3 (...): frame not complete 4.0 s after its first byte (got 7 of
 *   104 bytes; allowed --timeout 3.0 s plus its time at the link's rate)
 */
#define NET_FLOOR_RATE 1e6          /* bytes/s: the slowest a frame may arrive */

struct net_frame {
    size_t len;                     /* the frame's bytes, as far as known */
    size_t got;                     /* received so far */
    double spent;                   /* seconds its clock has run */
    int expired;                    /* set when a call failed on its deadline */
    double flows;                   /* frames the sender's link carries at once with
                                       this one (a server's K weights streams): its
                                       size counts this many times; 0 or 1: alone */
    size_t whole;                   /* the frame's size where the caller knows it
                                       before its header says (0: not known): only
                                       where the timeline samples its clocks (at
                                       the last bytes, net_vt.c), never a deadline */
};

void net_frame_begin(struct net_frame *f, size_t len);
double net_frame_budget(const struct link *l, size_t len, double idle_s);

/* net_feed: read into buf[*got, need) what fd has now, without waiting
 * (for a reader that serves several sockets at once: the coordinator's
 * REGISTERs, a data port's HELLOs). 1 when *got reaches need; 0 when the
 * socket has nothing more yet; ERR_EOF or -errno when the connection
 * closed or failed, why saying so and after how many bytes. */
int net_feed(int fd, void *buf, size_t *got, size_t need, char *why);

/* net_send_now: send of buf[0, len) what fd's socket takes at once, never
 * waiting; *sent: how much it took, counted on l. On an emulated link (l
 * active) nothing: a paced send goes piece by piece through its
 * reservations. For a sender ahead of what it must have sent by now
 * (xport_tcp.c, SEND AHEAD). 0, or -errno when the socket failed (EAGAIN:
 * 0, nothing sent). */
int net_send_now(int fd, const void *buf, size_t len, struct link *l, size_t *sent);

/* net_recv_frame: net_recv_all, also under f's deadline (NULL: none). */
int net_recv_frame(int fd, void *buf, size_t len, struct link *l, double idle_s,
                   struct net_frame *f, const char *peer, char *err);

/* net_sendrecv: send sbuf on sfd while receiving rbuf on rfd, both in full,
 * at the same time (full duplex, one thread; sfd may equal rfd). The ring's
 * step primitive. Idle timeout applies to the pair: either direction moving
 * counts as progress. */
int net_sendrecv(int sfd, const void *sbuf, size_t slen, const char *speer,
                 int rfd, void *rbuf, size_t rlen, const char *rpeer,
                 struct link *l, double idle_s, char *err);
/* net_sendrecv_frame: net_sendrecv, its receive under f's deadline. */
int net_sendrecv_frame(int sfd, const void *sbuf, size_t slen, const char *speer,
                       int rfd, void *rbuf, size_t rlen, const char *rpeer,
                       struct link *l, double idle_s, struct net_frame *f, char *err);
/* net_sendrecv_some: net_sendrecv_frame whose receive ends once rmin bytes
 * are in, having taken whatever else of rlen the socket already held (one
 * read for a header and the payload behind it). How many came: the link's
 * bytes_in growth. */
int net_sendrecv_some(int sfd, const void *sbuf, size_t slen, const char *speer,
                      int rfd, void *rbuf, size_t rmin, size_t rlen, const char *rpeer,
                      struct link *l, double idle_s, struct net_frame *f, char *err);

/* net_queued_s: how long the calling thread was runnable but waiting for
 * a CPU since it last blocked in a paced transfer (the kernel's run delay;
 * 0 when unknown): what link_send_restart takes off a send's timeline
 * when it does not forward (link.h, OWN CORES). The mark is read at a
 * wait only when every direction of its transfer is on its last piece;
 * a transfer whose last wait was not is marked at its end instead (its
 * last wake-up's delay then not counted): one read a transfer, not one
 * a wait (net_internal.h, net_vt_block). */
double net_queued_s(void);

/* net_forward_cpu_s: the CPU the calling thread used since it last
 * finished a paced receive, when since then it only computed, waited for
 * a CPU or waited in a transfer of its own (then its next send forwards
 * what it read: link_send_restart, VIRTUAL TIMELINE); NAN otherwise (it
 * waited for something else, or has read nothing yet). now: clock_now(). */
double net_forward_cpu_s(double now);

/* net_vt_late: link_vt_late for the calling thread at now (clock_now()):
 * how much later than on this host's own timeline its timed call ends. */
double net_vt_late(struct link *l, double now);

/* net_vt_enter: link_enter_vt for the calling thread's timed call at now
 * (clock_now()); returns the call's start on this host's timeline. */
double net_vt_enter(struct link *l, double now);

/* net_vt_restart: link_send_restart for the calling thread's next send
 * at now (clock_now()), with net_queued_s and net_forward_cpu_s; the run
 * delay is read only where link_send_restart uses it (not for a forward).
 * Returns the frame's stamp, as link_send_restart does. */
double net_vt_restart(struct link *l, double now);

/* net_busy_poll: for this process, how long a small transfer (64 KiB or
 * less left each way) retries its sockets, yielding the CPU between tries,
 * before it sleeps in ppoll; 0 (the default) sleeps at once. Worth it when
 * every process has a CPU of its own (a wake-up costs 30-40 us on a VM),
 * and unpaced still with four processes a CPU; harmful with more (the ring
 * transport's rule: xport_tcp_busy_s). A call with 0 also stops the
 * short spin before a send's last link deadline (net_xfer.c, SPIN_S),
 * which is on until then. Not thread-safe; set it once. */
void net_busy_poll(double seconds);

/* net_stats: where this process's transfers spent their time (the
 * breakdown of docs/link.md, "Where the time goes"). Counted always (a
 * few relaxed atomic adds per system call); all threads together.
 *   xfers        transfer calls (net_send_all, net_recv_all, net_sendrecv)
 *   t_xfer       seconds inside them
 *   sends, recvs system calls that moved bytes; send_again / recv_again
 *                the ones that found the socket full / empty (EAGAIN)
 *   waits_*      sleeps in ppoll: link (only a link deadline to wait for),
 *                peer (only sockets), both; t_wait_*: their seconds
 *   late_s       summed lateness of the link releases: how long after a
 *                piece's deadline the thread got to it (send: writing it;
 *                receive: handing the bytes on)
 *   spins        busy-poll retries (net_busy_poll)
 * With PSR_NET_STATS=1 in its environment a process prints them to stderr
 * at exit, one line. */
struct net_stats {
    uint64_t xfers, sends, recvs, send_again, recv_again, spins;
    uint64_t waits_link, waits_peer, waits_both;
    double t_xfer, t_wait_link, t_wait_peer, t_wait_both, late_s;
};
void net_stats_get(struct net_stats *out);

/* net_port_file_write: write "PORT\n" to path through outfile.h (atomic;
 * refuses a path that is not a regular file). */
int net_port_file_write(const char *path, int port, char *err);

#endif /* NET_H */
