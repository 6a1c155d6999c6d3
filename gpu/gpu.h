/* gpu.h -- psring's GPU building blocks behind one small C interface.
 *
 * ring_worker and ps_worker are plain C, built with cc; everything that
 * needs CUDA or NCCL lives in gpu/ behind this header, which needs neither:
 * no CUDA type appears here, so nothing outside gpu/ needs an #ifdef.
 *
 * WHAT RUNS ON THE GPU. Each kernel is the CUDA twin of a common/ function
 * and gives BIT-IDENTICAL results for the same inputs (plain IEEE adds,
 * multiplies and divides, no fused multiply-add: the kernels are built with
 * nvcc -fmad=false, the C side with -ffp-contract=off, and each sum runs in
 * the CPU's order):
 *
 *   gpu_vec_add            vec_add            acc[i] += x[i]  (the reduction)
 *   gpu_workload_grad_add  workload_grad_add  synthetic and linreg gradients
 *   gpu_sgd_step           sgd_step           w -= lr * (g_sum / B)
 *
 * NCCL (gpu_nccl_*) runs the all-reduce of `--transport nccl`.
 *
 * THE BUILDS. Where nvcc was found, gpu.mk builds the CUDA code into
 * libgpu.a with the CUDA runtime linked statically, so a binary starts on a
 * machine without CUDA libraries and only fails, with a reason, when asked
 * for a device. NCCL is loaded at run time (dlopen "libnccl.so.2", or the
 * file PSRING_NCCL_LIB names), so nothing NCCL-related is needed to link
 * or to start. Without nvcc, gpu_stub.c implements this same interface and
 * every call fails with -ENODEV and "built without CUDA (nvcc not found)";
 * without nccl.h, the gpu_nccl_* calls fail the same way.
 *
 * ERRORS. Every function that can fail returns 0 or a negative code
 * (err.h's convention) and writes one line into the caller's err[ERR_LEN]
 * (err may be NULL); a failed CUDA or NCCL call names its file:line:
 *     "gpu/gpu_device.c:136: cudaMalloc(p, bytes): cudaErrorMemoryAllocation (...)"
 *   -ENODEV      no usable device, or built without CUDA/NCCL
 *   -ENOMEM      a device or pinned-host allocation failed
 *   -EIO         any other CUDA or NCCL failure
 *   -ELIBACC     libnccl.so.2 could not be loaded (err says what to set)
 *   ERR_TIMEOUT  a wait reached its deadline; the work may still be running
 *   ERR_USAGE    a bad argument (dtype, batch 0, lr not finite, more local
 *                ranks than GPUs for NCCL)
 *
 * STREAMS AND WAITS. Functions that take a stream only enqueue work and
 * return; a NULL stream is CUDA's default stream. The host never waits
 * without a deadline: gpu_stream_wait, gpu_event_wait and gpu_nccl_wait
 * poll against a timeout (0: look once). A GPU has no byte-level progress
 * to watch, so the timeout bounds one whole wait: pick it above the longest
 * operation the wait covers (the caller's --timeout, for one collective or
 * one chunk, is plenty at the sizes psring runs).
 *
 * POINTERS AND OWNERSHIP. "Device pointer" means memory from gpu_malloc
 * (or any cudaMalloc'd memory of the current device). Pinned host memory
 * from gpu_host_alloc is visible to the GPU (kernels may read it, slowly,
 * and copies from and to it run at full speed and asynchronously). Each
 * _create/_alloc is paired with a _destroy/_free that takes NULL; nothing
 * here keeps a pointer to caller memory after a call returns, except work
 * still queued on a stream, whose buffers must live until that stream is
 * waited for. Device selection is per thread, as in CUDA: call
 * gpu_device_select before anything else in each thread that uses a GPU.
 */
#ifndef GPU_H
#define GPU_H

#include <stddef.h>
#include <stdint.h>

struct workload;

#define GPU_NCCL_ID_BYTES 128   /* an ncclUniqueId, carried as plain bytes */

struct gpu_stream;      /* a CUDA stream */
struct gpu_event;       /* a CUDA event */
struct gpu_workload;    /* a workload's data on the device */
struct gpu_nccl;        /* an NCCL communicator, and its state */

