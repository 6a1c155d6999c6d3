/* resume.c -- the server's state into and out of a checkpoint (resume.h). */
#include "resume.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "train/mistake.h"
#include "train/optim.h"
#include "wire/proto.h"

void resume_job(const struct server *srv, struct ckpt_job *job)
{
    const struct cli_common *c = &srv->f.c;

    memset(job, 0, sizeof *job);
    job->world = srv->k;
    job->dtype = (uint32_t)c->dtype;
    job->workload = (uint32_t)c->workload;
    job->mistake = (uint32_t)srv->f.mistake;
    job->shard_i = (uint32_t)srv->f.shard_i;
    job->shard_s = (uint32_t)srv->f.shard_s;
    job->per_step = srv->store.per_step;
    job->n = srv->scfg.n;
    job->lo = srv->scfg.lo;
    job->hi = srv->scfg.hi;
    job->seed = c->seed;
    job->batch = srv->scfg.batch;
    job->lr = c->lr;
}

/* optim_check: ck's optimizer sections against this run's optimizer (the
 * store's): 0 with *st the state to restore (NULL: none) and *t its
 * updates, or ERR_MISMATCH / ERR_FORMAT with the reason in why. Nothing
 * changes here. */
static int optim_check(const struct server *srv, const struct ckpt *ck,
                       const struct ckpt_section **st, uint64_t *t, char *why)
{
    const struct optim *o = &srv->store.opt;
    const struct ckpt_section *h = ckpt_find(ck, CKPT_SEC_OPTIM);
    const unsigned char *p;
    double hp[4];
    const double want[4] = { o->cfg.momentum, o->cfg.beta1, o->cfg.beta2, o->cfg.eps };

    *st = ckpt_find(ck, CKPT_SEC_OPTIM_STATE);
    *t = 0;
    if (!h && !*st) {
        if (o->slots == 0)
            return 0;
        err_say(why, "it holds no optimizer state; --optimizer %s here has some "
                "(resume with the checkpoint's optimizer)", optim_name(o->cfg.kind));
        return ERR_MISMATCH;
    }
    if (!h || !*st || h->len != CKPT_OPTIM_HEAD) {
        err_say(why, "its optimizer sections are incomplete");
        return ERR_FORMAT;
    }
    p = h->data;
    for (int i = 0; i < 4; i++)
        hp[i] = proto_get_f64(p + 16 + 8 * i);
    if ((int)proto_get_u32(p) != o->cfg.kind || memcmp(hp, want, sizeof hp) != 0) {
        err_say(why, "optimizer %s (momentum %g, beta1 %g, beta2 %g, eps %g) in the checkpoint, "
                "%s (momentum %g, beta1 %g, beta2 %g, eps %g) here",
                optim_name((int)proto_get_u32(p)), hp[0], hp[1], hp[2], hp[3],
                optim_name(o->cfg.kind), want[0], want[1], want[2], want[3]);
        return ERR_MISMATCH;
    }
    if ((*st)->len != o->state_bytes) {
        err_say(why, "optimizer state of %llu bytes in the checkpoint, %zu here",
                (unsigned long long)(*st)->len, o->state_bytes);
        return ERR_FORMAT;
    }
    *t = proto_get_u64(p + 8);
    return 0;
}

