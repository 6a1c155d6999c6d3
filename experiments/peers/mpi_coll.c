/* mpi_coll.c -- the peer ring_worker --bench is compared with: an MPI's
 * (Open MPI's, MPICH's) collectives timed the same way, printing the same
 * columns.
 *
 *     mpirun.openmpi -np K build/peers/mpi_coll [-c NAME] [-r ROOT] [-b 4K] [-e 64M] [-f 2]
 *                                       [-w 5] [-n 20] [-d float|double] [-v]
 *
 * NAME (nccl-tests' names, as ring_worker --bench --coll):
 *   all_reduce      MPI_Allreduce (sum, MPI_IN_PLACE)             (default)
 *   reduce_scatter  MPI_Reduce_scatter_block (sum, MPI_IN_PLACE); with -v
 *                   MPI_Reduce_scatter with K equal counts instead: the same
 *                   result, but Open MPI's tuned component has a ring for
 *                   it (coll_tuned_reduce_scatter_algorithm 3) and none for
 *                   the _block call
 *   all_gather      MPI_Allgather (MPI_IN_PLACE)
 *   broadcast       MPI_Bcast from ROOT
 *   reduce          MPI_Reduce (sum) to ROOT (MPI_IN_PLACE there)
 *   alltoall        MPI_Alltoall (balanced: count / K per rank)
 * reduce_scatter, all_gather and alltoall round the count down to a
 * multiple of K, as nccl-tests and ring_worker do; the size printed is the
 * count times the element size, and busbw = algbw x nccl-tests' factor
 * (2(K-1)/K all_reduce; (K-1)/K reduce_scatter, all_gather, alltoall; 1
 * broadcast, reduce).
 *
 * Built by experiments/peers/build.sh once per MPI, only where it is
 * installed: with mpicc.openmpi as mpi_coll, with mpicc.mpich as
 * mpi_coll.mpich (the same source; the header's first line names the
 * library it was built with); the main Makefile never builds it. Method, as
 * common/coll/bench.h: per size, -w untimed calls, a barrier, -n timed
 * ones back to back on zeros; the time printed is the slowest rank's loop
 * / n (MPI_Reduce MAX); then one call on the check pattern ((rank + i) mod
 * 8) - 3 (for alltoall: ((5 s + 3 d + j) mod 8) - 3 for rank s's element
 * j to rank d, ring_worker's), every element of the defined result
 * compared, #wrong summed over the ranks. Which algorithm Open MPI picks
 * is its own choice unless mpirun's --mca forces one (bench_ring.sh and
 * bench_coll.sh run both; experiments/lib.sh, ompi_forced); the header
 * names every coll_tuned parameter the job was given, so that a table
 * says which configuration made it. MPICH's, likewise, unless an
 * MPIR_CVAR_*_ALGORITHM variable forces one (lib.sh, mpich_forced); its
 * header names every MPIR_CVAR_ and UCX_ variable the job was given.
 */
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER, BROADCAST, REDUCE, ALLTOALL, NCOLLS };
static const char *const names[NCOLLS] = {
    "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "alltoall",
};

static int pattern(int r, size_t i)
{
    return (int)(((size_t)r + i) & 7) - 3;
}

static int a2a_pattern(int s, int d, size_t j)
{
    return (int)(((size_t)s * 5 + (size_t)d * 3 + j) & 7) - 3;
}

/* size: "4096", "4K", "64M", "1G" (powers of 1024, as nccl-tests). */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: return -1;
    }
    if (*end != '\0' || v == 0)
        return -1;
    *out = v;
    return 0;
}

struct run {
    int op, root, rank, world, dbl, vcounts;
    int *counts;                    /* -v: K equal receive counts */
    MPI_Datatype type;
    void *buf, *rbuf;
};

