/* server_measure.c -- the server's training metrics (issue 16): the loss against
 * wall-clock time (--loss-time-out), the time to a target loss
 * (--target-loss, the record's ttt_s) and each worker's wait
 * (common/measure/metrics.h, WAIT; the record's wait_s and the log), and
 * the timed part's wall and CPU time and machine samples (the record's
 * wall_s, cpu_s, machine0/1), read through the machine's table
 * (server.h, struct server_machine), never from the OS here. No libuv:
 * server.c and server_mode.c tell it what happened and when; server_end
 * writes the loss files at the end.
 *
 * THE CLOCK. wall_s counts from the moment the FIRST worker joined
 * (t_run0): a worker computes its step 0 as soon as it has its WELCOME (in
 * async and ssp it may push before the others have joined), so that is
 * when the run's first step began; a worker started late makes the others
 * wait, and that counts. A rollback (resume.h) keeps t_run0: the time lost
 * counts too.
 *
 * WHAT IS RECORDED (losscurve.h, WHAT A STEP IS):
 *   sync      at the step's last release: the step's loss, and per worker
 *             the wait from its last push part's arrival to that release.
 *   backup:N  at the step's apply: its loss over the pushes it used; the
 *             wait of each push from its arrival to its worker being sent
 *             weights (the used ones at the apply, a dropped one at once).
 *   async, ssp:N  at each apply: the mean loss of the last K applied
 *             pushes, one line per update; the wait of each push from its
 *             arrival to its worker being sent weights: 0 in async (the
 *             same event), the hold in ssp.
 * Only timed pushes (their step >= --warmup) count in the waits, as in the
 * record; the loss curve has every step.
 *
 * OWNERSHIP. measure_init allocates the per-worker arrays and the loss
 * curve (when kept) with the rest of set-up; measure_destroy frees them.
 * Nothing is allocated per step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/log.h"
#include "base/mem.h"
#include "server.h"

int measure_init(struct server *srv)
{
    const struct cli_common *c = &srv->f.c;
    int per_update = srv->mode.cfg.kind == MODE_ASYNC || srv->mode.cfg.kind == MODE_SSP;
    /* Every shard has every worker's loss; the one owning element 0 alone
     * keeps it (and writes the files, and the ttt_s). */
    int keep = srv->scfg.lo == 0 && (srv->f.loss_out || c->loss_time_out ||
                                     !isnan(c->target_loss));

    srv->t_run0 = NAN;
    srv->loss_time_out = srv->scfg.lo == 0 ? c->loss_time_out : NULL;
    if (!(srv->wait = calloc(srv->k, sizeof *srv->wait)))
        return -1;
    if (per_update && !(srv->win = calloc(srv->k, sizeof *srv->win)))
        return -1;
    if (keep && losscurve_init(&srv->loss, (size_t)c->steps * (per_update ? srv->k : 1)) != 0)
        return -1;
    return 0;
}

void measure_destroy(struct server *srv)
{
    losscurve_free(&srv->loss);
    MEM_FREE(srv->wait);
    MEM_FREE(srv->win);
}

/* The timed part's clocks (the record's wall_s, cpu_s, machine0 and
 * machine1: metrics.h), from the machine's table (server.h, struct
 * server_machine): begin at the first push byte of the first timed step,
 * end when the last step's weights are out (sync) or every worker has
 * pushed the last step (the modes). */
void measure_timed_begin(struct server *srv, double now)
{
    const struct server_machine *m = srv->io->machine;

    srv->timing = 1;
    m->load(srv, &srv->rec.machine0);
    srv->t0_wall = now;
    srv->t0_cpu = m->cpu_s(srv);
}

void measure_timed_end(struct server *srv, double now)
{
    const struct server_machine *m = srv->io->machine;

    srv->rec.wall_s = now - srv->t0_wall;
    srv->rec.cpu_s = m->cpu_s(srv) - srv->t0_cpu;
    m->load(srv, &srv->rec.machine1);
    srv->timing = 0;
}

/* THE LINK'S UTILIZATION (link.h, UTILIZATION; metrics.h, link_util),
 * sync mode only (the other modes have no step to span). A step's span
 * opens when the last of the K workers begins pushing it (LAST ENTRY,
 * metrics.h: the combine cannot start before; the skew before it is
 * wait_s's) and closes at its weights' last write (server_egress_done),
 * or at the next step's when that one opened first. Measured: both
 * directions together, on a host of its own (its model takes pushes in,
 * then sends weights out) and on a worker's host (--local-worker) alike.
 * Egress alone on a worker's host was tried and dropped: at K = 2 it
 * read 0.68-0.79 on rows 1.02-1.11x their model (the early worker's host
 * waits for the late one's push, which LAST ENTRY leaves out of time_s),
 * as low as on rows 1.58x (docs/link.md). */
static double util_mark(struct server *srv, double now)
{
    return link_util_mark(&srv->link, now);
}

void measure_util_enter(struct server *srv, uint32_t r, uint64_t step, double now)
{
    double idle;

    if (!srv->timing || srv->mode.cfg.kind != MODE_SYNC || srv->wait[r].util_step == step + 1)
        return;
    srv->wait[r].util_step = step + 1;      /* 0: none yet */
    if (srv->util_step != step + 1) {
        srv->util_step = step + 1;
        srv->util_entered = 0;
    }
    if (++srv->util_entered < srv->k || srv->util_open || isnan(idle = util_mark(srv, now)))
        return;
    srv->util_open = 1;
    srv->util_t0 = now;
    srv->util_idle0 = idle;
}

