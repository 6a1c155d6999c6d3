/* tree_shape.c -- the trees' shape, their edge colors, the schedule's
 * longest chain and its eager replay (tree_shape.h says what and why;
 * common/coll/tree.c teaches the trees, the periods and the slots).
 */
#include "tree_shape.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_WORLD_MAX 64          /* the coloring search's K */
#define SEARCH_BUDGET    200000      /* nodes the search may visit per C */

/* ------------------------------------------------------------ the trees */

/* role: rank's place in tree j (its number in the in-order tree), and back. */
static int role(int rank, int k, int j)
{
    if (j == 0)
        return rank;
    return k % 2 == 0 ? k - 1 - rank : (rank + k - 1) % k;
}

static int rank_at(int q, int k, int j)
{
    if (j == 0)
        return q;
    return k % 2 == 0 ? k - 1 - q : (q + 1) % k;
}

static int bt_parent(int q, int k)
{
    int b = q & -q, p;

    if (q == 0)
        return -1;
    p = (q ^ b) | (b << 1);
    return p < k ? p : q ^ b;
}

static int bt_children(int q, int k, int *out)
{
    int b = q & -q, n = 0;

    if (q == 0) {
        int top = 1;
        while (top * 2 < k)
            top *= 2;
        if (k > 1)
            out[n++] = top;
        return n;
    }
    if (b == 1)
        return 0;
    out[n++] = q - b / 2;
    for (int c = b / 2; c >= 1; c /= 2)
        if (q + c < k) {
            out[n++] = q + c;
            break;
        }
    return n;
}

int tree_parent(int rank, int world, int j)
{
    int p = bt_parent(role(rank, world, j), world);

    return p < 0 ? -1 : rank_at(p, world, j);
}

int tree_children(int rank, int world, int j, int *out)
{
    int n = bt_children(role(rank, world, j), world, out);

    for (int i = 0; i < n; i++)
        out[i] = rank_at(out[i], world, j);
    if (n == 2 && out[0] > out[1]) {
        int s = out[0];
        out[0] = out[1];
        out[1] = s;
    }
    return n;
}

static int bt_height(int q, int k)
{
    int c[2], n = bt_children(q, k, c), h = 0;

    for (int i = 0; i < n; i++) {
        int hc = bt_height(c[i], k) + 1;
        h = hc > h ? hc : h;
    }
    return h;
}

int tree_height(int rank, int world, int j)
{
    return bt_height(role(rank, world, j), world);
}

int tree_depth(int rank, int k, int j)
{
    int d = 0;

    for (int q = role(rank, k, j); (q = bt_parent(q, k)) >= 0;)
        d++;
    return d;
}

/* ----------------------------------------------------------- the colors */

/* One tree: below an edge of color c, the children's edges take the two
 * other colors, the lower child first (the root: 0 and 1). */
static void color_below(int q, int k, int up, int *color)
{
    int c[2], n = bt_children(q, k, c), next = 0;

    if (n == 2 && c[0] > c[1]) {
        int s = c[0];
        c[0] = c[1];
        c[1] = s;
    }
    for (int i = 0; i < n; i++) {
        if (next == up)
            next++;
        color[c[i]] = next;
        color_below(c[i], k, next, color);
        next++;
    }
}

/* Two trees: the edges as (a, b) pairs, edge i is tree i / k's edge of
 * child i % k. The search keeps per rank a mask of the colors in use. */
struct search {
    int k, nedge, colors;
    long budget;
    const int *a, *b;
    int *color;
    uint32_t *used;
};

static int avail(const struct search *s, int i)
{
    return (int)(~(s->used[s->a[i]] | s->used[s->b[i]]) & ((1u << s->colors) - 1));
}

/* DSatur: color the edge with the fewest colors left first; backtrack.
 * 1: done; 0: no coloring; -1: out of budget. */
