/* xport.h -- how bytes move between ring neighbours: the interface ring.c
 * calls, and every transport implements.
 *
 * One ring step sends one chunk to the right neighbour while it receives
 * one from the left. ring.c decides which chunks, where the received bytes
 * go and when to add them up; a transport decides how the bytes travel:
 * framing and validation (TCP: CHUNK frames, proto.h), pacing through the
 * emulated link, and what happens on a fault (TCP: the ABORT relay,
 * xport_tcp.h). A GPU-staged transport is another file behind these three
 * calls; ring.c does not change.
 *
 *   begin(send_chunk, sbuf, sbytes, recv_chunk, rbytes)
 *       start a step. The whole outgoing chunk is ready (sbuf, sbytes) and
 *       must stay untouched until end() returns; the incoming chunk's index
 *       and size are what the left neighbour must send.
 *   recv(dst, len)
 *       the next len bytes of the incoming chunk into dst, while the
 *       outgoing chunk moves on too (full duplex). The lens of one step add
 *       up to rbytes.
 *   end()
 *       the rest of the outgoing chunk; the step is complete.
 *
 * Calls are made in that order by one thread. On failure each returns a
 * negative err.h code with one line in err naming the peer; the transport
 * is then failed, and every later call returns the same code and line.
 */
#ifndef XPORT_H
#define XPORT_H

#include <stddef.h>
#include <stdint.h>

struct xport;

struct xport_ops {
    int (*begin)(struct xport *x, uint32_t send_chunk, const void *sbuf, size_t sbytes,
                 uint32_t recv_chunk, size_t rbytes, char *err);
    int (*recv)(struct xport *x, void *dst, size_t len, char *err);
    int (*end)(struct xport *x, char *err);
};

/* A transport's state starts with this member (the C way to inherit). */
struct xport {
    const struct xport_ops *ops;
};

#endif /* XPORT_H */
