/* compute.h -- the EMULATED compute time of a worker's backward pass.
 *
 * A synchronous step waits for its slowest worker, so how long each worker
 * computes matters as much as the network. psring computes nothing of the
 * size of a real model; it EMULATES the time instead, by a sleep in the
 * workload's backward pass (workload.h), on the workload's clock. This
 * header is the model of that time: a pure function of the flags, the
 * seed, the rank and the step, so a run reproduces exactly, and both
 * systems (ring, parameter server) and bin/reference see the same times.
 *
 * THE MODEL. Worker r's emulated backward time in step s is
 *
 *     t(r, s) = T * F(r) * J(r, s) + P(r, s)
 *
 *   T        --backward-time: the base, seconds per worker per step. It is
 *            required by the three flags below (they exit 64 without it):
 *            there is no sensible default for a time the user has to mean.
 *   F(r)     --straggler RANK:FACTOR: FACTOR for r == RANK, else 1.
 *            FACTOR in [1, 1000]; RANK < K. One straggler (the last
 *            --straggler given wins).
 *   J(r, s)  --jitter SIGMA: exp(SIGMA * z - SIGMA^2 / 2), z ~ N(0, 1)
 *            drawn from a stream of (seed, r, s) alone (rng.h seeded with
 *            a hash of the three), so the same run draws the same z in any
 *            process, order or transport. MEAN-PRESERVING: E[J] = 1, so
 *            --jitter changes the spread, not the mean time; log J is
 *            N(-SIGMA^2/2, SIGMA^2). SIGMA in [0, 2]; 0 is off (J = 1).
 *   P(r, s)  --pause RANK:TIME[@EVERY]: TIME for r == RANK on the steps s
 *            with (s + 1) % EVERY == 0 (the EVERY-th step, the 2*EVERY-th,
 *            ... counting from 1), else 0. EVERY defaults to 1 (every
 *            step). TIME in [0, 3600] s, EVERY in [1, 10^9]; RANK < K. One
 *            pause (the last --pause given wins). The pause is added, not
 *            scaled by F or J.
 *
 * A worker whose share of the step's batch is b examples spends
 * t(r, s) * (hi - lo) / b in a workload call for [lo, hi), so its
 * micro-batches together take t(r, s). One process with the whole batch
 * (bin/reference, world 0) is rank 0.
 *
 * The step time of a synchronous system is then about max over r of
 * (t(r, s) + its communication); that is the cost model's business, not
 * this module's.
 */
#ifndef COMPUTE_H
#define COMPUTE_H

#include <stddef.h>
#include <stdint.h>

#define COMPUTE_FACTOR_MAX 1000.0
#define COMPUTE_JITTER_MAX 2.0
#define COMPUTE_PAUSE_MAX 3600.0
#define COMPUTE_EVERY_MAX 1000000000ULL

struct compute_model {
    double base;               /* T, seconds; 0: no emulated time at all */
    int straggler_rank;        /* -1: none */
    double straggler_factor;   /* F of straggler_rank, >= 1 */
    double jitter;             /* SIGMA, 0: off */
    int pause_rank;            /* -1: none */
    double pause_time;         /* seconds */
    uint64_t pause_every;      /* >= 1 */
    uint64_t seed;             /* the run's --seed */
};

/* compute_model_init: no emulated time (base 0, no straggler, jitter or
 * pause), seed 0. */
void compute_model_init(struct compute_model *m);

/* compute_model_active: whether any of --straggler, --jitter, --pause is
 * set (each needs a base). */
int compute_model_active(const struct compute_model *m);

/* compute_jitter_z: the standard normal z of (seed, rank, step). */
double compute_jitter_z(uint64_t seed, int rank, uint64_t step);

/* compute_step_time: t(rank, step) of the model above, in seconds; 0 when
 * m->base is 0. */
double compute_step_time(const struct compute_model *m, int rank, uint64_t step);

/* compute_parse_straggler: "RANK:FACTOR" -> *rank, *factor. 0, or
 * ERR_USAGE with a reason in err (ERR_LEN). The rank is checked against K
 * later (cli_common_finish). */
int compute_parse_straggler(const char *s, int *rank, double *factor, char *err);

/* compute_parse_pause: "RANK:TIME[@EVERY]" (TIME as units.h's times:
 * 200ms, 1.5s) -> *rank, *time, *every (1 when not given). 0, or
 * ERR_USAGE with a reason in err. */
int compute_parse_pause(const char *s, int *rank, double *time, uint64_t *every, char *err);

/* compute_describe: one line describing the model for the log, e.g.
 * "straggler rank 1 x3, jitter sigma 0.1 (mean-preserving), pause rank 2
 * 0.5 s every 10 steps"; "" when none is set. Writes at most len bytes. */
void compute_describe(const struct compute_model *m, char *buf, size_t len);

#endif /* COMPUTE_H */
