/* clock.c -- monotonic time, absolute sleeps, CPU time (see clock.h). */
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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

/* clock_thread_queued_seconds: the kernel's run delay of this thread
 * (/proc/thread-self/schedstat, the second field, in ns), read through a
 * descriptor each thread opens once and its exit closes. A fork's child
 * (its one thread is the forking one) must not read its parent's thread:
 * a pthread_atfork handler closes the copy, so the hot path makes one
 * system call, the pread (no gettid to tell a child from its parent). */
static pthread_key_t queued_key;
static pthread_once_t queued_once = PTHREAD_ONCE_INIT;
static _Thread_local int queued_fd = -1;    /* -2: the kernel cannot say */

static void queued_close(void *p)
{
    close((int)(intptr_t)p - 1);
}

static void queued_forked(void)
{
    if (queued_fd >= 0) {
        close(queued_fd);                       /* the parent thread's file */
        if (queued_key != (pthread_key_t)-1)
            (void)pthread_setspecific(queued_key, NULL);
    }
    queued_fd = -1;
}

static void queued_key_make(void)
{
    if (pthread_key_create(&queued_key, queued_close) != 0)
        queued_key = (pthread_key_t)-1;
    else if (pthread_atfork(NULL, NULL, queued_forked) != 0) {
        (void)pthread_key_delete(queued_key);
        queued_key = (pthread_key_t)-1;
    }
}

double clock_thread_queued_seconds(void)
{
    char buf[128], *p, *end;
    unsigned long long wait;
    ssize_t n;

    if (queued_fd == -2)
        return NAN;
    if (queued_fd < 0) {
        pthread_once(&queued_once, queued_key_make);
        queued_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
        if (queued_fd < 0 || queued_key == (pthread_key_t)-1 ||
            pthread_setspecific(queued_key, (void *)(intptr_t)(queued_fd + 1)) != 0) {
            if (queued_fd >= 0)
                close(queued_fd);
            queued_fd = -2;
            return NAN;
        }
    }
    n = pread(queued_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return NAN;
    buf[n] = '\0';
    errno = 0;
    (void)strtoull(buf, &p, 10);                /* CPU time: skipped */
    if (p == buf || (*p != ' ' && *p != '\t'))
        return NAN;
    wait = strtoull(p, &end, 10);
    if (end == p || errno != 0)
        return NAN;
    return (double)wait * 1e-9;
}