void measure_util_close(struct server *srv, double now)
{
    /* open, unless every worker has begun the next step: then the span
     * goes on into that step's */
    if (srv->util_open && !(srv->util_step == srv->cur.step + 2 && srv->util_entered == srv->k)) {
        srv->util_span += now - srv->util_t0;
        srv->util_idle += util_mark(srv, now) - srv->util_idle0;
        srv->util_open = 0;
        srv->rec.link_span_s = srv->util_span;
        srv->rec.link_idle_s = fmax(0.0, srv->util_idle);
    }
}

void measure_joined(struct server *srv, double now)
{
    if (isnan(srv->t_run0))
        srv->t_run0 = now;
}

void measure_push_end(struct server *srv, uint32_t r, double now)
{
    srv->wait[r].push_at = now;
}

void measure_released(struct server *srv, uint64_t step, double loss, double now)
{
    losscurve_set_at(&srv->loss, (size_t)step, loss, now - srv->t_run0);
    if (step < (uint64_t)srv->f.c.warmup)
        return;
    for (uint32_t r = 0; r < srv->k; r++)
        metrics_wait_add(&srv->wait[r].w, now - srv->wait[r].push_at);
}

void measure_pushed(struct server *srv, uint32_t r, uint64_t step)
{
    srv->wait[r].pending = step >= (uint64_t)srv->f.c.warmup;
}

void measure_sent(struct server *srv, uint32_t r, double now)
{
    struct server_wait *w = &srv->wait[r];

    if (w->pending)
        metrics_wait_add(&w->w, now - w->push_at);
    w->pending = 0;
}

void measure_step(struct server *srv, uint64_t step, double loss, double now)
{
    losscurve_set_at(&srv->loss, (size_t)step, loss, now - srv->t_run0);
}

void measure_update(struct server *srv, uint64_t u, double loss, uint64_t examples, double now)
{
    size_t have = u + 1 < srv->k ? (size_t)u + 1 : srv->k;
    double sum = 0.0, n = 0.0;

    srv->win[u % srv->k] = (struct server_win){ loss * (double)examples, examples };
    /* The window in a fixed order (its slots), so a rerun adds alike. */
    for (size_t i = 0; i < have; i++) {
        sum += srv->win[i].loss;
        n += (double)srv->win[i].n;
    }
    losscurve_set_at(&srv->loss, (size_t)u, n > 0 ? sum / n : NAN, now - srv->t_run0);
}

/* what: the WAIT definition in the server's mode, for the log. */
static const char *what(const struct server *srv)
{
    switch (srv->mode.cfg.kind) {
    case MODE_ASYNC:
        return "async: 0 by construction, each push answered at once";
    case MODE_SSP:
        return "ssp: from a push's arrival to its weights going out, the SSP hold";
    case MODE_BACKUP:
        return "backup: from a push's arrival to its step's apply; dropped ones 0";
    default:
        return "sync: from its last push part's arrival to the step's release";
    }
}

void measure_finish(struct server *srv)
{
    double worst = NAN;

    log_msg("wait per worker over the timed steps (%s):", what(srv));
    for (uint32_t r = 0; r < srv->k; r++) {
        const struct metrics_wait *w = &srv->wait[r].w;
        double mean = metrics_wait_mean(w);

        log_msg("worker %u waited: mean %.6g s, max %.6g s over %llu", (unsigned)r, mean,
                w->max, ull(w->n));
        if (!isnan(mean) && !(worst >= mean))
            worst = mean;
    }
    srv->rec.wait_s = worst;
    srv->rec.ttt_s = losscurve_time_to(&srv->loss, srv->f.c.target_loss);
    if (!isnan(srv->f.c.target_loss) && srv->loss.loss) {
        if (isnan(srv->rec.ttt_s))
            log_msg("--target-loss %g: not reached", srv->f.c.target_loss);
        else
            log_msg("--target-loss %g: reached after %.6g s (wall_s)", srv->f.c.target_loss,
                    srv->rec.ttt_s);
    }
}

/* note: what a step of the loss-time file is, in the server's mode. */
static const char *note(const struct server *srv)
{
    switch (srv->mode.cfg.kind) {
    case MODE_ASYNC:
    case MODE_SSP:
        return "step: an applied update in apply order (K per training step); loss: the "
               "last K applied pushes' losses over their examples; wall_s at the apply";
    case MODE_BACKUP:
        return "step: the applied step; loss: over the K - N pushes it used; wall_s at "
               "its apply";
    default:
        return "step: the training step; wall_s at its last release by the server "
               "(its update applied)";
    }
}

int measure_write(struct server *srv)
{
    char err[ERR_LEN];
    int bad = 0;

    /* Also after a failure: the steps applied until then (a diverging run
     * is worth plotting), marked incomplete. */
    if (srv->loss_out && losscurve_write(&srv->loss, srv->loss_out, "the run failed", err) != 0) {
        log_msg("%s", err);
        bad = 1;
    }
    if (srv->loss_time_out &&
        losscurve_write_time(&srv->loss, srv->loss_time_out, note(srv), "the run failed",
                             err) != 0) {
        log_msg("%s", err);
        bad = 1;
    }
    return bad;
}
