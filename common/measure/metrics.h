/* metrics.h -- per-process step records, their merge into one CSV row.
 *
 * Each process of a job (server, worker, ring rank) keeps a record of its
 * timed steps (warm-up steps are never added) and writes it with --csv.
 * The launcher merges one job's records into one row of the shared CSV,
 * whose columns are docs/design.md's, in this order:
 *
 *   system,algo,transport,K,bytes,steps,time_s,time_min_s,time_max_s,
 *   ingress_s,egress_s,algbw,busbw,bytes_in,bytes_out,link_bw,link_latency,
 *   model_s,host_bound,bound_by,machine_busy,job_busy,run_queue,servers,
 *   placement,coll,step_s,ttt_s,wait_s,link_util,cpu_s_per_gb,compress
 *
 * MERGE RULES
 *   time_s      per step, the slowest worker/rank's combine time (PS: push
 *               start to pull end; ring: the all-reduce) from the LAST
 *               ENTRY (below); then the median over steps; time_min_s /
 *               time_max_s: min / max over steps.
 *   ingress_s   PS only: per step the slowest server's first-pushed-byte to
 *   egress_s    last (first-pulled-byte to last), median over steps.
 *   algbw       bytes / time_s.
 *   busbw       the rate the busiest link must sustain: ring algbw *
 *               2(K-1)/K (nccl-tests' definition); PS algbw * K (the
 *               server's link carries K messages each way).
 *   bytes_in/out per step, median over steps: PS the servers' counters
 *               summed; ring rank 0's.
 *   model_s     the alpha-beta model (model.h) for time_s; empty when the
 *               link has no bandwidth limit. A PS row whose workers pushed
 *               several buckets (their records' buckets > 1: per-bucket
 *               pull) is modelled as pipelined (model_ps_pipelined, the
 *               largest bucket's bytes); one bucket: the one-pull model,
 *               with one server of its own as the server's round-robin
 *               egress serves it (model_ps_sched: the seeds' 2a + 2 K n /
 *               bw less the pushes that cross the server's ingress while
 *               the last workers still wait for their weights), or the
 *               seeds' own when the row's one timed step is the first.
 *   host_bound  1 when the machine, not the emulated link, could have set
 *   bound_by    the pace; bound_by says who: "cpu" (the job's own
 *               processes used most of the busy cores), "busy" (other
 *               processes did, steal included) or "link" (no signal: 0).
 *               Decided from the machine signals below only (the rule is
 *               hostload.h's), never from time_s against model_s. Both
 *               empty without a bandwidth limit (then nothing is
 *               link-bound: the row is the machine's by definition).
 *               "sw" replaces "link" (never "cpu" or "busy") when the
 *               link's own record says it stood idle: link_util below
 *               METRICS_SW_UTIL (0.95) times the algorithm's own share
 *               (model.h, model_link_util: 1, but for tree and dbtree
 *               the replay's, whose leaves wait for the broadcast; the
 *               PS's 1). host_bound stays 0 then (no
 *               machine signal fired): the software, not the machine's
 *               load and not the link, set the pace.
 *   machine_busy the share of ALL the machine's cores busy (every process,
 *               steal included) over the timed part: /proc/stat from the
 *               earliest record's start sample to the latest's end sample.
 *               Empty when the records carry no samples.
 *   job_busy    the job's own share of all cores: the records' cpu_s
 *               summed / (the longest wall_s x ncpu).
 *   run_queue   the median over every record's two samples of the
 *               runnable threads (procs_running, less the reader).
 *   The three are filled with or without a link limit.
 *   servers     PS only: the server processes (records with role server).
 *   placement   PS only: "separate" (server hosts of their own), unless
 *               the merge is told otherwise (metrics_row_place:
 *               "colocated", a shard on each worker's host plus
 *               servers - K extra, Theorem 1's split; "colocated-even",
 *               the same with equal shards). model_s follows it
 *               (model.h, PLACEMENTS).
 *   coll        ring --bench only: the collective, nccl-tests' name
 *               (all_reduce, reduce_scatter, all_gather, broadcast, reduce,
 *               alltoall); busbw then uses that collective's factor
 *               (model_busbw_factor: 2(K-1)/K, (K-1)/K or 1) and model_s
 *               its formula (model_coll; empty for broadcast, reduce and
 *               alltoall, whose segment and imbalance the record does not
 *               carry). Empty for training and the PS.
 *   step_s      per step the slowest worker/rank's WHOLE step (backward
 *               pass, combine, apply: what overlap shortens, where time_s,
 *               the combine alone, does not), then the median over steps;
 *               empty when no worker/rank record carries it (the
 *               simulator, ring_worker --bench).
 *   ttt_s       time to target (--target-loss X): the first wall_s at which
 *               the loss was <= X (losscurve.h, TIME TO TARGET), from the
 *               records that carry one (the loss's keeper: ps_server shard
 *               0, ring rank 0); the smallest if several do. Empty when no
 *               --target-loss was given or the loss never reached it.
 *   wait_s      the largest per-worker MEAN wait over the timed steps
 *               (WAIT below): a server's record carries the largest of its
 *               workers' means, a ring rank's its own mean; the largest
 *               over the records. Empty when no record carries one (NCCL,
 *               --bench, the simulator).
 *   link_util   the busiest critical-path link's utilization over its
 *               combine: per record busy / (span - model idle), busy =
 *               span - idle from the link's own record (link.h,
 *               UTILIZATION; the record's link_span_s and link_idle_s),
 *               clamped to [0, 1]; the largest over the records on the
 *               critical path: every ring rank, the PS's servers (their
 *               links, the host's when colocated; the workers' links are
 *               not on the PS's critical path and carry none). The spans
 *               are chosen so that the model's own idle is 0 on them
 *               (docs/link.md, UTILIZATION): a ring rank's egress over
 *               its all-reduce calls from its own entry, less its
 *               compute skew (the time it entered each timed combine
 *               before the last rank did, its steps' enter_t on one
 *               clock: its link then waited for a neighbour still
 *               computing, which time_s leaves out too, LAST ENTRY;
 *               taken from both span and idle, at most the idle: the
 *               span is then the last entry's; the one place the skew
 *               is left out), a step's latency bytes in flight (busy),
 *               a wait after running ahead of the model's step not idle
 *               up to the lead (link.h, UTILIZATION), a server's both
 *               directions over its
 *               steps, from the last worker's first push to its last
 *               weights' arrival (sync mode). Empty without a bandwidth
 *               limit or without such a record (NCCL, the simulator,
 *               async modes, the GPU-staged ring).
 *   cpu_s_per_gb the CPU cost of moving bytes: per record its cpu_s
 *               (user + system, over its timed part) less its
 *               compute_cpu_s (a training rank's or worker's gradient,
 *               closed-form check and apply, counted on the threads that
 *               ran them; none in --bench), over the GB (1e9 bytes) it
 *               moved in it, its steps' bytes_in + bytes_out (both
 *               directions, headers included, paced or not); the
 *               largest over the records (the costliest process: the
 *               server of a PS, the busiest rank of a ring). So a
 *               training row counts what its collective cost (the
 *               transport, the reduce, the finite checks of what is
 *               sent), not its workload; a server's apply is still in
 *               its cpu_s. Empty when no record has cpu_s > 0 and bytes
 *               (the simulator, NCCL).
 *   compress    the all-reduce's wire format (--compress: "none", "fp16",
 *               "bf16", "powersgd:R[:noef]": wire_bytes its two rounds'
 *               elements), from the first worker/rank record; empty when
 *               the records carry none (the PS, the simulator, older
 *               records). model_s then models the bytes that travel: the
 *               records' wire_bytes (the vector's size on the wire) in
 *               place of bytes; for the PS the pushes' ingress at
 *               wire_bytes plus the weights' egress at bytes (separate
 *               servers, one bucket; empty otherwise: not modelled).
 *   A field that does not apply is empty (NaN in memory).
 * LAST ENTRY. A combine cannot start before its last process enters it,
 *   and the model (model.h) times it from there. Processes that finished
 *   their backward pass (or the check before it) earlier enter earlier and
 *   wait; that wait is compute skew, not the collective's time, and is
 *   wait_s's. So when every worker/rank record of a step carries enter_t
 *   on one clock (the same clock_id), the step's combine time is
 *   max over processes of (combine_s - (E - enter_t)), E the latest
 *   enter_t: with one combine per step, the last process to leave, timed
 *   from the last to enter. Otherwise (records from several machines,
 *   --bench, older records) the slowest combine_s as before. On 16 idle
 *   cores (docs/link.md) the skew was 1.2-1.7x of the ring's model.
 *
 * WAIT (struct metrics_wait; docs/design.md, Metrics). Per worker and
 * timed step, how long it waited for the others:
 *   ps_server sync: from that worker's last push part of the step arriving
 *               at the server to the step's release (its last part): the
 *               last worker to push waits about 0, the others wait for it.
 *   ps_server async: 0 by construction (a push is applied and answered at
 *               once); ssp:N: from the push's arrival to its weights being
 *               sent, i.e. the time SSP held the worker (0 when not held);
 *               backup:N: from the push's arrival to its step's apply (a
 *               dropped push is answered at once: 0).
 *   ring rank:  from entering the step's all-reduce to the first piece of
 *               the first chunk arriving from its neighbour (rd: partner).
 *               It waits for its neighbour's entry into the step, which
 *               carries lateness propagated along the ring (the previous
 *               all-reduce ends for all only when the slowest rank's data
 *               has gone round): with one slow rank, its right neighbour
 *               waits and the slow rank itself does not.
 *   The times are the server's (the ring rank's) clock; EMULATED compute
 *   time included. Each process logs its per-worker means and maxima.
 *
 * RECORD FILE (text, one "key value" per line, then one line per step):
 *   psring-record 1
 *   system ring | role rank | rank 3 | world 4 | algo ring | transport tcp
 *   coll all_gather   (optional: ring --bench's collective)
 *   bytes 4194304 | link_bw 62500000 | link_latency 0.0001
 *   cpu_s 1.25 | wall_s 2.5 | ncpu 2
 *   machine0 TOTAL BUSY RUNNING | machine1 TOTAL BUSY RUNNING   (optional:
 *        the hostload.h samples at the start / end of the timed steps;
 *        RUNNING is - when unknown)
 *   buckets 8 | bucket_bytes 16384   (optional: a PS worker's pushes per
 *        pass, --bucket-size, and its largest bucket in bytes; written
 *        when there are several; absent: one bucket)
 *   ttt_s 12.5 | wait_s 0.031   (optional: this process's time to target
 *        and wait, MERGE RULES; absent when it has none)
 *   compute_cpu_s 0.8   (optional: of cpu_s, the CPU seconds a training
 *        rank or worker spent computing, its gradient, check and apply,
 *        counted per thread: step.h, step_compute_cpu; MERGE RULES:
 *        cpu_s_per_gb)
 *   link_credit_s 0.02   (optional: of this process's run delay between
 *        its machine0 and machine1 samples, the seconds its emulated link
 *        took back from its timeline (link.h, OWN CORES AND THE VIRTUAL
 *        TIMELINE); hostload.h's signal 4 counts only the rest)
 *   link_span_s 2.5 | link_idle_s 0.01   (optional, together: the time
 *        its link's utilization was measured over and the link's idle in
 *        it, a ring rank's egress alone, a server's both directions;
 *        MERGE RULES: link_util)
 *   wait0 NS | wait1 NS   (optional: the process's run delay at those
 *        samples, hostload.h wait_ns; left out when unknown)
 *   clock ID   (optional: clock_id, the clock enter_t is on)
 *   compress fp16 | wire_bytes 2097152   (optional: --compress and the
 *        vector's bytes on the wire; MERGE RULES: compress)
 *   step STEP COMBINE_S INGRESS_S EGRESS_S BYTES_IN BYTES_OUT [STEP_S [ENTER_T]]
 *        (repeated; a time that does not apply is written as -; STEP_S,
 *        the whole step, and ENTER_T are always written, and a record
 *        without them, an older one, still reads: NaN; ENTER_T, an
 *        instant on the clock, with every digit (%.17g): its 9 digits
 *        were 0.1 ms at 19 hours' uptime, 1 ms after 28, a third of a
 *        4 KiB PS step's entry spread)
 */
