/* coll.h -- the all-reduce as training and the benchmark see it: one call,
 * three back ends, chosen by --transport and --device.
 *
 *   kind           flags                      vector in  the all-reduce        record
 *   COLL_TCP       --transport tcp            host       ring.c, xport_tcp     "tcp"
 *   COLL_TCP_CUDA  --transport tcp            GPU        ring_cuda.c, staged   "tcp-cuda"
 *                  --device cuda                         through pinned memory
 *   COLL_NCCL      --transport nccl           GPU        ncclAllReduce         "nccl"
 *                  (implies --device cuda)               (gpu_nccl_*)
 *
 * The last column is the `transport` column of the records and the CSV.
 * The TCP kinds move bytes through the transport (xport.h, xport_tcp.h),
 * paced and counted by the emulated link; NCCL moves them itself (no
 * link, no counters: its records count 0 bytes).
 *
 * ALGORITHMS. The host kind (COLL_TCP) runs one of nine algorithms, the
 * `algo` column (--algo):
 *   COLL_RING      ring.c (transport opened with ring_plan): 2(K-1) steps of n/K, "ring"
 *   COLL_RD        rd.c (transport opened with rd_plan): log2 K steps of n, "rd"
 *                  (recursive doubling, the latency-optimal one)
 *   COLL_RABENSEIFNER  rabenseifner.c (rab_plan): 2 log2 K steps moving the
 *                  ring's bytes (recursive halving, then doubling), "rabenseifner"
 *   COLL_TREE      tree.c (tree_plan, one tree): a pipelined binary tree, reduce
 *                  up then broadcast down, segment by segment, "tree"
 *   COLL_DBTREE    tree.c (tree_plan, two trees): NCCL's double binary tree,
 *                  each tree on half the vector, "dbtree"
 *   COLL_SWING_LAT, COLL_SWING_BW  swing.c (swing_plan): Swing's peers at
 *                  distance 1, -1, 3, -5, ...: log2 K steps of n, "swing-lat"
 *                  (ranks agree to rounding: swing.h, BITS), or 2 log2 K
 *                  steps moving the ring's bytes, "swing-bw"
 *   COLL_HRING     hring.c (hring_plan, cfg->group ranks per host): the
 *                  hierarchical ring, inside / across / inside, "hring:G"
 *   COLL_STUDENT   a student's ring (students/ring_student.c, student.h;
 *                  student_plan: the ring's neighbours), "student"; the
 *                  gathers run on the project's ring over the same transport
 * The device kinds run the ring only (coll_init refuses the others there).
 * COMPRESSION (--compress fp16|bf16, coll_cmp.h): the host kind's ring
 * and rd all-reduces on a 16-bit wire, n * 2 bytes of wire scratch
 * allocated by coll_init (max_n elements). Only coll_allreduce compresses;
 * the other collectives, the gathers and coll_allreduce_exact do not.
 * coll_init refuses it (ERR_USAGE) with the device kinds.
 *
 * MEMORY. A vector given to coll_allreduce lives where the kind says:
 * host memory for COLL_TCP, device memory for the others. coll_alloc and
 * coll_free give such memory; coll_put, coll_get and coll_zero move bytes
 * into, out of and within it, and return when done (for the device kinds:
 * queued on the coll's stream and waited for, bounded by the timeout). So
 * bench.c and train.c need not know which kind they drive. The device
 * kinds also hold the stream (coll->stream) on which the caller queues its
 * own GPU work (gradients, SGD).
 *
 * GATHERS. coll_gather collects a few doubles from every rank on every rank
 * (the benchmark's settings check, its barrier and its timings): over the
 * host ring for the TCP kinds (the same transport, interleaved with the
 * all-reduces in the same order on every rank), and as an all-reduce of a
 * vector that is zero but for each rank's slot with NCCL, COLL_RD,
 * COLL_RABENSEIFNER, the trees, Swing and COLL_HRING (x + 0 = x: the sum
 * is the gather, exactly).
 *
 * THE OTHER COLLECTIVES (ring_worker --bench --coll, nccl-tests' names):
 *   op                   host (COLL_TCP, --algo ring)          NCCL
 *   COLL_ALL_REDUCE      ring_allreduce                        ncclAllReduce
 *   COLL_REDUCE_SCATTER  ring_reduce_scatter (rank r: chunk r)  ncclReduceScatter
 *   COLL_ALL_GATHER      ring_all_gather                       ncclAllGather
 *   COLL_BROADCAST       chain_broadcast (chain.h)             ncclBroadcast
 *   COLL_REDUCE          chain_reduce (chain.h)                ncclReduce
 *   COLL_ALLTOALL        a2a_alltoall (a2a.h; the transport    grouped ncclSend/ncclRecv
 *                        opened with a2a_plan)
 * All in place in one n-element buffer, but the all-to-all (send and
 * receive buffers). With NCCL the reduce-scatter and the all-gather need
 * n a multiple of K (NCCL's slices are equal; ring_chunk's are then the
 * same). The CUDA-staged ring, --algo rd, rabenseifner, tree, dbtree and
 * hring run the all-reduce only
 * (ERR_USAGE; bin/ring_worker refuses the flags first).
 *
 * A RANGE [first, first + count) of a larger buffer (ZeRO's buckets,
 * train.c): coll_reduce_scatter_range and coll_all_gather_range are
 * coll_reduce_scatter and coll_all_gather of the range's elements, in
 * place, the rest of the buffer untouched; coll_slice says which of them
 * this rank holds summed after the one (the reduce-scatter's output) and
 * gives to the other (the all-gather's input). Indices are elements of
 * the whole buffer, in the coll's dtype.
 *
 * OWNERSHIP. coll_init allocates the rings' staging, the stream, and with
 * NCCL creates the communicator (a collective call: every rank must make
 * it; on failure or --timeout it is aborted, gpu.h); coll_destroy frees
 * all of it. The transport (x) is the caller's and must outlive the coll.
 *
 * CLOCK. coll_clock is the transport's clock (xport.h; clock_real when
 * world is 1 or with NCCL): what bench.c times with.
 *
 * ERRORS. 0, or a negative err.h code with one line in err: the transport's
 * (naming the lost peer), a GPU or NCCL failure (file:line, gpu.h), or
 * ERR_USAGE. After a failure the coll is only good for coll_abort and
 * coll_destroy.
 */
