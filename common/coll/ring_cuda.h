/* ring_cuda.h -- the ring all-reduce of a vector in GPU memory over TCP:
 * ring.c's schedule, with every chunk staged through pinned host memory
 * (device to host, socket, host to device) and the reduction as a CUDA
 * kernel (gpu_vec_add), pipelined on three CUDA streams. ring_cuda.c
 * explains the pipeline.
 *
 * The wire is the TCP transport's (xport.h, xport_tcp.h): the same CHUNK
 * frames in the same order as ring.c sends, so a rank of this ring and a
 * rank of the CPU ring could even share one ring. The sums are the CPU
 * ring's bit for bit: each chunk is summed by the same ranks in the same
 * order (ring.c, DETERMINISM), and gpu_vec_add is vec_add's twin.
 *
 * Several ranks may share one GPU (each has its own streams and buffers).
 *
 * BUFFERS. ring_cuda_init allocates everything the calls use, once, for
 * vectors of up to max_n elements of dtype: two pinned host buffers of one
 * chunk each (ceil(max_n / K) elements: one is being sent while the other
 * receives), one device staging buffer of one chunk (plus 16 bytes, so that
 * a staged piece has the same alignment modulo 16 bytes as the chunk it is
 * added into: gpu_vec_add's fast path), three streams and the events that
 * order them. ring_cuda_destroy waits for the streams and frees it all.
 * Nothing is allocated per call.
 *
 * ring_cuda_allreduce(buf, n): buf is a DEVICE pointer to n <= max_n
 * elements of the init's dtype, whose writers the caller has waited for
 * (the ring's streams do not follow the caller's). On return the SUM over
 * the K ranks is in buf and every GPU operation of the call has finished.
 * Every host wait on the GPU is bounded by the timeout (gpu.h's polled
 * waits); the socket waits are the transport's (--timeout without
 * progress).
 *
 * K = 1: nothing is allocated and the call returns at once; x may be NULL.
 *
 * ERRORS. 0; the transport's code and line (the lost peer); a GPU error
 * with its file:line (gpu.h); ERR_USAGE for n > max_n or another dtype;
 * ERR_NONFINITE when a received piece holds a NaN or Inf (checked on the
 * host, in pinned memory, before it goes to the GPU: ring.c, THE CHECK).
 * After an error the ring must only be destroyed.
 */
#ifndef RING_CUDA_H
#define RING_CUDA_H

#include <stddef.h>

#include "xport.h"

struct gpu_stream;
struct gpu_event;

struct ring_cuda {
    struct xport *x;              /* not owned; NULL when world == 1 */
    int rank, world, dtype;
    size_t max_n, piece;          /* elements: the largest vector; one staged piece */
    unsigned char *host[2];       /* pinned, one chunk each: send and receive, swapped */
    unsigned char *stage;         /* device, one chunk + 16 bytes */
    struct gpu_stream *h2d, *add, *d2h;
    struct gpu_event *in, *added; /* orders add after h2d, d2h after add */
    struct gpu_event *last[2];    /* the last GPU operation on host[i] */
    double timeout;               /* seconds, bound of every GPU wait */
};

/* ring_cuda_init: a ring of `world` ranks seen from `rank` over x, for up to
 * max_n elements of dtype, staged in pieces of piece_bytes (0: ring.h's
 * RING_PIECE_DEFAULT). The calling thread's current device is used
 * (gpu_device_select first). ERR_USAGE, -ENOMEM, or a GPU error with one
 * line in err; on failure nothing is left allocated. */
int ring_cuda_init(struct ring_cuda *r, struct xport *x, int rank, int world, size_t max_n,
                   int dtype, size_t piece_bytes, double timeout, char *err);
void ring_cuda_destroy(struct ring_cuda *r);

int ring_cuda_allreduce(struct ring_cuda *r, void *buf, size_t n, char *err);

#endif /* RING_CUDA_H */