#ifndef METRICS_H
#define METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hostload.h"

#define METRICS_NAME_LEN 16
#define METRICS_MAX_STEPS 1000000
#define METRICS_CLOCK_LEN 40
#define METRICS_SW_UTIL 0.95    /* link_util below this: bound_by "sw" (MERGE RULES) */

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
    double step_s;         /* the whole step; NaN: not recorded (the server,
                              --bench) */
    double enter_t;        /* when the process entered the step's first
                              combine, on its clock (clock_id): LAST ENTRY.
                              NaN: not recorded. Last, so that a positional
                              initializer must name it: set it */
};

struct metrics_record {
    char system[METRICS_NAME_LEN];     /* "ps" or "ring" */
    char role[METRICS_NAME_LEN];       /* "server", "worker", "rank" */
    char algo[METRICS_NAME_LEN];       /* "ring", "rd", ... or "" */
    char transport[METRICS_NAME_LEN];  /* "tcp", "nccl", ... */
    char coll[METRICS_NAME_LEN];       /* ring --bench: "all_gather", ...; else "" */
    int rank, world;
    uint64_t bytes;                    /* message size n, in bytes */
    double link_bw, link_latency;      /* 0 = off */
    double cpu_s, wall_s;              /* over the timed steps */
    double compute_cpu_s;              /* of cpu_s, the training step's compute
                                          (step_compute_cpu); NaN: none */
    double ttt_s, wait_s;              /* MERGE RULES; NaN (metrics_record_init): none */
    double link_span_s, link_idle_s;   /* MERGE RULES: link_util; NaN: none */
    double link_credit_s;              /* of the run delay machine0..1 saw, what
                                          the link took back; NaN: none */
    int ncpu;                          /* CPUs online on this host */
    char clock_id[METRICS_CLOCK_LEN];  /* whose clock enter_t is on: the
                                          kernel's boot id (CLOCK_MONOTONIC
                                          is one clock per boot), "sim"
                                          for the simulator's; "": unknown */
    struct hostload_sample machine0, machine1;  /* start / end of the timed
                                                   steps; .ok 0: none */
    size_t nsteps, cap;
    struct metrics_step *steps;        /* owned */
    /* A PS worker's buckets (issue 15; model_s of per-bucket pull): */
    uint32_t buckets;                  /* pushes per pass; 0 or 1: one */
    uint64_t bucket_bytes;             /* the largest bucket, bytes (buckets > 1) */
    char compress[METRICS_NAME_LEN];   /* --compress: "none", "fp16", ...; "": not recorded */
    uint64_t wire_bytes;               /* the vector on the wire, bytes; 0: bytes */
};

