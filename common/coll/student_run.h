/* student_run.h -- the project's side of the student track (student.h):
 * the state behind struct student, its peer table, and the call coll.c
 * makes. */
#ifndef STUDENT_RUN_H
#define STUDENT_RUN_H

#include <stddef.h>

#include "student.h"
#include "xport.h"

struct student {
    struct xport_algo a;      /* the transport (opened with student_plan), rank, staging */
    int dtype;
    size_t n;                 /* this call's vector */
    char *err;                /* this call's message buffer */
    int steps;                /* st_exchange calls in this call (messages) */
};

/* student_init: as ring_init (ERR_USAGE or -ENOMEM); student_destroy. */
int student_init(struct student *st, struct xport *x, int rank, int world, size_t piece_bytes);
void student_destroy(struct student *st);

/* student_plan: the ring's peer table (ring_plan: the right neighbour
 * dialled, the left accepted, news relayed), steps tagged by their first
 * element ("element"). */
void student_plan(int rank, int world, struct xport_plan *pl);

/* student_run: student_allreduce over buf's n elements of dtype: 0, the
 * failing step's code with its line in err, or -ENOSYS ("not written
 * yet") for the template. */
int student_run(struct student *st, void *buf, size_t n, int dtype, char *err);

#endif /* STUDENT_RUN_H */
