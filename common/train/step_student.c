/* step_student.c -- the step driver's hook for the student track's
 * buckets (bucket_student.h; docs/lab.md, "Write the buckets"): the
 * overlapped pass of step.c (pass_overlapped) with the bucket plan
 * replaced by students/bucket_student.c.
 *
 * The pass: the backward pass (backward_layers) hands each finished layer
 * to student_layer_done, on this thread; each bs_start becomes one job of
 * the communication thread (overlap.h), which all-reduces it through the
 * system's combine while the pass goes on, exactly as the project's own
 * buckets are. After the pass: student_backward_done, the check that
 * every element was started, the trailer's job (count and loss), the wait.
 * The jobs' times go into the trace ("allreduce bucket I @E": the I-th
 * started, from element E), so the grader reads the buckets' order and
 * how much of the communication finished before the backward pass did.
 *
 * What bs_start refuses, it refuses at once with a line that names the
 * elements and layers (a student's terms); the pass then stops calling
 * the student, lets the thread finish what was started, and fails the
 * step. Host memory only (ring_worker refuses --bucket-student with a
 * device, ZeRO, local SGD, --no-overlap and the mistakes).
 */
#include "bucket_student.h"
#include "step_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backward.h"
#include "base/vec.h"

struct bstudent {
    struct step *d;
    struct bs_bucket open;      /* the student's (bs_open) */
    size_t nstart;              /* bs_start calls that submitted a job */
    double loss;                /* the pass's loss (whole from the first layer) */
    int rc;                     /* the first failure; the student is not called after */
    char *err;
};

uint64_t bs_bucket_bytes(const struct bstudent *b)
{
    const uint64_t s = b->d->cfg.bucket_bytes;

    return s ? s : BUCKETS_DEFAULT_BYTES;
}

size_t bs_elem_size(const struct bstudent *b)
{
    return b->d->es;
}

struct bs_bucket *bs_open(struct bstudent *b)
{
    return &b->open;
}

/* layer_of: the layer that holds element e (e < n). */
static size_t layer_of(const struct step *d, size_t e)
{
    const size_t *off = d->cfg.w->layer_off;
    size_t l = 0;

    while (l + 1 < d->cfg.w->nlayers && off[l + 1] <= e)
        l++;
    return l;
}

/* fail: the pass's first failure, its line in b->err; returns rc. */
static int fail(struct bstudent *b, int rc)
{
    if (b->rc == 0)
        b->rc = rc;
    return b->rc;
}

int bs_start(struct bstudent *b, size_t first, size_t count)
{
    struct step *d = b->d;
    const size_t n = d->n, s = (size_t)d->step;
    struct overlap_job j = { NULL, count, first, 1, 0.0, 0.0, 0.0 };

    if (b->rc != 0)
        return b->rc;
    if (count == 0 || first >= n || count > n - first) {
        err_say(b->err, "step %zu: bs_start(first %zu, count %zu): %s", s, first, count,
                count == 0 ? "an empty bucket" : "runs past the vector's elements [0, n)");
        snprintf(b->err + strlen(b->err), ERR_LEN - strlen(b->err), " (n = %zu)", n);
        return fail(b, ERR_USAGE);
    }
    for (size_t e = first; e < first + count; e = d->cfg.w->layer_off[layer_of(d, e) + 1]) {
        size_t l = layer_of(d, e);
        if (!d->plan.done[l]) {
            err_say(b->err, "step %zu: bs_start(first %zu, count %zu): element %zu is in "
                    "layer %zu, which the backward pass has not finished yet", s, first,
                    count, e, l);
            return fail(b, ERR_USAGE);
        }
    }
    for (size_t i = 0; i < b->nstart; i++) {
        const struct overlap_job *o = overlap_job_at(&d->ov, i);
        if (o && first < o->index + o->n && o->index < first + count) {
            err_say(b->err, "step %zu: bs_start(first %zu, count %zu): overlaps bucket %zu "
                    "[%zu, %zu), started before: element %zu would be all-reduced twice", s,
                    first, count, i, o->index, o->index + o->n,
                    first > o->index ? first : o->index);
            return fail(b, ERR_USAGE);
        }
    }
    if (b->nstart >= d->cfg.w->nlayers) {
        err_say(b->err, "step %zu: bs_start: more buckets than the %zu layers (a bucket "
                "holds whole layers)", s, d->cfg.w->nlayers);
        return fail(b, ERR_USAGE);
    }
    if (b->nstart == 0)         /* the job's meta: the loss is whole by now */
        d->meta = (struct step_meta){ d->hi - d->lo, b->loss };
    j.buf = (unsigned char *)d->g + first * d->es;
    if (overlap_submit(&d->ov, &j) < 0)
        return fail(b, -EIO);   /* the pass failed already: overlap_wait says why */
    b->nstart++;
    return 0;
}

