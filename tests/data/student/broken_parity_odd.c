/* A broken student ring for grade.sh --code's tests (tests/t_student.sh):
 * the MPI habit against deadlock, each step split by rank parity into a
 * send and a receive (even ranks send first, odd ranks receive first).
 * At even K the halves pair up; at odd K ranks K-1 and 0 are both even
 * and neighbours, and rank 0's first receive gets rank K-1's chunk where
 * it expected nothing (with blocking sends: a deadlock on odd K). */
#include "coll/student.h"

int student_allreduce(struct student *st, void *buf, size_t n)
{
    int r = st_rank(st), k = st_world(st), right = (r + 1) % k, left = (r + k - 1) % k;

    for (int phase = 0; phase < 2; phase++) {
        for (int s = 0; s < k - 1; s++) {
            size_t slo, shi, rlo, rhi;
            st_chunk(st, n, r - s - 1 + phase, &slo, &shi);
            st_chunk(st, n, r - s - 2 + phase, &rlo, &rhi);
            /* "To avoid a deadlock", as with blocking sends: even ranks
             * send first, then receive; odd ranks the other way round. */
            int op = phase == 0 ? ST_ADD : ST_COPY, rc;
            if (r % 2 == 0) {
                rc = st_exchange(st, buf, right, slo, shi - slo, left, 0, 0, op);
                if (rc == 0)
                    rc = st_exchange(st, buf, right, 0, 0, left, rlo, rhi - rlo, op);
            } else {
                rc = st_exchange(st, buf, right, 0, 0, left, rlo, rhi - rlo, op);
                if (rc == 0)
                    rc = st_exchange(st, buf, right, slo, shi - slo, left, 0, 0, op);
            }
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
