/* students/ring_student.c -- write the ring all-reduce (docs/lab.md,
 * "Write the ring").
 *
 * K ranks each hold a vector of n elements; each must end with the
 * element-wise SUM of all K vectors. The ranks stand in a ring: rank r
 * sends to its right neighbour (r + 1) % K and receives from its left
 * neighbour (r + K - 1) % K. Cut the vector into K chunks (st_chunk). Then
 *
 *   1. reduce-scatter, K - 1 steps: in each, send one chunk to the right
 *      and receive one from the left, ADDING it into your own copy. What
 *      you send at step s is what you received and added at step s - 1.
 *      After K - 1 steps each rank holds one chunk summed over all ranks:
 *      which one? (Fill in the table of exercise S first.)
 *   2. all-gather, K - 1 steps: pass the finished chunks round, COPYING
 *      each one in. After K - 1 steps every rank holds every sum.
 *
 * In each step, what a rank receives must be exactly what its left
 * neighbour sends in the same step (the receiver checks the chunk's first
 * element and its size, and fails naming both if they differ).
 *
 * The calls (common/coll/student.h says all):
 *   st_rank(st), st_world(st)          this rank and K
 *   st_chunk(st, n, c, &lo, &hi)       chunk c is elements [lo, hi)
 *   st_exchange(st, buf, to, send_lo, send_count,
 *               from, recv_lo, recv_count, ST_ADD or ST_COPY)
 *                                      one step; returns 0 or an error
 *                                      code: return that code at once
 *
 * Indices and counts are in elements, never bytes. Every rank must end
 * with the same bits, and send 2(K-1)/K n elements in all.
 *
 * Build and run: make, then
 *   experiments/launch.sh ring 4 --worker-args "--algo student" --workload synthetic --steps 3
 * Check: experiments/grade.sh --code students/ring_student.c
 */
#include "coll/student.h"

int student_allreduce(struct student *st, void *buf, size_t n)
{
    (void)st;
    (void)buf;
    (void)n;
    return ST_NOT_WRITTEN;      /* delete this line and write the ring */
}
