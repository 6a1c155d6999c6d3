/* ring_steps.c -- the ring's steps of one call, kept and written
 * (ring_steps.h). */
#include "ring_steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/outfile.h"

#define FLAG "--phases"

/* on_step: the ring's hook (ring.h, HOOK). A start fills the next row, its
 * end completes it; the ring runs its steps one after another. */
static void on_step(void *arg, enum ring_phase ph, int s, int send, int recv, size_t sbytes,
                    int end)
{
    struct ring_steps *st = arg;
    struct ring_steps_row *w;

    if (st->n >= st->cap)
        return;                 /* more steps than one call's: not the ring's */
    w = &st->row[st->n];
    if (!end) {
        *w = (struct ring_steps_row){ .phase = (int)ph, .step = s, .send = send, .recv = recv,
                                      .bytes = sbytes, .t0 = clock_src_now(st->clock) };
        return;
    }
    w->t1 = clock_src_now(st->clock);
    st->n++;
}

static void name_of(const char *path, int rank, char *name, size_t len)
{
    snprintf(name, len, "%s.%d", path, rank);
}

int ring_steps_check(const char *path, int rank, char *err)
{
    char name[CLI_PATH_MAX + 16];

    name_of(path, rank, name, sizeof name);
    return outfile_check(FLAG, name, err);
}

int ring_steps_init(struct ring_steps *st, int rank, int world, const struct clock_src *clock,
                    char *err)
{
    memset(st, 0, sizeof *st);
    st->cap = world > 1 ? 2 * (world - 1) : 1;
    st->row = calloc((size_t)st->cap, sizeof *st->row);
    if (!st->row) {
        err_say(err, FLAG ": out of memory for %d steps", st->cap);
        return -ENOMEM;
    }
    st->rank = rank;
    st->world = world;
    st->clock = clock;
    st->hook = (struct ring_hook){ on_step, st };
    return 0;
}

void ring_steps_destroy(struct ring_steps *st)
{
    if (st->ring)
        st->ring->hook = NULL;
    free(st->row);
    memset(st, 0, sizeof *st);
}

void ring_steps_arm(struct ring_steps *st, struct ring *r, size_t count, int dtype)
{
    if (st->done || !st->row)
        return;
    st->n = 0;
    st->count = count;
    st->dtype = dtype;
    st->ring = r;
    r->hook = &st->hook;
}

void ring_steps_disarm(struct ring_steps *st, int ok)
{
    if (!st->ring)
        return;
    st->ring->hook = NULL;
    st->ring = NULL;
    if (ok)
        st->done = 1;
    else
        st->n = 0;
}

int ring_steps_write(const struct ring_steps *st, const char *path, char *err)
{
    char name[CLI_PATH_MAX + 16];
    struct outfile *f;
    int rc = 0;

    name_of(path, st->rank, name, sizeof name);
    if (!(f = outfile_new(FLAG, name, &rc, err)))
        return rc;
    outfile_printf(f, "# ring_worker --phases: rank %d of K %d, %zu %s (%zu bytes), "
                   "the first timed call%s\n", st->rank, st->world, st->count,
                   dtype_name(st->dtype), st->count * dtype_size(st->dtype),
                   st->done ? "" : " (none was kept)");
    outfile_printf(f, "# rank phase step send recv bytes t_begin_s t_end_s\n");
    for (int i = 0; st->done && i < st->n; i++) {
        const struct ring_steps_row *w = &st->row[i];
        outfile_printf(f, "%d %s %d %d %d %zu %.6f %.6f\n", st->rank,
                       w->phase == RING_ALL_GATHER ? "all-gather" : "reduce-scatter", w->step,
                       w->send, w->recv, w->bytes, w->t0, w->t1);
    }
    return outfile_end(f, err);
}
