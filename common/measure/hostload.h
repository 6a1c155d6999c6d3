/* hostload.h -- how busy the whole machine was, from /proc/stat, and
 * whether it (rather than the EMULATED link) could have set a job's pace.
 *
 * A job's processes know their own CPU time (getrusage: the records' cpu_s)
 * but not what everything else on the machine did. The kernel counts, per
 * state, the clock ticks all CPUs spent since boot (the "cpu " line of
 * /proc/stat) and how many threads are runnable right now (procs_running).
 * Two samples of those counters, one at the start and one at the end of a
 * timed part, give the machine's busy share over it; take away the job's
 * own share and what is left is the other processes'.
 *
 * THE SAMPLE (hostload_sample_read, at the start and at the end of a timed
 * part; each process of a job takes its own pair, metrics.h carries them):
 *   total    user+nice+system+idle+iowait+irq+softirq+steal ticks, all CPUs
 *            (guest time is already inside user and nice: not added twice)
 *   busy     total - idle - iowait: STEAL COUNTS AS BUSY (a hypervisor
 *            that runs someone else on our CPU is someone else's load)
 *   running  procs_running (runnable threads, the reader itself included);
 *            from /proc/loadavg ("R/T") when /proc/stat has none
 *   wait_ns  THIS PROCESS's run delay so far: the nanoseconds its threads
 *            were runnable but waiting for a CPU (the second field of
 *            /proc/self/task/TID/schedstat, summed over the threads); -1
 *            when the kernel does not keep it
 *
 * THE RULE (hostload_decide; thresholds below, docs/design.md repeats it),
 * every share in the counters' own ticks over one window:
 *   machine_busy = delta busy / delta total            share of ALL cores
 *   job_busy     = job cpu_s * USER_HZ / delta total    the job's share
 *   other_cores  = max(0, machine_busy - job_busy) * ncpu
 *   run_queue    = the median over the samples of running - 1 (the reader)
 * The machine could have set the pace (bound) when any of:
 *   1. machine_busy > HOSTLOAD_BUSY (0.80): less than a fifth of the
 *      cores idle on average over the timed part;
 *   2. other_cores > HOSTLOAD_OTHER_CORES (0.5) and other_cores + nproc >
 *      ncpu: other processes used more than half a core, and not only
 *      cores the job's nproc processes could not have used anyway;
 *   3. run_queue - (nproc - 1) >= ncpu: even if every other process of
 *      the job was runnable at the samples, the rest of the machine had
 *      enough runnable threads to fill every core. (The bare run_queue >
 *      ncpu would fire on the job alone: K ranks leaving a barrier are K
 *      runnable threads, and that is no sign of anyone else's load.) A
 *      sample is an instant, so this is the weakest of the three: where
 *      the window measures the others' share (below) and they used less
 *      than HOSTLOAD_QUEUE_CORES (0.1) of a core over it, the instant is
 *      not believed (a K = 16 parameter server on an idle 2-core machine
 *      sampled 2 runnable threads besides its 17 processes, softirq and
 *      kernel workers, while the others used 0.013 of a core).
 * and, from the job's own processes (hostload_wait, when every process
 * knew its run delay):
 *   4. wait_share > HOSTLOAD_WAIT (0.08): the job's processes spent, on
 *      average, more than 8% of the timed part runnable but waiting for a
 *      CPU (wait_share = the run delays' growth summed over the processes,
 *      less what their emulated links took back from their timelines
 *      (link.h, OWN CORES AND THE VIRTUAL TIMELINE; the records'
 *      link_credit_s), / (wall x nproc)). Every rank of a ring is on the critical path of
 *      every step, so a wake-up that waits for a CPU delays the step: with
 *      more ranks than cores (K = 8 and 16 on 2 cores) the scheduler, not
 *      the link, sets the pace, though the cores are not busy on average.
 * bound_by: "busy" when signal 2 or 3 fired or the others' share exceeds
 * the job's (other processes, steal included, took CPU the job could have
 * used: a rerun on a quiet machine may differ); else "cpu" (only signal 1,
 * and the job's own processes used most of the busy cores: this machine is
 * too small for the job, a rerun will not help); "link" when no signal
 * fired. Signal 4 alone: "cpu", or "busy" when the others' share
 * exceeds the job's. Time against the model is NEVER a signal: a run off its model on
 * a quiet machine stays "link", so the gap is there to explain.
 * /proc/stat counts in ticks (USER_HZ, 100/s per core): a window of fewer
 * than HOSTLOAD_MIN_TICKS ticks over all cores (0.25 s on 2 cores) cannot
 * measure a share (one tick of 2 is 0.5 of the machine: an rd all-reduce
 * of 4 KiB, 11 ms timed, read "busy" on an idle machine), so such a
 * window counts as no samples: machine_busy and other_cores are NaN, the
 * job's own share stands in for signal 1, and signals 3 and 4 decide.
 */
