/* student.c -- the project's side of the student track (student.h): the
 * calls a student's ring is written against, over the same transport and
 * with the same checks as ring.c, so that a student's ring that is right
 * is the project's ring, bit for bit and byte for byte.
 *
 * st_exchange is one xport step (xport.h): send a range to `to`, receive
 * a range from `from`. Its frame's tag is the range's first element, so a
 * sender and a receiver that disagree on which chunk travels fail on the
 * receiver ("element 8, expected element 0"), and one that disagree on
 * its size fail there too; a `to` or `from` that is not a neighbour, or a
 * range past the vector, fails before anything is sent. The incoming
 * elements are added in pieces of the staging size (ST_ADD, each sum
 * checked finite: vec_add_finite) or received in place and checked
 * (ST_COPY), as ring.c's two phases do.
 */
#include "student_run.h"

#include <errno.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"
#include "ring.h"

int student_init(struct student *st, struct xport *x, int rank, int world, size_t piece_bytes)
{
    *st = (struct student){ .dtype = -1 };
    return xport_algo_init(&st->a, x, rank, world, piece_bytes, RING_PIECE_DEFAULT);
}

void student_destroy(struct student *st)
{
    xport_algo_destroy(&st->a);
}

void student_plan(int rank, int world, struct xport_plan *pl)
{
    ring_plan(rank, world, pl);
    pl->tag = "element";
    pl->tag_of = "starting at element";
}

int st_rank(const struct student *st)
{
    return st->a.rank;
}

int st_world(const struct student *st)
{
    return st->a.world;
}

void st_chunk(const struct student *st, size_t n, int c, size_t *lo, size_t *hi)
{
    int k = st->a.world, m = c % k;

    ring_chunk(n, k, m < 0 ? m + k : m, lo, hi);
}

/* range_ok: [lo, lo + count) inside the vector, and its first element fits a tag. */
static int range_ok(const struct student *st, size_t lo, size_t count)
{
    return lo <= st->n && count <= st->n - lo && lo <= UINT32_MAX;
}

int st_exchange(struct student *st, void *buf, int to, size_t send_lo, size_t send_count,
                int from, size_t recv_lo, size_t recv_count, int op)
{
    int k = st->a.world, me = st->a.rank, right = (me + 1) % k, left = (me + k - 1) % k;
    int step = st->steps++, rc;
    size_t es = dtype_size(st->dtype), piece = st->a.piece_bytes / es;
    unsigned char *p = buf;

    if (k == 1)
        return 0;
    if ((to != right && to != left) || (from != right && from != left)) {
        err_say(st->err, "st_exchange (step %d): rank %d is connected to ranks %d (right) and "
                "%d (left) only, not to=%d from=%d", step, me, right, left, to, from);
        return ERR_USAGE;
    }
    if (op != ST_ADD && op != ST_COPY) {
        err_say(st->err, "st_exchange (step %d): op %d is neither ST_ADD nor ST_COPY", step, op);
        return ERR_USAGE;
    }
    if (!range_ok(st, send_lo, send_count) || !range_ok(st, recv_lo, recv_count)) {
        err_say(st->err, "st_exchange (step %d): send [%zu, +%zu) or receive [%zu, +%zu) "
                "runs past the vector's %zu elements", step, send_lo, send_count, recv_lo,
                recv_count, st->n);
        return ERR_USAGE;
    }
    rc = xport_begin(st->a.x, &(struct xport_step){
            .to = to, .from = from,
            .send_tag = (uint32_t)send_lo, .recv_tag = (uint32_t)recv_lo,
            .sbuf = p + send_lo * es, .sbytes = send_count * es, .rbytes = recv_count * es,
        }, st->err);
    if (op == ST_COPY && rc == 0 && (rc = xport_recv(st->a.x, p + recv_lo * es, recv_count * es,
                                                     st->err)) == 0) {
        size_t bad = 0;
        if ((rc = vec_check_finite(p + recv_lo * es, recv_count, st->dtype, &bad)) != 0)
            err_say(st->err, "element %zu is %g, copied from rank %d at step %d",
                    recv_lo + bad, vec_get(p, recv_lo + bad, st->dtype), from, step);
    }
    for (size_t i = recv_lo; op == ST_ADD && rc == 0 && i < recv_lo + recv_count; i += piece) {
        size_t m = recv_lo + recv_count - i < piece ? recv_lo + recv_count - i : piece, bad = 0;
        if ((rc = xport_recv(st->a.x, st->a.stage, m * es, st->err)) == 0 &&
            (rc = vec_add_finite(p + i * es, st->a.stage, m, st->dtype, &bad)) != 0)
            err_say(st->err, "element %zu is %g after adding what rank %d sent at step %d",
                    i + bad, vec_get(p, i + bad, st->dtype), from, step);
    }
    return rc != 0 ? rc : xport_end(st->a.x, st->err);
}

int student_run(struct student *st, void *buf, size_t n, int dtype, char *err)
{
    int rc;

    if (dtype_size(dtype) == 0)
        return ERR_USAGE;
    st->dtype = dtype;
    st->n = n;
    st->err = err;
    st->steps = 0;
    err[0] = '\0';
    rc = student_allreduce(st, buf, n);
    if (rc == ST_NOT_WRITTEN) {
        err_say(err, "--algo student: student_allreduce in students/ring_student.c is not "
                "written yet (the template returns ST_NOT_WRITTEN): write its body, then make");
        return -ENOSYS;
    }
    if (rc != 0 && err[0] == '\0')
        err_say(err, "--algo student: student_allreduce returned %d (not 0, and no call of "
                "st_exchange failed)", rc);
    return rc > 0 ? ERR_MISMATCH : rc;
}
