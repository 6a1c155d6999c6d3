/* server_mode.c -- what the server does with a complete push in the modes
 * other than sync (common/ps/mode.h), and what it writes at their end. No
 * libuv: the weights go out through server_conn.c's conn_send_weights.
 *
 * THE MODES (mode.h). In sync the store's barrier and the per-bucket pull
 * (server.c) run the step (the policy is not involved, and --record is
 * refused: a sync run reproduces from the seed). In the other modes every
 * complete push is told to the mode's policy (mode_push), which checks it
 * and keeps the record. In async and ssp:N the store has per-worker
 * buffers (store.h) and a worker's WHOLE push (all its buckets) is applied alone when its last
 * byte is in (store_apply_some, by its own count); then that worker is
 * sent the whole new weights in one WEIGHTS frame (a copy, so later
 * updates do not change it under the write; on the emulated link paced
 * through the server's NIC, PACED below), unless ssp holds it
 * (mode_pull_ok: more than N steps ahead of the slowest), in which case
 * it is sent when the slowest catches up. The frame's step field is the
 * worker's own step, as in sync (the worker is unchanged); the VERSION it
 * carries is kept by the server (sent_version), which is how each
 * update's staleness is known without a field on the wire. In backup:N
 * the pushes go to per-worker buffers too; the (K-N)-th complete push of
 * a step applies the step from the K - N used ones (store_apply_some, in
 * their completion order) and those workers are sent the new weights; a
 * push for a step already applied is dropped (store_drop) and its worker
 * sent the current weights at once.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "server.h"
#include "train/weights.h"

#define LOG_EVERY_S 1.0                 /* update lines, at most this often */

/* PACED. With the emulated link (link.h) a mode's frame does not go out
 * in one write: it joins a queue of the conns with a frame to go, and
 * goes a piece (at most link_piece() bytes) at a time, ROUND-ROBIN over
 * that queue as egress.h's pieces go over the K workers: each piece is
 * reserved with link_egress_reserve when it is chosen and written when
 * its deadline comes (the timer, server_timer). Every byte, the frame's
 * header included, is reserved: each piece pays what link_egress_reserve
 * charges (link.h), as egress.h's pieces do, and frames that overlap
 * share the link. The
 * reservation's `now` is when the frame was made, or when that worker's
 * socket last drained: a late timer never delays the pieces after it, and
 * a link left idle does not run ahead afterwards. Without the link the
 * frame is written at once (conn_send_weights), as before. */

static void mq_remove(struct server *srv, struct conn *c)
{
    struct conn **pp = &srv->mq_head, *last = NULL;

    if (!c->inq)
        return;
    while (*pp) {
        if (*pp == c) {
            *pp = c->mq_next;
            continue;
        }
        last = *pp;
        pp = &last->mq_next;
    }
    srv->mq_tail = last;
    c->mq_next = NULL;
    c->inq = 0;
    if (srv->mq_res == c)
        srv->mq_res = NULL;     /* its bytes stay booked: the link is not refunded */
}

static void mq_append(struct server *srv, struct conn *c)
{
    assert(!c->inq);
    c->mq_next = NULL;
    if (srv->mq_tail)
        srv->mq_tail->mq_next = c;
    else
        srv->mq_head = c;
    srv->mq_tail = c;
    c->inq = 1;
}

void server_mode_gone(struct server *srv, struct conn *c)
{
    mq_remove(srv, c);
    c->wlen = c->woff = 0;
}

/* piece_done: c's piece is written: its frame is done, or c goes to the
 * back of the round. */
static void piece_done(struct server *srv, struct conn *c)
{
    mq_remove(srv, c);
    if (c->woff < c->wlen) {
        mq_append(srv, c);
        return;
    }
    free(c->wsnap);
    c->wsnap = NULL;
    c->wlen = c->woff = 0;
    c->ses.pulling = 0;
}

/* mode_piece: write the piece reserved for c: what the socket takes now,
 * the rest queued (c is then skipped until server_mode_written). */
static void mode_piece(struct server *srv, struct conn *c, double now)
{
    struct server_buf b = { c->wsnap + c->woff, srv->mq_len };
    char msg[ERR_LEN];
    int w;

    c->woff += srv->mq_len;
    w = srv->io->try_write(c, &b, 1);
    if (w >= 0) {
        srv->link.bytes_out += (uint64_t)w;
        if (w > 0)
            silence_progress(&srv->sil, now);
        silence_heard(&srv->sil, c->ses.rank, now);
        if ((size_t)w == b.len) {
            piece_done(srv, c);
            return;
        }
        b.p += w;
        b.len -= (size_t)w;
        c->wqueued = b.len;
        c->wblocked = 1;
        if (srv->io->write(c, SERVER_WRITE_SNAP, &b, 1) == 0)
            return;
    }
    err_sayn(msg, sizeof msg, "worker %u: sending the weights of its step %llu failed",
             (unsigned)c->ses.rank, ull(store_clock(&srv->store, c->ses.rank) - 1));
    run_lost(srv, c, ERR_EOF, msg);
}

