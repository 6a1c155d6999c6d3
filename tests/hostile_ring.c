/* hostile_ring.c -- a hostile ring member, for tests/t_hostile_nan.sh: a
 * ring_worker that holds the job's secret and sends NaN into the
 * all-reduce. TEST-ONLY: it is linked from ring_worker's own objects into
 * build/tests/hostile_ring, never into bin/, and nothing in common/ knows
 * of it. The link wraps three functions (-Wl,--wrap, the Makefile's
 * HOSTILE_WRAP_ring): the rest of the program is the real ring_worker,
 * authentication, rendezvous and transport included, so the others see a
 * member that differs from an honest one only in the values it sends.
 *
 *   coll_allreduce      counts the all-reduces (one per training step with
 *                       one bucket, ring_worker's default); at the chosen
 *                       one, mode "send" fills this rank's gradient with NaN
 *                       before the real all-reduce (its chunks carry NaN from
 *                       its first send), but not the count and loss behind
 *                       it (step.h, TRAILER: their checks would catch it
 *                       anyway), mode "gather" arms the next wrap;
 *   vec_add_finite      the adds without the check (a hostile member checks
 *                       nothing); armed, it leaves NaN in the sums of its
 *                       last reduce-scatter step: the chunk this rank
 *                       finished, which it sends in the all-gather only;
 *   vec_check_finite    always "finite".
 *
 * PSR_HOSTILE_NAN=CALL:MODE (CALL: the all-reduce, from 0; MODE: send or
 * gather) chooses; unset, the program is an honest ring_worker but for
 * its checks. With the ring's default piece, a reduce-scatter step of a
 * small vector is one add, so the (K-1)th add of the call is the last
 * step's (gather mode needs --params below the piece).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/vec.h"
#include "coll/coll.h"
#include "train/step.h"

int __real_coll_allreduce(struct coll *c, void *buf, size_t n, char *err);
int __wrap_coll_allreduce(struct coll *c, void *buf, size_t n, char *err);
int __wrap_vec_add_finite(void *acc, const void *x, size_t n, int dtype, size_t *bad);
int __wrap_vec_check_finite(const void *v, size_t n, int dtype, size_t *bad);

static long calls;              /* all-reduces so far */
static int adds_left = -1;      /* gather mode: adds until the poisoned one */

int __wrap_coll_allreduce(struct coll *c, void *buf, size_t n, char *err)
{
    const char *spec = getenv("PSR_HOSTILE_NAN");
    long at = -1;
    char mode[16] = "";

    if (spec && sscanf(spec, "%ld:%15s", &at, mode) != 2)
        at = -1;
    if (calls++ == at) {
        fprintf(stderr, "hostile_ring: NaN into all-reduce %ld (%s)\n", at, mode);
        if (strcmp(mode, "send") == 0)
            for (size_t i = 0; i + STEP_TRAILER_LEN < n; i++)   /* not the count and loss */
                vec_set(buf, i, c->dtype, NAN);
        else
            adds_left = c->world - 2;     /* the reduce-scatter's last step */
    }
    return __real_coll_allreduce(c, buf, n, err);
}

int __wrap_vec_add_finite(void *acc, const void *x, size_t n, int dtype, size_t *bad)
{
    (void)bad;
    vec_add(acc, x, n, dtype);
    if (adds_left >= 0 && adds_left-- == 0)
        for (size_t i = 0; i < n; i++)
            vec_set(acc, i, dtype, NAN);
    return 0;
}

int __wrap_vec_check_finite(const void *v, size_t n, int dtype, size_t *bad)
{
    (void)v, (void)n, (void)dtype, (void)bad;
    return 0;
}
