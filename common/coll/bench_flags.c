/* bench_flags.c -- --coll, --root and --imbalance (bench_flags.h). */
#include "bench_flags.h"

#include <stdio.h>

#include "base/err.h"
#include "coll.h"

/* fail: one line into err, and ERR_USAGE. */
#define fail(err, ...) (err_say((err), __VA_ARGS__), ERR_USAGE)

void bench_flags_init(struct bench_flags *f)
{
    *f = (struct bench_flags){ NULL, 0, 1.0, 0, 0 };
}

const struct cli_opt *bench_flags_opts(struct bench_flags *f)
{
    static struct cli_opt t[4];
    const struct cli_opt v[] = {
        { "coll", CLI_STRING, &f->coll, "NAME",
          "--bench: all_reduce (default), reduce_scatter, all_gather, broadcast, reduce, "
          "alltoall", 0, 0, NULL },
        { "root", CLI_INT, &f->root, "R",
          "--bench: broadcast's and reduce's root, alltoall's hot rank (default 0)", 0, 0, NULL },
        { "imbalance", CLI_DOUBLE, &f->imbalance, "F",
          "--bench --coll alltoall: the hot rank (--root) gets F x the average share, "
          "1 .. K (default 1)", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };

    _Static_assert(sizeof v == sizeof t, "bench_flags_opts: the table's size");
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        t[i] = v[i];
    return t;
}

int bench_flags_check(const struct bench_flags *f, int bench, int world, const char *others,
                      int a2a_max, char *err)
{
    int op = f->coll ? coll_op_parse(f->coll) : COLL_ALL_REDUCE;

    if (!bench && (f->coll || f->root_given || f->imbalance_given))
        return fail(err, "--coll/--root/--imbalance: benchmark flags (with --bench)");
    if (op < 0)
        return fail(err, "--coll: '%.40s' is not all_reduce, reduce_scatter, all_gather, "
                    "broadcast, reduce or alltoall", f->coll);
    if (op != COLL_ALL_REDUCE && others)
        return fail(err, "--coll: the collectives other than all_reduce run on %s", others);
    if (f->root_given && op != COLL_BROADCAST && op != COLL_REDUCE && op != COLL_ALLTOALL)
        return fail(err, "--root: for --coll broadcast, reduce and alltoall (its hot rank)");
    if (f->root >= world)
        return fail(err, "--root: %d is not a rank of K = %d (0 .. %d)", f->root, world,
                    world - 1);
    if (f->imbalance_given && op != COLL_ALLTOALL)
        return fail(err, "--imbalance: for --coll alltoall only");
    if (f->imbalance > world)
        return fail(err, "--imbalance: %g is more than K = %d (F = K sends everything to one "
                    "rank)", f->imbalance, world);
    if (op == COLL_ALLTOALL && a2a_max > 0 && world > a2a_max)
        return fail(err, "--coll alltoall: at most %d ranks (a connection per pair), K = %d",
                    a2a_max, world);
    return op;
}
