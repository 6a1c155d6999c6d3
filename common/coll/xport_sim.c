/* xport_sim.c -- the simulated transport (xport_sim.h says what and why).
 *
 * A step is one simulated put and one simulated get, posted together at
 * begin (the link is full duplex; both travel at once):
 *
 *   begin   frame = {tag, size, bytes copied (REAL)}; put to "to";
 *           get_async from "from"
 *   recv    the first call waits for the incoming frame, then each call
 *           copies the next len bytes out of it (REAL) or nothing (SIZES)
 *   end     all lens received? wait for the outgoing put (unpaced; a paced
 *           one is not waited for); free the frame
 *
 * EAGER AND RENDEZVOUS, as xport_tcp on psring's link (xport_sim_pace: the
 * link's rate; base/tree_shape.h, tree_cost, has the model). xport_tcp
 * sends a frame's header and first piece (link_frame_first) at once, into
 * the socket buffer, whether or not the other end has reached the step,
 * and the rest only once the other end's header is in; the link books the
 * rest on the sender's egress right after its first piece (link.h,
 * BLOCKING SENDERS: the pieces of one send continue its timeline), so the
 * sender's next frame queues behind it, not behind its delivery, and the
 * receiver's ingress lets it in at the rate. Paced, every frame is put
 * once this host's egress has sent the frames before it (begin sleeps
 * until then), as the link sends a host's frames one after the other where
 * SimGrid would share the wire among them, and its sender goes on at once
 * (a detached put: the frame is in the socket buffer). A frame that fits
 * its first piece is EAGER here: it goes to the receiver's eager mailbox,
 * whose permanent receiver is that rank (sg_mailbox_set_receiver), so it
 * moves at once. A longer frame takes SimGrid's RENDEZVOUS: it moves once
 * the receiver has posted its get (reached the step, sent its header), so
 * that the frames into one host pass its ingress in the order it reads
 * them. Both ends tell which from the size (the same rule, link_first_at).
 * Unpaced (rate 0): every frame takes the rendezvous and its sender waits
 * for it. The trees need pacing (a child sends a small segment up while
 * its parent is busy with another swap; a rank sends its next frame while
 * its last long one waits for its receiver) and only they ask for it
 * (sim/ring_actor.c): the lockstep algorithms (ring, rd, ...) take the
 * same time either way (K = 4, 8, 4 KiB to 4 MiB at 32 Mbit/s, 1 ms: every
 * one equal to its formula both ways), and where a straggler enters late
 * their rendezvous keeps the call its formula from the straggler's entry,
 * as their models (and tests/t_sim.sh sim-8.1) time it; eager, ranks
 * would reduce ahead of it. Simplifications: a long frame's first piece
 * leaves with its rest when the receiver is there (on the link: at once,
 * the rest after the receiver's header reached the sender, with no second
 * latency): up to a piece's time late a swap; and eager frames that reach
 * one host at once share its ingress (the link takes them in the order the
 * rank reads): dbtree at 4 KiB, K = 7, 8, 12: 0.96-1.05 of its model. A
 * sender that waited for its long frame's delivery before its next step
 * (as this transport did before) held its next header back by a frame:
 * dbtree at K = 8, 256 KiB, 32 Mbit/s and 1 ms read 1.103 of its model
 * (1.011 now; the link 0.996). Every frame sent eagerly, its rest held at the receiver
 * until the sender could have sent it, was tried: SimGrid then shares a
 * receiver's ingress among the frames of all its children (dbtree K = 8,
 * 4 MiB: 1.39 of the model); and a first piece sent eagerly and the rest
 * by rendezvous: at 500 Mbit/s, where the first piece is half a segment,
 * those shared ingresses made it worse (4 MiB, K = 8: 1.14 of the model
 * against 1.03).
 *
 * One message per step, not one per piece: in the alpha-beta model a step
 * costs a + m/bw however the receiver cuts it up, and the CPU work between
 * pieces (vec_add) takes no simulated time. That is a simplification said
 * out loud: the simulated ring has no overlap of adding with receiving
 * because its adding is free.
 */
