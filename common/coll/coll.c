/* coll.c -- the three all-reduce back ends behind one call (coll.h says
 * which is which and what each promises), and on the host the choice of
 * algorithm (ring, recursive doubling, Rabenseifner, the tree, the double tree or
 * the hierarchical ring).
 *
 * Each function is a switch on the kind, kept short on purpose: the
 * algorithms are elsewhere (ring.c, rd.c, ring_cuda.c, NCCL), and this
 * file only says which one runs and where the bytes live.
 */
#include "coll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "base/dtype.h"
#include "base/err.h"
#include "gpu.h"
#include "measure/model.h"

/* fail: one line into err, and rc. */
#define fail(err, rc, ...) (err_say((err), __VA_ARGS__), (rc))

/* host_init: the state of an algorithm that runs on the host only (every
 * one but the ring) over cfg->x. */
static int host_init(struct coll *c, const struct coll_cfg *cfg, char *err)
{
    const char *name = coll_algo_str(cfg->algo);
    int rc, r = cfg->rank, k = cfg->world;
    size_t piece = cfg->piece_bytes;

    if (cfg->kind != COLL_TCP)
        return fail(err, ERR_USAGE, "--algo %s: runs on the host over TCP only "
                   "(--device cpu --transport tcp)", name);
    switch (cfg->algo) {
    case COLL_RD:
        /* rd.h: unpaced, 512 KiB frames of 64 KiB pieces; else whole
         * frames, and the 1 MiB piece unless --piece says otherwise. */
        c->have_rd = (rc = rd_init(&c->rd, cfg->x, r, k,
                                   piece || cfg->unpaced ? piece : RD_PIECE_PACED)) == 0;
        if (c->have_rd && cfg->unpaced)
            c->rd.seg_bytes = RD_SEG_UNPACED;
        break;
    case COLL_RABENSEIFNER:
        c->have_rab = (rc = rab_init(&c->rab, cfg->x, r, k, piece)) == 0;
        break;
    case COLL_SWING_LAT:
    case COLL_SWING_BW:
        c->have_swing = (rc = swing_init(&c->swing, cfg->x, r, k, cfg->algo == COLL_SWING_BW,
                                         piece)) == 0;
        break;
    case COLL_TREE:
    case COLL_DBTREE:
        c->have_tree = (rc = tree_init(&c->tree, cfg->x, r, k, cfg->algo == COLL_TREE ? 1 : 2,
                                       piece)) == 0;
        break;
    case COLL_HRING:
        if ((rc = hring_check(k, cfg->group, err)) != 0) {
            coll_destroy(c);
            return rc;
        }
        c->have_hring = (rc = hring_init(&c->hring, cfg->x, r, k, cfg->group, piece)) == 0;
        break;
    default:            /* COLL_STUDENT */
        c->have_student = (rc = student_init(&c->student, cfg->x, r, k, piece)) == 0;
        break;
    }
    if (rc != 0) {
        coll_destroy(c);
        return fail(err, rc, "%s: %s", name, rc == -ENOMEM ? "out of memory for the staging piece"
                                                          : "bad --piece or rank");
    }
    return 0;
}

/* frames_init: NOT-LINEAR COMPRESSION (coll_sparse.h): --compress topk:F
 * on the ring only (an all-gather of K frames; sign needs the PS); the
 * K frames' buffer and the error-feedback state. */
static int frames_init(struct coll *c, const struct coll_cfg *cfg, char *err)
{
    char lab[COMPRESS_LABEL_MAX];
    size_t n = cfg->max_n ? cfg->max_n : 1;

    if (!c->comp->frame)
        return 0;
    compress_label(cfg->compress, lab, sizeof lab);
    if (c->comp->kind != COMPRESS_TOPK)
        return fail(err, ERR_USAGE, "--compress %s: needs the parameter server (ps_worker, "
                    "ps_server): a sign frame's scale is its sender's, so it is summed where "
                    "it is decoded, not hop by hop", lab);
    if (cfg->algo != COLL_RING)
        return fail(err, ERR_USAGE, "--compress %s: needs --algo ring (an all-gather of "
                    "the K frames) or the parameter server: each rank's indices are its own, "
                    "so the frames cannot be summed hop by hop", lab);
    c->setting = cfg->compress;
    c->wire = malloc((size_t)cfg->world * (compress_frame_bytes(cfg->compress, n, cfg->dtype)
                                            + COLL_EXACT_MAX * dtype_size(cfg->dtype)));
    c->ef = calloc(1, compress_state_bytes(cfg->compress, n, cfg->dtype));
    if (!c->wire || !c->ef)
        return fail(err, -ENOMEM, "--compress %s: out of memory for %d frames", lab,
                    cfg->world);
    return 0;
}

