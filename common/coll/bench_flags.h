/* bench_flags.h -- the benchmark's collective flags, --coll NAME, --root R
 * and --imbalance F (bench.h), as bin/ring_worker and bin/psring_sim both
 * take them: one table of the three flags (base/cli.h; their bounds are
 * THE BOUNDS', cli.c) and one check of them against each other, --bench
 * and K.
 *
 * ERRORS. bench_flags_check returns the collective (enum coll_op, >= 0),
 * or ERR_USAGE with one line naming the flag in err; the caller exits 64
 * with it.
 */
#ifndef BENCH_FLAGS_H
#define BENCH_FLAGS_H

#include "base/cli.h"

struct bench_flags {
    const char *coll;           /* --coll NAME: nccl-tests' name; NULL: all_reduce */
    int root;                   /* --root R: broadcast, reduce; alltoall's hot rank (0) */
    double imbalance;           /* --imbalance F: alltoall (1: balanced) */
    int root_given, imbalance_given;    /* set by the caller after parsing */
};

/* bench_flags_init: the defaults (all_reduce, root 0, imbalance 1). */
void bench_flags_init(struct bench_flags *f);

/* bench_flags_opts: the three flags' table, writing into *f; it lives as
 * long as f. One table per process (it is static). */
const struct cli_opt *bench_flags_opts(struct bench_flags *f);

/* bench_flags_check: the flags against --bench (bench: 1 when given), the
 * world K, and where the collectives other than the all-reduce can run
 * here: others NULL where they can, else the line's hint of where they do
 * ("the host ring (--algo ring --device cpu) or with NCCL ..."). a2a_max:
 * the most ranks an alltoall may have here (A2A_WORLD_MAX over a
 * transport of ours; 0: no limit). */
int bench_flags_check(const struct bench_flags *f, int bench, int world, const char *others,
                      int a2a_max, char *err);

#endif /* BENCH_FLAGS_H */
