/* bench.h -- the collectives' benchmark of bin/ring_worker --bench, in the
 * manner of nccl-tests' all_reduce_perf and its siblings: --coll NAME picks
 * all_reduce (default), reduce_scatter, all_gather, broadcast, reduce or
 * alltoall (coll.h; nccl-tests' names, --root, --imbalance). Below, "the
 * all-reduce" stands for whichever runs.
 *
 * SWEEP. Sizes from --minbytes to --maxbytes, multiplied by --stepfactor;
 * count = size / element size (float32 unless --dtype says otherwise).
 * Per size: --warmup-iters untimed all-reduces, then --iters timed ones,
 * back to back, then one checked all-reduce.
 *
 * TIMING. Before the timed loop a barrier (a tiny all-reduce) lines the
 * ranks up; each rank then times its whole loop. The time printed is the
 * SLOWEST rank's loop divided by --iters (the ranks' totals are gathered
 * with the ring's own all-gather after the loop, outside the timing). The
 * timed iterations reduce zeros (a sum of zeros costs what any sum does,
 * and repeated in-place all-reduces cannot overflow); the data is
 * allocated before the sweep, never inside it.
 *     algbw = size / time        busbw = algbw * 2(K-1)/K
 * (nccl-tests' definitions: busbw is what each rank's link carried, so it
 * compares across K and with the link's rate); the factor is the
 * collective's (model_busbw_factor): 2(K-1)/K all_reduce, (K-1)/K
 * reduce_scatter, all_gather and alltoall, 1 broadcast and reduce. The
 * size is one rank's contribution; reduce_scatter, all_gather and alltoall
 * round the count down to a multiple of K (as nccl-tests).
 *
 * CHECK. The checked all-reduce starts from rank r's element i =
 * ((r + i) mod 8) - 3, small integers whose sum over the K ranks is exact
 * in f32 and known in closed form per i mod 8; every element of the result
 * is compared, and #wrong is the count over all ranks. The other
 * collectives check what they define from the same pattern: the own chunk
 * of the sum (reduce_scatter), rank c's pattern in chunk c (all_gather),
 * the root's (broadcast), the sum on the root (reduce), and for alltoall
 * ((5 s + 3 d + j) mod 8) - 3 in element j of rank s's block for rank d.
 *
 * TRANSPORTS. The all-reduce is the coll's (coll.h): the TCP ring on host
 * memory, the CUDA-staged TCP ring or NCCL on GPU memory. With the GPU
 * kinds the vector lives on the device; the checked all-reduce's input is
 * written on the host and copied there, and its result copied back to be
 * checked, outside the timing; the timed loop is the same.
 *
 * OUTPUT. Rank 0 prints, under '#' comment lines, one row per size:
 *     size count type time(us) algbw(GB/s) busbw(GB/s) cpu(s/GB) #wrong
 * cpu(s/GB): the cost of the bytes (issue 27), the costliest rank's CPU
 * seconds (user + system) over the timed loop per GB (1e9 bytes) it sent
 * and received (its link's counters, headers included); "-" where no
 * rank moved a counted byte (K = 1, NCCL). #wrong stays the last field.
 * Each record also carries its link's idle over the loop (link.h,
 * UTILIZATION; metrics.h, link_util).
 * With --csv FILE every rank writes its metrics record (system ring, algo
 * ring or rd, or chain, pairwise or nccl for the other collectives
 * (coll_op_algo), transport tcp, tcp-cuda or nccl, coll the collective's
 * name; one step per timed iteration, its own time and bytes): to FILE when the sweep has one size, else to FILE.SIZE for each
 * size (SIZE in bytes), so psr_merge can merge one size's records. With
 * --json FILE the same records as JSON Lines (metrics_record_write_json),
 * named the same way.
 *
 * With --phases FILE (cfg->steps) the first timed call of the first size
 * is observed step by step on the host ring (ring_steps.h: a few clock
 * reads per step inside that one call) and written to FILE.RANK by the
 * caller after the sweep.
 *
 * The ranks check that they run the same sweep (an all-gather of the
 * settings) before the first size.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

#include "wire/link.h"
#include "coll.h"
#include "ring_steps.h"

struct bench_cfg {
    int rank, world, dtype;
    uint64_t minbytes, maxbytes;
    int stepfactor, warmup_iters, iters;
    const char *csv;               /* record path, or NULL */
    const char *json;              /* the record as JSON Lines (--json), or NULL */
    int op;                        /* enum coll_op (--coll); 0: all_reduce */
    int root;                      /* --root: broadcast, reduce; alltoall's hot rank */
    double imbalance;              /* --imbalance F (alltoall), 1: balanced */
    struct coll *coll;             /* the collective and the gathers */
    struct link *link;             /* counters, and the settings for the record */
    struct ring_steps *steps;      /* --phases: the first timed call's ring steps
                                      (ring_steps.h; armed on coll->ring), or NULL */
};

/* bench_run: the sweep. 0 when every size ran and every element checked
 * out; ERR_MISMATCH after the sweep when some were wrong (the table says
 * where), or when the ranks run different sweeps; else the transport's
 * code. One line in err. */
int bench_run(const struct bench_cfg *cfg, char *err);

#endif /* BENCH_H */