/* ---------------------------------------------------------------- devices */

/* gpu_build_info: a static line saying what this build holds, e.g.
 * "CUDA 13.0 (sm_90 compute_75), NCCL by dlopen (header 2.28.9)" or
 * "built without CUDA (nvcc not found)". */
const char *gpu_build_info(void);

/* gpu_available: 0 when at least one CUDA device is usable, else -ENODEV
 * and one line saying why: "no CUDA device: cudaGetDeviceCount: ..." or
 * "built without CUDA (nvcc not found)". */
int gpu_available(char *err);

/* gpu_device_count: the number of CUDA devices on this host. OUT: *count. */
int gpu_device_count(int *count, char *err);

/* gpu_device_select: cudaSetDevice(local_rank % device_count) for the
 * calling thread. Several local ranks may share a device this way (fine for
 * kernels and the CUDA-staged TCP ring, not for NCCL: see gpu_nccl_fit).
 * OUT: *device (may be NULL). */
int gpu_device_select(int local_rank, int *device, char *err);

/* gpu_device_describe: the current device in one line, e.g.
 * "0: NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB". */
int gpu_device_describe(char *buf, size_t len, char *err);

/* ---------------------------------------------------------------- memory */

/* gpu_malloc: bytes of device memory (uninitialized); bytes 0 gives NULL.
 * Freed by gpu_free. OUT: *p. */
int gpu_malloc(void **p, size_t bytes, char *err);
void gpu_free(void *p);

/* gpu_host_alloc: bytes of pinned (page-locked) host memory, mapped into
 * every device's address space: the staging buffers of the CUDA-staged
 * ring. Freed by gpu_host_free. OUT: *p. */
int gpu_host_alloc(void **p, size_t bytes, char *err);
void gpu_host_free(void *p);

/* ---------------------------------------------------------------- streams */

/* gpu_stream_create: a stream that does not synchronize with the default
 * stream. Destroyed by gpu_stream_destroy (after its work is waited for). */
int gpu_stream_create(struct gpu_stream **s, char *err);
void gpu_stream_destroy(struct gpu_stream *s);

/* gpu_copy_async: enqueue a copy of bytes between any two of device and
 * pinned host memory (the direction follows from the pointers). */
int gpu_copy_async(void *dst, const void *src, size_t bytes, struct gpu_stream *s, char *err);

/* gpu_zero_async: enqueue setting bytes of device memory to 0 (+0.0). */
int gpu_zero_async(void *p, size_t bytes, struct gpu_stream *s, char *err);

/* gpu_stream_wait: wait until all work queued on s has finished, polling
 * against timeout_s seconds. ERR_TIMEOUT if it has not by then (the work is
 * still queued; the caller decides), -EIO if it failed. */
int gpu_stream_wait(struct gpu_stream *s, double timeout_s, char *err);

/* gpu_event_create: an event; timing != 0 makes it usable with
 * gpu_event_elapsed (timing events cost a little more to record). */
int gpu_event_create(struct gpu_event **e, int timing, char *err);
void gpu_event_destroy(struct gpu_event *e);

/* gpu_event_record: mark the current end of s's queue. */
int gpu_event_record(struct gpu_event *e, struct gpu_stream *s, char *err);

/* gpu_event_wait: wait until the work before the event's record finished,
 * polling against timeout_s. ERR_TIMEOUT / -EIO as gpu_stream_wait. */
int gpu_event_wait(struct gpu_event *e, double timeout_s, char *err);

/* gpu_stream_wait_event: make work queued on s after this call wait for e
 * (on the device; the host does not block). How one stream's reduction
 * waits for another stream's copy in a pipeline. */
int gpu_stream_wait_event(struct gpu_stream *s, struct gpu_event *e, char *err);

/* gpu_event_elapsed: seconds between two finished timing events. */
int gpu_event_elapsed(struct gpu_event *start, struct gpu_event *end, double *seconds, char *err);

/* ---------------------------------------------------------------- kernels */

