/* setup.c -- bin/ring_worker's set-up (setup.h says what and why). */
#include "setup.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "coll/a2a.h"
#include "wire/auth.h"
#include "coll/coll.h"
#include "base/err.h"
#include "gpu.h"
#include "base/log.h"
#include "wire/net.h"
#include "coll/hring.h"
#include "coll/rabenseifner.h"
#include "coll/swing.h"
#include "coll/rd.h"
#include "coll/rendezvous.h"
#include "coll/ring.h"
#include "coll/tree.h"
#include "coll/xport_tcp.h"


/* prefix: put PRE before what err says (one line; truncated quietly). */
static void prefix(char *err, const char *pre)
{
    char why[ERR_LEN];

    snprintf(why, sizeof why, "%s", err);
    err_say(err, "%s%s", pre, why);
}

/* The peer tables a host rank may open, as the rendezvous blob names them
 * (with NCCL the blob carries the communicator's id instead): zeros for the
 * ring's, a tag for the others, so that a rank that would open another
 * table fails at once, naming the flag, instead of waiting for
 * connections that never come. */
enum { TABLE_RING, TABLE_RD, TABLE_MESH, TABLE_RAB, TABLE_TREE, TABLE_DBTREE, TABLE_SWING_LAT,
       TABLE_SWING_BW, TABLE_STUDENT, TABLE_HRING, TABLES };
static const char *const table_tag[TABLES] = { "", "psring --algo rd", "psring --coll alltoall",
                                               "psring --algo rabenseifner", "psring --algo tree",
                                               "psring --algo dbtree", "psring --algo swing-lat",
                                               "psring --algo swing-bw", "psring --algo student",
                                               "psring --algo hring" };
static const char *const table_flags[TABLES] = {
    "--algo ring", "--algo rd", "--coll alltoall", "--algo rabenseifner", "--algo tree",
    "--algo dbtree", "--algo swing-lat", "--algo swing-bw", "--algo student", "--algo hring",
};

static int table_of(const struct setup_cfg *s)
{
    return s->algo == COLL_RD ? TABLE_RD : s->algo == COLL_RABENSEIFNER ? TABLE_RAB
         : s->algo == COLL_TREE ? TABLE_TREE : s->algo == COLL_DBTREE ? TABLE_DBTREE
         : s->algo == COLL_SWING_LAT ? TABLE_SWING_LAT : s->algo == COLL_SWING_BW ? TABLE_SWING_BW
         : s->algo == COLL_STUDENT ? TABLE_STUDENT : s->algo == COLL_HRING ? TABLE_HRING
         : s->op == COLL_ALLTOALL ? TABLE_MESH : TABLE_RING;
}

/* algo_blob: the table's tag; the hierarchical ring's with its G (group),
 * whose peer table depends on it. */
static void algo_blob(int table, int group, unsigned char *blob)
{
    memset(blob, 0, PROTO_BLOB_SIZE);
    if (table == TABLE_HRING)
        snprintf((char *)blob, PROTO_BLOB_SIZE, "%s --ranks-per-host %d", table_tag[table], group);
    else
        memcpy(blob, table_tag[table], strlen(table_tag[table]));
}

/* algo_check: this rank's peer table against rank 0's, from the table's blob. */
static int algo_check(int table, int group, const unsigned char *blob, char *err)
{
    unsigned char mine[PROTO_BLOB_SIZE];
    char theirs[64], ours[64];
    int t0 = TABLE_RING, g = 0;

    algo_blob(table, group, mine);
    if (memcmp(mine, blob, PROTO_BLOB_SIZE) == 0)
        return 0;
    for (int t = 0; t < TABLES; t++) {
        algo_blob(t, 0, mine);
        if (memcmp(mine, blob, PROTO_BLOB_SIZE) == 0)
            t0 = t;
    }
    snprintf(theirs, sizeof theirs, "%s", table_flags[t0]);
    if (blob[PROTO_BLOB_SIZE - 1] == 0 &&
        sscanf((const char *)blob, "psring --algo hring --ranks-per-host %d", &g) == 1)
        snprintf(theirs, sizeof theirs, "--algo hring --ranks-per-host %d", g);
    snprintf(ours, sizeof ours, "%s", table_flags[table]);
    if (table == TABLE_HRING)
        snprintf(ours, sizeof ours, "--algo hring --ranks-per-host %d", group);
    err_say(err, "rank 0 runs %s, this rank %s: every rank must run the same one", theirs, ours);
    return ERR_MISMATCH;
}

/* adopt_algo: the all-reduce whose peer table rank 0's blob names (--algo
 * auto on a rank > 0: rank 0 chose it). */
static int adopt_algo(const unsigned char *blob, int *algo, char *err)
{
    unsigned char theirs[PROTO_BLOB_SIZE];

    for (int a = 0; a < COLL_ALGOS; a++) {
        struct setup_cfg t = { .algo = a, .op = COLL_ALL_REDUCE };
        algo_blob(table_of(&t), 0, theirs);     /* hring (G in its blob) is never chosen */
        if (memcmp(theirs, blob, PROTO_BLOB_SIZE) == 0) {
            *algo = a;
            return 0;
        }
    }
    err_say(err, "--algo auto: rank 0 runs no all-reduce this rank can take (--coll alltoall?)");
    return ERR_MISMATCH;
}