#ifndef COLL_H
#define COLL_H

#include <stddef.h>
#include <stdint.h>

#include "a2a.h"
#include "hring.h"
#include "rabenseifner.h"
#include "coll_cmp.h"
#include "coll_sparse.h"
#include "wire/proto.h"
#include "rd.h"
#include "swing.h"
#include "ring.h"
#include "student_run.h"
#include "tree.h"
#include "ring_cuda.h"
#include "xport.h"

enum coll_kind { COLL_TCP = 1, COLL_TCP_CUDA, COLL_NCCL };
enum coll_algo { COLL_RING = 0, COLL_RD, COLL_RABENSEIFNER, COLL_TREE, COLL_DBTREE,
                 COLL_SWING_LAT, COLL_SWING_BW, COLL_HRING, COLL_STUDENT,
                 COLL_ALGOS /* how many */ };
enum coll_op {
    COLL_ALL_REDUCE = 0, COLL_REDUCE_SCATTER, COLL_ALL_GATHER, COLL_BROADCAST, COLL_REDUCE,
    COLL_ALLTOALL,
};
#define COLL_OPS 6

#define COLL_GATHER_MAX 16      /* doubles per rank in one coll_gather */

struct gpu_nccl;
struct gpu_stream;

struct coll_cfg {
    int kind;                   /* enum coll_kind */
    int algo;                   /* enum coll_algo; 0 (unset) is the ring */
    int rank, world, dtype;     /* dtype of the all-reduced vectors */
    size_t max_n;               /* elements of the largest all-reduce */
    size_t piece_bytes;         /* --piece (TCP kinds); 0: the default */
    double timeout;             /* --timeout, seconds */
    struct xport *x;            /* TCP kinds, world > 1 (ring_plan, rd_plan, rab_plan, tree_plan,
                                   hring_plan); else NULL */
    const unsigned char *nccl_id;   /* NCCL: rank 0's GPU_NCCL_ID_BYTES */
    int compress;               /* enum compress_kind (--compress); 0: none. COLL_TCP only */
    int group;                  /* COLL_HRING: G, ranks per host (--ranks-per-host) */
    int unpaced;                /* no emulated link (ring_worker): rd's SEGMENTS (rd.h) */
};