/* gpu_vec_add: enqueue acc[i] += x[i] for i < n (dtype DTYPE_F32 or
 * DTYPE_F64), the twin of vec_add. acc and x are device pointers; they may
 * have any element alignment; they must not overlap unless equal. */
int gpu_vec_add(void *acc, const void *x, size_t n, int dtype, struct gpu_stream *s, char *err);

/* gpu_sgd_step: enqueue w[i] -= lr * (g_sum[i] / batch), the twin of
 * sgd_step (each element in double, rounded once to dtype). ERR_USAGE, and
 * nothing enqueued, if batch is 0, lr is not finite or dtype is bad. */
int gpu_sgd_step(void *w, const void *g_sum, size_t n, int dtype, double lr,
                 uint64_t batch, struct gpu_stream *s, char *err);

/* gpu_optim_update: enqueue optim_apply's update (optim.h: sgd, momentum
 * or adam, the formulas and their order there) of w[0..n) from
 * g_sum[0..n) / batch with the state m, v (device pointers; NULL where the
 * kind has none), for the scalars k that optim_scalars computed on the host:
 * the twin of optim_apply, bit for bit. ERR_USAGE, nothing enqueued, for
 * batch 0, a bad dtype or kind, or a missing state vector. */
struct optim_coef;
int gpu_optim_update(const struct optim_coef *k, int dtype, void *w, const void *g_sum, void *m,
                     void *v, size_t n, uint64_t batch, struct gpu_stream *s, char *err);

/* gpu_workload_create: the device side of a workload made by
 * workload_create: its sizes and seed (copied), and for linreg the dataset
 * X and y (uploaded) and a scratch of batch doubles. w may be destroyed
 * afterwards. Destroyed by gpu_workload_destroy. ERR_USAGE for a workload
 * kind the GPU does not implement. */
int gpu_workload_create(struct gpu_workload **out, const struct workload *w, char *err);
void gpu_workload_destroy(struct gpu_workload *g);

/* gpu_workload_grad_add: enqueue the twin of workload_grad_add: ADD the
 * gradient SUM over batch positions [lo, hi) of step `step`, at weights (n
 * device elements; unused by synthetic, may be NULL there), into grad (n
 * device elements). loss, if not NULL, is a DEVICE pointer to one double to
 * which the sum of per-example losses is added (linreg; synthetic adds 0).
 * Calls on one gpu_workload must not run concurrently (linreg's scratch):
 * keep them on one stream. ERR_USAGE if lo > hi or hi > batch. */
int gpu_workload_grad_add(struct gpu_workload *g, const void *weights, uint64_t step,
                          uint64_t lo, uint64_t hi, void *grad, double *loss,
                          struct gpu_stream *s, char *err);

/* gpu_spin_async: FOR TESTS: enqueue a kernel that spins until *flag (an
 * int in pinned host memory) is non-zero, or max_s seconds pass, so that a
 * test can make a stream wait time out and then release it. */
int gpu_spin_async(const volatile int *flag, double max_s, struct gpu_stream *s, char *err);

/* ---------------------------------------------------------------- NCCL */

/* gpu_nccl_fit: NCCL puts one rank on one GPU and cannot share one. 0 if
 * local_ranks ranks on this host (this one being local_rank) each get their
 * own of devices GPUs; else ERR_USAGE and a line saying so and what to use
 * instead. A pure function (no CUDA, in every build): the caller passes the
 * counts (devices from gpu_device_count; local_ranks from the rendezvous or
 * the launcher's environment). */
int gpu_nccl_fit(int local_rank, int local_ranks, int devices, char *err);

/* gpu_nccl_load: load NCCL once per process (after a success later calls
 * return at once; after a failure they try again): PSRING_NCCL_LIB (the file, or a folder holding libnccl.so.2)
 * if set, else "libnccl.so.2" through the dynamic loader's path. -ELIBACC
 * with what to set when it is not found; -ENODEV in a build without NCCL;
 * -EIO if it is older than 2.14 (no non-blocking communicators).
 * OUT: *version (NCCL_VERSION_CODE form, e.g. 22809), may be NULL. */
int gpu_nccl_load(int *version, char *err);

