/* silence.c -- the server's idle-progress clocks (see silence.h). Plain
 * arithmetic on times the caller passes in: no libuv, no clock reads. */
#include "silence.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int silence_init(struct silence *s, uint32_t k, double timeout, double now)
{
    double ms = timeout * 1000.0 / SILENCE_TICKS_PER_T;

    s->timeout = timeout;
    s->period_ms = ms < SILENCE_TICK_MIN_MS ? SILENCE_TICK_MIN_MS :
                   ms > SILENCE_TICK_MAX_MS ? SILENCE_TICK_MAX_MS : (uint64_t)ms;
    s->period = (double)s->period_ms / 1000.0;
    s->k = k;
    s->heard = malloc((k ? k : 1) * sizeof *s->heard);
    if (!s->heard)
        return -ENOMEM;
    silence_restart(s, now);
    return 0;
}

void silence_restart(struct silence *s, double now)
{
    s->last_tick = s->progress = now;
    for (uint32_t r = 0; r < s->k; r++)
        s->heard[r] = now;
}

void silence_destroy(struct silence *s)
{
    free(s->heard);
    s->heard = NULL;
}

void silence_heard(struct silence *s, uint32_t rank, double now)
{
    s->heard[rank] = now;
}

void silence_progress(struct silence *s, double now)
{
    s->progress = now;
}

double silence_excuse(double since, double late, double now)
{
    return fmin(now, since + late);
}

double silence_tick(struct silence *s, double now)
{
    double gap = now - s->last_tick, late;

    s->last_tick = now;
    if (!(gap > 2 * s->period))
        return 0;
    /* The bytes that came meanwhile are still unread (libuv runs timers
     * before it polls): the clocks must not blame their senders. */
    late = gap - s->period;
    s->progress = silence_excuse(s->progress, late, now);
    for (uint32_t r = 0; r < s->k; r++)
        s->heard[r] = silence_excuse(s->heard[r], late, now);
    return late;
}

int silence_expired(const struct silence *s, double since, double now)
{
    return now - since >= s->timeout;
}

int silence_check(struct silence *s, const unsigned char *state, double now)
{
    int worst = -1;

    for (uint32_t r = 0; r < s->k; r++) {
        if (state[r] == SILENCE_GONE)
            continue;
        if (state[r] != SILENCE_WAITING) {
            s->heard[r] = now;
            continue;
        }
        if (silence_expired(s, s->heard[r], now) &&
            (worst < 0 || s->heard[r] < s->heard[worst]))
            worst = (int)r;
    }
    return worst;
}

int silence_idle(struct silence *s, int busy, double now)
{
    if (busy) {
        s->progress = now;
        return 0;
    }
    return silence_expired(s, s->progress, now);
}