/* PIECE RULE (docs/link.md, "The piece rule"): with the send running
 * ahead of the receive (xport_tcp.c, SEND AHEAD), a 128 KiB piece against
 * the default 1 MiB took the unpaced ring 0.79-0.95x the time at K = 4
 * and 8 on 2 cores (4 and 16 MiB, three interleaved sets on a shared
 * machine) and Rabenseifner 0.79-0.95x at 4 MiB (K = 8, 16 MiB mixed:
 * 0.91-1.13x), but the ring 1.16-1.26x at K = 2, where each rank has a
 * CPU of its own and fewer, larger pieces cost less CPU. So the smaller
 * piece only where the ranks outnumber the CPUs. */
size_t coll_piece_rule(int kind, int algo, int op, int world, long cpus, int paced)
{
    int alg = algo == COLL_RING || algo == COLL_RABENSEIFNER;

    return kind == COLL_TCP && alg && op == COLL_ALL_REDUCE && !paced && cpus > 0 &&
           world > cpus ? COLL_PIECE_CROWDED : 0;
}

int coll_init(struct coll *c, const struct coll_cfg *cfg, char *err)
{
    int rc = 0;

    memset(c, 0, sizeof *c);
    c->kind = cfg->kind;
    c->algo = cfg->algo;
    c->rank = cfg->rank;
    c->world = cfg->world;
    c->dtype = cfg->dtype;
    c->timeout = cfg->timeout;
    c->clock = xport_clock(cfg->x);
    if (dtype_size(cfg->dtype) == 0 || cfg->kind < COLL_TCP || cfg->kind > COLL_NCCL ||
        cfg->algo < COLL_RING || cfg->algo >= COLL_ALGOS)
        return fail(err, ERR_USAGE, "coll_init: kind %d, algo %d, dtype %d", cfg->kind,
                   cfg->algo, cfg->dtype);
    if (cfg->compress != COMPRESS_NONE) {
        if (cfg->kind != COLL_TCP || !compress_get(cfg->compress))
            return fail(err, ERR_USAGE, "--compress %s: runs on the host over TCP only "
                       "(--device cpu --transport tcp)", compress_name(cfg->compress));
        if (!compress_get(cfg->compress)->frame && cfg->algo != COLL_RING && cfg->algo != COLL_RD)
            return fail(err, ERR_USAGE, "--compress %s: the ring and rd only (--algo ring|rd), "
                       "not %s", compress_name(cfg->compress),
                       coll_algo_name(c));
        c->comp = compress_get(cfg->compress);
        c->compress = cfg->compress;
        compress_label(cfg->compress, c->label, sizeof c->label);
        c->wire_n = cfg->max_n;
        if ((rc = frames_init(c, cfg, err)) != 0)
            return rc;
        if (!c->comp->frame && c->comp->encode)   /* PowerSGD keeps its own (coll_psgd.h) */
            c->wire = malloc((cfg->max_n ? cfg->max_n : 1) * compress_wire_size(c->comp, cfg->dtype)
                             + COLL_EXACT_MAX * dtype_size(cfg->dtype));    /* the exact tail */
        if ((c->comp->frame || c->comp->encode) && !c->wire)
            return fail(err, -ENOMEM, "--compress: out of memory for the wire buffer");
    }
    /* Every algorithm but the ring runs on the host only; the student's
     * has the project's ring beside it on the same transport, for the
     * gathers (below). */
    if (cfg->algo != COLL_RING && ((rc = host_init(c, cfg, err)) != 0 ||
                                   cfg->algo != COLL_STUDENT))
        return rc;
    if (cfg->kind != COLL_NCCL) {
        /* TCP_CUDA's host ring only gathers a few doubles: a small piece. */
        size_t piece = cfg->kind == COLL_TCP ? cfg->piece_bytes : 4096;
        if ((rc = ring_init(&c->ring, cfg->x, cfg->rank, cfg->world, piece)) != 0) {
            coll_destroy(c);
            return fail(err, rc, "ring: %s", rc == -ENOMEM ? "out of memory for the staging piece"
                                                       : "bad --piece or rank");
        }
        c->have_ring = 1;
    }
    if (cfg->kind == COLL_TCP)
        return 0;

    if ((rc = gpu_stream_create(&c->stream, err)) != 0)
        goto out;
    if (cfg->kind == COLL_TCP_CUDA) {
        rc = ring_cuda_init(&c->rcuda, cfg->x, cfg->rank, cfg->world, cfg->max_n, cfg->dtype,
                            cfg->piece_bytes, cfg->timeout, err);
        c->have_rcuda = rc == 0;
        goto out;
    }
    rc = gpu_malloc((void **)&c->scratch,
                    (size_t)cfg->world * COLL_GATHER_MAX * sizeof(double), err);
    if (rc == 0)
        rc = gpu_nccl_create(&c->nccl, cfg->nccl_id, cfg->rank, cfg->world, cfg->timeout, err);
out:
    if (rc != 0)
        coll_destroy(c);
    return rc;
}