#include "xport_sim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>

#include "base/err.h"
#include "wire/link.h"
#include "wire/proto.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

struct frame {
    uint32_t tag;
    int from;
    size_t bytes;               /* the sender's sbytes (proxy bytes in SIZES) */
    unsigned char data[];       /* REAL: the bytes */
};

struct peer {
    int rank;
    sg_mailbox_t in, out;       /* "me<-rank", "rank<-me" */
    sg_mailbox_t in_eager, out_eager;   /* "me<-rank e", "rank<-me e" (EAGER) */
};

struct xport_sim {
    struct xport base;
    int rank, world, mode, failed, in_step;
    double scale;
    uint64_t *bytes_in, *bytes_out;
    int npeers;
    struct peer peer[XPORT_PEERS_MAX];
    /* the step in progress */
    sg_comm_t put, get;
    struct frame *in;           /* once the get is done */
    void *in_data;
    size_t got, rbytes;
    uint32_t recv_tag;
    int from, to;
    double rate;                /* the link's (xport_sim_pace); 0: every frame rendezvous */
    double egress_free;         /* when this host's egress has sent its eager frames */
    char fail_msg[ERR_LEN];
};

static double sim_now(void *ctx)
{
    (void)ctx;
    return simgrid_get_clock();
}

static void sim_sleep_until(void *ctx, double t)
{
    (void)ctx;
    sg_actor_sleep_until(t);
}

const struct clock_src xport_sim_clock = { sim_now, sim_sleep_until, NULL };

/* ------------------------------------------------ the SimGrid executor */

static void *ex_mutex_new(void) { return sg_mutex_init(); }
static void ex_mutex_free(void *m) { sg_mutex_destroy(m); }
static void ex_lock(void *m) { sg_mutex_lock(m); }
static void ex_unlock(void *m) { sg_mutex_unlock(m); }
static void *ex_cond_new(void) { return sg_cond_init(); }
static void ex_cond_free(void *c) { sg_cond_destroy(c); }
static void ex_wait(void *c, void *m) { sg_cond_wait(c, m); }
static int ex_wait_for(void *c, void *m, double s) { return sg_cond_wait_for(c, m, s) != 0; }
static void ex_broadcast(void *c) { sg_cond_notify_all(c); }

struct ex_start {
    void (*fn)(void *);
    void *arg;
};

static void ex_main(int argc, char **argv)
{
    struct ex_start s = *(struct ex_start *)sg_actor_self_get_data();

    (void)argc;
    (void)argv;
    free(sg_actor_self_get_data());
    sg_actor_self_set_data(NULL);
    s.fn(s.arg);
}

/* ex_start: the communication side as an actor on the caller's host,
 * named after the caller ("rank3 comm"). */
static int ex_start(void (*fn)(void *), void *arg, void **handle)
{
    struct ex_start *s = malloc(sizeof *s);
    char name[96];
    sg_actor_t a;

    if (!s)
        return -ENOMEM;
    s->fn = fn;
    s->arg = arg;
    snprintf(name, sizeof name, "%s comm", sg_actor_self_get_name());
    a = sg_actor_init(name, sg_host_self());
    sg_actor_set_data(a, s);
    sg_actor_ref(a);                    /* for the join: the actor may end first */
    sg_actor_start(a, ex_main, 0, NULL);
    *handle = a;
    return 0;
}

static void ex_join(void *handle)
{
    sg_actor_join(handle, -1.0);
    sg_actor_unref(handle);
}

const struct overlap_exec xport_sim_exec = {
    ex_mutex_new, ex_mutex_free, ex_lock, ex_unlock, ex_cond_new, ex_cond_free,
    ex_wait, ex_wait_for, ex_broadcast, ex_start, ex_join,
};

void xport_sim_mailbox_name(char *buf, size_t len, int to, int from)
{
    snprintf(buf, len, "%d<-%d", to, from);
}

static struct peer *find(struct xport_sim *s, int rank)
{
    for (int i = 0; i < s->npeers; i++)
        if (s->peer[i].rank == rank)
            return &s->peer[i];
    return NULL;
}