#ifndef HOSTLOAD_H
#define HOSTLOAD_H

#include <stddef.h>
#include <stdint.h>

#define HOSTLOAD_BUSY 0.80          /* signal 1: machine busy share */
#define HOSTLOAD_OTHER_CORES 0.5    /* signal 2: cores other processes used */
#define HOSTLOAD_WAIT 0.08          /* signal 4: the job's mean run-delay share */
#define HOSTLOAD_MIN_TICKS 50       /* fewer ticks in the window: no shares */
#define HOSTLOAD_QUEUE_CORES 0.1    /* signal 3 needs the others to use this much */
#define HOSTLOAD_READ_MAX 16384     /* bytes of /proc/stat read per sample */

struct hostload_sample {
    int ok;                 /* 1: the fields below hold a sample */
    uint64_t total, busy;   /* ticks since boot, all CPUs */
    int running;            /* runnable threads; -1: not known */
    int64_t wait_ns;        /* this process's run delay so far; -1: not known */
};

enum hostload_by { HOSTLOAD_LINK, HOSTLOAD_CPU, HOSTLOAD_OTHERS };

struct hostload_verdict {
    double machine_busy;    /* 0..1; NaN without two good samples */
    double job_busy;        /* the job's share of all cores */
    double other_cores;     /* cores other processes used; NaN as above */
    double run_queue;       /* NaN when no sample knew it */
    double wait_share;      /* signal 4's share; NaN until hostload_wait knew it */
    int bound;              /* 1: a signal fired */
    enum hostload_by by;
};

/* hostload_parse_stat: the text of /proc/stat (len bytes, need not end in
 * NUL) into *s. The "cpu " line needs at least user, nice, system, idle;
 * procs_running is optional (running -1 without it). 0, or ERR_FORMAT
 * (then s->ok is 0). Never reads past text[len-1]. */
int hostload_parse_stat(const char *text, size_t len, struct hostload_sample *s);

/* hostload_parse_loadavg: the running count ("R" of "R/T", the fourth
 * field) of /proc/loadavg's text; -1 when it does not parse. */
int hostload_parse_loadavg(const char *text, size_t len);

/* hostload_parse_schedstat: the run delay (the second field, ns) of a
 * /proc/.../schedstat text ("CPU_NS WAIT_NS SLICES"); -1 when it does not
 * parse. Never reads past text[len-1]. */
int64_t hostload_parse_schedstat(const char *text, size_t len);

/* hostload_sample_read: sample this machine now, and this process's run
 * delay. Reads /proc/stat (and /proc/loadavg if needed) into a stack
 * buffer, and each thread's schedstat (the thread list's directory
 * stream is the only allocation), a few tens of microseconds, so it may
 * sit right next to a timed region. 0, a negative errno, or ERR_FORMAT;
 * s->ok says whether the sample holds (wait_ns is -1 when unknown, also
 * when s->ok is 1). */
int hostload_sample_read(struct hostload_sample *s);

/* hostload_decide: the rule above over the window from *a to *b (from the
 * same machine, a taken first), given the job's CPU seconds summed over its
 * processes, the ticks per second of the counters (sysconf(_SC_CLK_TCK),
 * 100 on Linux), the machine's cores and the job's process count.
 * run_queue is the median of every sample's running - 1 when the caller
 * has more samples than these two (the merge: two per process); NaN: the
 * mean of a's and b's. Without two good samples (a or b NULL or not ok,
 * or no tick between them) machine_busy and other_cores are NaN and the
 * job's share over wall_s x ncpu stands in for machine_busy in signal 1. */
void hostload_decide(const struct hostload_sample *a, const struct hostload_sample *b,
                     double job_cpu_s, double wall_s, double hz, int ncpu, int nproc,
                     double run_queue, struct hostload_verdict *v);

/* hostload_wait: signal 4 on a verdict from hostload_decide: job_wait_s,
 * the growth of the run delays summed over the job's nproc processes (NaN
 * when one did not know its own), over wall_s. Sets v->wait_share (NaN
 * without one) and, when the signal fires, v->bound and v->by (a bound
 * verdict keeps its reason). */
void hostload_wait(struct hostload_verdict *v, double job_wait_s, double wall_s, int nproc);

/* hostload_by_name: "link", "cpu" or "busy". */
const char *hostload_by_name(enum hostload_by by);

#endif /* HOSTLOAD_H */