void coll_destroy(struct coll *c)
{
    gpu_nccl_destroy(c->nccl);
    c->nccl = NULL;
    if (c->have_rcuda)
        ring_cuda_destroy(&c->rcuda);
    c->have_rcuda = 0;
    if (c->have_ring)
        ring_destroy(&c->ring);
    c->have_ring = 0;
    if (c->have_rd)
        rd_destroy(&c->rd);
    c->have_rd = 0;
    if (c->have_rab)
        rab_destroy(&c->rab);
    c->have_rab = 0;
    if (c->have_tree)
        tree_destroy(&c->tree);
    c->have_tree = 0;
    if (c->have_student)
        student_destroy(&c->student);
    c->have_student = 0;
    if (c->have_swing)
        swing_destroy(&c->swing);
    c->have_swing = 0;
    if (c->have_hring)
        hring_destroy(&c->hring);
    c->have_hring = 0;
    if (c->stream)
        (void)gpu_stream_wait(c->stream, c->timeout, NULL);
    gpu_free(c->scratch);
    c->scratch = NULL;
    gpu_stream_destroy(c->stream);
    c->stream = NULL;
    free(c->wire);
    c->wire = NULL;
    free(c->ef);
    c->ef = NULL;
}

const struct clock_src *coll_clock(const struct coll *c)
{
    return c->clock ? c->clock : &clock_real;
}

const char *coll_transport(const struct coll *c)
{
    return c->kind == COLL_TCP ? "tcp" : c->kind == COLL_TCP_CUDA ? "tcp-cuda" : "nccl";
}

const char *coll_algo_str(int algo)
{
    return algo == COLL_RD ? "rd" : algo == COLL_RABENSEIFNER ? "rabenseifner"
         : algo == COLL_TREE ? "tree" : algo == COLL_DBTREE ? "dbtree"
         : algo == COLL_SWING_LAT ? "swing-lat" : algo == COLL_SWING_BW ? "swing-bw"
         : algo == COLL_HRING ? "hring" : algo == COLL_STUDENT ? "student" : "ring";
}

const char *coll_algo_name(const struct coll *c)
{
    return c->algo == COLL_HRING && c->have_hring ? c->hring.name : coll_algo_str(c->algo);
}

