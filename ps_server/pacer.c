/* pacer.c -- the link's deadlines on a timerfd (see pacer.h). */
#include "pacer.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"

int pacer_open(struct pacer *p, char *err)
{
    p->at = INFINITY;
    p->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (p->fd < 0) {
        int e = errno;
        err_say(err, "timerfd_create: %s", strerror(e));
        return -e;
    }
    return 0;
}

void pacer_want(struct pacer *p, double t)
{
    struct itimerspec its;
    double sec;

    if (!(t < p->at))
        return;
    if (t < 1e-6)
        t = 1e-6;           /* an all-zero it_value would disarm it */
    memset(&its, 0, sizeof its);
    sec = floor(t);
    its.it_value.tv_sec = (time_t)sec;
    its.it_value.tv_nsec = (long)((t - sec) * 1e9);
    if (its.it_value.tv_nsec > 999999999L)
        its.it_value.tv_nsec = 999999999L;
    if (timerfd_settime(p->fd, TFD_TIMER_ABSTIME, &its, NULL) != 0) {
        log_msg("timerfd_settime: %s", strerror(errno));
        exit(1);
    }
    p->at = t;
}

void pacer_fired(struct pacer *p)
{
    uint64_t expirations;

    (void)!read(p->fd, &expirations, sizeof expirations);
    p->at = INFINITY;
}

void pacer_close(struct pacer *p)
{
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
}
