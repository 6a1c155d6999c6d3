/* hring.h -- the hierarchical (2D) ring all-reduce (ring_worker --algo
 * hring --ranks-per-host G): a ring reduce-scatter inside each host, a ring
 * all-reduce across the hosts of the matching chunks, a ring all-gather
 * inside, over a transport (xport.h) opened with hring_plan. The algorithm
 * is taught in hring.c's opening comment.
 *
 * GROUPS. K ranks, G per host, H = K / G hosts; rank r is on host r / G
 * with local index r % G (the ranks of a host are consecutive: how
 * mpirun's --map-by slot, torchrun, srun's block distribution and
 * psring_sim's racks deal them out). G must divide K (hring_check): there
 * is no rule for a partial host; a remainder is refused, exit 64.
 *
 * BUFFERS. hring_allreduce works in place in the caller's buffer of n
 * elements of dtype: in, rank r's vector; out, the element-wise SUM over
 * the K ranks, bit-identical on every rank. Besides the buffer it uses one
 * staging piece (hring_init's piece_bytes), allocated once by hring_init
 * and freed by hring_destroy: nothing is allocated per call.
 *
 * K = 1 (and n = 0): the call returns at once and the transport may be
 * NULL. G = 1 is the plain ring across the hosts, G = K the plain ring
 * inside one host (with the partners' FLOOD news instead of the ring's
 * RELAY).
 *
 * ERRORS. 0, or the transport's negative err.h code with its one line in
 * err (the rank lost); ERR_USAGE for a dtype that is not one; ERR_NONFINITE
 * when a sum or a copied value is NaN or Inf ("element I is X after round
 * R from rank P (host-local reduce-scatter)": each piece is checked as it
 * comes in, the check fused into the add, vec_add_finite).
 */
#ifndef HRING_H
#define HRING_H

#include <stddef.h>
#include <stdint.h>

#include "xport.h"

#define HRING_PIECE_DEFAULT (1u << 20)     /* bytes added between two receives */
#define HRING_PARTNERS_MAX  4              /* left and right, inside and across */
#define HRING_NAME_LEN      16             /* "hring:G", the records' algo column */

struct hring {
    struct xport_algo a;      /* the transport (xport.h), this rank, the staging piece */
    int group;                /* G, ranks per host */
    char name[HRING_NAME_LEN];    /* "hring:G" */
};

/* hring_check: 0 when G ranks per host fit K ranks (1 <= G <= K, G divides
 * K); else ERR_USAGE with one line in err naming both. */
int hring_check(int world, int group, char *err);

/* hring_init: the hierarchical ring among `world` ranks, `group` per host,
 * seen from `rank`, moving bytes through x (which must outlive it, opened
 * with hring_plan for the same group). piece_bytes: the staging piece, at
 * least 8 bytes (0: HRING_PIECE_DEFAULT). ERR_USAGE (hring_check, a bad
 * rank or piece) or -ENOMEM. */
int hring_init(struct hring *h, struct xport *x, int rank, int world, int group,
               size_t piece_bytes);
void hring_destroy(struct hring *h);

/* hring_partners: the distinct ranks `rank` exchanges with: its right and
 * left neighbours inside its host, then across (the same local index on
 * the next and the previous host), into out[HRING_PARTNERS_MAX]; returns
 * how many (0 when world is 1). */
int hring_partners(int rank, int world, int group, int *out);

/* hring_plan: the peer table (xport.h): a connection per partner, the
 * higher rank of a pair dialling; fault news flooded to every partner. */
void hring_plan(int rank, int world, int group, struct xport_plan *pl);

/* hring_steps: the exchanges one all-reduce takes: 2 (G-1) inside plus
 * 2 (K/G - 1) across. */
int hring_steps(int world, int group);

int hring_allreduce(struct hring *h, void *buf, size_t n, int dtype, char *err);
/* hring_allreduce_raw: hring_allreduce without the finite check, for
 * coll_gather's doubles, which may be NaN on purpose (ring.h). */
int hring_allreduce_raw(struct hring *h, void *buf, size_t n, int dtype, char *err);

#endif /* HRING_H */
