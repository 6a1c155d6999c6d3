/* ps_wire.h -- a simulated byte stream for the parameter server's real
 * protocol (common/wire/proto.h): one direction of one worker-server
 * connection is a SimGrid mailbox on which the sender's writes go as
 * messages, one after the other, in order (a TCP connection's one byte
 * stream), each simulated at its real size in bytes, frame headers
 * included. The server side (sim/ps_server.c) fills the protocol's
 * transport table (struct server_io) with it, so the server actor runs
 * common/ps/server*.c; the worker side (sim/ps_client.c) fills the PS
 * client's (struct ps_client_io, common/ps/client.h) with it. Code: ps_wire.c.
 *
 * A message between two actors on one host (a worker and its colocated
 * shard) is simulated at size 0: it never crosses the host's link (the
 * generated platforms give each host a free loopback), as before.
 *
 * SIZES (--payload sizes): the headers travel, the elements do not
 * (a message's bytes past `real` are counted, never materialised: the
 * reader gets no bytes for them), and a message is simulated at its
 * payload's size, the model's world with no headers.
 *
 * CLOSING. A message with eof set ends the stream: the sender shut its
 * side down, or is gone (killed or failed, xport_sim.h FAULTS); b then
 * holds its claim, NUL-terminated ("" when killed or simply closed). It
 * goes detached (wire_poison): its reader may be gone.
 *
 * COALESCED (the worker's side, sim/ps_client.c): writes the client makes
 * at one simulated instant and marks as one (PS_IO_MORE, client.h: a
 * frame's header and its elements; the parts of one push) go as one
 * message, as their bytes would travel back to back in one TCP stream.
 * When SIZES spans fall between materialised ones (several frames of
 * --payload sizes in one message), b holds the materialised spans one
 * after the other and the message lists the spans (nseg). A reader takes
 * a message's bytes span by span (wire_span).
 *
 * OWNERSHIP. A message is malloc'd by the sender (wire_send copies the
 * bytes) and freed by the receiver once read (wire_in_pop). The queue of
 * a wire_out is freed by wire_out_free.
 */
#ifndef SIM_PS_WIRE_H
#define SIM_PS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <simgrid/comm.h>
#include <simgrid/mailbox.h>

struct wmsg {
    size_t len;                 /* bytes in the stream (eof: the claim's, with its NUL) */
    size_t real;                /* ... of which the first `real` are in b; the rest are
                                   SIZES only: counted, never materialised */
    size_t payload;             /* the elements' bytes (the model's; no headers) */
    double t0;                  /* when the sender wrote it (simulated time) */
    int eof;
    int tag;                    /* the sender's: a server's enum server_write, or -1 */
    unsigned nseg;              /* 0: as above; else the stream is nseg spans, the
                                   first materialised, then alternately SIZES and
                                   materialised (several frames in one message:
                                   COALESCED), their lengths after b (wire_span) */
    struct wmsg *next;          /* the sender's queue, then the receiver's */
    unsigned char b[];
};

/* ROUND-ROBIN EGRESS (a server on a host of its own, with a link rate;
 * sim/ps_server.c): bin/ps_server's egress sends its frames in pieces of
 * `piece` bytes round-robin across the workers, each piece at the link's
 * full rate (common/ps/egress.h; model.h, model_ps_sched). Simulated: a
 * message longer than a piece goes as its BULK, all but its last piece,
 * put at once (the bulks written at one instant share the wire and end
 * together, as the full rounds do), and its TAIL, the last piece, which
 * waits its turn: the tails go one after the other, in the order written,
 * once the bulks have left (bulk_end) and the tail before has (free). A
 * message of one piece is all tail. So the worker served first has its
 * weights (K-1) tails before the last, as on the link. The tail is the
 * channel's put in flight (its delivery is the write's completion); the
 * reader's mailbox is EAGER (wire_in_eager), so a tail moves once put,
 * not once the bulk before it is read. */
struct wire_host {
    double rate;                /* bytes/s > 0 */
    double piece;               /* bytes */
    double bulk_end, free;      /* when the bulks, and the tails so far, have left */
    struct wire_out *first, *last;      /* the tails waiting, in the order written */
    /* the ALARM (wire_host_start): a daemon actor on the server's host
     * that gets a time, sleeps till then and puts a tick back.
     * (sg_comm_wait_any_for would do, but SimGrid 3.32's C call drops its
     * comms' references when it times out.) */
    sg_mailbox_t arm_mb, tick_mb;
    double arm_due;             /* the time sent (the alarm reads it) */
    sg_comm_t tick_c;           /* the tick's get, while armed */
    void *tick_got;
};