int resume_load(struct server *srv, const char *path, char *err)
{
    struct ckpt ck;
    struct ckpt_key key;
    struct ckpt_job job;
    const struct ckpt_section *w, *l, *st;
    uint64_t t;
    unsigned char *buf;
    size_t len;
    char why[ERR_LEN];
    int rc;

    ckpt_key_make(&key, &srv->f.key);
    rc = ckpt_load(path, &key, &buf, &len, &ck, err);
    sodium_memzero(&key, sizeof key);
    if (rc != 0)
        return rc;
    resume_job(srv, &job);
    if ((rc = ckpt_match(&ck, &job, why)) != 0) {
        err_say(err, "--resume: %.300s: %s", path, why);
        free(buf);
        return rc;
    }
    if (ck.step > (uint64_t)srv->f.c.steps) {
        err_say(err, "--resume: %.300s: step %llu is past --steps %d", path,
                (unsigned long long)ck.step, srv->f.c.steps);
        free(buf);
        return ERR_MISMATCH;
    }
    if ((rc = optim_check(srv, &ck, &st, &t, why)) != 0) {
        err_say(err, "--resume: %.300s: %s", path, why);
        free(buf);
        return rc;
    }
    w = ckpt_find(&ck, CKPT_SEC_WEIGHTS);
    (void)store_resume(&srv->store, ck.step, w->data);
    if (st) {
        memcpy(srv->store.opt.state, st->data, st->len);
        srv->store.opt.t = t;
    }
    l = ckpt_find(&ck, CKPT_SEC_LOSS);
    if (l && srv->loss.loss)
        for (uint64_t s = 0; s < ck.step; s++) {
            double x;
            memcpy(&x, (const unsigned char *)l->data + s * sizeof x, sizeof x);
            losscurve_set(&srv->loss, (size_t)s, x);
        }
    srv->first_step = ck.step;
    log_msg("resuming from %s at step %llu (written by a run of %llu steps)", path,
            (unsigned long long)ck.step, (unsigned long long)ck.steps);
    free(buf);
    return 0;
}

int resume_save(struct server *srv, char *err)
{
    struct ckpt ck;
    uint64_t step = store_step(&srv->store);
    const struct optim *o = &srv->store.opt;
    unsigned char oh[CKPT_OPTIM_HEAD];
    struct ckpt_key key;
    int rc;

    memset(&ck, 0, sizeof ck);
    resume_job(srv, &ck.job);
    ck.step = step;
    ck.steps = (uint64_t)srv->f.c.steps;
    ck.sec[ck.nsec++] = (struct ckpt_section){
        CKPT_SEC_WEIGHTS, CKPT_REQUIRED, (uint64_t)srv->store.n * srv->es,
        store_weights(&srv->store) };
    if (o->slots > 0) {         /* momentum, Adam: their state too */
        const double hp[4] = { o->cfg.momentum, o->cfg.beta1, o->cfg.beta2, o->cfg.eps };

        memset(oh, 0, sizeof oh);
        proto_put_u32(oh, (uint32_t)o->cfg.kind);
        proto_put_u64(oh + 8, o->t);
        for (int i = 0; i < 4; i++)
            proto_put_f64(oh + 16 + 8 * i, hp[i]);
        ck.sec[ck.nsec++] = (struct ckpt_section){ CKPT_SEC_OPTIM, CKPT_REQUIRED, sizeof oh, oh };
        ck.sec[ck.nsec++] = (struct ckpt_section){
            CKPT_SEC_OPTIM_STATE, CKPT_REQUIRED, o->state_bytes, o->state };
    }
    /* The loss curve holds --steps entries; the first `step` are ours. */
    if (srv->loss.loss && step <= srv->loss.steps)
        ck.sec[ck.nsec++] = (struct ckpt_section){
            CKPT_SEC_LOSS, 0, step * sizeof(double), srv->loss.loss };
    ckpt_key_make(&key, &srv->f.key);
    rc = ckpt_write(srv->f.checkpoint, &ck, &key, err);
    sodium_memzero(&key, sizeof key);
    return rc;
}

void resume_sweep(const struct server *srv)
{
    int n;

    if (srv->f.checkpoint && (n = ckpt_sweep(srv->f.checkpoint)) > 0)
        log_msg("removed %d temp file%s of %s left by a writer that died mid-write", n,
                n == 1 ? "" : "s", srv->f.checkpoint);
}

int resume_after_apply(struct server *srv, uint64_t step, char *err)
{
    int rc;

    if (srv->f.checkpoint && (step + 1) % (uint64_t)srv->f.checkpoint_every == 0 &&
        (rc = resume_save(srv, err)) != 0)
        return rc;
    /* The test hook is the machine's (server.h, struct server_machine):
     * bin/ps_server's reads RESUME_KILL_ENV and SIGKILLs itself; the
     * simulated server's does nothing. */
    srv->io->machine->test_kill(srv, step);
    return 0;
}