struct coll {
    int kind, algo, rank, world, dtype;
    double timeout;
    const struct clock_src *clock;  /* the transport's (coll_clock) */
    struct ring ring;           /* TCP kinds: the host ring (TCP_CUDA: gathers) */
    struct rd rd;               /* COLL_RD */
    int have_rd;
    struct rab rab;             /* COLL_RABENSEIFNER */
    int have_rab;
    struct tree tree;           /* COLL_TREE, COLL_DBTREE */
    struct student student;     /* COLL_STUDENT (with the ring, for the gathers) */
    int have_student;
    int have_tree;
    struct swing swing;         /* COLL_SWING_LAT, COLL_SWING_BW */
    int have_swing;
    struct hring hring;         /* COLL_HRING */
    int have_hring;
    struct ring_cuda rcuda;     /* TCP_CUDA */
    int have_ring, have_rcuda;
    struct gpu_nccl *nccl;      /* NCCL, owned */
    struct gpu_stream *stream;  /* device kinds: the caller's GPU work goes here */
    double *scratch;            /* NCCL: world * COLL_GATHER_MAX doubles, device */
    const struct compressor *comp;  /* --compress fp16|bf16 (coll_cmp.h); NULL: none */
    int compress;               /* cfg's, with its parameters (powersgd:R, compress.h) */
    void *wire;                 /* comp: wire_n encoded elements, owned */
    size_t wire_n;              /* cfg->max_n */
    char label[COMPRESS_LABEL_MAX]; /* --compress as typed back (compress_label) */
    int setting;                /* comp not linear (topk:F, coll_sparse.h): --compress */
    void *ef;                   /* ... its error-feedback state (owned) */
    size_t ef_n;                /* ... the n it holds (another n starts from zero) */
};

/* coll_piece_rule: the staging piece (coll_cfg.piece_bytes) a rank uses
 * when nobody gave --piece, for `world` ranks of algorithm `algo` and
 * collective `op` of `kind` on a host of `cpus` CPUs, `paced` on an
 * emulated link: COLL_PIECE_CROWDED where the ranks outnumber the CPUs,
 * unpaced, for the all-reduce of the ring and Rabenseifner (the ranks take
 * turns on the CPUs, and a smaller piece lets the send run ahead sooner:
 * docs/link.md, "Unpaced loopback"), else 0 (the algorithm's own default).
 * The piece is the receiver's own (how much it reads and adds at a time):
 * it enters no frame, so ranks on hosts of different sizes may differ;
 * on one host every rank computes the same. Pure. */
#define COLL_PIECE_CROWDED (128u << 10)
size_t coll_piece_rule(int kind, int algo, int op, int world, long cpus, int paced);

/* coll_init: the back end of cfg->kind; the device kinds on the current
 * device (gpu_device_select first). */
int coll_init(struct coll *c, const struct coll_cfg *cfg, char *err);
void coll_destroy(struct coll *c);

/* coll_clock: the clock of the transport under the coll (CLOCK). */
const struct clock_src *coll_clock(const struct coll *c);

/* coll_transport: "tcp", "tcp-cuda" or "nccl", for records and headers. */
const char *coll_transport(const struct coll *c);
/* coll_algo_name: "ring", "rd", "rabenseifner", "tree", "dbtree", "swing-lat",
 * "swing-bw", "hring:G" (G ranks per host) or "student", the records' algo
 * column. */
const char *coll_algo_name(const struct coll *c);
/* coll_algo_str: the name of an enum coll_algo ("hring" without its G). */
const char *coll_algo_str(int algo);
/* coll_algo_parse: the algorithm --algo names (coll_algo_str's), or -1. */
int coll_algo_parse(const char *name);
/* coll_op_algo: the algo column of a --bench --coll record: the all-reduce's
 * (coll_algo_name), "ring" (reduce_scatter, all_gather), "chain"
 * (broadcast, reduce), "pairwise" (alltoall); "nccl" for the others with
 * NCCL, which picks its own. */
const char *coll_op_algo(const struct coll *c, int op);
/* coll_on_device: 1 when the vectors are in GPU memory. */
int coll_on_device(const struct coll *c);

/* coll_allreduce: buf (n elements of the init's dtype) becomes the SUM over
 * the ranks, bit-identical on every rank. Device kinds: the caller's work
 * on buf must be queued on coll->stream (or finished); on return the sum
 * is in buf and the stream's work is done. */
int coll_allreduce(struct coll *c, void *buf, size_t n, char *err);
/* coll_allreduce_tail: coll_allreduce, but the last `exact` elements (at
 * most COLL_EXACT_MAX) summed at the dtype's full precision: they ride raw
 * in the compressed frames (coll_cmp.h and coll_sparse.h, THE EXACT TAIL).
 * The training step's trailer (example counts, loss) goes this way. */
