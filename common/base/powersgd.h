/* powersgd.h -- PowerSGD (Vogels, Karimireddy and Jaggi, NeurIPS 2019):
 * each gradient matrix M (rows x cols) travels as two thin factors of
 * rank R, P (rows x R) and Q (cols x R), with error feedback; the
 * compressor behind --compress powersgd:R[:noef] (compress.h).
 *
 * ONE STEP, for every matrix of the job's range, on every rank i:
 *   1. M_i = G_i + e_i          (G: this rank's gradient sum, e: the
 *                                residual kept from the last step; with
 *                                noef e stays 0)
 *   2. P_i = M_i Q              (Q: last step's summed Q, the warm start;
 *                                at step 0 standard normal from a fixed
 *                                seed, the same on every rank)
 *   3. P = sum_i P_i            ROUND 0: an exact all-reduce (any sum: the
 *                                factors are linear in M)
 *   4. P^ = orth(P)             modified Gram-Schmidt on P's R columns, in
 *                                double; a column whose norm after the
 *                                projections is 0, not finite, or below
 *                                1e-9 of its norm before them (dependent:
 *                                M's rank below R) becomes 0
 *   5. Q_i = M_i^T P^
 *   6. Q = sum_i Q_i            ROUND 1: the second all-reduce
 *   7. M^ = P^ Q^T              (= P^ P^T sum_i M_i: the sum's projection
 *                                on P^'s span), the combined gradient
 *   8. e_i = M_i - M^ / K       (sum_i e_i = sum_i M_i - M^: what the
 *                                step did not deliver is delivered later)
 * Every rank holds the same P and Q bits after each all-reduce and runs
 * the same double arithmetic on them, so every rank's M^ is bit-identical;
 * e_i is each rank's own.
 *
 * WHAT IS COMPRESSED. The caller declares the matrices (struct psgd_mat:
 * where a weight matrix lies in the vector and its shape); everything
 * else in a range (biases, the step's trailer) travels raw in round 0,
 * its bits unchanged. A matrix is compressed only where it pays,
 * (rows + cols) R < rows cols; otherwise it travels raw too (the mlp's
 * 1 x 64 output layer, any matrix at R >= min(rows, cols) / 2).
 * Round 0 carries sum(rows R) + raw elements, round 1 sum(cols R).
 *
 * NUMBERS. The job's dtype (f32, f64) on the wire and in the gradient;
 * M, e, P, Q and the products in double. Simplification said out loud:
 * the products are plain triple loops (the mlp's matrices are 64 x 64).
 *
 * OWNERSHIP. psgd_init allocates everything (the table, e, the Q state,
 * the scratch, the two round buffers, sized for the whole vector and an
 * `extra` tail such as a trailer); psgd_destroy frees it. No call
 * allocates after that. Not thread-safe: one caller at a time.
 */
#ifndef POWERSGD_H
#define POWERSGD_H

#include <stddef.h>
#include <stdint.h>

#define PSGD_MAX_RANK 16

/* A weight matrix in the vector: elements [first, first + rows * cols),
 * row-major. */
struct psgd_mat {
    size_t first, rows, cols;
};

struct psgd {
    int rank, ef, dtype;        /* R; error feedback on; enum dtype */
    size_t n;                   /* the vector's elements (matrices lie below n) */
    size_t nmat;
    struct psgd_mat *mat;       /* the compressed ones only, ascending first */
    size_t *qoff;               /* nmat: each matrix's offset into q (cols * R) */
    double *q;                  /* the warm start: last step's summed Q */
    double *e;                  /* n: the residual (ef) */
    double *m;                  /* n: M of the step in flight */
    double *pall;               /* sum(rows * R): each matrix's P^ of the step in flight */
    size_t *poff;               /* nmat: each matrix's offset into pall (rows * R) */
    void *round[2];             /* the round buffers, elements of dtype */
    size_t round_cap[2];
};

/* psgd_init: the plan for n elements with the declared matrices (mats,
 * nmat, ascending and disjoint, below n; those that do not pay are
 * dropped), rank R (1..PSGD_MAX_RANK), error feedback ef, Q's seed;
 * round buffers for any range within [0, n + extra). 0, ERR_USAGE (a bad
 * table or R), -ENOMEM. */
int psgd_init(struct psgd *ps, size_t n, size_t extra, int dtype, const struct psgd_mat *mats,
              size_t nmat, int rank, int ef, uint64_t seed);
void psgd_destroy(struct psgd *ps);

/* psgd_pays: 1 when a rows x cols matrix is compressed at rank R. */
int psgd_pays(size_t rows, size_t cols, int rank);

/* psgd_near_square: a vector of n elements seen as a matrix (linreg's
 * weights, the synthetic workload's layers): rows the largest divisor of
 * n at most sqrt(n), cols n / rows (a prime n is 1 x n: never pays). */
void psgd_near_square(size_t n, size_t *rows, size_t *cols);

/* psgd_round_len: elements of round r (0: P and the raw elements, 1: Q)
 * for the range [first, first + count) (count may reach past n: the tail
 * is raw). */
size_t psgd_round_len(const struct psgd *ps, size_t first, size_t count, int r);

/* psgd_encode_p: steps 1-2 for the range of g (elements of dtype): M kept,
 * round 0 written into ps->round[0]. */
void psgd_encode_p(struct psgd *ps, const void *g, size_t first, size_t count);
/* psgd_encode_q: steps 4-5, from ps->round[0] holding the summed round 0;
 * round 1 written into ps->round[1]. */
void psgd_encode_q(struct psgd *ps, size_t first, size_t count);
/* psgd_decode: steps 7-8 from ps->round[1] holding the summed round 1:
 * the range of g becomes M^ (matrices) and round 0's sums (the rest);
 * e updated with world K; Q kept for the next step. 0, or ERR_NONFINITE
 * with *bad the first element of g (from first) that is not finite. */
int psgd_decode(struct psgd *ps, void *g, size_t first, size_t count, int world, size_t *bad);

/* psgd_orthonormalize: step 4 on a rows x r row-major matrix, in place. */
void psgd_orthonormalize(double *p, size_t rows, int r);

/* psgd_wire_elems: round 0 + round 1 elements for the whole [0, n + extra):
 * what one all-reduce pair carries per step. */
size_t psgd_wire_elems(const struct psgd *ps, size_t extra);

/* psgd_cost: the compressor's own CPU seconds per element of the vector
 * (steps 1-2, 4-5 and 7-8 at K = 1: its encode and decode, no all-reduce),
 * measured here in a loop over a near-square matrix of n elements (at
 * most 2^22) at rank R and dtype, for at least 50 ms of CPU time; 0 for a
 * matrix that does not pay (nothing to compute), a negative code when it
 * cannot allocate. For bin/model's time (model_psgd, measure/model.h). */
double psgd_cost(size_t n, int rank, int dtype);

#endif /* POWERSGD_H */