int coll_algo_parse(const char *name)
{
    return strcmp(name, "ring") == 0 ? COLL_RING : strcmp(name, "rd") == 0 ? COLL_RD
         : strcmp(name, "rabenseifner") == 0 ? COLL_RABENSEIFNER
         : strcmp(name, "tree") == 0 ? COLL_TREE : strcmp(name, "dbtree") == 0 ? COLL_DBTREE
         : strcmp(name, "swing-lat") == 0 ? COLL_SWING_LAT
         : strcmp(name, "swing-bw") == 0 ? COLL_SWING_BW
         : strcmp(name, "hring") == 0 ? COLL_HRING
         : strcmp(name, "student") == 0 ? COLL_STUDENT : -1;
}

const char *coll_op_algo(const struct coll *c, int op)
{
    if (op == COLL_ALL_REDUCE)
        return coll_algo_name(c);
    if (c->kind == COLL_NCCL)
        return "nccl";
    return op == COLL_BROADCAST || op == COLL_REDUCE ? "chain"
         : op == COLL_ALLTOALL ? "pairwise" : "ring";
}

int coll_on_device(const struct coll *c)
{
    return c->kind != COLL_TCP;
}

int coll_allreduce(struct coll *c, void *buf, size_t n, char *err)
{
    return coll_allreduce_tail(c, buf, n, 0, err);
}

int coll_allreduce_tail(struct coll *c, void *buf, size_t n, size_t exact, char *err)
{
    if (c->comp && n > c->wire_n)
        return fail(err, ERR_USAGE, "coll_allreduce: %zu elements, more than the %zu "
                   "coll_init's max_n allows", n, c->wire_n);
    if (exact > n || exact > COLL_EXACT_MAX)
        return fail(err, ERR_USAGE, "coll_allreduce_tail: an exact tail of %zu of %zu "
                   "elements (at most %d)", exact, n, COLL_EXACT_MAX);
    if (c->comp && c->comp->frame) {
        size_t m = n - exact;
        if (m != c->ef_n)       /* another vector (--bench's sizes): its own residual */
            memset(c->ef, 0, compress_state_bytes(c->setting, m, c->dtype));
        c->ef_n = m;
        return ring_allgather_frames(&c->ring, buf, n, exact, c->dtype, c->setting, c->wire,
                                     c->ef, err);
    }
    if (c->comp && !c->comp->encode)
        return fail(err, ERR_USAGE, "coll_allreduce: --compress %s needs the layers' shapes: "
                   "coll_psgd_allreduce (coll_psgd.h)", compress_name(c->compress));
    if (c->comp && c->algo == COLL_RD)
        return rd_allreduce_cmp(&c->rd, buf, n, exact, c->dtype, c->comp, c->wire, err);
    if (c->comp)
        return ring_allreduce_cmp(&c->ring, buf, n, exact, c->dtype, c->comp, c->wire, err);
    return coll_allreduce_exact(c, buf, n, err);
}

const char *coll_compress_name(const struct coll *c)
{
    return c->comp ? c->label : "none";
}

uint64_t coll_wire_bytes(const struct coll *c, uint64_t bytes)
{
    if (!c->comp)
        return bytes;
    if (c->comp->frame)         /* one rank's frame; the all-gather moves K - 1 of them */
        return compress_frame_bytes(c->setting, bytes / dtype_size(c->dtype), c->dtype);
    return bytes / dtype_size(c->dtype) * compress_wire_size(c->comp, c->dtype);
}

int coll_allreduce_exact(struct coll *c, void *buf, size_t n, char *err)
{
    int rc;

    switch (c->kind) {
    case COLL_TCP:
        if (c->algo == COLL_RD)
            return rd_allreduce(&c->rd, buf, n, c->dtype, err);
        if (c->algo == COLL_RABENSEIFNER)
            return rab_allreduce(&c->rab, buf, n, c->dtype, err);
        if (c->algo == COLL_TREE || c->algo == COLL_DBTREE)
            return tree_allreduce(&c->tree, buf, n, c->dtype, err);
        if (c->algo == COLL_STUDENT)
            return student_run(&c->student, buf, n, c->dtype, err);
        if (c->algo == COLL_SWING_LAT || c->algo == COLL_SWING_BW)
            return swing_allreduce(&c->swing, buf, n, c->dtype, err);
        if (c->algo == COLL_HRING)
            return hring_allreduce(&c->hring, buf, n, c->dtype, err);
        return ring_allreduce(&c->ring, buf, n, c->dtype, err);
    case COLL_TCP_CUDA:
        /* The ring's streams do not follow c->stream: finish its work first. */
        if ((rc = gpu_stream_wait(c->stream, c->timeout, err)) != 0)
            return rc;
        return ring_cuda_allreduce(&c->rcuda, buf, n, err);
    default:
        return gpu_nccl_all_reduce(c->nccl, buf, buf, n, c->dtype, c->stream, err);
    }
}

