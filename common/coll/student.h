/* student.h -- the student track (docs/lab.md, "Write the ring"): the ring
 * all-reduce's body, written by a student in students/ring_student.c
 * against the five calls below, run by `ring_worker --algo student` and
 * checked by `experiments/grade.sh --code FILE` the way the project checks
 * its own ring (common/coll/ring.c).
 *
 * WHAT THE STUDENT WRITES. One function,
 *
 *     int student_allreduce(struct student *st, void *buf, size_t n);
 *
 * On entry buf holds this rank's n elements; on return it must hold the
 * element-wise SUM over the K ranks, the same bits on every rank, having
 * sent 2(K-1)/K n elements (the ring's bytes: common/coll/ring.c, COST).
 * Return 0, or the code of the first st_exchange that failed, at once.
 *
 * THE CALLS.
 *   st_rank, st_world   this rank (0..K-1) and K.
 *   st_chunk(st, n, c, &lo, &hi)
 *                       chunk c (0..K-1) of n elements is [lo, hi):
 *                       K chunks, sizes differing by at most one. A chunk
 *                       index outside 0..K-1 is taken mod K.
 *   st_exchange(st, buf, to, send_lo, send_count, from, recv_lo, recv_count, op)
 *                       ONE STEP of the ring: send buf[send_lo ..
 *                       send_lo + send_count) to rank `to` while receiving
 *                       recv_count elements from rank `from` into
 *                       buf[recv_lo ..), both at once (the link is full
 *                       duplex), the incoming ones ADDED to what is there
 *                       (op ST_ADD) or COPIED over it (ST_COPY). The
 *                       transport connects each rank to its two
 *                       neighbours only: to and from must each be
 *                       (rank + 1) % K or (rank + K - 1) % K. The frame
 *                       carries send_lo, and the receiver checks it
 *                       against its recv_lo and its size against
 *                       recv_count: a step whose two ends disagree fails
 *                       on the receiver, naming both.
 *   Elements are the run's --dtype (f32 or f64); buf is untyped on
 *   purpose: indices and counts are in elements, never bytes.
 *
 * THE TEMPLATE (students/ring_student.c as shipped) returns ST_NOT_WRITTEN;
 * ring_worker then stops with "not written yet" (exit 1).
 *
 * The project's side (student.c): the calls over the transport (xport.h;
 * the peer table: student_plan, the ring's two neighbours, steps tagged
 * by their first element), every received value checked finite (THE
 * CHECK of ring.c), and student_run, which coll.c calls.
 */
#ifndef STUDENT_H
#define STUDENT_H

#include <stddef.h>

enum { ST_ADD = 1, ST_COPY = 2 };
#define ST_NOT_WRITTEN 4242     /* the template's return value */

struct student;

int st_rank(const struct student *st);
int st_world(const struct student *st);
void st_chunk(const struct student *st, size_t n, int c, size_t *lo, size_t *hi);
int st_exchange(struct student *st, void *buf, int to, size_t send_lo, size_t send_count,
                int from, size_t recv_lo, size_t recv_count, int op);

/* What the student writes (students/ring_student.c). */
int student_allreduce(struct student *st, void *buf, size_t n);

#endif /* STUDENT_H */
