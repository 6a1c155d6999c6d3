/* ps_chan.c -- the simulated parameter server's messaging (ps_chan.h). */
#include "ps_chan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/mailbox.h>

#include "base/dtype.h"
#include "base/err.h"

sg_mailbox_t ps_mailbox(int push, int s, int w)
{
    char name[48];

    if (push)
        snprintf(name, sizeof name, "s%d<-w%d", s, w);
    else
        snprintf(name, sizeof name, "w%d<-s%d", w, s);
    return sg_mailbox_by_name(name);
}

size_t ps_elements(const struct sim_job *j)
{
    return (size_t)(j->bytes / dtype_size(j->c->dtype));
}

int ps_loop_init(struct loop *l, size_t cap)
{
    l->n = 0;
    l->c = calloc(cap, sizeof *l->c);
    l->tag = calloc(cap, sizeof *l->tag);
    return l->c && l->tag ? 0 : -ENOMEM;
}

void ps_loop_free(struct loop *l)
{
    free(l->c);
    free(l->tag);
}

void ps_loop_add(struct loop *l, sg_comm_t c, int tag)
{
    l->c[l->n] = c;
    l->tag[l->n++] = tag;
}

void ps_loop_drop(struct loop *l, size_t i)
{
    l->n--;
    l->c[i] = l->c[l->n];
    l->tag[i] = l->tag[l->n];
}

static sg_comm_t chan_post(struct chan *ch, struct ps_frame *f, size_t es, int from)
{
    return sg_mailbox_put_async(ch->mb, f, from == ch->host ? 0 : (long)(f->count * es));
}

void ps_chan_send(struct loop *l, struct chan *chans, int peer, struct ps_frame *f,
                  size_t es, int from, uint64_t *out)
{
    struct chan *ch = &chans[peer];

    if (from != ch->host)
        *out += f->count * es;
    f->next = NULL;
    if (!ch->busy) {
        ch->busy = 1;
        ps_loop_add(l, chan_post(ch, f, es, from), -peer - 1);
    } else if (ch->tail) {
        ch->tail->next = f;
        ch->tail = f;
    } else {
        ch->head = ch->tail = f;
    }
}

void ps_put_done(struct loop *l, size_t i, struct chan *chans, size_t es, int from)
{
    struct chan *ch = &chans[-l->tag[i] - 1];
    struct ps_frame *f = ch->head;

    if (f) {
        ch->head = f->next;
        if (!ch->head)
            ch->tail = NULL;
        l->c[i] = chan_post(ch, f, es, from);
    } else {
        ch->busy = 0;
        ps_loop_drop(l, i);
    }
}

long ps_wait(struct loop *l, struct sim_slot *sl, uint64_t step)
{
    ssize_t i = sg_comm_wait_any(l->c, l->n);

    if (i < 0) {
        err_say(sl->err, "step %llu: a simulated message failed", (unsigned long long)step);
        return ERR_EOF;
    }
    return (long)i;
}

void ps_poison(const sg_mailbox_t *mb, size_t stride, int n, const struct sim_slot *sl,
               int killed)
{
    const char *claim = killed ? "" : sl->err;
    size_t len = strlen(claim) + 1;

    for (int i = 0; i < n; i++) {
        struct ps_frame *f = malloc(sizeof *f + len);

        if (!f)
            return;
        *f = (struct ps_frame){ PS_POISON, 0, 0, { 0, 0 }, 0, 0, f + 1, NULL };
        memcpy(f + 1, claim, len);
        sg_comm_detach(sg_mailbox_put_init(*(const sg_mailbox_t *)((const char *)mb + i * stride),
                                           f, 0), free);
    }
}

int ps_poisoned(struct sim_slot *sl, uint64_t step, const struct ps_frame *f,
                const char *who, int i, int h)
{
    if (((const char *)f->data)[0])
        err_say(sl->err, "step %llu: %s %d reported: %s", (unsigned long long)step, who, i,
                (const char *)f->data);
    else
        err_say(sl->err, "step %llu: lost %s %d (simulated host h%d): connection closed",
                (unsigned long long)step, who, i, h);
    return ERR_EOF;
}

void ps_chans_free(struct chan *chans, int n)
{
    for (int i = 0; chans && i < n; i++)
        while (chans[i].head) {
            struct ps_frame *f = chans[i].head;

            chans[i].head = f->next;
            free(f);
        }
}

int ps_loop_drain(struct loop *l, struct chan *chans, size_t es, struct sim_slot *sl,
                  uint64_t step)
{
    while (l->n > 0) {
        long i = ps_wait(l, sl, step);

        if (i < 0)
            return (int)i;
        ps_put_done(l, (size_t)i, chans, es, sl->host);
    }
    return 0;
}