static int dsatur(struct search *s, int left)
{
    int best = -1, bestn = 99, m, rc;

    if (left == 0)
        return 1;
    if (--s->budget < 0)
        return -1;
    for (int i = 0; i < s->nedge; i++) {
        if (s->a[i] < 0 || s->color[i] >= 0)
            continue;
        int n = __builtin_popcount((unsigned)avail(s, i));
        if (n < bestn) {
            bestn = n;
            best = i;
        }
    }
    m = avail(s, best);
    for (int c = 0; c < s->colors; c++) {
        if (!(m & (1 << c)))
            continue;
        s->color[best] = c;
        s->used[s->a[best]] |= 1u << c;
        s->used[s->b[best]] |= 1u << c;
        rc = dsatur(s, left - 1);
        if (rc != 0)
            return rc;
        s->used[s->a[best]] &= ~(1u << c);
        s->used[s->b[best]] &= ~(1u << c);
        s->color[best] = -1;
    }
    return 0;
}

static int color_two(int k, int *color)
{
    int nedge = 2 * k, ne = 0, maxdeg = 0, rc = -1;
    int *a = malloc(sizeof(int) * (size_t)nedge * 2), *deg = calloc((size_t)k, sizeof(int));
    uint32_t *used = calloc((size_t)k, sizeof *used);
    struct search s = { k, nedge, 0, 0, a, a ? a + nedge : NULL, color, used };

    if (!a || !deg || !used) {
        free(a);
        free(deg);
        free(used);
        return -ENOMEM;
    }
    for (int i = 0; i < nedge; i++) {
        int p = tree_parent(i % k, k, i / k);
        a[i] = p < 0 ? -1 : p;
        a[nedge + i] = i % k;
        if (p >= 0) {
            ne++;
            maxdeg = ++deg[p] > maxdeg ? deg[p] : maxdeg;
            maxdeg = ++deg[i % k] > maxdeg ? deg[i % k] : maxdeg;
        }
    }
    for (s.colors = maxdeg; k <= SEARCH_WORLD_MAX && rc != 1 && s.colors <= maxdeg + 1;
         s.colors++) {
        for (int i = 0; i < nedge; i++)
            color[i] = -1;
        memset(used, 0, sizeof *used * (size_t)k);
        s.budget = SEARCH_BUDGET;
        rc = dsatur(&s, ne);
    }
    if (rc != 1) {                   /* greedy: the first color free at both ends */
        s.colors = 0;
        memset(used, 0, sizeof *used * (size_t)k);
        for (int i = 0; i < nedge; i++) {
            int c = 0;
            color[i] = -1;
            if (a[i] < 0)
                continue;
            while ((used[a[i]] | used[s.b[i]]) & (1u << c))
                c++;
            color[i] = c;
            used[a[i]] |= 1u << c;
            used[s.b[i]] |= 1u << c;
            s.colors = c + 1 > s.colors ? c + 1 : s.colors;
        }
    } else
        s.colors--;
    free(a);
    free(deg);
    free(used);
    return s.colors;
}

int tree_colors(int world, int ntrees, int *color)
{
    int c = 0;

    if (ntrees == 2)
        return color_two(world, color);
    for (int i = 0; i < world; i++)
        color[i] = -1;
    color_below(0, world, -1, color);
    for (int i = 0; i < world; i++)
        c = color[i] + 1 > c ? color[i] + 1 : c;
    return c;
}

/* ------------------------------------------------------- the schedule */

struct sched_edge {
    int child, parent, tree, color;
    long up_at, down_at;        /* period of segment 0 going up, coming down */
};

static int by_slot(const void *x, const void *y)
{
    return ((const struct sched_edge *)x)->color - ((const struct sched_edge *)y)->color;
}

/* sched: the schedule's swaps in order (period, then slot), each carrying
 * up and/or down or neither (skipped); *ne and *periods set, the colors
 * in *colors. Returns the edges (malloc'd, the caller frees) or NULL. */