/* The names and the enum are the cost model's (model.h), one list. */
_Static_assert(COLL_ALL_REDUCE == (int)MODEL_COLL_ALL_REDUCE &&
               COLL_REDUCE_SCATTER == (int)MODEL_COLL_REDUCE_SCATTER &&
               COLL_ALL_GATHER == (int)MODEL_COLL_ALL_GATHER &&
               COLL_BROADCAST == (int)MODEL_COLL_BROADCAST &&
               COLL_REDUCE == (int)MODEL_COLL_REDUCE && COLL_ALLTOALL == (int)MODEL_COLL_ALLTOALL,
               "coll_op follows model_coll");

const char *coll_op_name(int op)
{
    return model_coll_name(op);
}

int coll_op_parse(const char *name)
{
    return model_coll_parse(name);
}

/* host_ring: the other collectives run on the host ring's state (its
 * transport and staging piece) or on NCCL; not on the CUDA-staged ring or
 * with rd. */
static int host_ring(struct coll *c, const char *what, char *err)
{
    if (c->kind == COLL_NCCL || (c->kind == COLL_TCP && c->have_ring))
        return 0;
    return fail(err, ERR_USAGE, "%s: runs on the host ring (--algo ring, --device cpu) or "
               "with NCCL", what);
}

/* nccl_slices: NCCL's reduce-scatter and all-gather cut n into K equal
 * slices; the count per slice. */
static int nccl_slices(const struct coll *c, size_t n, const char *what, size_t *count,
                       char *err)
{
    if (n % (size_t)c->world != 0)
        return fail(err, ERR_USAGE, "%s with NCCL: %zu elements is not a multiple of K = %d",
                   what, n, c->world);
    *count = n / (size_t)c->world;
    return 0;
}

/* sliced: the reduce-scatter or the all-gather (op), on the host ring or
 * with NCCL, in place: rank r's slice r is the output, resp. the input. */
static int sliced(struct coll *c, int op, void *buf, size_t n, char *err)
{
    const char *what = coll_op_name(op);
    size_t q, es = dtype_size(c->dtype);
    char *mine;
    int rc = host_ring(c, what, err);

    if (rc != 0)
        return rc;
    if (c->kind == COLL_TCP)
        return op == COLL_REDUCE_SCATTER ? ring_reduce_scatter(&c->ring, buf, n, c->dtype, err)
                                         : ring_all_gather(&c->ring, buf, n, c->dtype, err);
    if ((rc = nccl_slices(c, n, what, &q, err)) != 0)
        return rc;
    mine = (char *)buf + (size_t)c->rank * q * es;
    if (op == COLL_REDUCE_SCATTER)
        return gpu_nccl_collective(c->nccl, GPU_NCCL_REDUCE_SCATTER, buf, mine, q, c->dtype, 0,
                                   c->stream, err);
    return gpu_nccl_collective(c->nccl, GPU_NCCL_ALL_GATHER, mine, buf, q, c->dtype, 0,
                               c->stream, err);
}

void coll_slice(const struct coll *c, size_t first, size_t count, size_t *lo, size_t *hi)
{
    ring_chunk(count, c->world, c->rank, lo, hi);
    *lo += first;
    *hi += first;
}

int coll_reduce_scatter_range(struct coll *c, void *buf, size_t first, size_t count, char *err)
{
    return sliced(c, COLL_REDUCE_SCATTER, (char *)buf + first * dtype_size(c->dtype), count, err);
}

int coll_all_gather_range(struct coll *c, void *buf, size_t first, size_t count, char *err)
{
    return sliced(c, COLL_ALL_GATHER, (char *)buf + first * dtype_size(c->dtype), count, err);
}

