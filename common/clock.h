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

/* clock_precise_timers: ask the kernel for the smallest timer slack (the
 * default 50 us slack is added to every sleep); call once per process. */
void clock_precise_timers(void);

/* clock_cpu_seconds: user+system CPU time this process has used. */
double clock_cpu_seconds(void);

#endif /* CLOCK_H */
