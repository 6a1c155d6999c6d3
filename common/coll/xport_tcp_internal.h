/* xport_tcp_internal.h -- what the TCP transport's two files share and no
 * one else needs: its state (struct tcp, one per transport, and struct
 * conn, one per connection) and the abort protocol's entry points, which
 * xport_tcp_abort.c implements and xport_tcp.c's step calls enter.
 * (xport_tcp.h is the interface; this is the internal header.)
 */
#ifndef XPORT_TCP_INTERNAL_H
#define XPORT_TCP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "wire/proto.h"
#include "xport_conn.h"
#include "xport_tcp.h"

#define HEAD_MAX (64u << 10)   /* payload bytes sent with the header (xport_tcp.c,
                                  EMULATED LATENCY) */
#define STAGE_MAX (16u << 10)  /* payload bytes read with the header, unpaced
                                  (xport_tcp.c, ONE READ) */

struct conn {
    int rank, fd, dial;
    const char *role;                   /* "right neighbour", "partner" */
    char name[XPORT_NAME_LEN];          /* "rank 2 (127.0.0.1:40123)" */
    uint64_t seq;                       /* step number of its next CHUNK, both ways */
    int ok;                             /* a frame can still be sent on it */
    int sync;                           /* its incoming stream's position is known */
};

struct tcp {
    struct xport base;                  /* first: the xport.h interface */
    struct xport_conn_self self;        /* who we are in HELLO and ABORT frames */
    struct link *link;
    int news;                           /* enum xport_news */
    const char *tag, *tag_of;
    int nconn;
    struct conn conn[XPORT_PEERS_MAX];
    struct conn *down, *up;             /* RELAY: the dialled and the accepted connection */

    /* The step in progress (in_step), for the abort protocol. */
    struct conn *out, *in;
    int in_step;
    double idle;                        /* this step's idle timeout */
    uint32_t recv_tag;
    uint8_t head[PROTO_HEADER_SIZE + HEAD_MAX];   /* header + first payload bytes out */
    uint8_t hdr_in[PROTO_HEADER_SIZE + STAGE_MAX];  /* header + payload read with it */
    size_t hout_done, hin_done;         /* header bytes sent / received */
    size_t staged, stage_at;            /* ONE READ: payload bytes in hdr_in not yet
                                           given to recv, and where they start */
    struct net_frame rframe;            /* the incoming frame's deadline (net.h) */
    const uint8_t *sbuf;
    size_t sbytes, sdone, rbytes, rdone;

    /* Once failed: every later call returns this. */
    int failed_rc;
    char failed_msg[ERR_LEN];
};

/* tcp_fail_claim: run the abort protocol for claim cl (xport_tcp.h,
 * FAULTS), record the final line; every later call returns it. rc. */
int tcp_fail_claim(struct tcp *t, int rc, struct xport_claim *cl, char *err);

/* tcp_fail_io: a net_* call of the step failed with rc; recv_pending:
 * our receive was not complete. Work out the claim (FAULTS, 1) and run
 * the abort protocol with it. rc. */
int tcp_fail_io(struct tcp *t, int rc, int recv_pending, char *err);

/* tcp_fail_frame: the peer sent something that is not the expected
 * CHUNK (the reason: fmt); after a bad header its stream cannot be
 * followed any more. rc. */
__attribute__((format(printf, 4, 5)))
int tcp_fail_frame(struct tcp *t, int rc, char *err, const char *fmt, ...);

/* tcp_abort: xport.h's abort: this rank failed (why); its peers are
 * told (ABORT), and every later call fails. */
int tcp_abort(struct xport *xb, const char *why);

#endif /* XPORT_TCP_INTERNAL_H */
