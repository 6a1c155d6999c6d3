/* psgd_server.h -- PowerSGD through the parameter server, the server's
 * half (--compress powersgd:R[:noef]; the math: base/powersgd.h, ONE
 * STEP). A server owns the range [first, first + count) of the vector; the
 * workers' factors for that range reach it in two rounds per step:
 *
 *   round 0  each worker pushes P_i (rows x R per matrix) and the range's
 *            raw elements (biases: everything not a compressed matrix);
 *            the server sums the K frames IN RANK ORDER and returns the
 *            sum to every worker; and it orthonormalizes P itself (the
 *            same double arithmetic as every worker: the same P^ bits)
 *   round 1  each worker pushes Q_i = M_i^T P^; the server sums them in
 *            rank order and returns the sum; every worker decodes
 *            (P^ Q^T, its error feedback, its warm start), and so does
 *            the server: psgd_server_decode gives the range's combined
 *            gradient SUM, the matrices' P^ Q^T and the raw elements'
 *            round-0 sums, which the server's optimizer applies (divided
 *            by B, the way an uncompressed push's sum is)
 *
 * The matrices come from the workload as coll_psgd_init takes them (the
 * ring's and rd's table: workload_matrix, near-square for a layer without
 * a shape), and a matrix is compressed only where it lies whole inside
 * the range and pays (powersgd.h): so a worker's psgd over the whole
 * vector, run on this range, writes frames of exactly this server's
 * lengths, and a matrix cut by a shard boundary travels raw.
 *
 * DETERMINISM. The sums are taken in rank order (rank 0's frame, + rank
 * 1's, + ...), in the dtype, whatever order the frames arrived in: a
 * rerun gives the same bits, and every worker receives the same sums, so
 * every worker's decode, and the server's, is bit-identical. The ring's
 * and rd's all-reduces sum in their own order, so a PS run agrees with a
 * ring run of the same seed within the rounding of K-term sums, not bit
 * for bit (a sum in rank order, as test_powersgd.c's reference takes it,
 * is the PS's bits exactly).
 *
 * REFUSED, WHOLE. psgd_server_put checks a frame before it keeps any of
 * it: a rank >= K, another step or round, a second frame of the same
 * worker, a size other than the round's, or a value that is not finite is
 * refused with one line naming the worker (ERR_PROTO_RANK, ERR_PROTO_FIELD,
 * ERR_PROTO_SIZE, ERR_NONFINITE), and nothing changes: the other workers'
 * frames still complete the round. A sum that overflows (finite frames
 * whose sum is not) is the step's failure: psgd_server_sum returns
 * ERR_NONFINITE naming the element, like the store's NaN.
 *
 * Simplification said out loud: the server's orthonormalization is
 * psgd_encode_q on an M of zeros (it computes a Q of zeros it never
 * sends): one code path for P^, the workers', at the cost of one wasted
 * product per step (rows x cols x R multiply-adds per matrix).
 *
 * OWNERSHIP. psgd_server_init allocates the state (the psgd, K frame
 * slots of the larger round, the decode's vector); psgd_server_destroy
 * frees it. Nothing allocates after init. The sums psgd_server_sum points
 * at are the server's, valid until the next put of the next round.
 */
#ifndef PSGD_SERVER_H
#define PSGD_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "base/powersgd.h"
#include "train/workload.h"

struct psgd_server {
    struct psgd st;             /* the whole vector's plan, ef 0, m zeros */
    size_t first, count;        /* the range this server owns */
    size_t len[2];              /* elements of round 0 and round 1 for the range */
    size_t es;                  /* bytes per element (the dtype's) */
    int dtype;
    uint32_t world;
    uint64_t step;              /* the step being collected */
    int round;                  /* the round being collected: 0 or 1 */
    uint32_t in;                /* frames of this round kept */
    unsigned char *slots;       /* world x len[max] x es: each worker's frame */
    unsigned char *have;        /* world: 1 when the worker's frame of the round is in */
    void *g;                    /* st.n elements: the decode's vector */
};

/* psgd_server_plan: a psgd for w's whole vector with the layers' table
 * coll_psgd_init takes (the same shapes on the ring, rd, the PS's workers
 * and its servers), R and error feedback ef, Q from seed (every worker
 * the same: the job's --seed). 0, or a negative code and one line in err.
 * psgd_destroy frees it. */
int psgd_server_plan(struct psgd *ps, const struct workload *w, int setting, int dtype, int ef,
                     uint64_t seed, char *err);

/* psgd_server_init: the plan for range [first, first + count) of w's
 * vector (count >= 1, inside it), setting a powersgd kind (compress.h),
 * dtype, K workers. 0, or ERR_USAGE (not PowerSGD, a bad range) or
 * -ENOMEM with one line in err. */
int psgd_server_init(struct psgd_server *s, const struct workload *w, size_t first, size_t count,
                     int setting, int dtype, uint32_t world, char *err);
void psgd_server_destroy(struct psgd_server *s);

/* psgd_server_reset: collect round 0 of `step` afresh (a frame kept is
 * forgotten): the store's resume. */
void psgd_server_reset(struct psgd_server *s, uint64_t step);

/* psgd_server_frame_bytes: the bytes of one worker's frame of round r. */
size_t psgd_server_frame_bytes(const struct psgd_server *s, int r);

/* psgd_server_put: worker rank's frame of round r of step `step`, bytes
 * long, checked whole and kept (REFUSED, WHOLE). 0 or a negative code and
 * one line in err. */
int psgd_server_put(struct psgd_server *s, uint32_t rank, uint64_t step, int r,
                    const void *frame, size_t bytes, char *err);

/* psgd_server_ready: 1 when all K frames of the current round are in. */
int psgd_server_ready(const struct psgd_server *s);

/* psgd_server_sum: the round's K frames summed in rank order, into *sum
 * (psgd_server_frame_bytes bytes: what goes back to every worker). After
 * round 0 the server orthonormalizes P and collects round 1; after round
 * 1 it waits for psgd_server_decode. 0; ERR_PROTO_FIELD before all K are
 * in; ERR_NONFINITE when a sum overflows (the element named). */
int psgd_server_sum(struct psgd_server *s, const void **sum, char *err);

/* psgd_server_decode: after round 1's sum: the range's combined gradient
 * sum into grad (count elements of the dtype, the range's first at
 * grad[0]); the server moves to round 0 of step + 1. 0, ERR_PROTO_FIELD
 * out of turn, ERR_NONFINITE (an element of P^ Q^T not finite). */
int psgd_server_decode(struct psgd_server *s, void *grad, char *err);

#endif /* PSGD_SERVER_H */
