/* test_silence.c -- the server's idle-progress clocks (common/ps/silence.c)
 * on made-up time: no sockets, no libuv, no real clock. Every call is
 * given `now`, so each check states exactly when things happen.
 *
 *   silence-1.x  the tick's period and the worker clocks
 *   silence-2.x  late ticks (the server itself did not run)
 *   silence-3.x  the server's own clock, strangers
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ps/silence.h"
#include "check.h"

#define T 2.0       /* --timeout, seconds */

static void test_clocks(void)
{
    struct silence s;
    unsigned char st[4];

    T_CASE("silence-1.1", "period T/20, kept within [10 ms, 250 ms]");
    T_EQ_I(silence_init(&s, 1, T, 0), 0);
    T_EQ_U(s.period_ms, 100);
    T_EQ_D(s.period, 0.1);
    silence_destroy(&s);
    T_EQ_I(silence_init(&s, 1, 0.05, 0), 0);
    T_EQ_U(s.period_ms, 10);
    silence_destroy(&s);
    T_EQ_I(silence_init(&s, 1, 600, 0), 0);
    T_EQ_U(s.period_ms, 250);
    silence_destroy(&s);

    T_CASE("silence-1.2", "a waiting worker is named once its clock reaches T, not before");
    T_EQ_I(silence_init(&s, 4, T, 100), 0);
    memset(st, SILENCE_WAITING, sizeof st);
    silence_heard(&s, 0, 101);
    silence_heard(&s, 1, 101);
    silence_heard(&s, 2, 101);
    silence_heard(&s, 3, 101);
    T_EQ_I(silence_check(&s, st, 102.9), -1);
    silence_heard(&s, 0, 102.5);
    silence_heard(&s, 1, 102.5);
    silence_heard(&s, 3, 102.5);
    T_EQ_I(silence_check(&s, st, 103.0), 2);        /* exactly T after its last byte */

    T_CASE("silence-1.3", "the others' progress does not restart a silent worker's clock");
    for (double t = 103.1; t < 104; t += 0.1) {
        silence_heard(&s, 0, t);
        silence_progress(&s, t);
    }
    T_EQ_I(silence_check(&s, st, 104.0), 2);

    T_CASE("silence-1.4", "the longest silent is named; the lowest rank on a tie");
    silence_restart(&s, 200);
    silence_heard(&s, 0, 201);
    silence_heard(&s, 3, 201);
    T_EQ_I(silence_check(&s, st, 205), 1);          /* 1 and 2 silent since 200 */
    silence_heard(&s, 1, 201);
    T_EQ_I(silence_check(&s, st, 205), 2);

    T_CASE("silence-1.5", "a worker that owes nothing is never named, and its clock restarts");
    silence_restart(&s, 300);
    memset(st, SILENCE_OWES_NOTHING, sizeof st);
    T_EQ_I(silence_check(&s, st, 310), -1);
    st[1] = SILENCE_WAITING;                        /* now it owes a push */
    T_EQ_I(silence_check(&s, st, 311.9), -1);       /* its clock restarted at 310 */
    T_EQ_I(silence_check(&s, st, 312), 1);

    T_CASE("silence-1.6", "a gone rank has no clock: not named, not restarted");
    silence_restart(&s, 400);
    memset(st, SILENCE_GONE, sizeof st);
    T_EQ_I(silence_check(&s, st, 410), -1);
    T_EQ_D(s.heard[2], 400);
    silence_destroy(&s);
}

static void test_late_ticks(void)
{
    struct silence s;
    unsigned char st[2] = { SILENCE_WAITING, SILENCE_WAITING };

    T_CASE("silence-2.1", "a tick on time excuses nothing");
    T_EQ_I(silence_init(&s, 2, T, 0), 0);
    T_EQ_D(silence_tick(&s, 0.1), 0);
    T_EQ_D(silence_tick(&s, 0.3), 0);               /* 2 periods: still on time */
    T_EQ_D(s.heard[0], 0);

    T_CASE("silence-2.2", "a late tick moves every clock on by its lateness, none past now");
    silence_heard(&s, 1, 0.2);
    T_NEAR(silence_tick(&s, 1.8), 1.4, 1e-12);      /* gap 1.5, one period due */
    T_NEAR(s.heard[0], 1.4, 1e-12);
    T_NEAR(s.heard[1], 1.6, 1e-12);
    T_NEAR(s.progress, 1.4, 1e-12);
    T_EQ_I(silence_check(&s, st, 3.3), -1);         /* silent 1.9 s of its own */
    T_EQ_I(silence_check(&s, st, 3.4), 0);
    silence_heard(&s, 0, 3.5);
    silence_heard(&s, 1, 3.5);
    T_NEAR(silence_tick(&s, 3.5), 1.6, 1e-12);     /* gap 1.7 */
    T_EQ_D(s.heard[0], 3.5);                        /* fmin(now, ...) */

    T_CASE("silence-2.3", "silence_excuse: a clock the caller keeps moves the same way");
    T_EQ_D(silence_excuse(1.0, 0.5, 10), 1.5);
    T_EQ_D(silence_excuse(9.8, 0.5, 10), 10);
    T_EQ_D(silence_excuse(3.0, 0, 10), 3.0);
    silence_destroy(&s);
}

static void test_server_clock(void)
{
    struct silence s;

    T_CASE("silence-3.1", "the server's own clock: T without progress is idle");
    T_EQ_I(silence_init(&s, 1, T, 10), 0);
    T_EQ_I(silence_idle(&s, 0, 11.9), 0);
    T_EQ_I(silence_idle(&s, 0, 12), 1);
    silence_progress(&s, 12);
    T_EQ_I(silence_idle(&s, 0, 13.9), 0);

    T_CASE("silence-3.2", "bytes held by the link are not idle time");
    T_EQ_I(silence_idle(&s, 1, 20), 0);
    T_EQ_D(s.progress, 20);
    T_EQ_I(silence_idle(&s, 0, 21.9), 0);
    T_EQ_I(silence_idle(&s, 0, 22), 1);

    T_CASE("silence-3.3", "a stranger's clock runs from its accept");
    T_EQ_I(silence_expired(&s, 5, 6.9), 0);
    T_EQ_I(silence_expired(&s, 5, 7), 1);
    silence_destroy(&s);
}

int main(void)
{
    test_clocks();
    test_late_ticks();
    test_server_clock();
    return t_done();
}
