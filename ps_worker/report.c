/* report.c -- ps_worker's record and outputs: the metrics record's fixed
 * fields before the first step, and at the end --weights-out, --csv,
 * --json and the last lines (main.c's opening comment).
 */
#include "run.h"

#include <stdio.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"
#include "train/mistake.h"

/* record_setup: the metrics record's fixed fields, room for every timed
 * step. ERR_USAGE when there are more than a record holds. */
int record_setup(struct metrics_record *rec, const struct cli_common *o, size_t n,
                        size_t elem)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = metrics_record_init(rec, (size_t)(o->steps - o->warmup));

    if (rc != 0)
        return rc;
    snprintf(rec->system, sizeof rec->system, "ps");
    snprintf(rec->role, sizeof rec->role, "worker");
    snprintf(rec->transport, sizeof rec->transport, "tcp");
    rec->rank = o->rank;
    rec->world = o->world;
    rec->bytes = (uint64_t)n * elem;
    rec->link_bw = o->link_bw;
    rec->link_latency = o->link_latency;
    rec->ncpu = ncpu > 0 ? (int)ncpu : 1;
    return 0;
}

/* finish: --weights-out, --csv and --json, the last line. 0, or 1 (message logged). */
int finish(struct run *r)
{
    struct metrics_stats st;
    char err[ERR_LEN];

    if (r->o.weights_out && step_weights_write(&r->step, r->o.weights_out, r->o.rank, err) != 0) {
        log_msg("%s", err);
        return 1;
    }
    if (step_trace_close(&r->step, err) != 0) {
        log_msg("%s", err);
        return 1;
    }
    if ((r->o.csv || r->o.json) && metrics_record_save(&r->rec, r->o.csv, r->o.json, err) != 0) {
        log_msg("%s", err);
        return 1;
    }
    metrics_summarize(r->times, r->rec.nsteps, &st);
    log_msg("done, %d steps, median combine %.3f ms", r->o.steps, st.median * 1e3);
    if (r->o.rank == 0 && r->rec.nsteps > 0 && !r->cuda &&
        r->mistake != MISTAKE_SYNC_EVERY_MICRO) {
        struct step_times m;
        size_t k = step_medians(&r->step, &m);
        log_msg("medians over %zu timed steps: step %.4f s, backward %.4f s, pushes %.4f s, "
                "pull %.4f s, wait after backward %.4f s (%zu bucket%s, overlap %s)",
                k, m.step, m.backward, m.comm, m.finish, m.wait, step_buckets(&r->step),
                step_buckets(&r->step) == 1 ? "" : "s",
                step_overlapping(&r->step) ? "on" : "off");
    }
    return 0;
}