/* gpu_nccl_unique_id: on rank 0, a fresh ncclUniqueId into id (128 bytes,
 * opaque: carry them unchanged to the other ranks). Loads NCCL. */
int gpu_nccl_unique_id(unsigned char id[GPU_NCCL_ID_BYTES], char *err);

/* gpu_nccl_create: join the communicator of id as rank of world, on the
 * current device (gpu_device_select first). The communicator is
 * NON-BLOCKING: its set-up is polled with ncclCommGetAsyncError against
 * timeout_s, which also bounds every later gpu_nccl_wait; on failure or
 * timeout it is aborted (ncclCommAbort) and nothing is left. Destroyed by
 * gpu_nccl_destroy. OUT: *out. */
int gpu_nccl_create(struct gpu_nccl **out, const unsigned char id[GPU_NCCL_ID_BYTES],
                    int rank, int world, double timeout_s, char *err);

/* gpu_nccl_all_reduce_start: enqueue recv = SUM over ranks of send (n
 * elements of dtype, device pointers, in place when equal) on s, and return
 * once NCCL has accepted it; the result is there after gpu_nccl_wait. */
int gpu_nccl_all_reduce_start(struct gpu_nccl *c, const void *send, void *recv, size_t n,
                              int dtype, struct gpu_stream *s, char *err);

/* gpu_nccl_wait: wait until s's work (the collectives on it) has finished,
 * polling both the stream and ncclCommGetAsyncError against the
 * communicator's timeout. On an NCCL error or the timeout the communicator
 * is ABORTED (every later call fails at once) and the error returned: the
 * survivors of a lost rank never hang in a stream synchronize. */
int gpu_nccl_wait(struct gpu_nccl *c, struct gpu_stream *s, char *err);

/* gpu_nccl_all_reduce: _start then _wait. */
int gpu_nccl_all_reduce(struct gpu_nccl *c, const void *send, void *recv, size_t n,
                        int dtype, struct gpu_stream *s, char *err);

/* The standalone collectives of ring_worker --bench --coll (coll.h), each
 * enqueued on s and waited for as gpu_nccl_all_reduce (device pointers):
 *   GPU_NCCL_REDUCE_SCATTER  ncclReduceScatter: recv (count) = rank r's
 *                            slice r of the SUM of the ranks' send (K count)
 *   GPU_NCCL_ALL_GATHER      ncclAllGather: recv (K count) = every rank's
 *                            send (count), rank order
 *   GPU_NCCL_BROADCAST       ncclBroadcast: recv (count) = root's send
 *   GPU_NCCL_REDUCE          ncclReduce: root's recv (count) = the SUM
 * In place as NCCL defines it (recv == send; for the first two the slice
 * at send + rank * count, resp. recv + rank * count). root: the last two. */
enum gpu_nccl_op {
    GPU_NCCL_REDUCE_SCATTER, GPU_NCCL_ALL_GATHER, GPU_NCCL_BROADCAST, GPU_NCCL_REDUCE,
};
int gpu_nccl_collective(struct gpu_nccl *c, int op, const void *send, void *recv, size_t count,
                        int dtype, int root, struct gpu_stream *s, char *err);

/* gpu_nccl_alltoall: one grouped ncclSend/ncclRecv per rank (NCCL's
 * all-to-all): send_count[d] elements at send + send_off[d] to rank d,
 * recv_count[q] elements from rank q into recv + recv_off[q] (offsets in
 * elements; the own block included, copied by NCCL); then waited for. */
int gpu_nccl_alltoall(struct gpu_nccl *c, const void *send, void *recv,
                      const size_t *send_count, const size_t *send_off,
                      const size_t *recv_count, const size_t *recv_off, int dtype,
                      struct gpu_stream *s, char *err);

/* gpu_nccl_abort: abort the communicator now (on a failure seen elsewhere,
 * e.g. the coordinator reports a lost rank); gpu_nccl_destroy still frees. */
void gpu_nccl_abort(struct gpu_nccl *c);

/* gpu_nccl_destroy: finalize (polled against the timeout, aborted if it
 * does not finish) and free. NULL is fine. */
void gpu_nccl_destroy(struct gpu_nccl *c);

#endif /* GPU_H */