struct xport *coll_xport(const struct coll *c)
{
    return c->have_rd ? c->rd.a.x : c->have_rab ? c->rab.a.x : c->have_tree ? c->tree.a.x
         : c->have_swing ? c->swing.a.x : c->have_hring ? c->hring.a.x
         : c->have_ring ? c->ring.a.x : NULL;
}

int coll_reduce_scatter(struct coll *c, void *buf, size_t n, char *err)
{
    return sliced(c, COLL_REDUCE_SCATTER, buf, n, err);
}

int coll_all_gather(struct coll *c, void *buf, size_t n, char *err)
{
    return sliced(c, COLL_ALL_GATHER, buf, n, err);
}

/* rooted: broadcast or reduce (what names it): the TCP chain, or NCCL's
 * op in place. */
static int rooted(struct coll *c, const char *what,
                  int (*chain)(struct xport_algo *, void *, size_t, int, int, char *),
                  int nccl_op, void *buf, size_t n, int root, char *err)
{
    int rc = host_ring(c, what, err);

    if (rc != 0)
        return rc;
    if (c->kind == COLL_TCP)
        return chain(&c->ring.a, buf, n, c->dtype, root, err);
    return gpu_nccl_collective(c->nccl, nccl_op, buf, buf, n, c->dtype, root, c->stream, err);
}

int coll_broadcast(struct coll *c, void *buf, size_t n, int root, char *err)
{
    return rooted(c, "broadcast", chain_broadcast, GPU_NCCL_BROADCAST, buf, n, root, err);
}

int coll_reduce(struct coll *c, void *buf, size_t n, int root, char *err)
{
    return rooted(c, "reduce", chain_reduce, GPU_NCCL_REDUCE, buf, n, root, err);
}

int coll_alltoall(struct coll *c, const void *send, void *recv, const struct a2a_split *sp,
                  char *err)
{
    size_t scount[A2A_WORLD_MAX], soff[A2A_WORLD_MAX], rcount[A2A_WORLD_MAX],
           roff[A2A_WORLD_MAX];
    int rc = host_ring(c, "alltoall", err);

    if (rc != 0 || (rc = a2a_split_check(sp, err)) != 0)
        return rc;
    if (c->kind == COLL_TCP)
        return a2a_alltoall(&c->ring.a, send, recv, sp, c->dtype, err);
    if (sp->world != c->world)
        return fail(err, ERR_USAGE, "alltoall: a split for %d ranks, %d here", sp->world,
                   c->world);
    for (int q = 0; q < c->world; q++) {
        scount[q] = a2a_count(sp, q);
        soff[q] = a2a_offset(sp, q);
        rcount[q] = a2a_count(sp, c->rank);
        roff[q] = (size_t)q * rcount[q];
    }
    return gpu_nccl_alltoall(c->nccl, send, recv, scount, soff, rcount, roff, c->dtype,
                             c->stream, err);
}

