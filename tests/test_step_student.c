/* test_step_student.c -- the step driver's hook for the student's buckets
 * (common/train/step_student.c, bucket_student.h) in one process, with a
 * fake combine: this file defines student_layer_done and
 * student_backward_done itself (linked before libcommon's template), and
 * a mode says how they behave. The right buckets give the project's jobs
 * and bits; each wrong one is refused with a line that names it.
 *
 *   step-student-1.x  the right buckets    step-student-2.x  the refusals
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "train/bucket_student.h"
#include "train/mistake.h"
#include "train/sgd.h"
#include "train/step.h"
#include "train/workload.h"

#define P 64            /* parameters: 4 layers of 16 f64 */
#define B 12
#define MAXJOBS 64

enum { RIGHT, TEMPLATE, EARLY, TWICE, PAST, MISS_LAST, TOO_LATE };
static int mode;

/* The student's two functions, as the mode says. RIGHT is the
 * project's rule (bucket_solution.c). */
int student_layer_done(struct bstudent *b, size_t layer, size_t first, size_t count)
{
    struct bs_bucket *o = bs_open(b);
    int rc;

    if (mode == TEMPLATE)
        return BS_NOT_WRITTEN;
    if (mode == EARLY && layer == 3)
        return bs_start(b, first - count, 2 * count);  /* layer 2 not done yet */
    if (mode == TWICE && layer == 2 && (rc = bs_start(b, first, count + 1)) != 0)
        return rc;                                      /* one element of layer 3 again */
    if (mode == PAST)
        return bs_start(b, first + 1, count);
    if (mode == TOO_LATE)
        return 0;
    o->first = first;
    o->count += count;
    o->bytes += (uint64_t)count * bs_elem_size(b);
    if (o->bytes < bs_bucket_bytes(b))
        return 0;
    rc = bs_start(b, o->first, o->count);
    *o = (struct bs_bucket){ 0, 0, 0 };
    return rc;
}

int student_backward_done(struct bstudent *b)
{
    struct bs_bucket *o = bs_open(b);

    if (mode == TOO_LATE)
        return 7;       /* a student's own code, not bs_start's */
    if (mode == MISS_LAST || o->count == 0)
        return 0;
    return bs_start(b, o->first, o->count);
}

struct fake {
    size_t njobs, first[MAXJOBS], count[MAXJOBS];
};

static int fake_combine(void *ctx, const struct step_job *job, char *err)
{
    struct fake *f = ctx;

    (void)err;
    if (f->njobs < MAXJOBS) {
        f->first[f->njobs] = job->first;
        f->count[f->njobs] = job->count;
    }
    f->njobs++;
    return 0;
}

static int fake_apply(void *ctx, const struct step_update *u, char *err)
{
    (void)ctx, (void)err;
    return sgd_step((double *)u->weights + u->first, (const double *)u->sum + u->first, u->count,
                    DTYPE_F64, 0.125, u->divide_by);
}

static struct workload wl;

/* run: steps 0..2 at bucket size `bucket`, the student's buckets when
 * student is 1; the jobs into *f, the final weights into w (P doubles). */
static int run(int student, uint64_t bucket, struct fake *f, double *w, char *err)
{
    const struct step_cfg c = { &wl, 0, 1, NULL, 2, MISTAKE_NONE, 3, 1, bucket, 0, NULL,
                                &clock_real, NULL, NULL, 0, NULL, 0 };
    const struct step_ops o = { STEP_TRAILER | STEP_CHECK_FINITE | (student ? STEP_STUDENT : 0),
                                "allreduce", "all-reduce", "", "wait", NULL, fake_combine, NULL,
                                fake_apply, f, NULL, NULL };
    struct step d;
    struct step_result r;
    int rc;

    memset(f, 0, sizeof *f);
    err[0] = '\0';
    if ((rc = step_init(&d, &c, &o, err)) == 0)
        for (int s = 0; s < 3 && rc == 0; s++)
            rc = step_run(&d, s, &r, err);
    if (rc == 0 && w)
        memcpy(w, d.weights, sizeof(double) * P);
    step_destroy(&d);
    return rc;
}