/* fail: the transport is failed from now on, with this line. */
__attribute__((format(printf, 4, 5)))
static int fail(struct xport_sim *s, int code, char *err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->fail_msg, sizeof s->fail_msg, fmt, ap);
    va_end(ap);
    s->failed = code;
    if (err)
        snprintf(err, ERR_LEN, "%s", s->fail_msg);
    return code;
}

/* ------------------------------------------------------------ faults */

static unsigned char *g_board;
static int g_slots;
static double g_timeout = 30;

void xport_sim_faults_init(unsigned char *board, int slots, double timeout)
{
    g_board = board;
    g_slots = slots;
    g_timeout = timeout > 0 ? timeout : 30;
}

int xport_sim_gone(int slot)
{
    return g_board && slot >= 0 && slot < g_slots && g_board[slot];
}

void xport_sim_set_gone(int slot)
{
    if (g_board && slot >= 0 && slot < g_slots)
        g_board[slot] = 1;
}

void xport_sim_poison(struct xport *x, const char *claim)
{
    struct xport_sim *s = (struct xport_sim *)x;
    size_t len = claim ? strlen(claim) + 1 : 1;

    /* both mailboxes: the peer may wait on either (EAGER AND RENDEZVOUS) */
    for (int i = 0; i < 2 * s->npeers; i++) {
        struct frame *f = malloc(sizeof *f + len);

        if (!f)
            return;
        f->tag = XPORT_SIM_POISON;
        f->from = s->rank;
        f->bytes = len;
        memcpy(f->data, claim ? claim : "", len);
        sg_comm_detach(sg_mailbox_put_init(i % 2 ? s->peer[i / 2].out_eager : s->peer[i / 2].out,
                                           f, 0), free);
    }
}

void xport_sim_zombie(void)
{
#if defined(__SANITIZE_ADDRESS__)
    /* LeakSanitizer: SimGrid ends the zombies without unwinding their C
     * frames, so what they hold would be reported at exit. Check for leaks
     * now, while every allocation is still reachable from a live actor;
     * that replaces the check at exit (lsan_interface.h). */
    static int checked;

    if (!checked++)
        __lsan_do_leak_check();
#endif

    /* sleeping, not suspended: a suspended actor's messages stop too */
    sg_actor_daemonize(sg_actor_self());
    for (;;)
        sg_actor_sleep_for(1e9);
}

/* wait_peer: one comm with rank `peer` (sent or received), through the
 * timeouts: 0, or the failure naming the peer. */
static int wait_peer(struct xport_sim *s, sg_comm_t c, int peer, const char *what, char *err)
{
    int idle = 0;

    for (;;) {
        sg_error_t e = sg_comm_wait_for(c, g_timeout);

        if (e == SG_OK)
            return 0;
        if (e != SG_ERROR_TIMEOUT)
            return fail(s, ERR_EOF, err, "lost rank %d (simulated host h%d): %s failed "
                        "(seen by rank %d)", peer, peer, what, s->rank);
        if (xport_sim_gone(peer))
            return fail(s, ERR_TIMEOUT, err, "lost rank %d (simulated host h%d): no progress for "
                        "%.1f s (--timeout, simulated time) (seen by rank %d)", peer, peer,
                        g_timeout, s->rank);
        for (int r = 0; r < s->world; r++)
            if (xport_sim_gone(r))
                return fail(s, ERR_TIMEOUT, err, "lost rank %d (simulated host h%d): the "
                            "fault news reached rank %d waiting for rank %d", r, r, s->rank,
                            peer);
        if (++idle >= XPORT_SIM_MAX_IDLE)
            return fail(s, ERR_TIMEOUT, err, "rank %d: no progress from rank %d for %d x %.1f s "
                        "(--timeout, simulated time)", s->rank, peer, idle, g_timeout);
    }
}

static int failed(struct xport_sim *s, char *err)
{
    if (err)
        snprintf(err, ERR_LEN, "%s", s->fail_msg);
    return s->failed;
}

