/* ps_wire.c -- the simulated byte stream of the PS protocol (ps_wire.h). */
#include "ps_wire.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>

#include "measure/model.h"

/* mailbox_name: "sS<-wW" or "wW<-sS" (wire_mailbox). */
static void mailbox_name(char *name, size_t len, int to_server, int s, int w)
{
    if (to_server)
        snprintf(name, len, "s%d<-w%d", s, w);
    else
        snprintf(name, len, "w%d<-s%d", w, s);
}

sg_mailbox_t wire_mailbox(int to_server, int s, int w)
{
    char name[48];

    mailbox_name(name, sizeof name, to_server, s, w);
    return sg_mailbox_by_name(name);
}

void wire_in_eager(int s, int w)
{
    char name[48];

    mailbox_name(name, sizeof name, 0, s, w);
    sg_mailbox_set_receiver(name);
}

/* split: m's last t simulated bytes as a message of their own (the
 * TAIL; m keeps the rest). Only a message of one span (nseg 0). */
static struct wmsg *split(struct wire_out *o, struct wmsg *m, size_t t)
{
    size_t at = m->len - t;     /* the stream offset where the tail starts */
    size_t real = m->real > at ? m->real - at : 0;
    struct wmsg *r = malloc(sizeof *r + real);

    if (!r)
        return NULL;
    *r = (struct wmsg){ t, real, o->sizes ? t : (t < m->payload ? t : m->payload), m->t0, 0,
                        m->tag, 0, NULL };
    if (real)
        memcpy(r->b, m->b + at, real);
    m->len = at;
    m->real -= real;
    m->payload -= r->payload;
    return r;
}

static void post(struct wire_out *o, struct wmsg *m)
{
    size_t size = o->sizes ? m->payload : m->len;
    struct wire_host *h = o->host;

    o->fly_tag = m->tag;
    if (h && !o->local && size > 0 && m->nseg == 0 && !m->eof) {
        /* cut as the model cuts (model_ps_tail): the stream's bytes, the
         * header's included, whether or not they are simulated (SIZES) */
        double now = simgrid_get_clock();
        size_t ts = (size_t)model_last_piece((double)m->len, h->piece);
        size_t t = ts < m->len && ts <= size ? ts : size;
        struct wmsg *r = t < size ? split(o, m, t) : m;

        if (r && r != m) {      /* the bulk, at once; out of memory: all of it as a tail */
            h->bulk_end = fmax(now, h->bulk_end) + (double)(size - t) / h->rate;
            sg_comm_detach(sg_mailbox_put_init(o->mb, m, (long)(size - t)), free);
        }
        o->held = r ? r : m;
        o->held_due = NAN;
        o->hnext = NULL;
        if (h->last)
            h->last = h->last->hnext = o;
        else
            h->first = h->last = o;
        return;
    }
    o->c = sg_mailbox_put_async(o->mb, m, o->local ? 0 : (long)size);
}

static void alarm_main(int argc, char **argv)
{
    struct wire_host *h = sg_actor_self_get_data();
    static char tick;

    (void)argc;
    (void)argv;
    for (;;) {
        double *due = sg_mailbox_get(h->arm_mb);

        sg_actor_sleep_until(*due);
        sg_mailbox_put(h->tick_mb, &tick, 0);
    }
}

void wire_host_start(struct wire_host *h, int s)
{
    char name[64];
    sg_actor_t a;

    snprintf(name, sizeof name, "server%d alarm", s);
    h->arm_mb = sg_mailbox_by_name(name);
    snprintf(name, sizeof name, "server%d tick", s);
    h->tick_mb = sg_mailbox_by_name(name);
    a = sg_actor_init(name, sg_host_self());
    sg_actor_set_data(a, h);
    sg_actor_daemonize(a);
    sg_actor_start(a, alarm_main, 0, NULL);
}

void wire_host_tick(struct wire_host *h)
{
    h->tick_c = NULL;
}

