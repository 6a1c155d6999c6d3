/* gpu_fit.c -- may NCCL run these ranks on this host's GPUs?
 *
 * NCCL binds one rank to one GPU; two ranks of one communicator on the same
 * GPU fail at set-up ("Duplicate GPU detected") or, with some versions and
 * topologies, hang. So ring_worker --transport nccl checks before it starts
 * NCCL, and says what to do instead. Pure arithmetic on counts the caller
 * gathered (no CUDA), so it is in every build and tested everywhere.
 */
#include "gpu.h"

#include "base/err.h"
#include "gpu_internal.h"

int gpu_nccl_fit(int local_rank, int local_ranks, int devices, char *err)
{
    if (local_ranks < 1 || local_rank < 0 || local_rank >= local_ranks)
        return gpu_say(err, ERR_USAGE, "nccl: local rank %d of %d local ranks is inconsistent",
                       local_rank, local_ranks);
    if (devices < 1)
        return gpu_say(err, ERR_USAGE, "nccl: no GPU on this host for local rank %d", local_rank);
    if (local_ranks > devices) {
        const char *s = devices == 1 ? "" : "s";
        return gpu_say(err, ERR_USAGE, "nccl: %d local ranks on this host but %d GPU%s: NCCL "
                       "needs one GPU per rank; run at most %d rank%s per host, or use "
                       "--transport tcp --device cuda (ranks may share a GPU)",
                       local_ranks, devices, s, devices, s);
    }
    return 0;
}
