/* xport_conn.h -- the TCP transport's connections (xport_tcp.c), one
 * between two ranks at a time: opening the peer table's connections (dial,
 * accept, the HELLO handshake), the accept loop that turns strangers away,
 * ABORT frames, and the reader that looks for ABORTs while a failed rank
 * listens for news.
 *
 * No step logic is here: which connection a step uses, what a CHUNK must
 * look like (xport_tcp.c) and whom to tell what (xport_tcp_abort.c) are
 * the transport's business.
 *
 * IDENTITY. struct xport_conn_self is this rank as its peers must see it:
 * its rank and world, the job (proto_hello: n, dtype, workload, seed,
 * batch), --timeout and the job's secret. Every connection first runs the
 * AUTH handshake (common/wire/auth.h: the dialler with auth_dial, the listener
 * through an auth_gate, so strangers are turned away under an absolute
 * deadline without holding the port); then every HELLO sent carries the
 * job, and every HELLO received is compared with it (rdv_hello_diff).
 *
 * CLAIMS. When a transport fails it makes a claim: which rank was lost and
 * why, and how sure it is. A closed or reset connection and a bad frame
 * are certain; a timeout is only a suspicion (a rank that waits on a
 * stopped rank looks stopped to whoever waits on it); an ABORT from a peer
 * is relayed news. xport_claim_adopt says when a peer's ABORT replaces our
 * claim; xport_tcp.h (FAULTS) tells the protocol around it.
 *
 * OWNERSHIP. Nothing here allocates. Functions that take a file descriptor
 * never close it, except xport_conn_refuse (which closes the refused one)
 * and xport_conn_accept (which closes what it refuses, and hands the
 * accepted one to the caller).
 */
#ifndef XPORT_CONN_H
#define XPORT_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "wire/auth.h"
#include "wire/net.h"
#include "wire/proto.h"
#include "xport.h"

#define XPORT_NAME_LEN    (NET_ADDR_LEN + 24)   /* "rank 65535 (host:port)" */
#define XPORT_HELLO_FRAME (PROTO_HEADER_SIZE + PROTO_HELLO_SIZE)

struct xport_conn_self {
    int rank, world;
    struct proto_hello hello;       /* this job, as every peer must match it */
    double timeout;                 /* --timeout, seconds, > 0 */
};
/* The job's secret is the process's (auth_process_key(), set by main):
 * struct xport_conn_self is built in xport_tcp.c, which has no key. */

/* xport_conn_name: "rank R (host:port)" ("rank R ([v6]:port)"), the
 * address rank R's listener has, into out[XPORT_NAME_LEN]. */
void xport_conn_name(char *out, int rank, const struct proto_peer *p);

/* xport_conn_hello_frame: this rank's HELLO frame, out[XPORT_HELLO_FRAME]. */
void xport_conn_hello_frame(const struct xport_conn_self *self, uint8_t *out);

/* xport_conn_read_frame: one small frame (HELLO or ERROR) from fd within
 * the idle timeout. OUT: *h, and the payload, NUL-terminated, in
 * pay[PROTO_TEXT_MAX + 1]. A header that does not decode: "PEER: not a
 * psring ring peer (why)". */
int xport_conn_read_frame(int fd, double idle, const char *peer, struct proto_header *h,
                          uint8_t *pay, char *err);

/* xport_conn_hello_check: is (h, pay) the HELLO of rank `want` (any rank
 * when want < 0) of our job? 0, or an err.h code and a reason in
 * why[ERR_LEN] ("says it is rank 3, expected rank 2", "is another job:
 * n 5 vs 6 (--params)", "answered ERROR: ..."). */
int xport_conn_hello_check(const struct xport_conn_self *self, const struct proto_header *h,
                           const uint8_t *pay, int want, char *why);

/* xport_conn_refuse: send ERROR(why) to a connection that is not welcome
 * (bounded by 1 s), then close it. */
void xport_conn_refuse(int fd, const struct xport_conn_self *self, const char *why);

/* The authenticated connections whose HELLO xport_conn_accept is reading,
 * all at once, so that a member that trickles its HELLO or says nothing
 * holds up no other (FRAME DEADLINES, net.h: each is due within --timeout
 * of its AUTH, plus its size at 1 MB/s). The caller's: zeroed before the
 * first call, kept across the calls, closed with xport_conn_hellos_close. */
