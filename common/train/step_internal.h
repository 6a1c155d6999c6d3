/* step_internal.h -- what step.c, step_zero.c and localsgd.c share: the driver's own
 * helpers (step.c) and the ZeRO steps (step_zero.c). Not for the
 * adapters: they see step.h only. */
#ifndef STEP_INTERNAL_H
#define STEP_INTERNAL_H

#include "step.h"

/* step.c */
double step_now(const struct step *d);
/* step_cpu: the calling thread's CPU seconds, on the real clock and in
 * a timed step (0 on another clock or in the warm-up: nothing is added
 * then); the driver adds its compute's to d->compute_cpu. */
static inline double step_cpu(const struct step *d)
{
    return d->cfg.clock == &clock_real && d->step >= (uint64_t)d->cfg.warmup
           ? clock_thread_cpu_seconds() : 0.0;
}
size_t step_njobs(const struct step *d);
struct overlap_job step_job_at(const struct step *d, size_t i, char *name);
int step_gradient(struct step *d, uint64_t lo, uint64_t hi, int micro, int mistake,
                  struct step_meta *meta, char *err);
/* step_keep_times: step s's times into the arrays step_medians reads
 * (timed steps only: s >= --warmup). */
static inline void step_keep_times(struct step *d, int s, const struct step_times *t)
{
    if (s >= d->cfg.warmup && d->ntimed < (size_t)(d->cfg.steps - d->cfg.warmup)) {
        const double v[5] = { t->step, t->backward, t->comm, t->finish, t->wait };
        for (int i = 0; i < 5; i++)
            d->times[i][d->ntimed] = v[i];
        d->ntimed++;
    }
}

/* step_student.c: the overlapped pass with the student's buckets
 * (STEP_STUDENT; bucket_student.h): the backward pass, each layer handed
 * to students/bucket_student.c, its starts to the communication thread,
 * then the trailer and the wait. */
int step_student_pass(struct step *d, struct step_times *t, char *err);

/* step_zero.c: ZeRO (step.h, SHARDED). _check: the configuration
 * (ERR_USAGE and a line); _is_scatter: a job that starts at `first` is
 * reduce-scattered; _shards: the own ranges (d->own) and the trailer
 * slots; _release_grad: stage 2's release after the job at `first`;
 * _release, _gather: stage 3's weights outside the shard freed, and
 * gathered (t->comm gets the time when t is not NULL); _forward: stage
 * 3's forward pass and second gather; _update: the shard's update and the
 * gathers after the combine. */
int step_zero_check(const struct step *d, char *err);
int step_zero_is_scatter(const struct step *d, size_t first);
int step_zero_shards(struct step *d, char *err);
void step_zero_release_grad(struct step *d, size_t first);
void step_zero_release(struct step *d);
int step_zero_gather(struct step *d, struct step_times *t, char *err);
int step_zero_forward(struct step *d, struct step_times *t, char *err);
int step_zero_update(struct step *d, struct step_result *r, char *err);

#endif /* STEP_INTERNAL_H */
