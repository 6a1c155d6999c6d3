/* report.h -- bin/psring_sim's outcome once the simulation has run: the
 * one-line verdict (the first failure, or with --kill the line that names
 * the rank killed) and the outputs (the records merged into the CSV row
 * launch.sh would write, --host-bytes, --csv-out).
 */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include "flags.h"
#include "measure/metrics.h"
#include "sim.h"

/* sim_verdict: one line on stderr, the first failure, or with --kill the
 * first that names the rank killed (as the real ring's neighbour and the
 * real server do). 1 when it printed one, else 0. */
int sim_verdict(const struct sim_opts *o, const struct sim_job *j,
                const struct sim_slot *slots, int nslots);

/* sim_report: the slots' records (with --bench, the files bench.c wrote)
 * merged into the CSV row, --host-bytes, the row on stdout or --csv-out,
 * and as JSON Lines to --json-out.
 * recs: nslots entries of scratch. Returns the exit status: status,
 * unless an output fails (1). */
int sim_report(const struct sim_opts *o, const struct sim_job *j, struct sim_slot *slots,
               struct metrics_record *recs, int nslots, int nhosts, const char *placement,
               int status);

#endif /* SIM_REPORT_H */
