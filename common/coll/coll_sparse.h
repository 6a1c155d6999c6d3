/* coll_sparse.h -- the ring's all-gather of top-k frames (--compress
 * topk:F on the ring; base/compress.h, NOT-LINEAR COMPRESSORS).
 *
 * Top-k frames carry each rank's own indices, so they cannot be summed
 * hop by hop the way the ring's reduce-scatter sums a chunk: the sum of
 * two top-k vectors is not a top-k vector of the same size. What fits is
 * an all-gather: each rank encodes its frame (with its error feedback),
 * and in K - 1 steps every frame travels the ring to every rank
 *
 *     step s: rank q sends frame (q - s) mod K to q + 1 and receives
 *             frame (q - s - 1) mod K from q - 1
 *
 * so each link carries (K - 1) frames per step: (K - 1)(4 + k(4 + es))
 * bytes with k = ceil(F n), against the ring all-reduce's 2 (K - 1)/K n es.
 * The traffic grows with K, the lesson: top-k pays on the ring only while
 * K F (4 + es) < 2 es, roughly (F = 1%, f32: K < 25).
 *
 * THE ORDER. Then every rank zeroes buf and adds the K decoded frames in
 * rank order 0, 1, ..., K - 1 (its own frame decoded like the others), so
 * every rank ends bit-identical. Each received frame is validated by its
 * decoder before anything is added (a hostile frame: ERR_PROTO_FIELD and
 * the sender named; a non-finite value or sum: ERR_NONFINITE).
 *
 * THE EXACT TAIL. The last `exact` elements of buf are not in the frame:
 * they travel raw after it, in the dtype, and are summed in the same rank
 * order (vec_add_finite): the training step's trailer (example counts,
 * loss) rides with the frames instead of an all-reduce of its own
 * (coll_cmp.h says why). The frame encodes the first n - exact.
 *
 * BUFFERS. frames: the caller's K x (compress_frame_bytes(setting, n -
 * exact) + exact x dtype_size) bytes; state: compress_state_bytes(setting, n), the error feedback,
 * zeroed before the first call and kept between calls (the caller's).
 * Nothing is allocated per call. Errors as ring.h's.
 */
#ifndef COLL_SPARSE_H
#define COLL_SPARSE_H

#include <stddef.h>

#include "base/compress.h"
#include "ring.h"

int ring_allgather_frames(struct ring *r, void *buf, size_t n, size_t exact, int dtype,
                          int setting, unsigned char *frames, void *state, char *err);

#endif /* COLL_SPARSE_H */
