/* test_bench_flags.c -- common/coll/bench_flags.c: the table of --coll,
 * --root and --imbalance through the flag loop, and bench_flags_check's
 * answers (the collective, or ERR_USAGE with one line naming the flag),
 * the same for bin/ring_worker and bin/psring_sim. coll_algo_parse too.
 */
#include <stdint.h>
#include <string.h>

#include "base/cli.h"
#include "base/err.h"
#include "check.h"
#include "coll/a2a.h"
#include "coll/bench_flags.h"
#include "coll/coll.h"

/* parse: argv (NULL-terminated, argv[0] a name) through the table alone;
 * the root_given / imbalance_given flags as ring_worker sets them. */
static int parse(struct bench_flags *f, const char *const *args, char *err)
{
    char *argv[16];
    const struct cli_opt *tables[2];
    int argc = 0, rc;

    bench_flags_init(f);
    tables[0] = bench_flags_opts(f);
    tables[1] = NULL;
    for (; args[argc] && argc < 15; argc++)
        argv[argc] = (char *)(uintptr_t)args[argc];
    argv[argc] = NULL;
    rc = cli_parse(argc, argv, tables, err);
    for (int i = 1; i < argc; i++) {
        f->root_given |= strcmp(argv[i], "--root") == 0;
        f->imbalance_given |= strcmp(argv[i], "--imbalance") == 0;
    }
    return rc;
}

int main(void)
{
    static const char *const host_ring = "the host ring (--algo ring --device cpu)";
    struct bench_flags f;
    char err[ERR_LEN];

    T_CASE("bench-flags-1.1", "defaults: all_reduce, root 0, imbalance 1; no flag without --bench is fine");
    bench_flags_init(&f);
    T_TRUE(f.coll == NULL);
    T_EQ_I(f.root, 0);
    T_EQ_D(f.imbalance, 1.0);
    T_EQ_I(bench_flags_check(&f, 0, 4, NULL, 0, err), COLL_ALL_REDUCE);
    T_EQ_I(bench_flags_check(&f, 1, 4, host_ring, A2A_WORLD_MAX, err), COLL_ALL_REDUCE);

    T_CASE("bench-flags-1.2", "each --coll name parses to its op; --root R and --imbalance F where they belong");
    {
        static const char *const names[] = { "all_reduce", "reduce_scatter", "all_gather",
                                             "broadcast", "reduce", "alltoall" };
        for (int op = 0; op < COLL_OPS; op++) {
            const char *args[] = { "x", "--coll", names[op], NULL };
            T_EQ_I(parse(&f, args, err), 0);
            T_EQ_I(bench_flags_check(&f, 1, 4, NULL, A2A_WORLD_MAX, err), op);
        }
        const char *b[] = { "x", "--coll", "broadcast", "--root", "3", NULL };
        T_EQ_I(parse(&f, b, err), 0);
        T_EQ_I(f.root, 3);
        T_EQ_I(bench_flags_check(&f, 1, 4, NULL, 0, err), COLL_BROADCAST);
        const char *a[] = { "x", "--coll", "alltoall", "--root", "1", "--imbalance", "2.5", NULL };
        T_EQ_I(parse(&f, a, err), 0);
        T_EQ_D(f.imbalance, 2.5);
        T_EQ_I(bench_flags_check(&f, 1, 4, NULL, A2A_WORLD_MAX, err), COLL_ALLTOALL);
    }

    T_CASE("bench-flags-1.3", "refusals: ERR_USAGE, one line naming the flag");
    {
        static const struct {
            const char *args[8];
            int bench, world;
            const char *others;
            int a2a_max;
            const char *flag;
        } bad[] = {
            { { "x", "--coll", "reduce", NULL }, 0, 4, NULL, 0, "--coll/--root/--imbalance" },
            { { "x", "--root", "0", NULL }, 0, 4, NULL, 0, "--coll/--root/--imbalance" },
            { { "x", "--imbalance", "1", NULL }, 0, 4, NULL, 0, "--coll/--root/--imbalance" },
            { { "x", "--coll", "allreduce", NULL }, 1, 4, NULL, 0, "--coll: 'allreduce'" },
            { { "x", "--coll", "reduce", NULL }, 1, 4, "the ring (--algo ring)", 0,
              "--coll: the collectives other than all_reduce run on the ring (--algo ring)" },
            { { "x", "--coll", "all_reduce", "--root", "1", NULL }, 1, 4, NULL, 0, "--root: for" },
            { { "x", "--coll", "broadcast", "--root", "4", NULL }, 1, 4, NULL, 0,
              "--root: 4 is not a rank of K = 4" },
            { { "x", "--coll", "reduce", "--imbalance", "2", NULL }, 1, 4, NULL, 0,
              "--imbalance: for --coll alltoall only" },
            { { "x", "--coll", "alltoall", "--imbalance", "5", NULL }, 1, 4, NULL, 0,
              "--imbalance: 5 is more than K = 4" },
            { { "x", "--coll", "alltoall", NULL }, 1, A2A_WORLD_MAX + 1, NULL, A2A_WORLD_MAX,
              "--coll alltoall: at most" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            err[0] = '\0';
            T_EQ_I(parse(&f, bad[i].args, err), 0);
            T_EQ_I(bench_flags_check(&f, bad[i].bench, bad[i].world, bad[i].others,
                                     bad[i].a2a_max, err), ERR_USAGE);
            T_HAS(err, bad[i].flag);
            T_TRUE(strchr(err, '\n') == NULL);
        }
        /* Out of THE BOUNDS already in the flag loop: --root 70000, --imbalance 0.5. */
        const char *r[] = { "x", "--root", "70000", NULL }, *m[] = { "x", "--imbalance", "0.5", NULL };
        T_EQ_I(parse(&f, r, err), ERR_USAGE);
        T_HAS(err, "--root");
        T_EQ_I(parse(&f, m, err), ERR_USAGE);
        T_HAS(err, "--imbalance");
    }

    T_CASE("bench-flags-1.4", "coll_algo_parse: ring, rd, rabenseifner, tree, dbtree; anything else -1");
    T_EQ_I(coll_algo_parse("ring"), COLL_RING);
    T_EQ_I(coll_algo_parse("rd"), COLL_RD);
    T_EQ_I(coll_algo_parse("tree"), COLL_TREE);
    T_EQ_I(coll_algo_parse("dbtree"), COLL_DBTREE);
    T_EQ_I(coll_algo_parse("trees"), -1);
    T_EQ_I(coll_algo_parse(""), -1);
    T_EQ_I(coll_algo_parse("Ring"), -1);

    return t_done();
}