sg_comm_t wire_host_go(struct wire_host *h)
{
    double now = simgrid_get_clock();

    for (struct wire_out *o = h->first; o; o = o->hnext)
        if (isnan(o->held_due)) {
            size_t t = o->sizes ? o->held->payload : o->held->len;

            o->held_due = fmax(fmax(now, h->bulk_end), h->free);
            h->free = o->held_due + (double)t / h->rate;
        }
    while (h->first && h->first->held_due <= now + 1e-12) {   /* 1 ps: the clock's rounding */
        struct wire_out *o = h->first;
        struct wmsg *m = o->held;

        h->first = o->hnext;
        if (!h->first)
            h->last = NULL;
        o->held = NULL;
        o->c = sg_mailbox_put_async(o->mb, m, (long)(o->sizes ? m->payload : m->len));
    }
    if (h->first && !h->tick_c) {
        h->arm_due = h->first->held_due;
        sg_comm_detach(sg_mailbox_put_init(h->arm_mb, &h->arm_due, 0), NULL);
        h->tick_c = sg_mailbox_get_async(h->tick_mb, &h->tick_got);
    }
    return h->tick_c;
}

int wire_send(struct wire_out *o, const void *const *p, const size_t *len, unsigned nb,
              size_t payload, int tag)
{
    size_t total = 0, real = 0, at = 0;
    struct wmsg *m;

    for (unsigned i = 0; i < nb; i++) {
        total += len[i];
        real += p[i] ? len[i] : 0;
    }
    if (!(m = malloc(sizeof *m + real)))
        return -ENOMEM;
    *m = (struct wmsg){ total, real, payload, simgrid_get_clock(), 0, tag, 0, NULL };
    for (unsigned i = 0; i < nb && p[i]; i++) {
        memcpy(m->b + at, p[i], len[i]);
        at += len[i];
    }
    if (!wire_busy(o))
        post(o, m);
    else if (o->tail)
        o->tail = o->tail->next = m;
    else
        o->head = o->tail = m;
    return 0;
}

/* segs: where a COALESCED message keeps its span lengths (after b, aligned). */
static size_t *segs(const struct wmsg *m)
{
    size_t at = (m->real + sizeof(size_t) - 1) / sizeof(size_t) * sizeof(size_t);

    return (size_t *)(void *)((unsigned char *)(uintptr_t)m->b + at);
}

size_t wire_span(const struct wmsg *m, size_t off, const unsigned char **src)
{
    const size_t *seg;
    size_t at = 0, bat = 0;

    if (m->nseg == 0) {
        *src = off < m->real ? m->b + off : NULL;
        return off < m->real ? m->real - off : m->len - off;
    }
    seg = segs(m);
    for (unsigned i = 0; i < m->nseg; i++) {
        if (off < at + seg[i]) {
            *src = i % 2 == 0 ? m->b + bat + (off - at) : NULL;
            return at + seg[i] - off;
        }
        at += seg[i];
        bat += i % 2 == 0 ? seg[i] : 0;
    }
    *src = NULL;                /* past the spans: cannot happen (off < len) */
    return m->len - off;
}

int wire_pend_add(struct wire_pend *p, const void *buf, size_t len, size_t payload)
{
    int mat = buf != NULL;

    if (len == 0)
        return 0;
    if (p->len == 0)
        p->t0 = simgrid_get_clock();
    if (p->nseg == 0 && !mat) {
        /* a message opening with SIZES: an empty materialised span first */
        if (wire_pend_add(p, p, 0, 0) != 0)
            return -ENOMEM;
    }
    if (p->nseg == 0 || (p->nseg % 2 == 1) != mat) {
        if (p->nseg == p->segcap) {
            unsigned cap = p->segcap ? 2 * p->segcap : 8;
            size_t *seg = realloc(p->seg, cap * sizeof *seg);

            if (!seg)
                return -ENOMEM;
            p->seg = seg;
            p->segcap = cap;
        }
        p->seg[p->nseg++] = 0;
    }
    if (mat) {
        if (p->real + len > p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 256;
            unsigned char *b;

            while (cap < p->real + len)
                cap *= 2;
            if (!(b = realloc(p->b, cap)))
                return -ENOMEM;
            p->b = b;
            p->cap = cap;
        }
        memcpy(p->b + p->real, buf, len);
        p->real += len;
    }
    p->seg[p->nseg - 1] += len;
    p->len += len;
    p->payload += payload;
    return 0;
}

