/* pacer.h -- the emulated link's deadlines, to the microsecond: a timerfd
 * on CLOCK_MONOTONIC (clock.h's clock), armed for the earliest deadline
 * asked for. A libuv timer counts milliseconds, and one piece of a
 * 1 Gbit/s link takes 492 us (link.h, PIECE); so main.c polls this file descriptor
 * instead (uv_poll_t) and calls pacer_fired when it becomes readable.
 * No libuv here.
 *
 * OWNERSHIP: pacer_open creates the descriptor, pacer_close closes it.
 */
#ifndef PACER_H
#define PACER_H

struct pacer {
    int fd;             /* the timerfd; -1 when closed */
    double at;          /* when it is armed for; INFINITY: not armed */
};

/* pacer_open: a disarmed pacer. 0, or -errno with the reason in err. */
int pacer_open(struct pacer *p, char *err);

/* pacer_want: make sure the pacer fires at t (clock_now seconds) or
 * earlier. A timerfd that cannot be set is a broken program: logged, exit 1. */
void pacer_want(struct pacer *p, double t);

/* pacer_fired: the descriptor became readable: drain it; disarmed again. */
void pacer_fired(struct pacer *p);

void pacer_close(struct pacer *p);

#endif /* PACER_H */
