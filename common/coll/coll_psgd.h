/* coll_psgd.h -- PowerSGD over the coll's all-reduce (--compress
 * powersgd:R[:noef]; the math: base/powersgd.h): a gradient range goes
 * as two exact all-reduces of its factors, P with the raw elements (the
 * biases, the trailer), then Q, on the coll's algorithm (the ring or rd;
 * coll_init refuses the others for --compress). Every rank ends with the
 * same bits; the factors' sums are checked finite like any sum (the
 * coll's vec_add_finite), and the decoded range once more.
 *
 * THE SHAPES come from the workload (workload_matrix): the mlp's weight
 * matrices as they are (W1 64 x 32 and W2 64 x 64 pay at R <= 21 and 31;
 * W3 1 x 64 and the biases travel raw); a layer without a shape (linreg's
 * d weights, the synthetic workload's layers) is reshaped near-square
 * (psgd_near_square: linreg's 12 weights are 3 x 4, which pays at R = 1
 * only: (3 + 4) R < 12; at R >= 2 they travel raw, the uncompressed run's
 * bits).
 *
 * BYTES per step: psgd_wire_elems elements of the dtype in two
 * all-reduces, instead of n + 3 in one (the mlp at R = 2: 452 + 192 for
 * 6340, at R = 4: 708 + 384; docs/powersgd.md).
 *
 * OWNERSHIP: coll_psgd_init allocates the state (powersgd.h);
 * psgd_destroy frees it. */
#ifndef COLL_PSGD_H
#define COLL_PSGD_H

#include <stddef.h>

#include "base/powersgd.h"
#include "coll.h"
#include "train/workload.h"

/* coll_psgd_init: the plan for w's vector and an `extra` tail (the
 * trailer), at kind's R and error feedback (compress.h, A PARAMETERIZED
 * KIND), Q seeded from seed. 0, or a negative code and a line. */
int coll_psgd_init(struct psgd *ps, const struct workload *w, size_t extra, int kind,
                   int dtype, uint64_t seed, char *err);

/* coll_psgd_allreduce: the range [first, first + count) of g (host
 * memory, the coll's dtype) becomes PowerSGD's combined sum (powersgd.h,
 * ONE STEP); a range without a compressed matrix is one plain
 * coll_allreduce_exact. Errors as coll_allreduce's. */
int coll_psgd_allreduce(struct coll *c, struct psgd *ps, void *g, size_t first, size_t count,
                        char *err);

#endif /* COLL_PSGD_H */