static struct sched_edge *sched(int world, int ntrees, const long *segs, int *ne,
                                long *periods, int *colors)
{
    int *color = malloc(sizeof *color * (size_t)world * 2), c, d;
    struct sched_edge *e = malloc(sizeof *e * (size_t)world * 2);

    *ne = 0;
    *periods = 0;
    if (!color || !e || (c = tree_colors(world, ntrees, color)) < 0) {
        free(color);
        free(e);
        return NULL;
    }
    *colors = c;
    d = bt_height(0, world);            /* D: both trees have the same depth */
    for (int j = 0; j < ntrees; j++) {
        for (int r = 0; r < world; r++) {
            int p = tree_parent(r, world, j);
            if (p >= 0)
                e[(*ne)++] = (struct sched_edge){ r, p, j, color[j * world + r],
                                                  tree_height(r, world, j),
                                                  d + tree_depth(r, world, j) - 1 };
        }
        if (segs[j] + 2 * d - 1 > *periods)
            *periods = segs[j] + 2 * d - 1;
    }
    /* Edges of one color touch disjoint ranks, so within a slot the order
     * does not matter; across slots and periods it is every rank's own. */
    qsort(e, (size_t)*ne, sizeof *e, by_slot);
    free(color);
    return e;
}

long tree_steps(int world, int ntrees, const long *segs, int *colors)
{
    int c = 0, ne;
    long periods, steps = 0, *ready;
    struct sched_edge *e;

    if (colors)
        *colors = 0;
    if (world < 2 || ntrees < 1 || ntrees > 2)
        return 0;
    ready = calloc((size_t)world, sizeof *ready);
    e = sched(world, ntrees, segs, &ne, &periods, &c);
    if (!ready || !e) {
        steps = -ENOMEM;
        goto out;
    }
    if (colors)
        *colors = c;
    for (long q = 0; q < periods; q++)
        for (int i = 0; i < ne; i++) {
            long up = q - e[i].up_at, down = q - e[i].down_at, s = segs[e[i].tree];
            if (!(up >= 0 && up < s) && !(down >= 0 && down < s))
                continue;               /* both ways empty: skipped by both ends */
            long t = (ready[e[i].child] > ready[e[i].parent] ? ready[e[i].child]
                                                             : ready[e[i].parent]) + 1;
            ready[e[i].child] = ready[e[i].parent] = t;
            steps = t > steps ? t : steps;
        }
out:
    free(e);
    free(ready);
    return steps;
}

/* ------------------------------------------------- the eager schedule */

/* A time on the eager schedule and what it is made of: t = na a + nb b
 * (nb in bytes), kept along the path that set it (the later of two). */
struct when {
    double t, na, nb;
};

static struct when later(struct when x, struct when y)
{
    return y.t > x.t ? y : x;
}

static struct when plus(struct when x, double na, double nb, double a, double b)
{
    return (struct when){ x.t + na * a + nb * b, x.na + na, x.nb + nb };
}

/* One rank: where its program stands (its last swap ended) and when its
 * two wires are free; and its egress as the link records it (link.h,
 * UTILIZATION): the busy horizon (a frame is busy from its start until
 * its last byte lands, a later), the idle before it, and the lead. */
struct port {
    struct when done, egress, ingress;
    double horizon, idle, lead;
};

/* busy: the link's record of an egress reservation [s, end]: a gap
 * after the horizon is idle beyond the lead, which it uses up; a new
 * frame (`earns`; not a frame's later piece) that starts before the
 * horizon adds the overlap, at most a, to the lead. */
static void busy(struct port *p, double s, double end, int earns, double a)
{
    if (s > p->horizon) {
        double gap = s - p->horizon, used = fmin(gap, p->lead);
        p->idle += gap - used;
        p->lead -= used;
    } else if (earns) {
        p->lead += fmin(p->horizon - s, a);
    }
    p->horizon = fmax(p->horizon, end);
}

/* mark: p's egress idle up to `now` (link_util_mark_egress). */
static double mark(const struct port *p, double now)
{
    return p->idle + fmax(0.0, now - p->horizon - p->lead);
}

/* wire: `bytes` leave `from` at `t` or when its egress is free, arrive a
 * later, and pass to's ingress no faster than the rate, in to's order;
 * earns: a new frame's first bytes (busy). */
