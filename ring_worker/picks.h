/* picks.h -- ring_worker's flags after the parse: which back end (kind),
 * which all-reduce (algo), the hierarchical ring's groups, --compress,
 * --coll, --sync-every, each checked against the others with one usage
 * line and exit 64 for a combination that cannot run (main.c parses;
 * picks.c decides). */
#ifndef RW_PICKS_H
#define RW_PICKS_H

#include <stdint.h>

#include "coll/bench_flags.h"
#include "train/cli_common.h"

#define PROG "ring_worker"

struct opts {
    const char *coordinator, *port_file, *advertise, *listen, *device, *transport, *algo;
    int bench;
    const char *loss_out;       /* --loss-out FILE: rank 0 writes the loss per step */
    int mistake;                /* --mistake (mistake.h) */
    uint64_t bucket_bytes;      /* --bucket-size (buckets.h) */
    int no_overlap;             /* --no-overlap */
    int bucket_student;         /* --bucket-student (bucket_student.h) */
    const char *trace;          /* --trace FILE */
    uint64_t minbytes, maxbytes, piece;
    int stepfactor, warmup_iters, iters;
    struct bench_flags bf;      /* --coll, --root, --imbalance (bench_flags.h) */
    int op;                     /* the collective --coll names (enum coll_op) */
    int zero;                   /* --zero STAGE (train.h, ZeRO) */
    const char *compress_arg;   /* --compress */
    int compress;               /* enum compress_kind (base/compress.h) */
    int sync_every;             /* --sync-every H (train.h, LOCAL SGD) */
    int group;                  /* --ranks-per-host G (--algo hring; hring.h) */
    const char *calibration;    /* --calibration FILE (--algo auto, auto.h) */
    const char *phases;         /* --phases FILE (--bench, the host ring; ring_steps.h) */
};

int has_flag(int argc, char **argv, const char *name);
void usage_fail(const char *msg);
void usage_fail_value(const char *flag, const char *value, const char *why);
int env_set(const char *var);
int is_wildcard(const char *h);
int pick_kind(const struct opts *o, const struct cli_common *c, int argc, char **argv);
int pick_algo(const struct opts *o, int kind, int workload);
void pick_group(struct opts *o, const struct cli_common *c, int algo);
void pick_compress(struct opts *o, int kind, int algo);
int pick_coll(struct opts *o, const struct cli_common *c, int kind, int algo, int argc, char **argv);
void check_zero(const struct opts *o, const struct cli_common *c, int kind, int algo);
void check_sync_every(const struct opts *o, int kind, int xargc, char **xargv);
void check_bucket_student(const struct opts *o, int kind);
void check_phases(const struct opts *o, int kind, int algo);

#endif /* RW_PICKS_H */
