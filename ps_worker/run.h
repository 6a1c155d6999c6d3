/* run.h -- what ps_worker's files share: one worker's run (struct run,
 * every buffer the steps use, allocated before the first) and the helpers
 * main.c calls from the other files: the GPU side (gpu.c) and the
 * record and the outputs at the end (report.c). Not a library interface:
 * ps_worker's own.
 */
#ifndef PS_WORKER_RUN_H
#define PS_WORKER_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "base/powersgd.h"
#include "measure/metrics.h"
#include "ps/client.h"
#include "step_gpu.h"
#include "train/cli_common.h"
#include "train/optim.h"
#include "train/step.h"
#include "train/workload.h"
#include "wire/auth.h"

/* One worker's run: everything the steps use, allocated before the first. */
struct run {
    struct cli_common o;
    struct auth_key key;
    struct workload w;
    int have_w, have_rec;
    size_t elem;
    int mistake;                /* enum mistake (mistake.h) */
    int passes;                 /* pushes of the gradient per step (sync-every-micro: m) */
    int cuda;                   /* --device cuda */
    uint64_t bucket_bytes;      /* --bucket-size (0: the default) */
    int no_overlap;             /* --no-overlap */
    const char *trace;          /* --trace FILE */
    int local_server;           /* --local-server I (EMULATED host link), -1 none */
    int compress;               /* --compress (base/compress.h): the pushes' format */
    struct psgd psgd;           /* --compress powersgd:R: the factors' plan, this worker's
                                   error feedback and warm start (ps_client_psgd) */
    int have_psgd;
    void *psgd_out;             /* ... n elements: the decode's P^ Q^T (unused) */
    struct gpu_stream *stream;  /* --device cuda: the GPU side, on this stream */
    struct step_gpu gpu;        /* --device cuda: the step's device (step_gpu.h) */
    int have_gpu;
    void *hgrad, *hweights;     /* --device cuda: pinned, n elements: pushed / pulled */
    double *times;              /* combine time of each timed step */
    int sync_every;             /* --sync-every H (LOCAL SGD below) */
    struct optim_cfg oc;        /* LOCAL SGD: the worker's own optimizer */
    struct step step;           /* the training step (common/train/step.h) */
    int have_step;
    struct metrics_record rec;
    struct ps_client client;
    double reconnect_window;    /* --reconnect-window (0: off, the 2T exit) */
};

/* gpu.c */
/* stage: copy bytes between the device and pinned memory, waited for;
 * a failure's line names the step. */
int stage(struct run *r, uint64_t step, void *dst, const void *src, size_t bytes,
                 char *err);
/* gpu_setup: the device of this local rank, its stream, the step's device
 * (step_gpu.h) and the pinned push and pull buffers. */
int gpu_setup(struct run *r, char *err);
/* gpu_teardown: what gpu_setup made (any part of it). */
void gpu_teardown(struct run *r);

/* report.c */
/* record_setup: the metrics record's fixed fields, room for every timed
 * step. ERR_USAGE when there are more than a record holds. */
int record_setup(struct metrics_record *rec, const struct cli_common *o, size_t n,
                        size_t elem);
/* finish: --weights-out, --csv and --json, the last line. 0, or 1 (message logged). */
int finish(struct run *r);

#endif /* PS_WORKER_RUN_H */