static double get(const void *p, size_t i, int dbl)
{
    return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void set(void *p, size_t i, int dbl, double v)
{
    if (dbl)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

/* print_tuned: the coll_tuned settings this job was given (mpirun --mca X V
 * reaches every rank as OMPI_MCA_X=V), one '#' line; "defaults" when none:
 * Open MPI's own decision rules picked the algorithms. */
#ifdef MPICH
#define LIBRARY "MPICH"
#else
#define LIBRARY "Open MPI"
#endif
static void print_tuned(void)
{
    extern char **environ;
    int n = 0;
#ifdef MPICH
    /* print_tuned, MPICH's: the MPIR_CVAR_ (its control variables: the
     * algorithms, MPIR_CVAR_NOLOCAL) and UCX_ (its transport) variables,
     * whole, but the interface hostname mpirun.mpich sets itself; then
     * "defaults" when no MPIR_CVAR_..._ALGORITHM is among them. */
    int forced = 0;

    printf("# mpich:");
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if ((strncmp(*e, "MPIR_CVAR_", 10) != 0 && strncmp(*e, "UCX_", 4) != 0) || !eq ||
            strncmp(*e, "MPIR_CVAR_CH3_INTERFACE_HOSTNAME=", 33) == 0)
            continue;
        printf(" %s", *e);
        n++;
        forced += eq - *e > 10 && strncmp(eq - 10, "_ALGORITHM", 10) == 0;
    }
    printf("%s\n", forced ? "" : " defaults (MPICH's decision rules)");
#else
    static const char prefix[] = "OMPI_MCA_coll_tuned_";

    printf("# coll_tuned:");
    for (char **e = environ; *e; e++)
        if (strncmp(*e, prefix, sizeof prefix - 1) == 0)
            printf(" %s", *e + sizeof prefix - 1), n++;
    printf("%s\n", n ? "" : " defaults (Open MPI's decision rules)");
#endif
}

/* call: one collective of count elements in all (q = count / K per rank). */
static void call(const struct run *r, size_t count)
{
    int n = (int)count, q = (int)(count / (size_t)r->world);
    MPI_Comm w = MPI_COMM_WORLD;

    switch (r->op) {
    case REDUCE_SCATTER:
        if (r->vcounts) {
            for (int i = 0; i < r->world; i++)
                r->counts[i] = q;
            MPI_Reduce_scatter(MPI_IN_PLACE, r->buf, r->counts, r->type, MPI_SUM, w);
        } else {
            MPI_Reduce_scatter_block(MPI_IN_PLACE, r->buf, q, r->type, MPI_SUM, w);
        }
        break;
    case ALL_GATHER:
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r->buf, q, r->type, w);
        break;
    case BROADCAST:
        MPI_Bcast(r->buf, n, r->type, r->root, w);
        break;
    case REDUCE:
        MPI_Reduce(r->rank == r->root ? MPI_IN_PLACE : r->buf, r->buf, n, r->type, MPI_SUM,
                   r->root, w);
        break;
    case ALLTOALL:
        MPI_Alltoall(r->buf, q, r->type, r->rbuf, q, r->type, w);
        break;
    default:
        MPI_Allreduce(MPI_IN_PLACE, r->buf, n, r->type, MPI_SUM, w);
        break;
    }
}

/* check: the checked call (input, call, compare); the wrong elements. */
static unsigned long long check(const struct run *r, size_t count, const double *want)
{
    size_t q = count / (size_t)r->world, lo = 0, hi = count;
    unsigned long long wrong = 0;

    for (size_t i = 0; i < count; i++)
        set(r->buf, i, r->dbl, r->op == ALLTOALL ? a2a_pattern(r->rank, (int)(i / q), i % q)
                                                 : pattern(r->rank, i));
    call(r, count);
    switch (r->op) {
    case REDUCE_SCATTER:            /* rank r's slice, at the start of buf */
        for (size_t j = 0; j < q; j++)
            wrong += get(r->buf, j, r->dbl) != want[((size_t)r->rank * q + j) & 7];
        return wrong;
    case ALL_GATHER:
        for (size_t i = 0; i < count; i++)
            wrong += get(r->buf, i, r->dbl) != pattern((int)(i / q), i);
        return wrong;
    case BROADCAST:
        for (size_t i = 0; i < count; i++)
            wrong += get(r->buf, i, r->dbl) != pattern(r->root, i);
        return wrong;
    case ALLTOALL:
        for (size_t i = 0; i < count; i++)
            wrong += get(r->rbuf, i, r->dbl) != a2a_pattern((int)(i / q), r->rank, i % q);
        return wrong;
    case REDUCE:
        if (r->rank != r->root)
            return 0;
        /* fall through */
    default:
        for (size_t i = lo; i < hi; i++)
            wrong += get(r->buf, i, r->dbl) != want[i & 7];
        return wrong;
    }
}