int wire_pend_flush(struct wire_out *o, struct wire_pend *p)
{
    unsigned nseg = p->nseg <= 2 ? 0 : p->nseg;  /* one materialised span, then SIZES */
    size_t at = (p->real + sizeof(size_t) - 1) / sizeof(size_t) * sizeof(size_t);
    struct wmsg *m;

    if (p->len == 0)
        return 0;
    if (!(m = malloc(sizeof *m + at + nseg * sizeof(size_t))))
        return -ENOMEM;
    *m = (struct wmsg){ p->len, p->real, p->payload, p->t0, 0, -1, nseg, NULL };
    if (p->real)
        memcpy(m->b, p->b, p->real);
    if (nseg)
        memcpy(segs(m), p->seg, nseg * sizeof(size_t));
    p->real = p->len = p->payload = 0;
    p->nseg = 0;
    sg_comm_detach(sg_mailbox_put_init(o->mb, m, o->local ? 0 : (long)(o->sizes ? m->payload
                                                                                : m->len)),
                   free);
    return 0;
}

void wire_pend_free(struct wire_pend *p)
{
    free(p->b);
    free(p->seg);
    *p = (struct wire_pend){ 0 };
}

int wire_put_done(struct wire_out *o)
{
    struct wmsg *m = o->head;
    int tag = o->fly_tag;

    o->c = NULL;
    if (m) {
        o->head = m->next;
        if (!o->head)
            o->tail = NULL;
        post(o, m);
    }
    return tag;
}

void wire_in_post(struct wire_in *i)
{
    if (!i->c)
        i->c = sg_mailbox_get_async(i->mb, (void **)&i->got);
}

void wire_in_take(struct wire_in *i)
{
    i->c = NULL;
    i->got->next = NULL;
    if (i->last)
        i->last = i->last->next = i->got;
    else
        i->cur = i->last = i->got;
    i->got = NULL;
}

void wire_in_pop(struct wire_in *i)
{
    struct wmsg *m = i->cur;

    i->cur = m->next;
    if (!i->cur)
        i->last = NULL;
    i->off = 0;
    free(m);
}

void wire_poison(const sg_mailbox_t *mbs, int n, const char *claim)
{
    size_t len = strlen(claim) + 1;

    for (int i = 0; i < n; i++) {
        struct wmsg *m = malloc(sizeof *m + len);

        if (!m)
            return;
        *m = (struct wmsg){ len, len, 0, simgrid_get_clock(), 1, -1, 0, NULL };
        memcpy(m->b, claim, len);
        sg_comm_detach(sg_mailbox_put_init(mbs[i], m, 0), free);
    }
}

void wire_in_close(struct wire_in *i)
{
    static struct wmsg mark;           /* never freed: the marker */
    sg_comm_t put;

    if (!i->c)
        return;
    put = sg_mailbox_put_async(i->mb, &mark, 0);
    for (;;) {
        (void)sg_comm_wait(i->c);
        if (i->got == &mark)
            break;
        free(i->got);
        i->c = sg_mailbox_get_async(i->mb, (void **)&i->got);
    }
    (void)sg_comm_wait(put);
    i->c = NULL;
    i->got = NULL;
}

void wire_out_free(struct wire_out *o)
{
    free(o->held);
    o->held = NULL;
    while (o->head) {
        struct wmsg *m = o->head;

        o->head = m->next;
        free(m);
    }
    o->tail = NULL;
}

void wire_in_free(struct wire_in *i)
{
    while (i->cur)
        wire_in_pop(i);
}
