/* coll_psgd.c -- PowerSGD's two rounds on the coll (coll_psgd.h): the
 * factors from base/powersgd.c, the sums from coll_allreduce_exact, the
 * shapes from the workload.
 */
#include "coll_psgd.h"

#include <errno.h>
#include <stdlib.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/vec.h"

int coll_psgd_init(struct psgd *ps, const struct workload *w, size_t extra, int kind,
                   int dtype, uint64_t seed, char *err)
{
    struct psgd_mat *m = calloc(w->nlayers ? w->nlayers : 1, sizeof *m);
    int rc;

    if (!m) {
        err_say(err, "--compress %s: out of memory for the layers' table", compress_name(kind));
        return -ENOMEM;
    }
    for (size_t l = 0; l < w->nlayers; l++)
        if (!workload_matrix(w, l, &m[l].first, &m[l].rows, &m[l].cols))
            psgd_near_square(m[l].rows, &m[l].rows, &m[l].cols);
    rc = psgd_init(ps, w->n, extra, dtype, m, w->nlayers, COMPRESS_PSGD_RANK(kind),
                   COMPRESS_PSGD_EF(kind), seed);
    free(m);
    if (rc != 0)
        err_say(err, "--compress %s: %s", compress_name(kind),
                rc == -ENOMEM ? "out of memory for its state" : "a bad layer table or rank");
    return rc;
}

int coll_psgd_allreduce(struct coll *c, struct psgd *ps, void *g, size_t first, size_t count,
                        char *err)
{
    size_t n1 = psgd_round_len(ps, first, count, 1), bad = 0;
    int rc;

    if (n1 == 0)                /* no compressed matrix in the range */
        return coll_allreduce_exact(c, (unsigned char *)g + first * dtype_size(ps->dtype),
                                    count, err);
    psgd_encode_p(ps, g, first, count);
    if ((rc = coll_allreduce_exact(c, ps->round[0], psgd_round_len(ps, first, count, 0),
                                   err)) != 0)
        return rc;
    psgd_encode_q(ps, first, count);
    if ((rc = coll_allreduce_exact(c, ps->round[1], n1, err)) != 0)
        return rc;
    if ((rc = psgd_decode(ps, g, first, count, c->world, &bad)) == ERR_NONFINITE)
        err_say(err, "element %zu is %g after PowerSGD's decode (P Q^T)", first + bad,
                vec_get(g, first + bad, ps->dtype));
    return rc;
}