/* simulated: the bytes a frame of `bytes` stands for (SIZES: scaled). */
static long simulated(const struct xport_sim *s, size_t bytes)
{
    return (long)llround((double)bytes * s->scale);
}

/* eager: a frame of `bytes` fits its first piece on the link (EAGER). */
static int eager(const struct xport_sim *s, size_t bytes)
{
    size_t n = (size_t)simulated(s, bytes);

    return s->rate > 0 && link_first_at(s->rate, PROTO_HEADER_SIZE, n) == n;
}

static int sim_begin(struct xport *x, const struct xport_step *st, char *err)
{
    struct xport_sim *s = (struct xport_sim *)x;
    struct peer *to, *from;
    struct frame *f;

    if (s->failed)
        return failed(s, err);
    to = find(s, st->to);
    from = find(s, st->from);
    if (s->in_step || !to || !from)
        return fail(s, ERR_USAGE, err, "rank %d: step to rank %d out of order or not in the plan",
                    s->rank, st->to);
    f = malloc(sizeof *f + (s->mode == XPORT_SIM_REAL ? st->sbytes : 0));
    if (!f)
        return fail(s, -ENOMEM, err, "rank %d: out of memory for a frame to rank %d", s->rank,
                    st->to);
    f->tag = st->send_tag;
    f->from = s->rank;
    f->bytes = st->sbytes;
    if (s->mode == XPORT_SIM_REAL && st->sbytes > 0)
        memcpy(f->data, st->sbuf, st->sbytes);
    if (s->rate > 0) {
        double now = simgrid_get_clock(), start = fmax(now, s->egress_free);
        if (start > now)
            sg_actor_sleep_until(start);
        s->egress_free = start + (double)simulated(s, st->sbytes) / s->rate;
        sg_comm_detach(sg_mailbox_put_init(eager(s, st->sbytes) ? to->out_eager : to->out, f,
                                           simulated(s, st->sbytes)), free);
        s->put = NULL;
    } else
        s->put = sg_mailbox_put_async(to->out, f, simulated(s, st->sbytes));
    s->in = NULL;
    s->in_data = NULL;
    s->get = sg_mailbox_get_async(eager(s, st->rbytes) ? from->in_eager : from->in, &s->in_data);
    s->got = 0;
    s->rbytes = st->rbytes;
    s->recv_tag = st->recv_tag;
    s->from = st->from;
    s->to = st->to;
    s->in_step = 1;
    if (s->bytes_out)
        *s->bytes_out += (uint64_t)simulated(s, st->sbytes);
    return 0;
}

/* arrive: wait for the incoming frame of the step and check it. */
static int arrive(struct xport_sim *s, char *err)
{
    if (s->in)
        return 0;
    int rc = wait_peer(s, s->get, s->from, "the frame from it", err);

    s->get = NULL;
    if (rc != 0)
        return rc;
    s->in = s->in_data;
    if (s->in->tag == XPORT_SIM_POISON) {
        if (s->in->data[0])
            return fail(s, ERR_EOF, err, "rank %d reported: %s", s->from,
                        (const char *)s->in->data);
        return fail(s, ERR_EOF, err, "lost rank %d (simulated host h%d): connection closed "
                    "(seen by rank %d)", s->from, s->from, s->rank);
    }
    if (s->in->tag != s->recv_tag)
        return fail(s, ERR_PROTO_FIELD, err, "rank %d: frame from rank %d has the wrong tag",
                    s->rank, s->from);
    if (s->in->bytes != s->rbytes)
        return fail(s, ERR_PROTO_SIZE, err, "rank %d: frame from rank %d has the wrong size",
                    s->rank, s->from);
    if (s->bytes_in)
        *s->bytes_in += (uint64_t)simulated(s, s->in->bytes);
    return 0;
}

void xport_sim_pace(struct xport *x, double rate)
{
    struct xport_sim *s = (struct xport_sim *)x;

    s->rate = rate > 0 && isfinite(rate) ? rate : 0;
}

