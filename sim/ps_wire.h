/* ps_wire.h -- a simulated byte stream for the parameter server's real
 * protocol (common/wire/proto.h): one direction of one worker-server
 * connection is a SimGrid mailbox on which the sender's writes go as
 * messages, one after the other, in order (a TCP connection's one byte
 * stream), each simulated at its real size in bytes, frame headers
 * included. The server side (sim/ps_server.c) fills the protocol's
 * transport table (struct server_io) with it, so the server actor runs
 * common/ps/server*.c; the worker side (sim/ps_client.c) sends the PS
 * client's frames over it. Code: ps_wire.c.
 *
 * A message between two actors on one host (a worker and its colocated
 * shard) is simulated at size 0: it never crosses the host's link (the
 * generated platforms give each host a free loopback), as before.
 *
 * CLOSING. A message with eof set ends the stream: the sender shut its
 * side down, or is gone (killed or failed, xport_sim.h FAULTS); b then
 * holds its claim, NUL-terminated ("" when killed or simply closed).
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
    size_t len;                 /* bytes in b (eof: the claim's, with its NUL) */
    int eof;
    int tag;                    /* the server's: its enum server_write (-1: none);
                                   a worker's: the payload bytes (the elements) */
    struct wmsg *next;          /* the sender's queue */
    unsigned char b[];
};

/* The sending side of one direction: at most one put in flight. */
struct wire_out {
    sg_mailbox_t mb;
    int local;                  /* the peer is on this host: size 0 */
    sg_comm_t c;                /* the put in flight, or NULL */
    int fly_tag;                /* its message's tag */
    int fly_eof;
    struct wmsg *head, *tail;   /* queued behind it */
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

/* wire_send: the nb buffers (len each) as one message, tagged, onto o:
 * posted now when o is idle, else queued. eof: the stream's end (p[0]:
 * the claim). -ENOMEM, or 0. */
int wire_send(struct wire_out *o, const void *const *p, const size_t *len, unsigned nb,
              int tag, int eof);

/* wire_put_done: o's put completed: the next queued message goes. OUT:
 * *tag, *eof of the completed one. */
void wire_put_done(struct wire_out *o, int *tag, int *eof);

/* wire_busy: o has a put in flight (or queued). */
static inline int wire_busy(const struct wire_out *o)
{
    return o->c != NULL;
}

/* wire_in_post: a get on i, if none is posted. */
void wire_in_post(struct wire_in *i);

/* wire_in_take: i's get completed: its message joins the ones in. */
void wire_in_take(struct wire_in *i);

/* wire_in_pop: the message being read is done with (freed). */
void wire_in_pop(struct wire_in *i);

/* wire_poison: this actor is gone: an eof message with claim to every
 * mailbox of mbs (n of them), detached (nobody waits for it). */
void wire_poison(const sg_mailbox_t *mbs, int n, const char *claim);

void wire_out_free(struct wire_out *o);
void wire_in_free(struct wire_in *i);

#endif /* SIM_PS_WIRE_H */
