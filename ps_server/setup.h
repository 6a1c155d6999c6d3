/* setup.h -- bin/ps_server's set-up (setup.c): the server's state
 * (common/ps/server.h) built from the parsed flags before the loop
 * starts, and freed after it returns. No libuv here.
 */
#ifndef SETUP_H
#define SETUP_H

#include "ps/server.h"

/* setup_server: everything the loop needs, from the parsed flags f (moved
 * in): the workload's slice, the store, the egress schedule, the clocks,
 * the record. A bad combination of flags exits 64 (flags_fail); 0, or -1
 * after logging why (out of memory). */
int setup_server(struct server *srv, const struct server_flags *f, double now);
/* setup_announce: the "listening on ..." line. */
void setup_announce(const struct server *srv, int bound);
void setup_destroy(struct server *srv);

#endif /* SETUP_H */
