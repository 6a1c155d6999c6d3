/* optim.h -- the optimizers with state: SGD, momentum and Adam, once, for
 * every side that updates weights (the ring's ranks, the parameter
 * server's store, bin/reference, bin/exactness), with the CUDA twin in
 * gpu/gpu_vec.cu (gpu_optim_update).
 *
 * THE RULE OF sgd.h STILL HOLDS: the update is driven by the mean gradient
 * over the GLOBAL batch, g = g_sum / B, the one division by B (sgd.h).
 *
 * THE FORMULAS, per element i, exactly in this order of IEEE double
 * operations (no fused multiply-add: -ffp-contract=off, nvcc -fmad=false),
 * each stored value rounded once to the dtype; m and v are the state as
 * stored (so a state saved and loaded gives the same next step):
 *
 *   g  = (double)g_sum[i] / B
 *   sgd        w = w - lr * g                                 (sgd_step)
 *   momentum   m = mu * m + g                                 (heavy ball,
 *              w = w - lr * m                                 no dampening)
 *   adam       m = b1 * m + (1 - b1) * g
 *              v = b2 * v + (1 - b2) * (g * g)
 *              w = w - lr * ((m / c1) / (sqrt(v / c2) + eps))
 *
 * with mu = --momentum, b1 = --beta1, b2 = --beta2, eps = --eps, and the
 * bias corrections c1 = 1 - b1^t, c2 = 1 - b2^t for the t-th update (t =
 * step + 1). The scalars (1 - b1, 1 - b2, c1, c2) are computed on the
 * host, in double, by optim_scalars alone, and handed to the CPU loop and to
 * the GPU kernel as doubles: pow() on the host once, never per element
 * and never on the device, so the two twins see the same bits. sqrt and
 * the divisions are IEEE correctly rounded on both (nvcc -prec-div=true
 * -prec-sqrt=true).
 *
 * THE STATE is a plain struct with a size, so a checkpoint can save it as
 * bytes: `slots` vectors of `n` elements of the dtype, one after the other
 * in `state` (momentum: m; adam: m then v; sgd: none), and t, the number
 * of updates applied. Under ZeRO (docs/design.md) a rank holds the state
 * of its shard only: n is the shard's size, and optim_update's `off` says
 * where in the state the updated elements' entries are.
 *
 * OWNERSHIP. optim_init maps the state (mem.h: zero-filled, given back to
 * the system by optim_destroy, so its size shows in the RSS) unless the
 * caller hands memory in (optim_init_at: device memory, say), which the
 * caller frees.
 */
#ifndef OPTIM_H
#define OPTIM_H

#include <stddef.h>
#include <stdint.h>

enum optim_kind { OPTIM_SGD = 0, OPTIM_MOMENTUM, OPTIM_ADAM };

#define OPTIM_DEFAULT_MOMENTUM 0.9
#define OPTIM_DEFAULT_BETA1 0.9
#define OPTIM_DEFAULT_BETA2 0.999
#define OPTIM_DEFAULT_EPS 1e-8

struct optim_cfg {
    int kind;                   /* enum optim_kind */
    double lr, momentum, beta1, beta2, eps;
};

/* The scalars of one update (optim_scalars). */
struct optim_coef {
    int kind;
    double lr, mu;              /* lr; momentum's mu */
    double b1, one_b1, b2, one_b2, eps;
    double c1, c2;              /* 1 - b1^t, 1 - b2^t */
};

struct optim {
    struct optim_cfg cfg;
    int dtype;
    int slots;                  /* state vectors: 0, 1 (m) or 2 (m, v) */
    size_t n;                   /* elements per slot */
    void *state;                /* slots * n elements of dtype */
    size_t state_bytes;         /* slots * n * dtype size */
    uint64_t t;                 /* updates applied (the last t) */
    int mapped;                 /* 1: state is optim_init's (mem_map) */
};

/* optim_parse: "sgd", "momentum", "adam" -> kind; ERR_USAGE otherwise.
 * optim_name: the reverse. */
int optim_parse(const char *s, int *kind);
const char *optim_name(int kind);
/* optim_slots: state vectors per element of the kind. */
int optim_slots(int kind);

/* optim_cfg_check: lr > 0 finite, momentum in [0, 1), betas in [0, 1),
 * eps > 0 finite; ERR_USAGE with a line in err otherwise. */
int optim_cfg_check(const struct optim_cfg *c, char *err);

/* optim_coef: the scalars of the t-th update (t >= 1), on the host. */
void optim_scalars(const struct optim_cfg *c, uint64_t t, struct optim_coef *k);

/* optim_init: state for n elements of dtype, zeroed. 0, ERR_USAGE (a bad
 * cfg or dtype, line in err) or -ENOMEM. optim_init_at: the same on the
 * caller's memory of optim_state_bytes (which the caller has zeroed). */
int optim_init(struct optim *o, const struct optim_cfg *c, int dtype, size_t n, char *err);
size_t optim_state_bytes(int kind, int dtype, size_t n);
int optim_init_at(struct optim *o, const struct optim_cfg *c, int dtype, size_t n, void *state,
                  char *err);
void optim_destroy(struct optim *o);

/* optim_state: slot j's vector at element off (momentum and adam: j 0 is
 * m; adam: 1 is v), or NULL when the kind has no slot j. */
void *optim_state(const struct optim *o, int j, size_t off);

/* optim_update: the t-th update (t >= 1; o->t becomes t) of count
 * elements w[0..count) from g_sum[0..count), divided by batch, with the
 * state entries from `off`. Every call of one step passes the same t (ZeRO
 * updates a shard in several ranges). ERR_USAGE for batch 0, t 0 or a
 * range past the state; nothing changes then. ERR_NONFINITE when an
 * updated weight is NaN or Inf: the update is made, and the caller must
 * fail the step and write no weights (ring_worker, the server's store). */
int optim_update(struct optim *o, uint64_t t, void *w, const void *g_sum, size_t count,
                 size_t off, uint64_t batch);

/* optim_apply: the update loop alone, on explicit state pointers (m, v:
 * NULL where the kind has none), for the scalars k: what optim_update and
 * the tests call; gpu_optim_update is its twin. */
void optim_apply(const struct optim_coef *k, int dtype, void *w, const void *g_sum, void *m,
                 void *v, size_t count, uint64_t batch);

#endif /* OPTIM_H */
