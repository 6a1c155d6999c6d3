/* gpu_nccl.c -- NCCL, loaded at run time, behind a non-blocking communicator.
 *
 * LOADING. psring links no NCCL: gpu_nccl_load() dlopens libnccl.so.2 (or
 * the file PSRING_NCCL_LIB names) the first time a communicator is asked
 * for, and looks up the dozen functions it uses. nccl.h is needed at build
 * time only, for the types; __typeof__ on its prototypes keeps each
 * function pointer's type exactly the library's. Why: the GPU machines'
 * NCCL lives in a Python environment (pip's nvidia-nccl-cu13), not on the
 * loader's path, and the library is too large to carry along; a binary
 * linked against it would not even start without it, while this one runs
 * every CPU and CUDA path and fails only --transport nccl, saying what to
 * set.
 *
 * NEVER HANG. A blocking NCCL communicator waits inside NCCL for peers that
 * may be dead, and a collective whose peer died never completes, so a
 * cudaStreamSynchronize after it never returns (RELIABILITY.md's
 * anti-pattern). So the communicator is NON-BLOCKING (ncclConfig_t
 * blocking = 0): set-up, enqueue and finalize return ncclInProgress at
 * once, and we poll ncclCommGetAsyncError (and, for a collective,
 * cudaStreamQuery) against the timeout. On an error or at the deadline the
 * communicator is aborted (ncclCommAbort), which also ends its kernels, and
 * every later call on it fails at once.
 *
 * CONFIG VERSIONS. NCCL_CONFIG_INITIALIZER stamps the header's version and
 * size into the config; a library older than the header reads the prefix
 * it knows (NCCL copies min(size, its own) and ignores newer fields), so
 * building against one version and loading another is supported, down to
 * 2.14, the first with non-blocking communicators.
 */
#include "gpu.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "gpu_internal.h"

#define NCCL_MIN_VERSION 21400      /* 2.14.0: ncclConfig_t.blocking */
#define NCCL_SONAME "libnccl.so.2"
#define STR_(x) #x
#define STR(x) STR_(x)

/* The loaded library: filled once by load(), read-only afterwards. */
static struct {
    int loaded, rc, version;
    char err[ERR_LEN];
    __typeof__(ncclGetVersion) *get_version;
    __typeof__(ncclGetUniqueId) *get_unique_id;
    __typeof__(ncclCommInitRankConfig) *comm_init_rank_config;
    __typeof__(ncclCommGetAsyncError) *comm_get_async_error;
    __typeof__(ncclCommFinalize) *comm_finalize;
    __typeof__(ncclCommDestroy) *comm_destroy;
    __typeof__(ncclCommAbort) *comm_abort;
    __typeof__(ncclAllReduce) *all_reduce;
    __typeof__(ncclReduceScatter) *reduce_scatter;
    __typeof__(ncclAllGather) *all_gather;
    __typeof__(ncclBroadcast) *broadcast;
    __typeof__(ncclReduce) *reduce;
    __typeof__(ncclSend) *send;
    __typeof__(ncclRecv) *recv;
    __typeof__(ncclGroupStart) *group_start;
    __typeof__(ncclGroupEnd) *group_end;
    __typeof__(ncclGetErrorString) *get_error_string;
    __typeof__(ncclGetLastError) *get_last_error;   /* optional */
} nccl;

#ifdef __SANITIZE_ADDRESS__
/* LeakSanitizer: NCCL (and the libibverbs it probes) keep a few hundred
 * bytes of process-lifetime state that they never free; seen on the H100
 * machine with NCCL 2.28.3. Suppress leaks allocated inside those
 * libraries only, so that ours are still reported. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libnccl.so\nleak:libibverbs.so\n";
}
#endif

struct gpu_nccl {
    ncclComm_t comm;        /* NULL once aborted */
    int rank, world;
    double timeout;         /* seconds, bounds every wait */
};

const char *gpu_nccl_build_info(void)
{
    return "NCCL by dlopen (header " STR(NCCL_MAJOR) "." STR(NCCL_MINOR) "." STR(NCCL_PATCH) ")";
}

/* ---------------------------------------------------------------- loading */

#define RESOLVE(field, name) do {                                           \
        nccl.field = (__typeof__(nccl.field))dlsym(lib, name);              \
        if (!nccl.field)                                                    \
            return gpu_say(err, -ELIBACC, "NCCL at %s lacks %s (older than 2.14?)", \
                           where, name);                                    \
    } while (0)

