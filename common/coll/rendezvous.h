/* rendezvous.h -- how the K ranks of a ring find each other, and nothing
 * about rings (proto.h, MESSAGE FLOW, R1-R2).
 *
 * Rank 0 serves a small coordinator at --coordinator HOST:PORT (port 0:
 * any free port, written to --port-file for the launcher); every other
 * rank connects to it, retrying until --timeout ("coordinator HOST:PORT
 * never appeared"), proves it holds the job's secret (the AUTH handshake,
 * common/wire/auth.h; the coordinator proves it back), and registers its job
 * settings (n, dtype, K, workload, seed, batch) and the address its peers should connect
 * to; the coordinator compares every registration with rank 0's, waits for
 * all K ranks until --timeout after it started, and answers each rank with
 * the table of the K addresses and rank 0's 128-byte blob (the GPU
 * transport's NCCL id; zeros by default), or with one ERROR line that every
 * rank prints: the first disagreement found, or the ranks that never came.
 * Connections that do not pass AUTH are logged and closed without
 * learning anything of the job and without failing it; the others are
 * served.
 *
 * K = 1: no sockets; the table is this rank alone and the blob is copied.
 *
 * OWNERSHIP. rdv_run fills *out; out->peers is malloc'd and freed by
 * rdv_table_free. Nothing else outlives the call: the coordinator and the
 * connection to it are closed before rdv_run returns.
 */
#ifndef RENDEZVOUS_H
#define RENDEZVOUS_H

#include <stdint.h>

#include "wire/auth.h"
#include "wire/proto.h"

struct rdv_cfg {
    int rank, world;
    struct proto_hello hello;    /* this rank's job; must agree on every rank */
    const char *coord_host;      /* rank 0 binds it, the others connect to it */
    int coord_port;              /* rank 0: 0 binds any free port */
    const char *port_file;       /* rank 0: write the bound port there (NULL: no) */
    const char *data_host;       /* the address peers connect to (--advertise) */
    int data_port;               /* this rank's data listener */
    double timeout;              /* --timeout, seconds, > 0 */
    const struct auth_key *key;  /* the job's secret; NULL: auth_process_key() */
};

struct rdv_table {
    int world;
    struct proto_peer *peers;    /* world entries, rank order; owned */
    uint8_t blob[PROTO_BLOB_SIZE];
    int coord_port;              /* rank 0: the coordinator's port */
};

/* rdv_run: register and wait for the table. blob: rank 0's PROTO_BLOB_SIZE
 * bytes for every rank (NULL: zeros; ignored on other ranks). 0, or
 * ERR_MISMATCH / ERR_TIMEOUT / a net error with one line in err. */
int rdv_run(const struct rdv_cfg *cfg, const void *blob, struct rdv_table *out, char *err);
void rdv_table_free(struct rdv_table *t);

/* rdv_hello_diff: 0 when a and b describe the same job, else ERR_MISMATCH
 * and "n 1000 vs 2000 (--params)"-like words in why (ERR_LEN): the first
 * field that differs, with the flag that sets it. */
int rdv_hello_diff(const struct proto_hello *a, const struct proto_hello *b, char *why);

#endif /* RENDEZVOUS_H */
