/* trace.h -- --trace FILE: a per-step timeline in Chrome's trace-event
 * JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Each rank writes FILE.RANK: a JSON array of complete events
 * ({"ph":"X"}) with pid = the rank, tid 0 = compute (the backward pass,
 * per layer or per micro-batch, and the optimizer), tid 1 =
 * communication (each bucket's all-reduce, the count/loss all-reduce), and
 * on tid 0 the wait between the end of the backward pass and the last
 * all-reduce's end. ts and dur are in microseconds; ts counts from the
 * Unix epoch (CLOCK_REALTIME: the stamps are taken on the monotonic clock
 * and shifted by realtime - monotonic, read once at open), so the files of
 * the ranks of one machine share an origin and merge into one timeline:
 *
 *   awk 'FNR > 1 && !/^\]/ { sub(/,$/, ""); e[n++] = $0 }
 *        END { print "["; for (i = 0; i < n; i++) print e[i] (i < n - 1 ? "," : ""); print "]" }' \
 *       FILE.0 FILE.1 > FILE.json
 *
 * One event per line; the first line is "[", the last "]". Events are
 * kept in memory during a step (trace_add: no allocation, no I/O) and
 * written after it (trace_flush), outside the timed part.
 *
 * OWNERSHIP. trace_open allocates room for cap events per step and opens
 * a temp file next to FILE.RANK (outfile.h); trace_close writes the
 * closing bracket and renames it over FILE.RANK (a run that never closes
 * its trace leaves no partial file), and frees. A
 * trace that is not open (path NULL) ignores every call.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stddef.h>

#define TRACE_COMPUTE 0
#define TRACE_COMM 1
#define TRACE_NAME_LEN 40

struct trace_event {
    char name[TRACE_NAME_LEN];
    int tid;
    double t0, t1;          /* clock_now() seconds */
    long step;
    long long bytes;        /* -1: none */
};

struct outfile;

struct trace {
    struct outfile *f;      /* the file, written atomically (outfile.h); owned */
    int rank, any;
    double shift;           /* realtime - monotonic, seconds */
    struct trace_event *ev; /* cap, owned */
    size_t n, cap;
};

/* trace_check: at start-up, that PATH.RANK can be written (outfile_check).
 * 0, or a negative code with "--trace: cannot write PATH.RANK: reason". */
int trace_check(const char *path, int rank, char *err);

/* trace_open: PATH.RANK for writing, with the process and thread names. 0,
 * or a negative code with "--trace PATH.RANK: reason" in err. With path
 * NULL: a closed trace, 0. */
int trace_open(struct trace *t, const char *path, int rank, size_t cap, char *err);

/* trace_add: one complete event (dropped when the step's room is full). */
void trace_add(struct trace *t, const char *name, int tid, double t0, double t1, long step,
               long long bytes);

/* trace_flush: write the step's events and forget them. */
void trace_flush(struct trace *t);

/* trace_close: the closing bracket, then the file is committed; 0, or
 * -errno with "--trace: cannot write PATH.RANK: reason" in err (a full
 * disk). Frees; safe on a closed trace. */
int trace_close(struct trace *t, char *err);

#endif /* TRACE_H */
