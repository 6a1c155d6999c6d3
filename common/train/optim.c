/* optim.c -- SGD, momentum and Adam (optim.h has the formulas and the
 * order of their operations; change one only with its CUDA twin in
 * gpu/gpu_vec.cu). */
#include "optim.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/mem.h"
#include "base/vec.h"
#include "sgd.h"

static const char *const names[] = { "sgd", "momentum", "adam" };

int optim_parse(const char *s, int *kind)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *kind = i;
            return 0;
        }
    return ERR_USAGE;
}

const char *optim_name(int kind)
{
    return kind >= 0 && kind < 3 ? names[kind] : "?";
}

int optim_slots(int kind)
{
    return kind == OPTIM_ADAM ? 2 : kind == OPTIM_MOMENTUM ? 1 : 0;
}

int optim_cfg_check(const struct optim_cfg *c, char *err)
{
    if (c->kind < OPTIM_SGD || c->kind > OPTIM_ADAM)
        return err_say(err, "optimizer %d: not sgd, momentum or adam", c->kind), ERR_USAGE;
    if (!(c->lr > 0) || !isfinite(c->lr))
        return err_say(err, "lr %g: must be > 0 and finite", c->lr), ERR_USAGE;
    if (!(c->momentum >= 0 && c->momentum < 1))
        return err_say(err, "momentum %g: must be in [0, 1)", c->momentum), ERR_USAGE;
    if (!(c->beta1 >= 0 && c->beta1 < 1) || !(c->beta2 >= 0 && c->beta2 < 1))
        return err_say(err, "beta1 %g, beta2 %g: each must be in [0, 1)", c->beta1, c->beta2),
               ERR_USAGE;
    if (!(c->eps > 0) || !isfinite(c->eps))
        return err_say(err, "eps %g: must be > 0 and finite", c->eps), ERR_USAGE;
    return 0;
}

void optim_scalars(const struct optim_cfg *c, uint64_t t, struct optim_coef *k)
{
    const double tt = (double)t;

    *k = (struct optim_coef){
        .kind = c->kind, .lr = c->lr, .mu = c->momentum,
        .b1 = c->beta1, .one_b1 = 1.0 - c->beta1, .b2 = c->beta2, .one_b2 = 1.0 - c->beta2,
        .eps = c->eps, .c1 = 1.0 - pow(c->beta1, tt), .c2 = 1.0 - pow(c->beta2, tt),
    };
}

size_t optim_state_bytes(int kind, int dtype, size_t n)
{
    return (size_t)optim_slots(kind) * n * dtype_size(dtype);
}

int optim_init_at(struct optim *o, const struct optim_cfg *c, int dtype, size_t n, void *state,
                  char *err)
{
    int rc;

    memset(o, 0, sizeof *o);
    if ((rc = optim_cfg_check(c, err)) != 0)
        return rc;
    if (dtype_size(dtype) == 0)
        return err_say(err, "optimizer: dtype %d", dtype), ERR_USAGE;
    o->cfg = *c;
    o->dtype = dtype;
    o->slots = optim_slots(c->kind);
    o->n = n;
    o->state_bytes = optim_state_bytes(c->kind, dtype, n);
    o->state = state;
    return 0;
}

int optim_init(struct optim *o, const struct optim_cfg *c, int dtype, size_t n, char *err)
{
    void *p = NULL;
    int rc;

    if ((rc = optim_init_at(o, c, dtype, n, NULL, err)) != 0)
        return rc;
    if (o->state_bytes > 0 && !(p = mem_map(o->state_bytes))) {
        err_say(err, "out of memory for the %s state of %zu parameters", optim_name(c->kind), n);
        return -ENOMEM;
    }
    o->state = p;
    o->mapped = p != NULL;
    return 0;
}

void optim_destroy(struct optim *o)
{
    if (o->mapped)
        mem_unmap(o->state, o->state_bytes);
    o->state = NULL;
    o->mapped = 0;
}

void *optim_state(const struct optim *o, int j, size_t off)
{
    if (j >= o->slots || !o->state)
        return NULL;
    return (unsigned char *)o->state + ((size_t)j * o->n + off) * dtype_size(o->dtype);
}

/* One element of each optimizer, in double; the stores round. */
#define MOMENTUM(T)                                                     \
    for (size_t i = 0; i < count; i++) {                                \
        const double g = (double)((const T *)g_sum)[i] / b;             \
        ((T *)m)[i] = (T)(k->mu * (double)((T *)m)[i] + g);             \
        ((T *)w)[i] = (T)((double)((T *)w)[i] - k->lr * (double)((T *)m)[i]); \
    }
#define ADAM(T)                                                         \
    for (size_t i = 0; i < count; i++) {                                \
        const double g = (double)((const T *)g_sum)[i] / b;             \
        double mi, vi;                                                  \
        ((T *)m)[i] = (T)(k->b1 * (double)((T *)m)[i] + k->one_b1 * g); \
        ((T *)v)[i] = (T)(k->b2 * (double)((T *)v)[i] + k->one_b2 * (g * g)); \
        mi = (double)((T *)m)[i];                                       \
        vi = (double)((T *)v)[i];                                       \
        ((T *)w)[i] = (T)((double)((T *)w)[i] -                          \
                          k->lr * ((mi / k->c1) / (sqrt(vi / k->c2) + k->eps))); \
    }

void optim_apply(const struct optim_coef *k, int dtype, void *w, const void *g_sum, void *m,
                 void *v, size_t count, uint64_t batch)
{
    const double b = (double)batch;

    if (k->kind == OPTIM_SGD) {
        (void)sgd_step(w, g_sum, count, dtype, k->lr, batch);
    } else if (k->kind == OPTIM_MOMENTUM) {
        if (dtype == DTYPE_F32) {
            MOMENTUM(float)
        } else {
            MOMENTUM(double)
        }
    } else if (dtype == DTYPE_F32) {
        ADAM(float)
    } else {
        ADAM(double)
    }
}

int optim_update(struct optim *o, uint64_t t, void *w, const void *g_sum, size_t count,
                 size_t off, uint64_t batch)
{
    struct optim_coef k;

    if (batch == 0 || t == 0 || (o->slots > 0 && (off > o->n || count > o->n - off)))
        return ERR_USAGE;
    optim_scalars(&o->cfg, t, &k);
    optim_apply(&k, o->dtype, w, g_sum, optim_state(o, 0, off), optim_state(o, 1, off), count,
                batch);
    o->t = t;
    /* The result is checked too: a finite gradient can still overflow a
     * weight (docs/security.md). */
    return vec_check_finite(w, count, o->dtype, NULL);
}