static int sim_recv(struct xport *x, void *dst, size_t len, char *err)
{
    struct xport_sim *s = (struct xport_sim *)x;
    int rc;

    if (s->failed)
        return failed(s, err);
    if (!s->in_step || s->got + len > s->rbytes)
        return fail(s, ERR_USAGE, err, "rank %d: recv beyond the step's %d bytes", s->rank,
                    (int)s->rbytes);
    if ((rc = arrive(s, err)) != 0)
        return rc;
    if (s->mode == XPORT_SIM_REAL && len > 0)
        memcpy(dst, s->in->data + s->got, len);
    s->got += len;
    return 0;
}

static int sim_end(struct xport *x, char *err)
{
    struct xport_sim *s = (struct xport_sim *)x;
    int rc;

    if (s->failed)
        return failed(s, err);
    if (!s->in_step || s->got != s->rbytes)
        return fail(s, ERR_USAGE, err, "rank %d: end before the step's bytes from rank %d",
                    s->rank, s->from);
    if ((rc = arrive(s, err)) != 0)     /* rbytes == 0: recv was never called */
        return rc;
    free(s->in);
    s->in = NULL;
    if (s->put) {
        rc = wait_peer(s, s->put, s->to, "the frame to it", err);
        s->put = NULL;
        if (rc != 0)
            return rc;
    }
    s->in_step = 0;
    return 0;
}

static int sim_abort(struct xport *x, const char *why)
{
    struct xport_sim *s = (struct xport_sim *)x;

    if (!s->failed) {
        snprintf(s->fail_msg, sizeof s->fail_msg, "rank %d aborted: %s", s->rank, why);
        s->failed = ERR_EOF;
    }
    return 0;
}

static void sim_close(struct xport *x)
{
    struct xport_sim *s = (struct xport_sim *)x;

    /* A failed step may leave comms posted; SimGrid reclaims them at the
     * end of the run. Only a received frame is ours to free. */
    free(s->in);
    free(s);
}

static const struct xport_ops sim_ops = { sim_begin, sim_recv, sim_end, sim_abort, sim_close };

int xport_sim_open(const struct xport_plan *pl, int rank, int world, int mode, double scale,
                   uint64_t *bytes_in, uint64_t *bytes_out, struct xport **out, char *err)
{
    struct xport_sim *s;
    char name[32];

    *out = NULL;
    if (pl->npeers < 1 || pl->npeers > XPORT_PEERS_MAX || rank < 0 || rank >= world ||
        !(scale >= 1.0) || (mode == XPORT_SIM_REAL && scale != 1.0)) {
        err_say(err, "xport_sim_open: bad plan, rank or scale");
        return ERR_USAGE;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        err_say(err, "out of memory for rank %d's transport", rank);
        return -ENOMEM;
    }
    s->base.ops = &sim_ops;
    s->base.clock = &xport_sim_clock;
    s->rank = rank;
    s->world = world;
    s->mode = mode;
    s->scale = scale;
    s->bytes_in = bytes_in;
    s->bytes_out = bytes_out;
    /* A peer named twice (the ring at K = 2: dialled and accepted) is one
     * pair of mailboxes: frames are matched by sender, not by connection. */
    for (int i = 0; i < pl->npeers; i++) {
        int p = pl->peer[i].rank;

        if (p < 0 || p >= world || p == rank) {
            free(s);
            err_say(err, "xport_sim_open: rank %d's plan names rank %d", rank, p);
            return ERR_USAGE;
        }
        if (find(s, p))
            continue;
        s->peer[s->npeers].rank = p;
        xport_sim_mailbox_name(name, sizeof name, rank, p);
        s->peer[s->npeers].in = sg_mailbox_by_name(name);
        strcat(name, " e");
        s->peer[s->npeers].in_eager = sg_mailbox_by_name(name);
        sg_mailbox_set_receiver(name);          /* EAGER */
        xport_sim_mailbox_name(name, sizeof name, p, rank);
        s->peer[s->npeers].out = sg_mailbox_by_name(name);
        strcat(name, " e");
        s->peer[s->npeers].out_eager = sg_mailbox_by_name(name);
        s->npeers++;
    }
    *out = &s->base;
    return 0;
}
