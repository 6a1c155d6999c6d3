/* net_vt.c -- what a thread did between its paced transfers, for the
 * emulated link's own timeline (link.h, OWN CORES AND THE VIRTUAL
 * TIMELINE): its wait for a CPU since it last blocked (net_queued_s), and
 * whether, since it last finished a paced receive, it only computed,
 * waited for a CPU or waited in a transfer (net_forward_cpu_s: then its
 * next send forwards what it read). Per thread: each of a process's
 * threads keeps its own.
 *
 * The clocks cost a system call each (the run delay a pread, about
 * 0.65 us; the CPU clock 0.5 us), so they are read only where a restart
 * can use them: at a frame's last bytes, at a wait that may be its
 * transfer's last, and at a restart only what link_send_restart will
 * use (docs/link.md, The timeline's clocks).
 */
#include "net.h"
#include "net_internal.h"

#include <math.h>

#include "base/clock.h"

/* Unaccounted time (clock reads, the step's own bookkeeping between
 * calls) below this still counts as forwarding. */
#define FORWARD_SLACK_S 100e-6

/* The run delay when the thread last blocked (NAN: never, or the kernel
 * cannot say); queued_stale: it has blocked since without reading it
 * (net_vt_block(0)), so the transfer's end reads it (net_vt_xfer_end). */
static _Thread_local double queued_mark = NAN;
static _Thread_local int queued_stale;
/* When the thread last finished a paced receive, its CPU and run delay
 * then, and its time blocked in transfers (then, and in all). */
static _Thread_local double fw_t = NAN, fw_cpu, fw_queued, fw_waited;
static _Thread_local double waited_total;

void net_vt_block(int last)
{
    if (last) {
        queued_mark = clock_thread_queued_seconds();
        queued_stale = 0;
    } else {
        queued_stale = 1;
    }
}

void net_vt_xfer_end(void)
{
    if (queued_stale) {
        queued_mark = clock_thread_queued_seconds();
        queued_stale = 0;
    }
}

void net_vt_waited(double s)
{
    waited_total += s;
}

void net_vt_read_done(double now)
{
    fw_t = now;
    fw_cpu = clock_thread_cpu_seconds();
    fw_queued = clock_thread_queued_seconds();
    fw_waited = waited_total;
}

double net_queued_s(void)
{
    double q;

    if (isnan(queued_mark))
        return 0.0;
    q = clock_thread_queued_seconds() - queued_mark;
    return q > 0.0 ? q : 0.0;
}

double net_vt_late(struct link *l, double now)
{
    return l ? link_vt_late(l, now, net_forward_cpu_s(now)) : 0.0;
}

double net_vt_enter(struct link *l, double now)
{
    return link_enter_vt(l, now, net_forward_cpu_s(now));
}

double net_vt_restart(struct link *l, double now)
{
    double cpu = net_forward_cpu_s(now);

    /* link_send_restart reads queued_s only when the send is not a
     * forward (or its bytes are not in yet): the run delay is read only
     * then, and the result is the same as with it read every time. */
    if (cpu >= 0.0 && link_in_ready(l) <= now)
        return link_send_restart(l, now, 0.0, cpu);
    return link_send_restart(l, now, net_queued_s(), cpu);
}

double net_forward_cpu_s(double now)
{
    double cpu, q, other;

    if (isnan(fw_t))
        return NAN;
    cpu = clock_thread_cpu_seconds() - fw_cpu;
    if (!(cpu >= 0.0))
        return NAN;
    /* What the thread did since, other than compute and wait in
     * transfers; those waits include their wake-ups' run delay, hence q
     * as slack too (read only when the slack alone does not cover it:
     * q is never taken below 0). */
    other = (now - fw_t) - cpu - (waited_total - fw_waited);
    if (other <= FORWARD_SLACK_S)
        return cpu;
    q = clock_thread_queued_seconds() - fw_queued;
    if (!(other <= (q > 0.0 ? q : 0.0) + FORWARD_SLACK_S))
        return NAN;
    return cpu;
}