#define XPORT_HELLOS_MAX 8          /* a new one beyond these refuses the oldest */
struct xport_hello_in {
    int fd;
    char peer[NET_ADDR_LEN];
    uint8_t buf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX + 1];
    size_t got, need;               /* need: the header, then the whole frame */
    double t0;                      /* when it passed AUTH */
};
struct xport_hellos {
    int n;
    struct xport_hello_in in[XPORT_HELLOS_MAX];
};
void xport_conn_hellos_close(struct xport_hellos *hs);

/* xport_conn_accept: take authenticated connections from gate g (on the
 * data listener), reading their HELLOs at once (hs), until one says HELLO
 * as a rank r of our job with wanted[r] nonzero (wanted: world entries),
 * or the deadline (clock_now() time) passes. The others get ERROR and are
 * closed, each with a log line "refused a connection from ADDR on the
 * data port: why". OUT: *fd (the caller's now; its HELLO is read but not
 * answered), *who = r. ERR_TIMEOUT at the deadline with err untouched
 * (the caller says who never came); another accept error with its line. */
int xport_conn_accept(const struct xport_conn_self *self, struct auth_gate *g,
                      struct xport_hellos *hs, const unsigned char *wanted, double deadline,
                      int *fd, int *who, char *err);

/* xport_conn_send_by: send len bytes on fd before `deadline`, unpaced and
 * uncounted (the abort protocol's bytes are not measured), in pieces so
 * that the deadline is checked. 0 or the net error. */
int xport_conn_send_by(int fd, const void *buf, size_t len, double deadline, const char *peer);

/* xport_conn_send_abort: one ABORT(rank = self, step, aux = lost, text)
 * frame on fd, by the deadline. */
int xport_conn_send_abort(int fd, const struct xport_conn_self *self, uint64_t step, int lost,
                          const char *text, double deadline, const char *peer);

/* xport_conn_probe: what a connection looks like now, consuming nothing. */
enum { XPORT_PROBE_IDLE, XPORT_PROBE_DATA, XPORT_PROBE_EOF, XPORT_PROBE_ERR };
int xport_conn_probe(int fd);

/* A reader of one connection while a failed rank listens: it skips CHUNK
 * payloads and hands over ABORT (and ERROR) texts. Start it zeroed with fd
 * and from (the rank that connection is to) set, at a frame boundary, or
 * with hdr/hgot holding the first hgot bytes of a header, or with skip =
 * the payload bytes of a CHUNK still to come. */
struct xport_reader {
    int fd, from, dead;
    uint8_t hdr[PROTO_HEADER_SIZE];
    size_t hgot;
    uint64_t skip;                      /* payload bytes to throw away */
    struct proto_header h;              /* the last complete header */
    int in_text;
    char text[PROTO_TEXT_MAX + 1];
    size_t tgot;
};

/* xport_reader_feed: read what is there, without waiting. Returns 1 when
 * an ABORT or ERROR text is complete in r->text (header in r->h), 0
 * otherwise; sets r->dead at EOF, on an error, or on a frame that makes no
 * sense (not from r->from, not CHUNK/ABORT/ERROR). */
int xport_reader_feed(struct xport_reader *r, int world);

enum xport_claim_kind {
    XPORT_CLAIM_NONE,
    XPORT_CLAIM_SUSPECT,    /* a timeout: the peer we waited on, maybe wrongly */
    XPORT_CLAIM_CERTAIN,    /* a closed or reset connection, a bad frame */
    XPORT_CLAIM_RELAYED,    /* a peer's ABORT */
};

struct xport_claim {
    enum xport_claim_kind kind;
    int lost;                           /* the rank lost */
    int from;                           /* RELAYED: the peer that said so; else this rank */
    char text[PROTO_TEXT_MAX + 1];      /* what our ABORT carries */
};

/* xport_claim_adopt: the complete ABORT in r replaces claim c when we
 * blamed that very peer (it was alive to tell us), when ours was only a
 * suspicion, or when ours came from that peer too (its later word wins);
 * not when it is the same news again. Returns 1 when c changed. */
int xport_claim_adopt(struct xport_claim *c, int world, const struct xport_reader *r);

/* xport_conn_open: the connections of plan pl (xport.h), opened and
 * checked (xport_tcp.h, SET-UP), all within --timeout: dial and send HELLO,
 * accept the others on lfd in any order and answer them, read the dialled
 * peers' answers. OUT: fds[i], the connection of pl->peer[i], the caller's.
 * On failure none is left open and err names the peer ("right neighbour
 * rank 2 (host:port): why", "partner ..."). */
int xport_conn_open(const struct xport_conn_self *self, int lfd, const struct proto_peer *peers,
                    const struct xport_plan *pl, int *fds, char *err);

#endif /* XPORT_CONN_H */