static struct when wire(struct port *from, struct port *to, struct when t, double bytes,
                        double a, double b, int earns)
{
    struct when s = later(t, from->egress), in;

    from->egress = plus(s, 0, bytes, a, b);
    busy(from, s.t, from->egress.t + a, earns, a);
    in = later(plus(s, 1, bytes, a, b), plus(to->ingress, 0, bytes, a, b));
    to->ingress = in;
    return in;
}

struct cost_in {
    double a, b, piece;
};

/* swap: one swap of the schedule between ranks x and y, x sending mx
 * bytes, y my (0: the header alone). Each sends its header and first
 * piece when it reaches the swap; the rest once the other's header is
 * in; its swap ends when the other's whole frame is in. */
static void swap(struct port *x, struct port *y, double mx, double my, const struct cost_in *c)
{
    struct when tx = x->done, ty = y->done;
    double fx = mx <= c->piece ? mx : c->piece, fy = my <= c->piece ? my : c->piece;
    struct when hy = wire(x, y, tx, fx, c->a, c->b, 1), hx = wire(y, x, ty, fy, c->a, c->b, 1);
    struct when iny = hy, inx = hx;

    if (mx > fx) {
        iny = later(wire(x, y, tx, mx - fx, c->a, c->b, 0), plus(hx, 0, mx - fx, c->a, c->b));
        y->ingress = iny;
    }
    if (my > fy) {
        inx = later(wire(y, x, ty, my - fy, c->a, c->b, 0), plus(hy, 0, my - fy, c->a, c->b));
        x->ingress = inx;
    }
    x->done = later(tx, inx);
    y->done = later(ty, iny);
}

int tree_cost(int world, int ntrees, const long *segs, double seg_bytes, double a, double b,
              double piece, struct tree_cost *out)
{
    int c = 0, ne;
    long periods;
    struct sched_edge *e;
    struct port *p;
    struct when *entry;
    double *from, *idle0;
    struct cost_in in = { a, b, piece > 0 ? piece : seg_bytes };

    memset(out, 0, sizeof *out);
    if (world < 2 || ntrees < 1 || ntrees > 2)
        return 0;
    p = calloc((size_t)world, sizeof *p);
    entry = calloc((size_t)world, sizeof *entry);
    from = calloc((size_t)world * 2, sizeof *from);
    idle0 = from + world;
    e = sched(world, ntrees, segs, &ne, &periods, &c);
    if (!p || !entry || !from || !e) {
        free(from);
        free(p);
        free(entry);
        free(e);
        return -ENOMEM;
    }
    out->colors = c;
    for (int call = 0; call < TREE_CALLS; call++) {
        struct when slow = { -1, 0, 0 };
        for (int r = 0; r < world; r++) {
            entry[r] = p[r].done;
            p[r].lead = 0.0;                /* a lead is the call's own */
            if (call == 1) {                /* the util window: calls 1 .. last */
                from[r] = entry[r].t;
                idle0[r] = mark(&p[r], from[r]);
            }
        }
        for (long q = 0; q < periods; q++)
            for (int i = 0; i < ne; i++) {
                long up = q - e[i].up_at, down = q - e[i].down_at, s = segs[e[i].tree];
                int has_up = up >= 0 && up < s, has_down = down >= 0 && down < s;
                if (has_up || has_down)     /* both ways empty: skipped by both ends */
                    swap(&p[e[i].child], &p[e[i].parent], has_up ? seg_bytes : 0,
                         has_down ? seg_bytes : 0, &in);
            }
        for (int r = 0; r < world; r++) {
            struct when d = { p[r].done.t - entry[r].t, p[r].done.na - entry[r].na,
                              p[r].done.nb - entry[r].nb };
            slow = later(slow, d);
        }
        if (call == 0)
            out->first = slow.t;
        out->time = slow.t;
        out->lat_terms = slow.na;
        out->byte_terms = slow.nb;
    }
    for (int r = 0; r < world && TREE_CALLS > 1; r++) {
        double span = p[r].done.t - from[r];
        if (span > 0)
            out->util = fmax(out->util, 1.0 - (mark(&p[r], p[r].done.t) - idle0[r]) / span);
    }
    free(from);
    free(p);
    free(entry);
    free(e);
    return 0;
}
