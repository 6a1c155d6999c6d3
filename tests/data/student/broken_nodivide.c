/* A broken student ring for grade.sh --code's tests (tests/t_student.sh):
 * forgot to divide by K: every step sends and receives the whole vector, not one chunk of n/K. */
#include "coll/student.h"

int student_allreduce(struct student *st, void *buf, size_t n)
{
    int r = st_rank(st), k = st_world(st), right = (r + 1) % k, left = (r + k - 1) % k;

    for (int phase = 0; phase < 2; phase++) {
        for (int s = 0; s < k - 1; s++) {
            size_t slo, shi, rlo, rhi;
            st_chunk(st, n, r - s - 1 + phase, &slo, &shi);
            st_chunk(st, n, r - s - 2 + phase, &rlo, &rhi);
            (void)shi; (void)rhi; (void)slo; (void)rlo;
            int rc = st_exchange(st, buf, right, 0, n, left, 0, n,
                                 phase == 0 ? ST_ADD : ST_COPY);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
