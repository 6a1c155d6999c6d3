/* test_rendezvous.c -- the ring's rendezvous (common/coll/rendezvous.c):
 * how K ranks find each other, and every way that can go wrong.
 *
 * Ranks run as threads of this process on 127.0.0.1. Rank 0 binds port 0
 * and writes --port-file, as the launcher has it; the other ranks wait for
 * that file, then connect. Ids: rendezvous-1.x tables (K ranks, K = 1,
 * the blob); rendezvous-2.x failures (RELIABILITY.md rows 5 and 6):
 * disagreeing settings, a rank twice, a missing rank, a coordinator that
 * never appears, a stranger at the coordinator's port. Every failure must
 * reach every rank that registered, as one line, within the timeout plus
 * a little.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll/rendezvous.h"
#include "check.h"
#include "base/clock.h"
#include "base/dtype.h"
#include "base/err.h"
#include "wire/net.h"
#include "wire/proto.h"

#define MAXK 6
#define T_S 1.0                  /* --timeout of these cases */
#define WATCHDOG (3 * T_S + 10)  /* a bound on "no hang", never a timing claim */
#define LONG_T 30.0              /* --timeout where a case must not wait for it */

struct rank_job {
    struct rdv_cfg cfg;
    const char *port_file;       /* rank > 0: wait for it, connect to that port */
    int fixed_port;              /* rank > 0: connect here instead (no port file) */
    uint8_t blob[PROTO_BLOB_SIZE];
    struct rdv_table table;
    int rc;
    double took;
    char err[ERR_LEN];
};

static char port_path[256];

static int read_port(const char *path, double wait_s)
{
    double until = clock_now() + wait_s;
    while (clock_now() < until) {
        FILE *f = fopen(path, "r");
        int p = 0;
        if (f) {
            int ok = fscanf(f, "%d", &p) == 1;
            fclose(f);
            if (ok && p > 0)
                return p;
        }
        clock_sleep_until(clock_now() + 0.005);
    }
    return -1;
}

static void *rank_main(void *arg)
{
    struct rank_job *j = arg;
    double t0 = clock_now();

    if (j->cfg.rank != 0 && j->cfg.world > 1 && !j->fixed_port) {
        j->cfg.coord_port = read_port(j->port_file, 5.0);
        if (j->cfg.coord_port < 0) {
            j->rc = -ENOENT;
            snprintf(j->err, sizeof j->err, "no port file");
            return NULL;
        }
    } else if (j->fixed_port) {
        j->cfg.coord_port = j->fixed_port;
    }
    j->rc = rdv_run(&j->cfg, j->cfg.rank == 0 ? j->blob : NULL, &j->table, j->err);
    j->took = clock_now() - t0;
    return NULL;
}

static struct proto_hello job_hello(void)
{
    struct proto_hello h = { 1000, DTYPE_F32, 2, 7, 1024, 0, 0 };
    return h;
}

/* setup: K jobs of one healthy rendezvous; tests then spoil one. */
static void setup(struct rank_job *jobs, int k)
{
    snprintf(port_path, sizeof port_path, "/tmp/psring-test-rdv.%ld.port", (long)getpid());
    unlink(port_path);
    for (int r = 0; r < k; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r].cfg.rank = r;
        jobs[r].cfg.world = k;
        jobs[r].cfg.hello = job_hello();
        jobs[r].cfg.coord_host = "127.0.0.1";
        jobs[r].cfg.coord_port = 0;
        jobs[r].cfg.port_file = r == 0 ? port_path : NULL;
        jobs[r].cfg.data_host = "127.0.0.1";
        jobs[r].cfg.data_port = 42000 + r;
        jobs[r].cfg.timeout = T_S;
        jobs[r].port_file = port_path;
        for (int i = 0; i < PROTO_BLOB_SIZE; i++)
            jobs[r].blob[i] = (uint8_t)(i ^ 0x5a);
    }
}

static void run(struct rank_job *jobs, int k)
{
    pthread_t th[MAXK];

    for (int r = 0; r < k; r++)
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    for (int r = 0; r < k; r++)
        pthread_join(th[r], NULL);
    unlink(port_path);
}

static void done(struct rank_job *jobs, int k)
{
    for (int r = 0; r < k; r++)
        rdv_table_free(&jobs[r].table);
}

/* stranger: connect to the coordinator, send `junk` (may be empty), then
 * hold the connection open until told to go. */
struct stranger {
    const char *junk;
    size_t len;
    volatile int go;
};

