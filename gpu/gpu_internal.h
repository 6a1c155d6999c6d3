/* gpu_internal.h -- what gpu/'s own files share, never included outside.
 *
 * The CHECK macro every CUDA call goes through (STYLE.md: a failed call
 * names its file:line), the error-text helpers behind it, and the device
 * facts the kernels size their grids with. Usable from C (cc) and CUDA
 * (nvcc) alike.
 */
#ifndef GPU_INTERNAL_H
#define GPU_INTERNAL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* gpu_say: one formatted line into err (err may be NULL). Returns rc, so
 * that `return gpu_say(err, ERR_USAGE, "...")` reads as one statement. */
__attribute__((format(printf, 3, 4)))
int gpu_say(char *err, int rc, const char *fmt, ...);

/* gpu_cuda_fail: "file:line: call: cudaErrorName (text)" into err; returns
 * the code for a cudaError_t value: -ENODEV (no device or driver), -ENOMEM
 * (allocation) or -EIO (anything else). */
int gpu_cuda_fail(char *err, const char *file, int line, const char *call, int cuda_error);

/* gpu_grid_size: blocks for a grid-stride kernel over `items` work items
 * of `threads` threads per block on the current device: enough to cover
 * the items, at most GPU_BLOCKS_PER_SM per multiprocessor (the count is
 * read once per device and kept). Never 0. */
int gpu_grid_size(size_t items, int threads, unsigned *blocks, char *err);

/* gpu_poll_pause: one pause of a polling wait that began at `started`
 * (clock_now): a yield at first, then sleeps doubling from *sleep_s (which
 * it updates) to a cap. gpu_stream.c says why. */
void gpu_poll_pause(double started, double *sleep_s);

/* gpu_check_dtype: 0 for DTYPE_F32/DTYPE_F64, else ERR_USAGE with `what`. */
int gpu_check_dtype(int dtype, const char *what, char *err);

/* gpu_nccl_build_info: how NCCL is built in, for gpu_build_info (gpu_nccl.c,
 * or gpu_nccl_stub.c in a build without nccl.h). */
const char *gpu_nccl_build_info(void);

#ifdef __cplusplus
}
#endif

/* The targets gpu.mk compiles the kernels for, as it says them. */
#ifndef GPU_CUDA_TARGETS
#define GPU_CUDA_TARGETS "?"
#endif

#define GPU_THREADS 256         /* threads per block of every kernel */
#define GPU_BLOCKS_PER_SM 8     /* 2048 resident threads per SM / 256 */

/* CUDA_CHECK(call): run one CUDA runtime call; when it fails, set the
 * enclosing function's `rc` from it, write the line into its `err`, and
 * `goto out` (the one cleanup label, STYLE.md). */
#define CUDA_CHECK(call) CUDA_CHECK_AS((call), #call)

/* CUDA_LAUNCHED(kernel): after a launch (<<<...>>> returns nothing), the
 * launch's own error, named "launch of kernel". */
#define CUDA_LAUNCHED(kernel) CUDA_CHECK_AS(cudaGetLastError(), "launch of " #kernel)

#define CUDA_CHECK_AS(call, text) do {                                      \
        int cuda_check_e_ = (int)(call);                                    \
        if (cuda_check_e_ != 0) {                                           \
            rc = gpu_cuda_fail(err, __FILE__, __LINE__, (text), cuda_check_e_); \
            goto out;                                                       \
        }                                                                   \
    } while (0)

#endif /* GPU_INTERNAL_H */

