/* vec.h -- element-wise operations on typed vectors (f32 or f64).
 *
 * The reduction every combine step performs (the server summing pushes,
 * the ring reducing chunks, a worker accumulating micro-batches) is vec_add;
 * keeping it in one place keeps the summation identical everywhere. Plain
 * adds, left to right, no fused multiply-add: the order of a sum is decided
 * by the caller, never by the compiler.
 */
#ifndef VEC_H
#define VEC_H

#include <stddef.h>

/* vec_zero: n elements of dtype set to +0. */
void vec_zero(void *v, size_t n, int dtype);
/* vec_add: acc[i] += x[i] for i < n. */
void vec_add(void *acc, const void *x, size_t n, int dtype);
/* vec_get: element i as a double. */
double vec_get(const void *v, size_t i, int dtype);
/* vec_set: element i from a double (rounded to dtype). */
void vec_set(void *v, size_t i, int dtype, double x);
/* vec_add_finite: vec_add with the finite check fused into it (the ring's,
 * rd's and chain's reduce: a received value is checked as it is added,
 * while it is in cache). All n adds are made; then 0 if every sum acc[i]
 * is finite, else ERR_NONFINITE and the first i whose sum is not in *bad
 * (if bad is not NULL). A NaN or Inf in x, or a finite sum that overflows,
 * is caught. acc and x must not overlap. Same bits as vec_add. */
int vec_add_finite(void *acc, const void *x, size_t n, int dtype, size_t *bad);
/* vec_add_ordered: acc = (the lower rank's part) + (the higher rank's
 * part), for two partners that must end with the same bits: acc holds
 * this rank's part, x the partner's, and x is scratch (overwritten when
 * this rank is the higher). With check, the sums are checked as
 * vec_add_finite does (ERR_NONFINITE, the first bad i in *bad); else 0.
 * rd's and Rabenseifner's pairwise reduce. */
int vec_add_ordered(void *acc, void *x, size_t n, int dtype, int mine_is_lower, int check,
                    size_t *bad);
/* vec_check_finite: 0 if every element is finite, else ERR_NONFINITE and
 * the first bad index in *bad (if bad is not NULL). Vectorized like
 * vec_add_finite (vec.c, THE CHECK). */
int vec_check_finite(const void *v, size_t n, int dtype, size_t *bad);

#endif /* VEC_H */