/* metrics_record_init: zeroed record with room for cap steps, allocated
 * now so that adding a step inside a timed loop never allocates. */
int metrics_record_init(struct metrics_record *r, size_t cap);
void metrics_record_free(struct metrics_record *r);
/* metrics_record_add: append one step; ERR_USAGE when full. */
int metrics_record_add(struct metrics_record *r, const struct metrics_step *s);
int metrics_record_write(const struct metrics_record *r, const char *path, char *err);
/* metrics_record_text: the record file's text in *text (malloc'd, the
 * caller frees it), *len bytes. 0 or a negative errno. */
int metrics_record_text(const struct metrics_record *r, char **text, size_t *len);
/* metrics_record_write_json: the record as JSON Lines (--json FILE;
 * docs/design.md, JSON LINES): the manifest line (jsonl.h), one "process"
 * line of the record's KEY VALUE lines, one "step" line per step; written
 * through outfile.h (atomic) with "--json" in its messages. */
int metrics_record_write_json(const struct metrics_record *r, const char *path, char *err);
/* metrics_record_save: the record to csv (the record file) and json (JSON
 * Lines), each when not NULL. 0, or the first failure's code and line. */
int metrics_record_save(const struct metrics_record *r, const char *csv, const char *json,
                        char *err);
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
    char bound_by[8];                  /* "link", "sw", "cpu", "busy" or "" */
    double machine_busy, job_busy, run_queue;   /* NaN: empty */
    int servers;                       /* PS: server records; 0 (empty) for the ring */
    char placement[16];                /* "separate", "colocated", "colocated-even"; "" ring */
    char coll[METRICS_NAME_LEN];       /* "" : empty */
    double step_s;                     /* NaN: empty */
    /* Not columns: what model_s needs of a bucketed PS (the workers'
     * records' largest; buckets 0 or 1: one bucket, the one-pull model). */
    uint32_t buckets;
    double bucket_bytes;
    double ttt_s, wait_s;              /* NaN: empty */
    double link_util, cpu_s_per_gb;    /* NaN: empty */
    char compress[METRICS_NAME_LEN];   /* "": empty */
    uint64_t wire_bytes;               /* not a column: model_s's bytes when > 0 */
    int cold;                          /* not a column: the one timed step is the first (no
                                          step before it spread the PS's workers: model.h,
                                          model_ps_sched) */
};

