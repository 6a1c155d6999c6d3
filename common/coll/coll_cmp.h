/* coll_cmp.h -- the ring and rd all-reduces with a compressed wire
 * (--compress fp16|bf16; base/compress.h), for the linear compressors.
 *
 * THE ORDER (what "the same rounding order" means; tests/test_compress.c
 * simulates it in one process and compares bit for bit). Write e() for
 * encode, d() for decode, + for the add in the job's dtype.
 *   ring  chunk c starts at rank c+1: w = e(v[c+1]); each next rank q
 *         (c+2, ..., c) takes a = d(w) + v[q] and, but the last, sends
 *         w = e(a). The last rank, c, holds the chunk's sum a; the final
 *         value is d(e(a)), and the all-gather carries e(a): every rank
 *         decodes the same bits.
 *   rd    every rank starts from w = e(v); in each exchange (the fold-in,
 *         then the doubling steps; rd.c) both partners form
 *         w = e(d(w_mine) + d(w_theirs)) (IEEE addition commutes, so both
 *         get the same bits); the fold-out copies w. The result is d(w).
 * Every rank ends bit-identical; the values differ from the uncompressed
 * all-reduce by the roundings, by design.
 *
 * BYTES. Every frame carries wire bytes only: compress_wire_size per
 * element (2 for fp16 and bf16), so the payload is half an f32 run's and a
 * quarter of an f64 run's; frame headers are the transport's, unchanged.
 *
 * THE CHECK. Each received piece is decoded and added with the finite
 * check fused in (compressor add_finite); every decoded copy (the
 * all-gather, rd's fold-out) and each rank's own final values are checked
 * too, so a finite sum that overflows the 16-bit format (fp16 above 65504)
 * fails the step as ERR_NONFINITE instead of travelling as Inf.
 *
 * THE EXACT TAIL. The last `exact` elements of buf travel raw, in the
 * job's dtype, in the same frames as the encoded ones (summed with
 * vec_add_finite, not rounded): the training step's trailer (example
 * counts and loss, which must stay exact) rides with the gradient instead
 * of paying an all-reduce of its own, whose 2(K-1) rounds of latency cost
 * more at 1 ms a hop than fp16 saved on the mlp (docs/design.md,
 * Compression). exact 0: every element encoded.
 *
 * BUFFERS. In place in buf (n elements of dtype), as ring.h and rd.h; wire
 * is the caller's scratch of (n - exact) * compress_wire_size + exact *
 * dtype_size bytes, untouched between calls; the ring's or rd's staging piece receives the pieces.
 * Nothing is allocated per call. Errors as ring.h and rd.h.
 */
#ifndef COLL_CMP_H
#define COLL_CMP_H

#include <stddef.h>

#include "base/compress.h"
#include "rd.h"
#include "ring.h"

int ring_allreduce_cmp(struct ring *r, void *buf, size_t n, size_t exact, int dtype,
                       const struct compressor *c, void *wire, char *err);
int rd_allreduce_cmp(struct rd *r, void *buf, size_t n, size_t exact, int dtype,
                     const struct compressor *c, void *wire, char *err);

#endif /* COLL_CMP_H */