#define COLL_EXACT_MAX 8
int coll_allreduce_tail(struct coll *c, void *buf, size_t n, size_t exact, char *err);
/* coll_allreduce_exact: coll_allreduce at the dtype's full precision
 * whatever --compress says: for sums that must be exact (the step's
 * trailer: example counts and the loss). */
int coll_allreduce_exact(struct coll *c, void *buf, size_t n, char *err);
/* coll_compress_name: "none", "fp16", "bf16" or "powersgd:R[:noef]": the
 * records' compress column. PowerSGD (two rounds, the layers' shapes) is
 * not coll_allreduce's: it refuses it (ERR_USAGE); coll_psgd.h runs it. */
const char *coll_compress_name(const struct coll *c);
/* coll_wire_bytes: what a vector of `bytes` (in the coll's dtype) weighs
 * on the wire under --compress: the records' wire_bytes (metrics.h). */
uint64_t coll_wire_bytes(const struct coll *c, uint64_t bytes);

/* coll_op_name: nccl-tests' name of op ("all_reduce", ... "alltoall"), or
 * NULL; coll_op_parse: the op of a name, or -1. */
const char *coll_op_name(int op);
int coll_op_parse(const char *name);

/* The other collectives (THE OTHER COLLECTIVES above); buffers where the
 * kind says, results as ring.h, chain.h and a2a.h say (with NCCL the same
 * contents, n a multiple of K for the first two). */
int coll_reduce_scatter(struct coll *c, void *buf, size_t n, char *err);
int coll_all_gather(struct coll *c, void *buf, size_t n, char *err);
int coll_broadcast(struct coll *c, void *buf, size_t n, int root, char *err);
int coll_reduce(struct coll *c, void *buf, size_t n, int root, char *err);
int coll_alltoall(struct coll *c, const void *send, void *recv, const struct a2a_split *sp,
                  char *err);

/* A RANGE above: the reduce-scatter and the all-gather of buf's elements
 * [first, first + count). */
int coll_reduce_scatter_range(struct coll *c, void *buf, size_t first, size_t count, char *err);
int coll_all_gather_range(struct coll *c, void *buf, size_t first, size_t count, char *err);

/* coll_slice: [*lo, *hi), the elements of the range [first, first + count)
 * that this rank holds summed after its reduce-scatter and gives to its
 * all-gather: ring_chunk's chunk `rank` of the range, offset by first
 * (NCCL's equal slice where count is a multiple of K, the same). With
 * first 0 and count n, the same for a whole n-element buffer. */
void coll_slice(const struct coll *c, size_t first, size_t count, size_t *lo, size_t *hi);

/* coll_xport: the transport under the coll, for its first-arrival clock
 * (xport.h, THE FIRST ARRIVAL); NULL with NCCL and at K = 1 (none of
 * ours). The coll still owns the calls: the caller only arms and reads. */
struct xport *coll_xport(const struct coll *c);

/* coll_gather: every rank's m (<= COLL_GATHER_MAX) doubles, rank r's at
 * all[r * m], on every rank (all: world * m, host memory). */
int coll_gather(struct coll *c, double *all, const double *mine, int m, char *err);

/* coll_abort: this rank fails: with NCCL, abort the communicator (the
 * others' collectives then fail or time out instead of waiting forever).
 * The TCP kinds tell their peers through xport_abort instead. */
void coll_abort(struct coll *c);

/* Memory where the kind's vectors live (above). */
int coll_alloc(struct coll *c, void **p, size_t bytes, char *err);
void coll_free(struct coll *c, void *p);
int coll_put(struct coll *c, void *dst, const void *host_src, size_t bytes, char *err);
int coll_get(struct coll *c, void *host_dst, const void *src, size_t bytes, char *err);
int coll_zero(struct coll *c, void *p, size_t bytes, char *err);

/* coll_local_ranks: how many of the world's ranks share this host, and
 * this rank's index among them, for NCCL's one-GPU-per-rank check
 * (gpu_nccl_fit): the ranks of the rendezvous table whose address is this
 * rank's (peers may be NULL when world is 1), or, when larger, the
 * launcher's count of local ranks from the environment (LOCAL_WORLD_SIZE,
 * OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, SLURM_NTASKS_PER_NODE).
 * OUT: *local_rank, *local_ranks; *source names where the count came from. */
void coll_local_ranks(const struct proto_peer *peers, int world, int rank, int env_local_rank,
                      int *local_rank, int *local_ranks, const char **source);

#endif /* COLL_H */
