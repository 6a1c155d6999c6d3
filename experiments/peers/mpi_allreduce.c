/* mpi_allreduce.c -- the peer ring_worker --bench is compared with:
 * MPI_Allreduce (sum, in place) timed the same way, printing the same
 * columns.
 *
 *     mpirun -np K build/peers/mpi_allreduce [-b 4K] [-e 64M] [-f 2] [-w 5] [-n 20]
 *                                            [-d float|double]
 *
 * Built by experiments/peers/build.sh with mpicc, only where mpicc is
 * installed; the main Makefile never builds it. Method, as
 * ring_worker/bench.h: per size, -w untimed all-reduces, a barrier, -n
 * timed ones back to back on zeros; the time printed is the slowest rank's
 * loop / n (MPI_Reduce MAX); then one all-reduce of the check pattern
 * ((rank + i) mod 8) - 3, every element compared with its closed-form sum,
 * #wrong summed over the ranks. The data is in place (MPI_IN_PLACE), as the
 * ring's is. Which algorithm Open MPI picks (ring, recursive doubling,
 * ...) is its own choice: this measures the library as shipped.
 */
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pattern(int r, size_t i)
{
    return (int)(((size_t)r + i) & 7) - 3;
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

int main(int argc, char **argv)
{
    uint64_t minbytes = 4096, maxbytes = 64u << 20;
    int factor = 2, warmup = 5, iters = 20, dbl = 0, rank, world, opt, bad = 0;
    double busbw_sum = 0;
    unsigned long long wrong_total = 0;
    int nsizes = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    while ((opt = getopt(argc, argv, "b:e:f:w:n:d:h")) != -1) {
        switch (opt) {
        case 'b': bad |= parse_size(optarg, &minbytes); break;
        case 'e': bad |= parse_size(optarg, &maxbytes); break;
        case 'f': factor = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        case 'n': iters = atoi(optarg); break;
        case 'd': dbl = strcmp(optarg, "double") == 0; break;
        default: bad = 1; break;
        }
    }
    if (bad || factor < 2 || iters < 1 || warmup < 0 || minbytes > maxbytes) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_allreduce [-b 4K] [-e 64M] [-f 2] [-w 5] [-n 20] "
                    "[-d float|double]\n");
        MPI_Finalize();
        return 64;
    }
    size_t es = dbl ? sizeof(double) : sizeof(float);
    MPI_Datatype type = dbl ? MPI_DOUBLE : MPI_FLOAT;
    void *buf = malloc(maxbytes);
    double want[8];
    if (!buf) {
        fprintf(stderr, "mpi_allreduce: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int j = 0; j < 8; j++) {
        want[j] = 0;
        for (int r = 0; r < world; r++)
            want[j] += pattern(r, (size_t)j);
    }
    if (rank == 0) {
        printf("# mpi_allreduce: MPI_Allreduce (sum, in place) over K=%d ranks\n", world);
        printf("# time: the slowest rank's loop of %d iterations / %d (after %d warm-up "
               "and a barrier); busbw = algbw * 2(K-1)/K\n", iters, iters, warmup);
        printf("#%11s %12s %7s %11s %12s %12s %7s\n", "size", "count", "type", "time(us)",
               "algbw(GB/s)", "busbw(GB/s)", "#wrong");
        fflush(stdout);
    }
    for (uint64_t size = minbytes; size <= maxbytes; size *= (uint64_t)factor) {
        size_t count = size / es, bytes = count * es;
        unsigned long long wrong = 0, wsum = 0;
        double t0, total, tmax = 0;

        if (count > 0) {
            memset(buf, 0, bytes);
            for (int i = 0; i < warmup; i++)
                MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, type, MPI_SUM, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, type, MPI_SUM, MPI_COMM_WORLD);
            total = MPI_Wtime() - t0;
            for (size_t i = 0; i < count; i++) {
                if (dbl)
                    ((double *)buf)[i] = pattern(rank, i);
                else
                    ((float *)buf)[i] = (float)pattern(rank, i);
            }
            MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, type, MPI_SUM, MPI_COMM_WORLD);
            for (size_t i = 0; i < count; i++) {
                double v = dbl ? ((double *)buf)[i] : (double)((float *)buf)[i];
                wrong += v != want[i & 7];
            }
            MPI_Reduce(&total, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            MPI_Reduce(&wrong, &wsum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                double t = tmax / iters, algbw = (double)bytes / t / 1e9;
                double busbw = algbw * (world > 1 ? 2.0 * (world - 1) / world : 0.0);
                busbw_sum += busbw;
                nsizes++;
                wrong_total += wsum;
                printf("%12zu %12zu %7s %11.1f %12.3f %12.3f %7llu\n", bytes, count,
                       dbl ? "double" : "float", t * 1e6, algbw, busbw, wsum);
                fflush(stdout);
            }
        }
        if (size > maxbytes / (uint64_t)factor)
            break;
    }
    if (rank == 0) {
        printf("# out of bounds values : %llu %s\n", wrong_total, wrong_total ? "WRONG" : "OK");
        printf("# avg bus bandwidth    : %.3f GB/s\n", nsizes ? busbw_sum / nsizes : 0.0);
    }
    free(buf);
    MPI_Finalize();
    return wrong_total ? 1 : 0;
}
