/* xchg.h -- one exchange with a partner, the step of the pairwise
 * algorithms that move parts of the vector (Rabenseifner's halving and
 * doubling, Swing's; rabenseifner.c, swing.c): send a run of elements,
 * receive a run into the vector, adding it in (in pieces of the staging
 * size, each sum checked: vec_add_ordered, the lower rank's value first so
 * both partners get the same bits) or copying it over (received whole,
 * then checked: ring.c, PIECES), or taking nothing (an empty frame).
 * The frames are tagged by the round. ERR_NONFINITE names the element, the
 * round and the partner. Built on it, what both algorithms do alike: the
 * fold (xchg_fold) and the halving and doubling among the cube's ranks
 * (xchg_allreduce, xchg_halve_double), each algorithm giving its own
 * peers. */
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

/* XCHG_STEPS_MAX: log2 of the largest cube (P = 2^l < 2^31), the length
 * of a peer list. */
#define XCHG_STEPS_MAX 31

/* A pairwise algorithm's peer in its cube: cube rank c's partner at step
 * s of a P-rank cube (rabenseifner.c: c XOR P >> (s + 1); swing_peer). */
typedef int (*xchg_peer_fn)(int c, int s, int p);

/* xchg_cube_peers: the ranks cube rank c exchanges with at steps 0 ..
 * l-1 of the P = 2^l cube, peer's cube ranks mapped back
 * (xchg_rank_of), into out[l]. */
void xchg_cube_peers(int c, int p, int l, int extra, xchg_peer_fn peer, int *out);

/* xchg_partners: every rank a rank of `world` exchanges with, with the
 * fold and the cube's `peer` (the algorithms' *_partners): an odd rank of
 * a pair, its even one only; an even one, the odd one, then its cube
 * peers; the others, their cube peers (xchg_cube_peers). Into out[1 +
 * log2 world]; returns how many (0 when world < 2). */
int xchg_partners(int rank, int world, xchg_peer_fn peer, int *out);

/* THE FOLD (MPICH's, for K not a power of two; rabenseifner.c, swing.c):
 * with P = 2^floor(log2 K) and extra = K - P, the first 2 extra ranks pair
 * up, each odd one hands its vector to the even one before the cube and
 * gets the result after. xchg_cube_of: a rank's number in the cube (-1: an
 * odd rank that folds away); xchg_rank_of: back. */
int xchg_cube_of(int rank, int extra);
int xchg_rank_of(int cube, int extra);

/* The cube a pairwise all-reduce runs between the fold's two halves
 * (xchg_allreduce hands it to the algorithm's body): the vector (n dtype
 * elements at v; check: THE CHECK, as struct xchg's), the P = 2^l cube
 * ranks, this rank's cube number c, extra = K - P, and each cube step's
 * patience, wait (2 with a fold, where a partner may sit a step out:
 * rabenseifner.c, PATIENCE; else 1). */
struct xchg_cube {
    unsigned char *v;
    size_t n;
    int dtype, check, p, l, c, extra, wait;
};

/* xchg_allreduce: a pairwise all-reduce of buf (n dtype elements) over
 * a, its cube body(ctx, cube) taking rounds 1 .. steps * l (steps: its
 * exchanges per level, 1 or 2). ERR_USAGE for a dtype of no size;
 * nothing to do when K = 1 or n = 0; else THE FOLD around the body: an
 * odd rank hands its vector in (round 0) and copies the result out
 * (round steps * l + 1, patience 2 l + 1: one --timeout per step sat out,
 * plus one: xport_tcp.h, FAULTS); an even rank of a pair adds the odd
 * one's in, runs body, sends the result out; the others only run body.
 * 0, or the first failing step's code. */
int xchg_allreduce(struct xport_algo *a, void *buf, size_t n, int dtype, int check, int steps,
                   int (*body)(void *ctx, const struct xchg_cube *q, char *err), void *ctx,
                   char *err);

/* xchg_halve_double: a body's cube q as a reduce-scatter by recursive
 * halving, then an all-gather by recursive doubling, over the vector cut
 * into P blocks (xchg_at), this rank at block position pos (Rabenseifner:
 * its cube number, the peers at distance P/2, ..., 1; swing-bw: swing.c,
 * BLOCKS), its peer at step s peer's (xchg_cube_peers). Halving step s =
 * 0 .. l-1 (d = P >> (s + 1)): of the run [blo, bhi) that holds pos, keep
 * the half holding it and add the peer's into it, send the peer the other
 * half. Doubling steps s = l-1 .. 0: send the run, copy the peer's run of
 * d blocks beside it. Rounds 1 .. 2 l. 0, or the first failing step's
 * code. */
int xchg_halve_double(struct xport_algo *a, const struct xchg_cube *q, int pos,
                      xchg_peer_fn peer, char *err);

#endif /* XCHG_H */
