/* metrics.h -- per-process step records, their merge into one CSV row.
 *
 * Each process of a job (server, worker, ring rank) keeps a record of its
 * timed steps (warm-up steps are never added) and writes it with --csv.
 * The launcher merges one job's records into one row of the shared CSV,
 * whose columns are docs/design.md's, in this order:
 *
 *   system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,
 *   ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,
 *   model_s,host_bound
 *
 * MERGE RULES
 *   time_s      per step, the slowest worker/rank's combine time (PS: push
 *               start to pull end; ring: the all-reduce); then the median
 *               over steps; time_min_s / time_max_s: min / max over steps.
 *   ingress_s   PS only: per step the slowest server's first-pushed-byte to
 *   egress_s    last (first-pulled-byte to last), median over steps.
 *   algbw       bytes / time_s.
 *   busbw       the rate the busiest link must sustain: ring algbw *
 *               2(K-1)/K (nccl-tests' definition); PS algbw * K (the
 *               server's link carries K messages each way).
 *   bytes_in/out per step, median over steps: PS the servers' counters
 *               summed; ring rank 0's.
 *   model_s     the alpha-beta model (model.h) for time_s; empty when the
 *               link has no bandwidth limit.
 *   host_bound  1 when the host, not the emulated link, set the pace: the
 *               job's processes used more than METRICS_HOST_CPU of the
 *               machine's CPUs during the timed steps AND time_s exceeded
 *               the model by more than METRICS_HOST_SLACK; else 0; empty
 *               without a bandwidth limit (then nothing is link-bound).
 *   A field that does not apply is empty (NaN in memory).
 *
 * RECORD FILE (text, one "key value" per line, then one line per step):
 *   psring-record 1
 *   system ring | role rank | rank 3 | world 4 | algo ring | transport tcp
 *   bytes 4194304 | link_bw 62500000 | link_latency 0.0001
 *   cpu_s 1.25 | wall_s 2.5 | ncpu 2
 *   step STEP COMBINE_S INGRESS_S EGRESS_S BYTES_IN BYTES_OUT   (repeated;
 *        a time that does not apply is written as -)
 */
#ifndef METRICS_H
#define METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define METRICS_NAME_LEN 16
#define METRICS_HOST_CPU 0.80
#define METRICS_HOST_SLACK 1.25
#define METRICS_MAX_STEPS 1000000

struct metrics_stats {
    double min, median, max;
};

/* metrics_summarize: min / median / max of v[0..n) (n >= 1; median of an
 * even count is the mean of the middle two). Sorts a private copy. */
int metrics_summarize(const double *v, size_t n, struct metrics_stats *out);

struct metrics_step {
    uint64_t step;
    double combine_s;      /* NaN: does not apply (the server's record) */
    double ingress_s;      /* NaN: does not apply (workers, ring) */
    double egress_s;
    uint64_t bytes_in, bytes_out;
};

struct metrics_record {
    char system[METRICS_NAME_LEN];     /* "ps" or "ring" */
    char role[METRICS_NAME_LEN];       /* "server", "worker", "rank" */
    char algo[METRICS_NAME_LEN];       /* "ring", "rd", ... or "" */
    char transport[METRICS_NAME_LEN];  /* "tcp", "nccl", ... */
    int rank, world;
    uint64_t bytes;                    /* message size n, in bytes */
    double link_bw, link_latency;      /* 0 = off */
    double cpu_s, wall_s;              /* over the timed steps */
    int ncpu;                          /* CPUs online on this host */
    size_t nsteps, cap;
    struct metrics_step *steps;        /* owned */
};

/* metrics_record_init: zeroed record with room for cap steps, allocated
 * now so that adding a step inside a timed loop never allocates. */
int metrics_record_init(struct metrics_record *r, size_t cap);
void metrics_record_free(struct metrics_record *r);
/* metrics_record_add: append one step; ERR_USAGE when full. */
int metrics_record_add(struct metrics_record *r, const struct metrics_step *s);
int metrics_record_write(const struct metrics_record *r, const char *path, char *err);
/* metrics_record_read: parse a record file into *r (initialised here;
 * free with metrics_record_free, also after a failure). ERR_FORMAT with
 * "path:line: reason" in err. */
int metrics_record_read(struct metrics_record *r, const char *path, char *err);

struct metrics_row {
    char system[METRICS_NAME_LEN], algo[METRICS_NAME_LEN], transport[METRICS_NAME_LEN];
    int k;
    uint64_t bytes;
    size_t steps;
    double time_s, time_min_s, time_max_s, ingress_s, egress_s;
    double algbw, busbw, bytes_in, bytes_out, link_bw, link_latency, model_s;
    int host_bound;                    /* -1: empty */
};

/* metrics_merge: one job's records -> one row (rules above). The records
 * must agree on system, world and bytes, and there must be at least one
 * worker/rank record. ERR_FORMAT with the reason in err otherwise. */
int metrics_merge(const struct metrics_record *recs, size_t n,
                  struct metrics_row *row, char *err);
void metrics_csv_header(FILE *f);
void metrics_row_write(FILE *f, const struct metrics_row *row);

#endif /* METRICS_H */
