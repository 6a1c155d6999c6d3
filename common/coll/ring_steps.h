/* ring_steps.h -- ring_worker --bench --phases FILE: the steps of one ring
 * collective (all-reduce, reduce-scatter or all-gather), per rank, for a
 * picture of the chunk schedule (plots/ring_phases.gp, docs/lab.md 21).
 *
 * It is the ring's observer (ring.h, HOOK): armed on the coll's ring for
 * one timed call of the benchmark (bench.c), it keeps each step's phase,
 * step, chunk sent, chunk received, bytes sent and the transport's clock
 * at the step's start and end, in room allocated before the sweep; the
 * file is written after it. Off (no --phases) the ring's hook stays NULL.
 *
 * FILE.RANK, whitespace columns under '#' lines (gnuplot and awk read it
 * as it is), one row per step in the order run:
 *
 *   # ring_worker --phases: rank 0 of K 4, 262144 f32 (1048576 bytes), the first timed call
 *   # rank phase step send recv bytes t_begin_s t_end_s
 *   0 reduce-scatter 0 3 2 262144 5123.041877 5123.178310
 *
 * t_begin_s: before the step's send is queued; t_end_s: its chunk in and
 * reduced (or copied), its send done. Seconds on the transport's clock
 * (CLOCK_MONOTONIC in a real run: the ranks of one machine share it, so
 * their files line up on one time axis; the ranks of different machines
 * do not, and their rows are only ordered per rank).
 *
 * ONE CALL. ring_steps_arm hooks the ring before a call and
 * ring_steps_disarm unhooks it after; the first call that ends well is
 * kept, and later arms do nothing. A call that failed is forgotten.
 *
 * OWNERSHIP. ring_steps_init allocates room for 2(K-1) steps;
 * ring_steps_destroy frees it. The ring must outlive the arm.
 */
#ifndef RING_STEPS_H
#define RING_STEPS_H

#include <stddef.h>

#include "base/clock.h"
#include "ring.h"

struct ring_steps_row {
    int phase, step, send, recv;    /* enum ring_phase; ring_schedule's chunks */
    size_t bytes;                   /* sent this step */
    double t0, t1;                  /* the clock's seconds: start, end */
};

struct ring_steps {
    struct ring_hook hook;          /* what the armed ring calls */
    const struct clock_src *clock;  /* the transport's (coll_clock) */
    struct ring *ring;              /* armed on, or NULL */
    struct ring_steps_row *row;     /* cap rows, owned */
    int n, cap, done, rank, world, dtype;
    size_t count;                   /* elements of the kept call */
};

/* ring_steps_check: at start-up, that PATH.RANK can be written
 * (outfile_check); 0, or a negative code with "--phases: ..." in err. */
int ring_steps_check(const char *path, int rank, char *err);

/* ring_steps_init: room for one call's 2(K-1) steps; 0 or -ENOMEM with a
 * line in err. */
int ring_steps_init(struct ring_steps *st, int rank, int world, const struct clock_src *clock,
                    char *err);
void ring_steps_destroy(struct ring_steps *st);

/* ring_steps_arm: observe r's next call (count elements of dtype); a no-op
 * once a call is kept. ring_steps_disarm: unhook; ok: the call ended
 * well (keep its rows), else forget them. */
void ring_steps_arm(struct ring_steps *st, struct ring *r, size_t count, int dtype);
void ring_steps_disarm(struct ring_steps *st, int ok);

/* ring_steps_write: PATH.RANK as above (no rows when no call was kept);
 * 0, or a negative code with "--phases: cannot write PATH.RANK: reason". */
int ring_steps_write(const struct ring_steps *st, const char *path, char *err);

#endif /* RING_STEPS_H */