/* The sending side of one direction: at most one put in flight. */
struct wire_out {
    sg_mailbox_t mb;
    int local;                  /* the peer is on this host: size 0 */
    int sizes;                  /* SIZES: a message is simulated at its payload's size */
    sg_comm_t c;                /* the put in flight, or NULL */
    int fly_tag;                /* its message's tag */
    struct wmsg *head, *tail;   /* queued behind it */
    struct wire_host *host;     /* ROUND-ROBIN EGRESS, or NULL */
    struct wmsg *held;          /* ... a tail waiting its turn */
    double held_due;            /* ... when it goes (NAN: not yet placed) */
    struct wire_out *hnext;     /* ... the next waiting */
};

/* The receiving side: the get posted (a reader keeps one posted, so that
 * a message's transfer never waits for the reader), and the messages in,
 * in order: cur is being read, off bytes of it so far. */
struct wire_in {
    sg_mailbox_t mb;
    sg_comm_t c;                /* the get posted, or NULL */
    struct wmsg *got;           /* what it fills */
    struct wmsg *cur, *last;    /* the messages in, linked by next */
    size_t off;
};

/* wire_mailbox: "sS<-wW" (to_server 1: worker W's bytes to server S) or
 * "wW<-sS". */
sg_mailbox_t wire_mailbox(int to_server, int s, int w);

/* wire_send: the nb buffers (len each) as one message of `payload`
 * element bytes, tagged, onto o: posted now when o is idle, else queued.
 * A buffer p[i] NULL (the last only) is SIZES: its bytes are counted, not
 * copied. Simulated size: the message's bytes, or (o->sizes) its payload;
 * 0 to a peer on the host. -ENOMEM, or 0. */
int wire_send(struct wire_out *o, const void *const *p, const size_t *len, unsigned nb,
              size_t payload, int tag);

/* wire_span: the bytes of m from stream offset off (< m->len) that are of
 * one kind: returns how many, with *src their materialised bytes, or NULL
 * for SIZES. */
size_t wire_span(const struct wmsg *m, size_t off, const unsigned char **src);

/* A message being written (COALESCED): its materialised bytes and its
 * spans, grown by wire_pend_add, sent by wire_pend_flush. */
struct wire_pend {
    unsigned char *b;           /* the materialised bytes (owned) */
    size_t real, cap;
    size_t *seg;                /* span lengths, the first materialised (owned) */
    unsigned nseg, segcap;
    size_t len, payload;
    double t0;                  /* the first write's time */
};

/* wire_pend_add: len more bytes of the stream (buf NULL: SIZES), payload
 * of which are elements. -ENOMEM, or 0. */
int wire_pend_add(struct wire_pend *p, const void *buf, size_t len, size_t payload);

/* wire_pend_flush: what p holds as one message onto o, put at once and
 * detached (its reader keeps one get posted, so the stream's messages
 * still cross one after the other); p is empty again. -ENOMEM, or 0. */
int wire_pend_flush(struct wire_out *o, struct wire_pend *p);

void wire_pend_free(struct wire_pend *p);

/* wire_put_done: o's put completed: the next queued message goes.
 * Returns the completed one's tag. */
int wire_put_done(struct wire_out *o);

/* wire_busy: o has a put in flight (or queued), or a tail waiting. */
static inline int wire_busy(const struct wire_out *o)
{
    return o->c != NULL || o->held != NULL;
}

/* wire_host_start: ROUND-ROBIN EGRESS: h's alarm, on this host, for
 * server s. */
void wire_host_start(struct wire_host *h, int s);

/* wire_host_go: places the tails not yet placed and puts those whose
 * turn has come (each its channel's put in flight); the alarm armed for
 * the next. Returns the tick to wait for with the other comms (then
 * wire_host_tick), or NULL when none waits. */
sg_comm_t wire_host_go(struct wire_host *h);

/* wire_host_tick: the alarm's tick has come. */
void wire_host_tick(struct wire_host *h);

/* wire_in_eager: the calling actor becomes the permanent receiver of
 * "wW<-sS" (ROUND-ROBIN EGRESS). */
void wire_in_eager(int s, int w);

/* wire_in_post: a get on i, if none is posted. */
void wire_in_post(struct wire_in *i);

/* wire_in_take: i's get completed: its message joins the ones in. */
void wire_in_take(struct wire_in *i);

/* wire_in_pop: the message being read is done with (freed). */
void wire_in_pop(struct wire_in *i);

/* wire_poison: this actor is gone: an eof message with claim to every
 * mailbox of mbs (n of them), detached (nobody waits for it). */
void wire_poison(const sg_mailbox_t *mbs, int n, const char *claim);

/* wire_in_close: i's get, if one is posted, is ended (a message of size
 * 0 from the actor itself takes it; whatever came before it is dropped),
 * so that no comm outlives the actor. */
void wire_in_close(struct wire_in *i);

void wire_out_free(struct wire_out *o);
void wire_in_free(struct wire_in *i);

#endif /* SIM_PS_WIRE_H */
