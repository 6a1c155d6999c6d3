/* clock.h -- the one clock psring measures and paces with.
 *
 * Seconds as a double on CLOCK_MONOTONIC: 53 bits hold nanoseconds for
 * about 100 days of uptime, plenty for a run. Sleeps take an absolute
 * deadline, so a late wake-up (a 50 us nanosleep takes 90-280 us on a busy
 * 2-core machine) never accumulates into the next wait.
 */
#ifndef CLOCK_H
#define CLOCK_H

/* clock_now: monotonic time in seconds. */
double clock_now(void);

/* clock_sleep_until: sleep until clock_now() >= t (returns at once if t is
 * past); restarts after signals. */
void clock_sleep_until(double t);

/* A clock as a value: the real one (clock_real), or another a transport
 * supplies (a simulated transport runs the same code on virtual time).
 * Code above the transport reads time only through the clock it was given
 * (clock_src_now, clock_src_sleep_until), never clock_now directly, so the
 * whole step runs unchanged on either. ctx is the owner's; the struct is
 * plain data and may be copied. */
struct clock_src {
    double (*now)(void *ctx);
    void (*sleep_until)(void *ctx, double t);
    void *ctx;
};

/* clock_real: clock_now and clock_sleep_until behind the struct. */
extern const struct clock_src clock_real;

static inline double clock_src_now(const struct clock_src *c)
{
    return c->now(c->ctx);
}

static inline void clock_src_sleep_until(const struct clock_src *c, double t)
{
    c->sleep_until(c->ctx, t);
}

/* clock_precise_timers: ask the kernel for the smallest timer slack (the
 * default 50 us slack is added to every sleep); call once per process. */
void clock_precise_timers(void);

/* clock_cpu_seconds: user+system CPU time this process has used. */
double clock_cpu_seconds(void);

/* clock_thread_cpu_seconds: user+system CPU time the calling thread has
 * used (CLOCK_THREAD_CPUTIME_ID); 0 if the kernel cannot say. */
double clock_thread_cpu_seconds(void);

/* clock_thread_queued_seconds: how long the calling thread has been
 * runnable but waiting for a CPU, in all (the kernel's run delay); NAN
 * where the kernel cannot say. A pread of a descriptor the thread keeps
 * (its exit closes it; a fork's child opens its own): about a
 * microsecond. */
double clock_thread_queued_seconds(void);

#endif /* CLOCK_H */
