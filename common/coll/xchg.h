/* xchg.h -- one exchange with a partner, the step of the pairwise
 * algorithms that move parts of the vector (Rabenseifner's halving and
 * doubling, Swing's; rabenseifner.c, swing.c): send a run of elements,
 * receive a run into the vector, adding it in (in pieces of the staging
 * size, each sum checked: vec_add_ordered, the lower rank's value first so
 * both partners get the same bits) or copying it over (received whole,
 * then checked: ring.c, PIECES), or taking nothing (an empty frame).
 * The frames are tagged by the round. ERR_NONFINITE names the element, the
 * round and the partner. */
#ifndef XCHG_H
#define XCHG_H

#include <stddef.h>

#include "xport.h"

/* What a step does with the partner's bytes. */
enum xchg_take { XCHG_NONE, XCHG_COPY, XCHG_ADD };

/* One exchange: send sn elements from sbuf (0: an empty frame), take rn
 * elements into rbuf as `take` says; rbuf is element `first` of the
 * vector (for the check's message); patience as xport_step's; check:
 * every value checked finite (THE CHECK, ring.c). */
struct xchg {
    int peer, round, patience, check;
    const unsigned char *sbuf;
    size_t sn;
    unsigned char *rbuf;
    size_t rn, first;
    enum xchg_take take;
};

/* xchg_step: the exchange over a's transport, its staging piece for the
 * adds. 0, or the transport's code, or ERR_NONFINITE, with one line. */
int xchg_step(struct xport_algo *a, const struct xchg *e, int dtype, char *err);

/* xchg_at: the first element of block c of n elements cut into p blocks
 * (ring_chunk's), 0 <= c <= p (block p: the end, n). */
size_t xchg_at(size_t n, int p, int c);

#endif /* XCHG_H */
