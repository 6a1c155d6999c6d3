/* hostile_ps_server.c -- a hostile parameter server, for
 * tests/t_hostile_nan.sh: a ps_server that holds the job's secret and
 * sends NaN weights in its pull. TEST-ONLY: linked from ps_server's own
 * objects into build/tests/hostile_ps_server, never into bin/; nothing in
 * common/ knows of it. The link wraps two functions (-Wl,--wrap, the
 * Makefile's HOSTILE_WRAP_ps): the rest is the real server, so the workers
 * see a server that differs from an honest one only in the values it sends.
 *
 *   store_release       the real release; at the chosen step it fills the
 *                       released range of the new weights (what the server
 *                       then sends in WEIGHTS frames) with NaN;
 *   vec_check_finite    always "finite" (a hostile server checks nothing).
 *
 * PSR_HOSTILE_NAN=STEP (the training step, from 0) chooses; unset, the
 * program is an honest ps_server but for its checks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/vec.h"
#include "ps/store.h"

int __real_store_release(struct store *s, struct store_released *out, char *err);
int __wrap_store_release(struct store *s, struct store_released *out, char *err);
int __wrap_vec_check_finite(const void *v, size_t n, int dtype, size_t *bad);

int __wrap_store_release(struct store *s, struct store_released *out, char *err)
{
    const char *spec = getenv("PSR_HOSTILE_NAN");
    int rc = __real_store_release(s, out, err);

    if (rc == 0 && out->count > 0 && spec && out->step == strtoull(spec, NULL, 10)) {
        unsigned char *w = (unsigned char *)out->weights + (out->top - out->count) * s->elem_size;
        fprintf(stderr, "hostile_ps_server: NaN into the weights of step %llu\n",
                (unsigned long long)out->step);
        for (size_t i = 0; i < out->count; i++)
            vec_set(w, i, s->dtype, NAN);
    }
    return rc;
}

int __wrap_vec_check_finite(const void *v, size_t n, int dtype, size_t *bad)
{
    (void)v, (void)n, (void)dtype, (void)bad;
    return 0;
}