/* One worker's waits (WAIT above): their sum, largest and count. Zeroed
 * is empty. */
struct metrics_wait {
    double sum, max;
    uint64_t n;
};

/* metrics_wait_add: one wait of t seconds (a negative t, clocks read in
 * the other order, counts as 0). */
void metrics_wait_add(struct metrics_wait *w, double t);
/* metrics_wait_mean: sum / n; NaN when n is 0. */
double metrics_wait_mean(const struct metrics_wait *w);

/* metrics_merge: one job's records -> one row (rules above). The records
 * must agree on system, world and bytes (a bench sweep's records are
 * merged one size at a time), and there must be at least one worker/rank
 * record. ERR_FORMAT with the reason in err otherwise. */
int metrics_merge(const struct metrics_record *recs, size_t n,
                  struct metrics_row *row, char *err);
/* metrics_row_place: a merged PS row's placement (MERGE RULES:
 * placement), model_s recomputed for it. ERR_USAGE with the reason in err
 * for an unknown name, a ring row, or colocated with fewer servers than
 * workers. */
int metrics_row_place(struct metrics_row *row, const char *placement, char *err);
void metrics_csv_header(FILE *f);
/* metrics_csv_header_line: the header, "\n" included (static). */
const char *metrics_csv_header_line(void);
void metrics_row_write(FILE *f, const struct metrics_row *row);
/* metrics_row_json: the row's CSV text as one {"record":"row",...} line
 * (jsonl_csv_row). 0, or a code with the reason in err. */
int metrics_row_json(FILE *f, const struct metrics_row *row, char *err);
/* metrics_row_append_json: appended to path (outfile_append, FLAG in the
 * messages: "--json-out"): a manifest line (jsonl_manifest, the KEY: VALUE
 * lines of `manifest` added; NULL: none), then the row's line. Each append
 * is such a pair, so a row's facts are those of the manifest line just
 * before it. 0, or a negative code with the line in err. */
int metrics_row_append_json(const char *flag, const char *path, const struct metrics_row *row,
                            const char *manifest, char *err);

#endif /* METRICS_H */