void server_mode_written(struct server *srv, struct conn *c, double now)
{
    c->wblocked = 0;
    c->wready = now;
    piece_done(srv, c);
    server_mode_pump(srv);
}

void server_mode_pump(struct server *srv)
{
    while (!srv->over && srv->mq_head) {
        double now = srv->io->now(srv);
        struct conn *c = srv->mq_res;

        if (!c) {
            size_t lp = link_piece(&srv->link);

            for (c = srv->mq_head; c && (c->wblocked || c->closing || c->lingering);
                 c = c->mq_next)
                ;
            if (!c)
                return;     /* a write's completion (or a close) pumps again */
            srv->mq_len = c->wlen - c->woff < lp ? c->wlen - c->woff : lp;
            srv->mq_due = link_egress_reserve(&srv->link, srv->mq_len, c->wready);
            srv->mq_res = c;
        }
        if (srv->mq_due > now) {
            srv->io->timer_want(srv, srv->mq_due);
            return;
        }
        srv->mq_res = NULL;
        mode_piece(srv, c, now);
    }
}

/* mode_send: worker r gets the current weights (a copy) and its version
 * is noted (THE MODES above); its wait ends at `now` (server_measure.c). */
static void mode_send(struct server *srv, uint32_t r, double now)
{
    struct conn *c = srv->by_rank[r];
    size_t n = (size_t)(srv->scfg.hi - srv->scfg.lo), len = PROTO_HEADER_SIZE + n * srv->es;
    unsigned char *frame;
    struct proto_header h;
    char msg[ERR_LEN];

    srv->want_pull[r] = 0;
    measure_sent(srv, r, now);
    if (!c)
        return;         /* gone: its loss is being handled */
    if (!(frame = malloc(len))) {
        err_sayn(msg, sizeof msg, "worker %u: out of memory for a weights frame of %zu bytes",
            (unsigned)r, len);
        run_fail(srv, c, -ENOMEM, msg);
        return;
    }
    h = proto_header_make(PROTO_WEIGHTS, PROTO_RANK_SERVER, srv->k,
                          store_clock(&srv->store, r) - 1, srv->scfg.lo, n * srv->es);
    proto_header_encode(&h, frame);
    memcpy(frame + PROTO_HEADER_SIZE, store_weights(&srv->store), n * srv->es);
    srv->sent_version[r] = store_step(&srv->store);
    if (mode_sent(&srv->mode, r) != 0) {
        free(frame);
        err_sayn(msg, sizeof msg, "worker %u: out of memory for the record", (unsigned)r);
        run_fail(srv, c, -ENOMEM, msg);
        return;
    }
    if (link_active(&srv->link)) {      /* PACED */
        assert(!c->wsnap && !c->inq);
        c->wsnap = frame;
        c->wlen = len;
        c->woff = 0;
        c->wready = now;
        c->wblocked = 0;
        c->ses.pulling = 1;
        mq_append(srv, c);
        server_mode_pump(srv);
        return;
    }
    if (conn_send_weights(c, frame, len) != 0) {
        err_sayn(msg, sizeof msg, "worker %u: sending the weights of its step %llu failed",
            (unsigned)r, ull(store_clock(&srv->store, r) - 1));
        run_lost(srv, c, ERR_EOF, msg);
    }
}

/* server_mode_push: worker c's push is complete: tell the policy; in async
 * and ssp apply it alone, in backup apply the step when it has its K - N
 * pushes (or drop a late one), and send the weights to whoever may have
 * them now. 0: sync, the barrier's path goes on (step_release); 1: done
 * here (or the run failed, said why). */
/* loss_words: "loss X" for the log, or what stands in its place where
 * the workload has no loss (synthetic: no model). */
static void loss_words(const struct server *srv, double loss, char *out, size_t n)
{
    if (srv->f.c.workload == PROTO_WORKLOAD_SYNTHETIC)
        snprintf(out, n, "done (synthetic workload: no loss)");
    else
        snprintf(out, n, "loss %.6g", loss);
}

