/* sim.h -- what bin/psring_sim's actors share: the job (sim/flags.c fills
 * it before the simulation starts; the actors only read it) and each
 * actor's own slot (its record, its counters, its outcome); main.c owns
 * both.
 *
 * Actors run one at a time (SimGrid's contexts), so the shared proxy
 * buffer of the sizes mode needs no lock: its values are never read.
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include <stdint.h>

#include "train/cli_common.h"
#include "train/compute.h"
#include "base/err.h"
#include "measure/metrics.h"

/* One parameter server: the elements [first, first + count) it owns and
 * the host it runs on (a worker's, colocated, or one of its own). */
struct sim_server {
    uint64_t first, count;
    int host;
};

/* --bench (ring only): ring_worker's benchmark of one size (bench.h). */
struct sim_bench {
    int on;                        /* 1: --bench */
    int op;                        /* --coll: enum coll_op */
    int iters, warmup_iters, root;
    double imbalance;
};

struct sim_job {
    int ps;                        /* 1: parameter server; 0: ring/rd */
    int algo;                      /* enum coll_algo (ring only) */
    int k, servers;                /* servers: the server actors (PS), = nsrv */
    struct sim_server *srv;        /* PS: `servers` entries, in element order */
    uint64_t bucket_bytes;         /* the workers' --bucket-size (ring: real mode) */
    int no_overlap;                /* 1: --no-overlap, or the PS (it never overlaps) */
    int real;                      /* 1: payloads (workload, store); 0: sizes */
    uint64_t bytes;                /* n in bytes */
    size_t proxy_n;                /* sizes, ring: elements the algorithm runs on */
    double scale;                  /* sizes, ring: bytes / (proxy_n * es) */
    void *proxy;                   /* sizes, ring: proxy_n elements, shared */
    const struct cli_common *c;    /* dtype, steps, warmup, lr, seed, link, outputs */
    int kill_slot, kill_step;      /* --kill RANK@STEP: the ring rank or PS worker
                                      (slot) that dies at the start of that step; -1 */
    struct compute_model compute;  /* --backward-time T, --straggler, --jitter, --pause
                                      (compute.h): each worker's simulated compute */
    struct sim_bench bench;        /* --bench; zero without it */
    int compress;                  /* --compress: base/compress.h (ring, real payloads) */
    int group;                     /* --algo hring: G, ranks per host (flags.c, job_group) */
};

struct sim_slot {
    const struct sim_job *job;
    int rank;                      /* ring rank, worker rank, or server index */
    int host;                      /* the platform host it runs on */
    int slot;                      /* its index: ring ranks, PS workers, then servers */
    struct metrics_record rec;     /* initialised by engine.c sim_actors_start */
    uint64_t bytes_in, bytes_out;  /* payload bytes across its host's link
                                      (messages between actors on one host: none) */
    int rc;
    char err[ERR_LEN];
};

/* sim_steps: the steps this actor runs: the job's, or fewer for the one
 * --kill names (it dies at the start of step kill_step). */
static inline int sim_steps(const struct sim_slot *sl)
{
    return sl->slot == sl->job->kill_slot ? sl->job->kill_step : sl->job->c->steps;
}

/* sim_ps_round_robin: whether PS server s sends with ROUND-ROBIN EGRESS
 * (ps_wire.h): the only server, on a host of its own (the workers' are
 * hosts 0 .. K-1), with a link rate (model.h, model_ps_sched: S > 1 is
 * not derived). Its server (ps_server.c) and its workers' readers
 * (ps_client.c: eager mailboxes) must agree. */
static inline int sim_ps_round_robin(const struct sim_job *j, int s)
{
    return j->c->link_bw > 0 && j->servers == 1 && j->srv[s].host >= j->k;
}

/* sim_compute: SIMULATED COMPUTE. Sizes mode has no workload to sleep in,
 * so a ring rank or PS worker spends compute.h's t(rank, step) as one
 * simulated sleep before the step's first message: what real mode's
 * workload sleeps on the simulated clock (workload.h, spread over its
 * layers) when the step is one bucket, or runs without overlap (the PS
 * always; the ring with --no-overlap). Nothing without --backward-time. */
void sim_compute(const struct sim_slot *sl, int step);

/* The actors' bodies (SimGrid's xbt_main_func_t); the slot is the actor's
 * data. ps_server.c: the PS server; ps_actor.c: the PS worker; ring_actor.c:
 * the ring rank. */
void sim_ps_server(int argc, char **argv);
void sim_ps_worker(int argc, char **argv);
/* ps_elements: n, the PS job's elements (ps_actor.c). */
size_t ps_elements(const struct sim_job *j);
void sim_ring_actor(int argc, char **argv);

/* sim_rec_path: rank r's --bench record file (bench.c writes it, report.c
 * reads and removes it): $TMPDIR (or /tmp)/psring_sim.PID.rec.RANK. */
void sim_rec_path(char *buf, size_t len, int rank);

#endif /* SIM_H */