static int load(char *err)
{
    const char *env = getenv("PSRING_NCCL_LIB");
    char path[4096];
    const char *where = NCCL_SONAME;
    struct stat st;
    void *lib;
    int v = 0;

    if (env && *env) {
        if (stat(env, &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(path, sizeof path, "%s/" NCCL_SONAME, env);
        else
            snprintf(path, sizeof path, "%s", env);
        where = path;
        if (!(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            return gpu_say(err, -ELIBACC, "cannot load NCCL from PSRING_NCCL_LIB=%s: %s", env, dlerror());
    } else if (!(lib = dlopen(NCCL_SONAME, RTLD_NOW | RTLD_LOCAL))) {
        return gpu_say(err, -ELIBACC, "cannot load NCCL: %s; set PSRING_NCCL_LIB to the path of "
                       NCCL_SONAME " (docs/gpu.md)", dlerror());
    }
    /* lib stays loaded for the life of the process. */
    RESOLVE(get_version, "ncclGetVersion");
    RESOLVE(get_unique_id, "ncclGetUniqueId");
    RESOLVE(comm_init_rank_config, "ncclCommInitRankConfig");
    RESOLVE(comm_get_async_error, "ncclCommGetAsyncError");
    RESOLVE(comm_finalize, "ncclCommFinalize");
    RESOLVE(comm_destroy, "ncclCommDestroy");
    RESOLVE(comm_abort, "ncclCommAbort");
    RESOLVE(all_reduce, "ncclAllReduce");
    RESOLVE(reduce_scatter, "ncclReduceScatter");
    RESOLVE(all_gather, "ncclAllGather");
    RESOLVE(broadcast, "ncclBroadcast");
    RESOLVE(reduce, "ncclReduce");
    RESOLVE(send, "ncclSend");
    RESOLVE(recv, "ncclRecv");
    RESOLVE(group_start, "ncclGroupStart");
    RESOLVE(group_end, "ncclGroupEnd");
    RESOLVE(get_error_string, "ncclGetErrorString");
    nccl.get_last_error = (__typeof__(nccl.get_last_error))dlsym(lib, "ncclGetLastError");
    if (nccl.get_version(&v) != ncclSuccess || v < NCCL_MIN_VERSION)
        return gpu_say(err, -EIO, "NCCL at %s is version %d; psring needs %d or later "
                       "(non-blocking communicators)", where, v, NCCL_MIN_VERSION);
    nccl.version = v;
    return 0;
}

int gpu_nccl_load(int *version, char *err)
{
    /* A success is kept; a failure is tried again next time (it is cheap,
     * and the environment may have been fixed meanwhile). */
    if (!nccl.loaded) {
        nccl.rc = load(nccl.err);
        nccl.loaded = nccl.rc == 0;
    }
    if (nccl.rc != 0)
        return gpu_say(err, nccl.rc, "%s", nccl.err);
    if (version)
        *version = nccl.version;
    return 0;
}

/* ---------------------------------------------------------------- failures */

/* "file:line: call: ncclX (text): NCCL's last error" into err; -EIO. */
static int nccl_fail(char *err, const char *file, int line, const char *call,
                     ncclResult_t r, ncclComm_t comm)
{
    const char *last = nccl.get_last_error ? nccl.get_last_error(comm) : NULL;

    return gpu_say(err, -EIO, "%s:%d: %s: %s%s%s", file, line, call, nccl.get_error_string(r),
                   last && *last ? ": " : "", last && *last ? last : "");
}

/* NCCL_CHECK(call): as CUDA_CHECK, for a call through the loaded table.
 * ncclInProgress is not a failure: the non-blocking communicator answers
 * it, and the caller polls. */
#define NCCL_CHECK(call, comm) do {                                         \
        ncclResult_t nccl_check_r_ = (call);                                \
        if (nccl_check_r_ != ncclSuccess && nccl_check_r_ != ncclInProgress) { \
            rc = nccl_fail(err, __FILE__, __LINE__, #call, nccl_check_r_, (comm)); \
            goto out;                                                       \
        }                                                                   \
    } while (0)

void gpu_nccl_abort(struct gpu_nccl *c)
{
    if (c && c->comm) {
        (void)nccl.comm_abort(c->comm);
        c->comm = NULL;
    }
}

/* Abort c and put "nccl rank R of K: what: ..." into err; returns rc. */
static int fail_abort(struct gpu_nccl *c, int rc, char *err)
{
    char why[ERR_LEN];

    snprintf(why, sizeof why, "%s", err ? err : "");
    gpu_nccl_abort(c);
    return gpu_say(err, rc, "nccl rank %d of %d: %s; communicator aborted", c->rank, c->world, why);
}

/* The communicator's asynchronous state: ncclSuccess, ncclInProgress, or
 * the error that ended it. */
static ncclResult_t comm_state(struct gpu_nccl *c)
{
    ncclResult_t state = ncclInProgress, r = nccl.comm_get_async_error(c->comm, &state);

    return r != ncclSuccess ? r : state;
}

/* Poll until the communicator is out of ncclInProgress (after set-up, an
 * enqueue or finalize), against its timeout; abort on error or timeout. */
static int poll_comm(struct gpu_nccl *c, const char *what, char *err)
{
    const double start = clock_now(), deadline = start + c->timeout;
    double sleep_s = 10e-6;
    ncclResult_t r;

    for (;;) {
        if ((r = comm_state(c)) == ncclSuccess)
            return 0;
        if (r != ncclInProgress) {
            nccl_fail(err, __FILE__, __LINE__, what, r, c->comm);
            return fail_abort(c, -EIO, err);
        }
        if (clock_now() >= deadline) {
            gpu_say(err, ERR_TIMEOUT, "%s: not done after %.3g s (timeout)", what, c->timeout);
            return fail_abort(c, ERR_TIMEOUT, err);
        }
        gpu_poll_pause(start, &sleep_s);
    }
}

/* ---------------------------------------------------------------- communicator */

int gpu_nccl_unique_id(unsigned char id[GPU_NCCL_ID_BYTES], char *err)
{
    ncclUniqueId uid;
    int rc;

    _Static_assert(sizeof uid == GPU_NCCL_ID_BYTES, "ncclUniqueId is 128 bytes");
    if ((rc = gpu_nccl_load(NULL, err)) != 0)
        return rc;
    NCCL_CHECK(nccl.get_unique_id(&uid), NULL);
    memcpy(id, uid.internal, GPU_NCCL_ID_BYTES);
out:
    return rc;
}

int gpu_nccl_create(struct gpu_nccl **out, const unsigned char id[GPU_NCCL_ID_BYTES],
                    int rank, int world, double timeout_s, char *err)
{
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    struct gpu_nccl *c = NULL;
    ncclUniqueId uid;
    int rc;

    *out = NULL;
    if (world < 1 || rank < 0 || rank >= world || !(timeout_s > 0))
        return gpu_say(err, ERR_USAGE, "gpu_nccl_create: rank %d of %d, timeout %g s: need "
                       "0 <= rank < world and a positive timeout", rank, world, timeout_s);
    if ((rc = gpu_nccl_load(NULL, err)) != 0)
        return rc;
    if (!(c = calloc(1, sizeof *c)))
        return gpu_say(err, -ENOMEM, "gpu_nccl_create: out of host memory");
    c->rank = rank;
    c->world = world;
    c->timeout = timeout_s;
    memcpy(uid.internal, id, GPU_NCCL_ID_BYTES);
    cfg.blocking = 0;
    NCCL_CHECK(nccl.comm_init_rank_config(&c->comm, world, uid, rank, &cfg), c->comm);
    if ((rc = poll_comm(c, "ncclCommInitRankConfig", err)) != 0)
        goto out;
    *out = c;
    c = NULL;
out:
    if (c) {
        if (rc != 0 && c->comm)
            fail_abort(c, rc, err);
        free(c);
    }
    return rc;
}

int gpu_nccl_all_reduce_start(struct gpu_nccl *c, const void *send, void *recv, size_t n,
                              int dtype, struct gpu_stream *s, char *err)
{
    int rc;

    if ((rc = gpu_check_dtype(dtype, "gpu_nccl_all_reduce", err)) != 0)
        return rc;
    if (!c->comm)
        return gpu_say(err, -EIO, "nccl rank %d of %d: the communicator was aborted after an "
                       "earlier failure", c->rank, c->world);
    NCCL_CHECK(nccl.all_reduce(send, recv, n, dtype == DTYPE_F32 ? ncclFloat32 : ncclFloat64,
                               ncclSum, c->comm, (cudaStream_t)s), c->comm);
    rc = poll_comm(c, "ncclAllReduce", err);
out:
    if (rc == -EIO && c->comm)
        rc = fail_abort(c, rc, err);
    return rc;
}

int gpu_nccl_wait(struct gpu_nccl *c, struct gpu_stream *s, char *err)
{
    const double start = clock_now(), deadline = start + c->timeout;
    double sleep_s = 10e-6;
    ncclResult_t r;
    cudaError_t e;

    if (!c->comm)
        return gpu_say(err, -EIO, "nccl rank %d of %d: the communicator was aborted after an "
                       "earlier failure", c->rank, c->world);
    for (;;) {
        r = comm_state(c);
        if (r != ncclSuccess && r != ncclInProgress) {
            nccl_fail(err, __FILE__, __LINE__, "ncclCommGetAsyncError", r, c->comm);
            return fail_abort(c, -EIO, err);
        }
        e = cudaStreamQuery((cudaStream_t)s);
        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady) {
            int rc = gpu_cuda_fail(err, __FILE__, __LINE__, "cudaStreamQuery", (int)e);
            return fail_abort(c, rc, err);
        }
        if (clock_now() >= deadline) {
            gpu_say(err, ERR_TIMEOUT, "collective not finished after %.3g s (timeout)", c->timeout);
            return fail_abort(c, ERR_TIMEOUT, err);
        }
        gpu_poll_pause(start, &sleep_s);
    }
}

int gpu_nccl_all_reduce(struct gpu_nccl *c, const void *send, void *recv, size_t n,
                        int dtype, struct gpu_stream *s, char *err)
{
    int rc = gpu_nccl_all_reduce_start(c, send, recv, n, dtype, s, err);

    return rc != 0 ? rc : gpu_nccl_wait(c, s, err);
}

/* usable: the dtype is one and the communicator was not aborted. */
static int usable(struct gpu_nccl *c, int dtype, const char *what, char *err)
{
    int rc = gpu_check_dtype(dtype, what, err);

    if (rc == 0 && !c->comm)
        rc = gpu_say(err, -EIO, "nccl rank %d of %d: the communicator was aborted after an "
                     "earlier failure", c->rank, c->world);
    return rc;
}

int gpu_nccl_collective(struct gpu_nccl *c, int op, const void *send, void *recv, size_t count,
                        int dtype, int root, struct gpu_stream *s, char *err)
{
    ncclDataType_t t = dtype == DTYPE_F32 ? ncclFloat32 : ncclFloat64;
    cudaStream_t st = (cudaStream_t)s;
    int rc;

    if ((rc = usable(c, dtype, "gpu_nccl_collective", err)) != 0)
        return rc;
    if (op < GPU_NCCL_REDUCE_SCATTER || op > GPU_NCCL_REDUCE || root < 0 || root >= c->world)
        return gpu_say(err, ERR_USAGE, "gpu_nccl_collective: op %d, root %d of %d", op, root,
                       c->world);
    switch (op) {
    case GPU_NCCL_REDUCE_SCATTER:
        NCCL_CHECK(nccl.reduce_scatter(send, recv, count, t, ncclSum, c->comm, st), c->comm);
        break;
    case GPU_NCCL_ALL_GATHER:
        NCCL_CHECK(nccl.all_gather(send, recv, count, t, c->comm, st), c->comm);
        break;
    case GPU_NCCL_BROADCAST:
        NCCL_CHECK(nccl.broadcast(send, recv, count, t, root, c->comm, st), c->comm);
        break;
    default:
        NCCL_CHECK(nccl.reduce(send, recv, count, t, ncclSum, root, c->comm, st), c->comm);
        break;
    }
    if ((rc = poll_comm(c, "nccl collective", err)) == 0)
        rc = gpu_nccl_wait(c, s, err);
out:
    if (rc == -EIO && c->comm)
        rc = fail_abort(c, rc, err);
    return rc;
}

int gpu_nccl_alltoall(struct gpu_nccl *c, const void *send, void *recv,
                      const size_t *send_count, const size_t *send_off,
                      const size_t *recv_count, const size_t *recv_off, int dtype,
                      struct gpu_stream *s, char *err)
{
    ncclDataType_t t = dtype == DTYPE_F32 ? ncclFloat32 : ncclFloat64;
    size_t es = dtype == DTYPE_F32 ? 4 : 8;
    cudaStream_t st = (cudaStream_t)s;
    int rc, grouped = 0;

    if ((rc = usable(c, dtype, "gpu_nccl_alltoall", err)) != 0)
        return rc;
    NCCL_CHECK(nccl.group_start(), c->comm);
    grouped = 1;
    for (int q = 0; q < c->world; q++) {
        NCCL_CHECK(nccl.send((const char *)send + send_off[q] * es, send_count[q], t, q, c->comm,
                             st), c->comm);
        NCCL_CHECK(nccl.recv((char *)recv + recv_off[q] * es, recv_count[q], t, q, c->comm, st),
                   c->comm);
    }
    grouped = 0;
    NCCL_CHECK(nccl.group_end(), c->comm);
    if ((rc = poll_comm(c, "ncclGroupEnd (send/recv)", err)) == 0)
        rc = gpu_nccl_wait(c, s, err);
out:
    if (grouped)
        (void)nccl.group_end();
    if (rc == -EIO && c->comm)
        rc = fail_abort(c, rc, err);
    return rc;
}

void gpu_nccl_destroy(struct gpu_nccl *c)
{
    if (!c)
        return;
    if (c->comm) {
        ncclResult_t r = nccl.comm_finalize(c->comm);
        char err[ERR_LEN];

        if ((r == ncclSuccess || r == ncclInProgress) &&
            poll_comm(c, "ncclCommFinalize", err) == 0 && c->comm)
            (void)nccl.comm_destroy(c->comm);
        else
            gpu_nccl_abort(c);
        c->comm = NULL;
    }
    free(c);
}