int coll_gather(struct coll *c, double *all, const double *mine, int m, char *err)
{
    size_t bytes = (size_t)c->world * (size_t)m * sizeof *all;
    int rc;

    if (m < 1 || m > COLL_GATHER_MAX)
        return fail(err, ERR_USAGE, "coll_gather: %d values per rank", m);
    memset(all, 0, bytes);
    memcpy(all + (size_t)c->rank * (size_t)m, mine, (size_t)m * sizeof *all);
    /* With rd, Rabenseifner, the trees and NCCL: zeros but for each rank's own slot,
     * all-reduced: the sum is the gather, exactly. */
    if (c->algo == COLL_RD)
        return rd_allreduce_raw(&c->rd, all, (size_t)c->world * (size_t)m, DTYPE_F64, err);
    if (c->algo == COLL_RABENSEIFNER)
        return rab_allreduce_raw(&c->rab, all, (size_t)c->world * (size_t)m, DTYPE_F64, err);
    if (c->algo == COLL_TREE || c->algo == COLL_DBTREE)
        return tree_allreduce_raw(&c->tree, all, (size_t)c->world * (size_t)m, DTYPE_F64, err);
    if (c->algo == COLL_SWING_LAT || c->algo == COLL_SWING_BW)
        return swing_allreduce_raw(&c->swing, all, (size_t)c->world * (size_t)m, DTYPE_F64, err);
    if (c->algo == COLL_HRING)
        return hring_allreduce_raw(&c->hring, all, (size_t)c->world * (size_t)m, DTYPE_F64, err);
    if (c->kind != COLL_NCCL)
        return ring_all_gather_raw(&c->ring, all, (size_t)c->world * (size_t)m, DTYPE_F64, err);
    if ((rc = gpu_copy_async(c->scratch, all, bytes, c->stream, err)) != 0 ||
        (rc = gpu_nccl_all_reduce(c->nccl, c->scratch, c->scratch, (size_t)c->world * (size_t)m,
                                  DTYPE_F64, c->stream, err)) != 0 ||
        (rc = gpu_copy_async(all, c->scratch, bytes, c->stream, err)) != 0)
        return rc;
    return gpu_stream_wait(c->stream, c->timeout, err);
}

void coll_abort(struct coll *c)
{
    if (c->nccl)
        gpu_nccl_abort(c->nccl);
}

int coll_alloc(struct coll *c, void **p, size_t bytes, char *err)
{
    if (coll_on_device(c))
        return gpu_malloc(p, bytes, err);
    *p = malloc(bytes ? bytes : 1);
    return *p ? 0 : fail(err, -ENOMEM, "out of memory for %zu bytes", bytes);
}

void coll_free(struct coll *c, void *p)
{
    if (coll_on_device(c))
        gpu_free(p);
    else
        free(p);
}

/* copy: one copy on the stream, waited for (device kinds). */
static int copy(struct coll *c, void *dst, const void *src, size_t bytes, char *err)
{
    int rc;

    if (!coll_on_device(c)) {
        memmove(dst, src, bytes);
        return 0;
    }
    if ((rc = gpu_copy_async(dst, src, bytes, c->stream, err)) != 0)
        return rc;
    return gpu_stream_wait(c->stream, c->timeout, err);
}

int coll_put(struct coll *c, void *dst, const void *host_src, size_t bytes, char *err)
{
    return copy(c, dst, host_src, bytes, err);
}

int coll_get(struct coll *c, void *host_dst, const void *src, size_t bytes, char *err)
{
    return copy(c, host_dst, src, bytes, err);
}

int coll_zero(struct coll *c, void *p, size_t bytes, char *err)
{
    int rc;

    if (!coll_on_device(c)) {
        memset(p, 0, bytes);
        return 0;
    }
    if ((rc = gpu_zero_async(p, bytes, c->stream, err)) != 0)
        return rc;
    return gpu_stream_wait(c->stream, c->timeout, err);
}

/* env_count: a launcher's local-rank count, a plain positive integer. */
static int env_count(const char *var)
{
    const char *v = getenv(var);
    char *end;
    long x;

    if (!v || !*v)
        return 0;
    x = strtol(v, &end, 10);
    return *end == '\0' && x > 0 && x < 1000000 ? (int)x : 0;
}

void coll_local_ranks(const struct proto_peer *peers, int world, int rank, int env_local_rank,
                      int *local_rank, int *local_ranks, const char **source)
{
    static const char *const vars[] = {
        "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
        "SLURM_NTASKS_PER_NODE",
    };
    int mine = 0, count = 1;

    if (peers && world > 1) {
        count = 0;
        for (int r = 0; r < world; r++) {
            if (strcmp(peers[r].addr, peers[rank].addr) != 0)
                continue;
            if (r < rank)
                mine++;
            count++;
        }
    }
    *local_rank = mine;
    *local_ranks = count;
    *source = "the rendezvous table (ranks with this rank's address)";
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        int e = env_count(vars[i]);
        if (e == 0)
            continue;
        if (e > count && env_local_rank >= 0 && env_local_rank < e) {
            *local_rank = env_local_rank;
            *local_ranks = e;
            *source = vars[i];
        }
        break;
    }
}