int main(int argc, char **argv)
{
    uint64_t minbytes = 4096, maxbytes = 64u << 20;
    int factor = 2, warmup = 5, iters = 20, opt, bad = 0;
    double busbw_sum = 0, want[8], fac;
    unsigned long long wrong_total = 0;
    int nsizes = 0;
    struct run r = { ALL_REDUCE, 0, 0, 1, 0, 0, NULL, MPI_FLOAT, NULL, NULL };

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.world);
    while ((opt = getopt(argc, argv, "c:r:b:e:f:w:n:d:vh")) != -1) {
        switch (opt) {
        case 'c':
            for (r.op = 0; r.op < NCOLLS && strcmp(optarg, names[r.op]) != 0; r.op++)
                ;
            bad |= r.op == NCOLLS;
            break;
        case 'r': r.root = atoi(optarg); break;
        case 'b': bad |= parse_size(optarg, &minbytes); break;
        case 'e': bad |= parse_size(optarg, &maxbytes); break;
        case 'f': factor = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        case 'n': iters = atoi(optarg); break;
        case 'd': r.dbl = strcmp(optarg, "double") == 0; break;
        case 'v': r.vcounts = 1; break;
        default: bad = 1; break;
        }
    }
    if (bad || factor < 2 || iters < 1 || warmup < 0 || minbytes > maxbytes || r.root < 0 ||
        r.root >= r.world || maxbytes > (uint64_t)INT32_MAX) {
        if (r.rank == 0)
            fprintf(stderr, "usage: mpi_coll [-c all_reduce|reduce_scatter|all_gather|broadcast|"
                    "reduce|alltoall] [-r ROOT] [-b 4K] [-e 64M] [-f 2] [-w 5] [-n 20] "
                    "[-d float|double] [-v]\n");
        MPI_Finalize();
        return 64;
    }
    size_t es = r.dbl ? sizeof(double) : sizeof(float);
    r.type = r.dbl ? MPI_DOUBLE : MPI_FLOAT;
    r.buf = malloc(maxbytes);
    r.rbuf = malloc(maxbytes);
    r.counts = malloc(sizeof(int) * (size_t)r.world);
    if (!r.buf || !r.rbuf || !r.counts) {
        fprintf(stderr, "mpi_coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int j = 0; j < 8; j++) {
        want[j] = 0;
        for (int q = 0; q < r.world; q++)
            want[j] += pattern(q, (size_t)j);
    }
    fac = r.world < 2 ? 0.0 : r.op == ALL_REDUCE ? 2.0 * (r.world - 1) / r.world
        : r.op == BROADCAST || r.op == REDUCE ? 1.0 : (double)(r.world - 1) / r.world;
    if (r.rank == 0) {
        printf("# mpi_coll: %s over K=%d ranks (" LIBRARY ")%s\n", names[r.op], r.world,
               r.op == REDUCE_SCATTER && r.vcounts ? ", MPI_Reduce_scatter (-v)" : "");
        print_tuned();
        printf("# time: the slowest rank's loop of %d iterations / %d (after %d warm-up "
               "and a barrier); busbw = algbw * %.4g\n", iters, iters, warmup, fac);
        printf("#%11s %12s %7s %11s %12s %12s %7s\n", "size", "count", "type", "time(us)",
               "algbw(GB/s)", "busbw(GB/s)", "#wrong");
        fflush(stdout);
    }
    for (uint64_t size = minbytes; size <= maxbytes; size *= (uint64_t)factor) {
        size_t count = size / es, bytes;
        unsigned long long wrong = 0, wsum = 0;
        double t0, total, tmax = 0;

        if (r.op == REDUCE_SCATTER || r.op == ALL_GATHER || r.op == ALLTOALL)
            count = count / (size_t)r.world * (size_t)r.world;
        bytes = count * es;
        if (count > 0) {
            memset(r.buf, 0, bytes);
            for (int i = 0; i < warmup; i++)
                call(&r, count);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                call(&r, count);
            total = MPI_Wtime() - t0;
            wrong = check(&r, count, want);
            MPI_Reduce(&total, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            MPI_Reduce(&wrong, &wsum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
            if (r.rank == 0) {
                double t = tmax / iters, algbw = (double)bytes / t / 1e9, busbw = algbw * fac;
                busbw_sum += busbw;
                nsizes++;
                wrong_total += wsum;
                printf("%12zu %12zu %7s %11.1f %12.3f %12.3f %7llu\n", bytes, count,
                       r.dbl ? "double" : "float", t * 1e6, algbw, busbw, wsum);
                fflush(stdout);
            }
        }
        if (size > maxbytes / (uint64_t)factor)
            break;
    }
    if (r.rank == 0) {
        printf("# out of bounds values : %llu %s\n", wrong_total, wrong_total ? "WRONG" : "OK");
        printf("# avg bus bandwidth    : %.3f GB/s\n", nsizes ? busbw_sum / nsizes : 0.0);
    }
    free(r.buf);
    free(r.rbuf);
    free(r.counts);
    MPI_Finalize();
    return wrong_total ? 1 : 0;
}