/* called: what the student's function returned, as the pass's code. */
static int called(struct bstudent *b, const char *fn, int rc)
{
    if (rc == BS_NOT_WRITTEN) {
        err_say(b->err, "--bucket-student: %s in students/bucket_student.c is not written "
                "yet (the template returns BS_NOT_WRITTEN): write its body, then make", fn);
        return fail(b, -ENOSYS);
    }
    if (rc != 0 && b->rc == 0) {
        err_say(b->err, "step %llu: --bucket-student: %s returned %d (not 0, and no bs_start "
                "failed)", (unsigned long long)b->d->step, fn, rc);
        return fail(b, rc > 0 ? ERR_MISMATCH : rc);
    }
    return rc != 0 ? fail(b, rc) : 0;
}

static void on_layer(void *arg, size_t layer, size_t first, size_t count, double loss)
{
    struct bstudent *b = arg;

    b->loss = loss;
    b->d->plan.done[layer] = 1;
    if (b->rc == 0)
        (void)called(b, "student_layer_done", student_layer_done(b, layer, first, count));
}

/* covered: every element in one started job (they are disjoint and inside
 * the vector: bs_start), else ERR_MISMATCH naming the first gap. */
static int covered(struct bstudent *b)
{
    struct step *d = b->d;
    size_t sum = 0, x = 0, end = d->n;

    for (size_t i = 0; i < b->nstart; i++)
        sum += overlap_job_at(&d->ov, i)->n;
    if (sum == d->n)
        return 0;
    for (size_t i = 0; i < b->nstart; i++) {    /* the first element no job holds */
        const struct overlap_job *o = overlap_job_at(&d->ov, i);
        if (o->index <= x && x < o->index + o->n) {
            x = o->index + o->n;
            i = (size_t)-1;     /* again from the first job */
        }
    }
    for (size_t i = 0; i < b->nstart; i++) {    /* where the gap ends */
        const struct overlap_job *o = overlap_job_at(&d->ov, i);
        if (o->index > x && o->index < end)
            end = o->index;
    }
    err_say(b->err, "step %llu: --bucket-student: elements [%zu, %zu) (layers %zu..%zu) were "
            "never started (bs_start) when the backward pass ended: %zu of %zu elements "
            "all-reduced", (unsigned long long)d->step, x, end, layer_of(d, x),
            layer_of(d, end - 1), sum, d->n);
    return fail(b, ERR_MISMATCH);
}

int step_student_pass(struct step *d, struct step_times *t, char *err)
{
    struct bstudent b = { .d = d, .err = err };
    const int dtype = d->cfg.w->dtype;
    double t0 = step_now(d), t1, c0 = step_cpu(d);
    char name[TRACE_NAME_LEN], why[ERR_LEN];
    int rc;

    err[0] = '\0';
    overlap_begin(&d->ov);
    buckets_reset(&d->plan);    /* its done[]: the layers finished this pass */
    (void)backward_layers(d->cfg.w, d->weights, d->step, d->lo, d->hi, d->cfg.micro, d->g,
                          &d->tr, d->cfg.clock, on_layer, &b);
    if (b.rc == 0)
        (void)called(&b, "student_backward_done", student_backward_done(&b));
    d->compute_cpu += step_cpu(d) - c0;
    if (b.rc == 0 && covered(&b) == 0 && (d->ops.flags & STEP_TRAILER)) {
        struct overlap_job tj = { NULL, STEP_TRAILER_LEN, d->n, 0, 0.0, 0.0, 0.0 };
        /* d->meta: set by the first bs_start (the thread reads it now) */
        vec_set(d->g, d->n, dtype, fmod((double)d->meta.examples, STEP_COUNT_SPLIT));
        vec_set(d->g, d->n + 1, dtype, floor((double)d->meta.examples / STEP_COUNT_SPLIT));
        vec_set(d->g, d->n + 2, dtype, d->meta.loss);
        tj.buf = (unsigned char *)d->g + d->n * d->es;
        (void)overlap_submit(&d->ov, &tj);
    }
    t1 = d->bwd_end = step_now(d);
    t->backward = t1 - t0;
    rc = overlap_wait(&d->ov, why);     /* also after a failure: the thread lets go */
    t->wait = step_now(d) - t1;
    for (size_t i = 0; i < d->ov.nsub; i++) {
        const struct overlap_job *j = overlap_job_at(&d->ov, i);
        if (j->t1 == 0.0)
            break;              /* not run: the pass failed before it */
        if (j->index == d->n)
            snprintf(name, sizeof name, "%s count+loss", d->ops.name);
        else
            snprintf(name, sizeof name, "%s bucket %zu @%zu", d->ops.name, i, j->index);
        trace_add(&d->tr, name, TRACE_COMM, j->t0, j->t1, (long)d->step,
                  (long long)(j->n * d->es));
        t->comm += j->t1 - j->t0;
        if (!(t->enter <= j->t0))
            t->enter = j->t0;
    }
    if (b.rc != 0 && b.rc != -EIO)
        return b.rc;            /* the student's failure; its line is in err */
    if (rc != 0)
        memcpy(err, why, ERR_LEN);
    return rc != 0 ? rc : b.rc;
}