static void *stranger_main(void *arg)
{
    struct stranger *s = arg;
    int port = read_port(port_path, 5.0), fd = -1;

    if (port > 0 && net_connect("127.0.0.1", port, 2.0, &fd, NULL) == 0) {
        if (s->len && write(fd, s->junk, s->len) < 0)
            printf("     stranger: write failed\n");
        while (!s->go)
            clock_sleep_until(clock_now() + 0.01);
        close(fd);
    }
    return NULL;
}

int main(void)
{
    struct rank_job jobs[MAXK];

    T_CASE("rendezvous-1.1", "K = 5: every rank gets the same table and rank 0's blob");
    setup(jobs, 5);
    run(jobs, 5);
    for (int r = 0; r < 5; r++) {
        T_EQ_I(jobs[r].rc, 0);
        if (jobs[r].rc != 0) {
            printf("     rank %d: %s\n", r, jobs[r].err);
            continue;
        }
        T_EQ_I(jobs[r].table.world, 5);
        for (int q = 0; q < 5; q++) {
            T_EQ_U(jobs[r].table.peers[q].port, 42000 + q);
            T_STR(jobs[r].table.peers[q].addr, "127.0.0.1");
        }
        T_TRUE(memcmp(jobs[r].table.blob, jobs[0].blob, PROTO_BLOB_SIZE) == 0);
    }
    T_TRUE(jobs[0].table.coord_port > 0);
    done(jobs, 5);

    T_CASE("rendezvous-1.2", "K = 1: no coordinator, the table is the rank alone");
    setup(jobs, 1);
    jobs[0].cfg.coord_host = "no.such.host.invalid";    /* never looked at */
    run(jobs, 1);
    T_EQ_I(jobs[0].rc, 0);
    T_EQ_I(jobs[0].table.world, 1);
    T_TRUE(memcmp(jobs[0].table.blob, jobs[0].blob, PROTO_BLOB_SIZE) == 0);
    T_TRUE(access(port_path, F_OK) != 0);                /* no port file either */
    done(jobs, 1);

    T_CASE("rendezvous-1.3", "a blob of NULL reaches the ranks as zeros; IPv6 and names as addresses");
    {
        static const uint8_t zeros[PROTO_BLOB_SIZE] = { 0 };
        setup(jobs, 3);
        jobs[1].cfg.data_host = "::1";
        jobs[2].cfg.data_host = "node-2.example";
        memset(jobs[0].blob, 0, sizeof jobs[0].blob);
        run(jobs, 3);
        for (int r = 0; r < 3; r++) {
            T_EQ_I(jobs[r].rc, 0);
            if (jobs[r].rc == 0) {
                T_STR(jobs[r].table.peers[1].addr, "::1");
                T_STR(jobs[r].table.peers[2].addr, "node-2.example");
                T_TRUE(memcmp(jobs[r].table.blob, zeros, PROTO_BLOB_SIZE) == 0);
            }
        }
        done(jobs, 3);
    }

    T_CASE("rendezvous-2.1", "n differs on rank 2: every rank fails naming rank 2 and n, no waiting");
    setup(jobs, 4);
    jobs[2].cfg.hello.n = 2000;
    for (int r = 0; r < 4; r++)
        jobs[r].cfg.timeout = LONG_T;
    run(jobs, 4);
    for (int r = 0; r < 4; r++) {
        T_EQ_I(jobs[r].rc, ERR_MISMATCH);
        T_HAS(jobs[r].err, "rendezvous failed: rank 2 (127.0.0.1:");
        T_HAS(jobs[r].err, "disagrees with rank 0: n 2000 vs 1000");
        T_LE(jobs[r].took, LONG_T / 2);       /* all K came: answered at once */
    }
    done(jobs, 4);

    T_CASE("rendezvous-2.2", "dtype, workload, batch, seed: each named");
    {
        static const char *const want[] = { "dtype f64 vs f32", "workload linreg vs synthetic",
                                            "batch 5 vs 1024", "seed 8 vs 7" };
        for (int f = 0; f < 4; f++) {
            setup(jobs, 3);
            struct proto_hello *h = &jobs[1].cfg.hello;
            switch (f) {
            case 0: h->dtype = DTYPE_F64; break;
            case 1: h->workload = 1; break;
            case 2: h->batch = 5; break;
            default: h->seed = 8; break;
            }
            run(jobs, 3);
            for (int r = 0; r < 3; r++) {
                T_EQ_I(jobs[r].rc, ERR_MISMATCH);
                T_HAS(jobs[r].err, want[f]);
            }
            done(jobs, 3);
        }
    }

    T_CASE("rendezvous-2.3", "K differs on one rank: every rank fails naming K");
    setup(jobs, 3);
    jobs[2].cfg.world = 4;
    run(jobs, 3);
    for (int r = 0; r < 3; r++) {
        T_EQ_I(jobs[r].rc, ERR_MISMATCH);
        T_HAS(jobs[r].err, "was started with K = 4, rank 0 with K = 3 (--world)");
    }
    done(jobs, 3);

    T_CASE("rendezvous-2.4", "a rank twice: named, after the timeout, on every rank that came");
    setup(jobs, 4);
    jobs[3].cfg.rank = 2;                    /* two rank 2s, no rank 3 */
    run(jobs, 4);
    for (int r = 0; r < 4; r++) {
        T_EQ_I(jobs[r].rc, ERR_MISMATCH);
        T_HAS(jobs[r].err, "rank 2 registered twice");
        T_LE(jobs[r].took, WATCHDOG);
    }
    done(jobs, 4);

    T_CASE("rendezvous-2.5", "a rank that never comes: the others fail after the timeout, naming it");
    setup(jobs, 4);
    run(jobs, 3);                            /* rank 3 is not started */
    for (int r = 0; r < 3; r++) {
        T_EQ_I(jobs[r].rc, ERR_TIMEOUT);
        T_HAS(jobs[r].err, "rank 3 never registered at the coordinator 127.0.0.1:");
        T_LE(T_S - 0.1, jobs[r].took);
        T_LE(jobs[r].took, WATCHDOG);
    }
    done(jobs, 3);

    T_CASE("rendezvous-2.6", "two missing ranks are both listed");
    setup(jobs, 5);
    run(jobs, 3);
    T_HAS(jobs[0].err, "ranks 3, 4 never registered");
    T_HAS(jobs[1].err, "ranks 3, 4 never registered");
    done(jobs, 3);

    T_CASE("rendezvous-2.7", "a coordinator that never appears: a clear error after the timeout");
    {
        int lfd, port;
        /* A port that was free a moment ago and is closed now. */
        T_EQ_I(net_listen("127.0.0.1", 0, &lfd, &port, NULL), 0);
        close(lfd);
        setup(jobs, 2);
        jobs[1].fixed_port = port;
        run(jobs + 1, 1);
        T_TRUE(jobs[1].rc != 0);
        T_HAS(jobs[1].err, "coordinator 127.0.0.1:");
        T_HAS(jobs[1].err, "never appeared within 1.0 s");
        T_LE(T_S - 0.1, jobs[1].took);
        T_LE(jobs[1].took, WATCHDOG);
        done(jobs, 2);
    }

    T_CASE("rendezvous-2.8", "strangers at the coordinator (junk, silence) are dropped; ranks served");
    {
        static const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n........................";
        struct stranger s1 = { http, sizeof http - 1, 0 }, s2 = { "", 0, 0 };
        pthread_t t1, t2, th[3];
        setup(jobs, 3);
        for (int r = 0; r < 3; r++)
            jobs[r].cfg.timeout = LONG_T;
        pthread_create(&th[0], NULL, rank_main, &jobs[0]);
        pthread_create(&t1, NULL, stranger_main, &s1);
        pthread_create(&t2, NULL, stranger_main, &s2);
        clock_sleep_until(clock_now() + 0.2);            /* strangers first */
        pthread_create(&th[1], NULL, rank_main, &jobs[1]);
        pthread_create(&th[2], NULL, rank_main, &jobs[2]);
        for (int r = 0; r < 3; r++)
            pthread_join(th[r], NULL);
        s1.go = s2.go = 1;
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        unlink(port_path);
        for (int r = 0; r < 3; r++) {
            T_EQ_I(jobs[r].rc, 0);
            T_LE(jobs[r].took, LONG_T / 2);              /* the silent one held nothing up */
        }
        done(jobs, 3);
    }

    T_CASE("rendezvous-2.9", "a bad advertised address is refused before anything is sent");
    setup(jobs, 2);
    jobs[1].cfg.data_host = "bad host";
    jobs[1].fixed_port = 1;
    run(jobs + 1, 1);
    T_EQ_I(jobs[1].rc, ERR_USAGE);
    T_HAS(jobs[1].err, "--advertise");
    done(jobs, 2);

    T_CASE("rendezvous-2.10", "the coordinator's port in use: a clear error on rank 0");
    {
        int lfd, port;
        T_EQ_I(net_listen("127.0.0.1", 0, &lfd, &port, NULL), 0);
        setup(jobs, 2);
        jobs[0].cfg.coord_port = port;
        run(jobs, 1);
        T_TRUE(jobs[0].rc != 0);
        T_HAS(jobs[0].err, "coordinator: listen 127.0.0.1:");
        close(lfd);
        done(jobs, 2);
    }

    return t_done();
}