int server_mode_push(struct server *srv, struct conn *c, double now)
{
    uint32_t r = c->ses.rank;
    struct store *st = &srv->store;
    struct mode_verdict v;
    struct store_applied ap;
    char err[ERR_LEN], lw[48];
    int rc;

    if (srv->mode.cfg.kind == MODE_SYNC)
        return 0;       /* the barrier's path: step_release */
    if (store_pushes_owed(st, r) != 0)
        return 1;       /* a bucket, not yet the whole push */
    measure_pushed(srv, r, store_clock(st, r));     /* its wait runs until mode_send */
    rc = mode_push(&srv->mode, r, store_clock(st, r), srv->sent_version[r],
                   st->workers[r].examples, &v, err);
    if (rc != 0) {
        run_fail(srv, c, rc, err);
        return 1;
    }
    if (v.action == MODE_WAIT)
        return 1;       /* backup: the step needs more pushes */
    if (v.action == MODE_DROP) {
        /* backup: late for an applied step; it gets the current weights */
        if ((rc = store_drop(st, r, err)) != 0) {
            run_fail(srv, c, rc, err);
            return 1;
        }
        srv->want_pull[r] = 1;
    } else {
        if ((rc = store_apply_some(st, v.action == MODE_APPLY ? &r : v.used,
                                   v.action == MODE_APPLY ? 1 : v.nused, &ap, err)) != 0) {
            run_fail(srv, c, rc, err);
            return 1;
        }
        if (v.action == MODE_STEP) {
            for (uint32_t i = 0; i < v.nused; i++)
                srv->want_pull[v.used[i]] = 1;
            measure_step(srv, ap.step, ap.loss, now);
            if (ap.step == 0 || now - srv->last_log >= LOG_EVERY_S) {
                loss_words(srv, ap.loss, lw, sizeof lw);
                log_msg("step %llu %s %llu examples from %u pushes (%llu dropped so "
                        "far)", ull(ap.step), lw, ull(ap.batch), (unsigned)v.nused,
                        ull(srv->mode.dropped));
                srv->last_log = now;
            }
        }
    }
    if (v.action == MODE_APPLY)     /* update number ap.step: the version before it */
        measure_update(srv, ap.step, ap.loss, ap.batch, now);
    if (v.action == MODE_APPLY && (ap.step == 0 || now - srv->last_log >= LOG_EVERY_S)) {
        loss_words(srv, ap.loss, lw, sizeof lw);
        log_msg("version %llu: worker %u step %llu, %s, %llu examples, staleness %llu",
                ull(v.version), (unsigned)r, ull(store_clock(st, r) - 1), lw,
                ull(ap.batch), ull(v.staleness));
        srv->last_log = now;
    }
    /* The server's record (--csv) in these modes: one row per step index
     * once every worker has pushed it; nothing of it is timed (the pushes
     * of a step are spread over the run), so ingress and egress are NaN.
     * Its bytes are what the server's NIC carried since the row before,
     * headers included: a row's may hold a little of its neighbours'
     * (the pushes of a step are spread too), the sum over the rows is
     * exact. */
    while (mode_min_clock(&srv->mode) > srv->steps_seen) {
        struct metrics_step row = { srv->steps_seen, NAN, NAN, NAN,
                                    srv->link.bytes_in - srv->in_mark,
                                    srv->link.bytes_out - srv->out_mark, NAN, NAN };

        srv->in_mark = srv->link.bytes_in;
        srv->out_mark = srv->link.bytes_out;

        if (srv->steps_seen >= (uint64_t)srv->f.c.warmup) {
            rc = metrics_record_add(&srv->rec, &row);
            assert(rc == 0);    /* room for every timed step, made at start */
        }
        if (++srv->steps_seen == (uint64_t)srv->f.c.steps && srv->timing)
            measure_timed_end(srv, now);
    }
    if (v.action == MODE_APPLY)
        srv->want_pull[r] = 1;
    /* r's clock moved: the slowest may have, so a held worker may go too */
    for (uint32_t q = 0; q < srv->k && !srv->over; q++)
        if (srv->want_pull[q] && mode_pull_ok(&srv->mode, q))
            mode_send(srv, q, now);
    return 1;
}

/* server_mode_finish: at the run's end, the staleness line, --staleness-out,
 * --record, and
 * --weights-out's PATH.server[.I]. 0, or 1 after logging why. */
int server_mode_finish(struct server *srv)
{
    char line[512], err[ERR_LEN], name[32];
    int bad = 0;

    if (srv->mode.cfg.kind != MODE_SYNC) {
        mode_hist_line(&srv->mode, line, sizeof line);
        log_msg("mode %s: %llu updates; %s largest lead %llu steps%s; %llu late pushes "
                "dropped", mode_name(&srv->mode.cfg, name), ull(srv->mode.version), line,
                ull(srv->mode.max_lead),
                srv->mode.cfg.kind == MODE_SSP ? " (checked at every push)" : "",
                ull(srv->mode.dropped));
    }
    if (srv->f.staleness_out &&
        mode_hist_write(&srv->mode, "--staleness-out", srv->f.staleness_file, err) != 0) {
        log_msg("%s", err);
        bad = 1;
    }
    if (srv->f.record && mode_record_write(&srv->mode, "--record", srv->f.record_file,
                                           err) != 0) {
        log_msg("%s", err);
        bad = 1;
    }
    if (srv->f.c.weights_out &&
        weights_write(srv->f.weights_file, srv->f.shard_s > 1 ? srv->f.shard_i : -1,
                      store_weights(&srv->store), (size_t)(srv->scfg.hi - srv->scfg.lo),
                      srv->f.c.dtype, err) != 0) {
        log_msg("%s", err);
        bad = 1;
    }
    return bad;
}