static void test_right(void)
{
    struct fake f;
    double wp[P], ws[P];
    char err[ERR_LEN];

    T_CASE("step-student-1.1", "the project's rule, 4 buckets of a layer: its jobs in its order, its bits");
    mode = RIGHT;
    T_EQ_I(run(0, 16 * 8, &f, wp, err), 0);
    T_EQ_I(run(1, 16 * 8, &f, ws, err), 0);
    T_EQ_U(f.njobs, 15);
    for (size_t i = 0; i < 4; i++) {
        T_EQ_U(f.first[i], P - 16 * (i + 1));
        T_EQ_U(f.count[i], 16);
    }
    T_EQ_U(f.first[4], P);
    T_EQ_U(f.count[4], 3);
    T_TRUE(memcmp(wp, ws, sizeof wp) == 0);

    T_CASE("step-student-1.2", "a size the plan gives one bucket: the student's one bucket, then the trailer");
    T_EQ_I(run(1, 1 << 20, &f, ws, err), 0);
    T_EQ_U(f.njobs, 6);
    T_EQ_U(f.first[0], 0);
    T_EQ_U(f.count[0], P);
    T_EQ_U(f.first[1], P);
    T_TRUE(memcmp(wp, ws, sizeof wp) == 0);
}

static void test_refusals(void)
{
    struct fake f;
    char err[ERR_LEN];

    T_CASE("step-student-2.1", "the template: -ENOSYS, 'not written yet'");
    mode = TEMPLATE;
    T_EQ_I(run(1, 16 * 8, &f, NULL, err), -ENOSYS);
    T_HAS(err, "is not written yet");
    T_EQ_U(f.njobs, 0);

    T_CASE("step-student-2.2", "a bucket holding a layer not yet finished: refused, the layer named");
    mode = EARLY;
    T_EQ_I(run(1, 16 * 8, &f, NULL, err), ERR_USAGE);
    T_HAS(err, "element 32 is in layer 2, which the backward pass has not finished yet");
    T_EQ_U(f.njobs, 0);

    T_CASE("step-student-2.3", "an element started twice: refused, the earlier bucket named");
    mode = TWICE;
    T_EQ_I(run(1, 16 * 8, &f, NULL, err), ERR_USAGE);
    T_HAS(err, "overlaps bucket 0 [48, 64)");
    T_HAS(err, "element 48 would be all-reduced twice");

    T_CASE("step-student-2.4", "a range past the vector: refused with n");
    mode = PAST;
    T_EQ_I(run(1, 16 * 8, &f, NULL, err), ERR_USAGE);
    T_HAS(err, "bs_start(first 49, count 16): runs past the vector");
    T_HAS(err, "(n = 64)");

    T_CASE("step-student-2.5", "the last bucket never started: the step fails naming its elements and layers, the trailer not sent");
    mode = MISS_LAST;
    T_EQ_I(run(1, 16 * 8 * 3, &f, NULL, err), ERR_MISMATCH);
    T_HAS(err, "step 0: --bucket-student: elements [0, 16) (layers 0..0) were never started");
    T_EQ_U(f.njobs, 1);     /* layers 3..1, the one bucket started */

    T_CASE("step-student-2.6", "a student's own non-zero return: the step fails saying so");
    mode = TOO_LATE;
    T_EQ_I(run(1, 16 * 8, &f, NULL, err), ERR_MISMATCH);
    T_HAS(err, "student_backward_done returned 7");
}

int main(void)
{
    struct workload_cfg wc = { .kind = WORKLOAD_SYNTHETIC, .dtype = DTYPE_F64, .seed = 3,
                               .params = P, .batch = B, .layers = 4 };

    log_init("test_step_student", -1);
    if (workload_create(&wl, &wc) != 0) {
        printf("FAIL step-student-0 cannot build the synthetic workload\n");
        return 1;
    }
    test_right();
    test_refusals();
    workload_destroy(&wl);
    return t_done();
}