/* setup_gpu: the GPU of this local rank, and with NCCL on rank 0 the
 * communicator's id (for the rendezvous to carry to the others). */
int setup_gpu(int kind, const struct cli_common *c, unsigned char *nccl_id, char *err)
{
    char desc[160];
    int dev = 0, rc;

    if ((rc = gpu_device_select(c->local_rank, &dev, err)) != 0) {
        prefix(err, kind == COLL_NCCL ? "--transport nccl: " : "--device cuda: ");
        return rc;
    }
    if (gpu_device_describe(desc, sizeof desc, NULL) != 0)
        snprintf(desc, sizeof desc, "%d", dev);
    log_msg("GPU %s (local rank %d), %s", desc, c->local_rank, gpu_build_info());
    if (kind == COLL_NCCL && c->rank == 0 && (rc = gpu_nccl_unique_id(nccl_id, err)) != 0)
        prefix(err, "--transport nccl: ");
    return rc;
}

/* nccl_fit: NCCL needs a GPU per rank: refuse, before NCCL starts, more
 * ranks on this host than it has GPUs (coll_local_ranks says how the
 * ranks on this host are counted). */
static int nccl_fit(const struct cli_common *c, const struct proto_peer *peers, char *err)
{
    const char *source;
    int local_rank, local_ranks, devices = 0, rc;

    coll_local_ranks(peers, c->world, c->rank, c->local_rank, &local_rank, &local_ranks,
                     &source);
    if ((rc = gpu_device_count(&devices, err)) != 0)
        return rc;
    if ((rc = gpu_nccl_fit(local_rank, local_ranks, devices, err)) != 0) {
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        err_say(err, "%s (local ranks counted from %s)", why, source);
    }
    return rc;
}

/* open_xport: the TCP transport with the algorithm's peer table. */
static int open_xport(const struct setup_cfg *s, int lfd, const struct proto_peer *peers,
                      struct xport **x, char *err)
{
    struct xport_plan plan;
    struct xport_tcp_cfg xc = {
        .rank = s->c->rank, .world = s->c->world, .lfd = lfd, .peers = peers, .plan = &plan,
        .hello = s->hello, .link = s->link, .timeout = s->c->timeout,
    };

    if (s->algo == COLL_RD)
        rd_plan(s->c->rank, s->c->world, &plan);
    else if (s->algo == COLL_RABENSEIFNER)
        rab_plan(s->c->rank, s->c->world, &plan);
    else if (s->algo == COLL_HRING)
        hring_plan(s->c->rank, s->c->world, s->group, &plan);
    else if (s->algo == COLL_TREE || s->algo == COLL_DBTREE)
        tree_plan(s->c->rank, s->c->world, s->algo == COLL_TREE ? 1 : 2, &plan);
    else if (s->algo == COLL_STUDENT)
        student_plan(s->c->rank, s->c->world, &plan);
    else if (s->algo == COLL_SWING_LAT || s->algo == COLL_SWING_BW)
        swing_plan(s->c->rank, s->c->world, &plan);
    else if (s->op == COLL_ALLTOALL)
        a2a_plan(s->c->rank, s->c->world, &plan);  /* the mesh also carries ring steps */
    else
        ring_plan(s->c->rank, s->c->world, &plan);
    return xport_tcp_open(x, &xc, err);
}

int setup_connect(const struct setup_cfg *s, unsigned char *nccl_id, struct xport **x, char *err)
{
    const struct cli_common *c = s->c;
    unsigned char blob[PROTO_BLOB_SIZE];
    struct rdv_table table;
    struct rdv_cfg rc_cfg;
    int lfd = -1, data_port = 0, rc;

    *x = NULL;
    if (c->world == 1)
        return s->kind == COLL_NCCL ? nccl_fit(c, NULL, err) : 0;
    auth_policy_say();          /* every flag is checked: the secret's line now */
    if ((rc = net_listen(s->listen_host, 0, &lfd, &data_port, err)) != 0)
        return rc;
    memset(&rc_cfg, 0, sizeof rc_cfg);
    rc_cfg.rank = c->rank;
    rc_cfg.world = c->world;
    rc_cfg.hello = s->hello;
    rc_cfg.coord_host = s->coord_host;
    rc_cfg.coord_port = s->coord_port;
    rc_cfg.port_file = c->rank == 0 ? s->port_file : NULL;
    rc_cfg.data_host = s->adv_host;
    rc_cfg.data_port = data_port;
    rc_cfg.timeout = c->timeout;
    algo_blob(table_of(s), s->group, blob);
    rc = rdv_run(&rc_cfg, s->kind == COLL_NCCL ? nccl_id : blob, &table, err);
    if (rc == 0) {
        if (s->kind == COLL_NCCL) {
            memcpy(nccl_id, table.blob, GPU_NCCL_ID_BYTES);
            rc = nccl_fit(c, table.peers, err);
        } else if (s->adopt) {
            struct setup_cfg own = *s;
            if ((rc = adopt_algo(table.blob, &own.algo, err)) == 0 &&
                (rc = open_xport(&own, lfd, table.peers, x, err)) == 0)
                *s->adopt = own.algo;
        } else if ((rc = algo_check(table_of(s), s->group, table.blob, err)) == 0) {
            rc = open_xport(s, lfd, table.peers, x, err);
        }
        rdv_table_free(&table);
    }
    close(lfd);
    return rc;
}
