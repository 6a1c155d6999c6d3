/* silence.h -- the server's idle-progress clocks (--timeout T, the
 * SILENCE of docs/design.md), without libuv and without a clock of its own:
 * every call takes `now`, so tests/test_silence.c runs it on made-up time.
 *
 * Each joined worker the server is waiting on has a clock of its own,
 * restarted by its progress: a byte read from it, a write of the weights
 * to it completed (silence_heard). The server waits on a worker while it
 * owes a push (or a part of one, or its BYE) or while a write of the
 * weights sits on its full socket; not while it owes nothing, while the
 * link holds its bytes, or while its next piece of weights is the server's
 * to send: the caller says which (enum silence_state) at every tick. A
 * clock that reaches T names that worker (silence_check): T (+ one tick)
 * after its last byte, however busy the others are. A single clock for the
 * whole server would restart with each of their bytes, and the workers,
 * whose wait for the weights allows 2T, would time out before the server
 * named the culprit. The server's own clock (any progress at all,
 * silence_progress) still covers what no worker's does: workers that have
 * not joined (silence_idle).
 *
 * A tick that comes late (the server itself did not run: a long callback,
 * a loaded machine) moves every clock on by its lateness (silence_tick):
 * that time is no one's silence.
 *
 * OWNERSHIP: silence_init allocates the K worker clocks; silence_destroy
 * frees them.
 */
#ifndef SILENCE_H
#define SILENCE_H

#include <stdint.h>

#define SILENCE_TICKS_PER_T 20      /* a silent worker is named within T + T/20 */
#define SILENCE_TICK_MIN_MS 10
#define SILENCE_TICK_MAX_MS 250

/* What the server waits for from one rank, as the caller sees it now. */
enum silence_state {
    SILENCE_GONE,       /* no worker (not joined, closing, lingering): no clock */
    SILENCE_OWES_NOTHING,   /* or the link holds its bytes, or the server owes it */
    SILENCE_WAITING,    /* the server waits on the worker itself */
};

struct silence {
    double timeout;         /* --timeout T, seconds */
    double period;          /* the tick's period, seconds */
    uint64_t period_ms;     /* the same, for a millisecond timer */
    double last_tick;
    double progress;        /* the server's own clock: its last progress of any kind */
    uint32_t k;
    double *heard;          /* K worker clocks, by rank: the last sign of progress */
};

/* silence_init: K worker clocks and the server's, all started at now; the
 * tick's period T/20, kept within [10 ms, 250 ms]. 0 or -ENOMEM. */
int silence_init(struct silence *s, uint32_t k, double timeout, double now);
void silence_destroy(struct silence *s);

/* silence_restart: every clock, the tick's included, starts again at now
 * (when the loop starts). */
void silence_restart(struct silence *s, double now);

/* silence_heard: worker rank made progress: restart its clock. */
void silence_heard(struct silence *s, uint32_t rank, double now);

/* silence_progress: the server made progress of any kind. */
void silence_progress(struct silence *s, double now);

/* silence_tick: a tick ran at now. Returns how late it came (0 when on
 * time: within two periods of the last), and when late moves every clock
 * on by that much, none past now. */
double silence_tick(struct silence *s, double now);

/* silence_excuse: a clock the caller keeps (since), moved on by late as
 * silence_tick moved its own. */
double silence_excuse(double since, double late, double now);

/* silence_expired: T has passed since `since`. */
int silence_expired(const struct silence *s, double since, double now);

/* silence_check: state[r] for each of the K ranks. Restarts the clocks of
 * the ranks that owe nothing; returns the rank, among those the server
 * waits on, whose clock reached T and is the oldest (the lowest rank on a
 * tie), or -1 when none has. */
int silence_check(struct silence *s, const unsigned char *state, double now);

/* silence_idle: the server's own clock, at a tick. busy (the link holds
 * bytes back: not idle time) restarts it. 1 when it reached T. */
int silence_idle(struct silence *s, int busy, double now);

#endif /* SILENCE_H */
