/* clock.c -- monotonic time, absolute sleeps, CPU time (see clock.h). */
#include "clock.h"

#include <errno.h>
#include <math.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

double clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void clock_sleep_until(double t)
{
    struct timespec ts;
    double sec;

    if (!(t > clock_now()))
        return;
    sec = floor(t);
    ts.tv_sec = (time_t)sec;
    ts.tv_nsec = (long)((t - sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static double real_now(void *ctx)
{
    (void)ctx;
    return clock_now();
}

static void real_sleep_until(void *ctx, double t)
{
    (void)ctx;
    clock_sleep_until(t);
}

const struct clock_src clock_real = { real_now, real_sleep_until, NULL };

void clock_precise_timers(void)
{
    /* 1 ns is the minimum; failure only costs precision, so it is ignored. */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

double clock_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

double clock_thread_cpu_seconds(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
