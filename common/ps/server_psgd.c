/* server_psgd.c -- POWERSGD PUSHES at the server's event loop (store.h;
 * the rounds: psgd_server.h). A step is three writes to every worker
 * instead of one: round 0's sum (P and the raw elements), round 1's sum
 * (Q), then the weights. The sums go through the egress exactly as the
 * weights do (round-robin pieces, paced on the emulated link, headers
 * charged): a WEIGHTS frame of the round's elements, step s, aux the
 * range's first element, which the worker expects in that place of the
 * step (common/ps/client_psgd.c). The egress's n is the round's count
 * while it goes out, and the range's again after it.
 */
#include "server.h"

#include <assert.h>

#include "base/log.h"
#include "ps/egress.h"
#include "ps/store.h"

int server_psgd_release(struct server *srv)
{
    const void *sum = NULL;
    size_t count = 0;
    char err[ERR_LEN];
    int round = 0, rc;
    double now;

    rc = store_psgd_reply(&srv->store, &sum, &count, &round, err);
    if (rc < 0) {
        run_fail(srv, NULL, rc, err);
        return 1;
    }
    if (rc == 0)
        return 0;
    assert(!egress_active(&srv->eg));  /* the round before is written to all */
    now = srv->io->now(srv);
    srv->psgd_reply = round + 1;
    srv->psgd_n = srv->eg.n;
    srv->eg.n = count;
    srv->sending = store_step(&srv->store);
    srv->wbuf = sum;
    egress_release(&srv->eg, count, now);
    for (uint32_t r = 0; r < srv->k; r++) {
        assert(srv->by_rank[r]);        /* every rank pushed the round */
        srv->by_rank[r]->ses.pulling = 1;
    }
    server_egress_pump(srv);
    return 1;
}

void server_psgd_sent(struct server *srv)
{
    srv->psgd_reply = 0;
    srv->eg.n = srv->psgd_n;
}
