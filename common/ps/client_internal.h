/* client_internal.h -- what client.c and client_sync.c share (client.h
 * is the contract): the threads' start and stop, and waking whatever
 * waits on a connection. Not for callers of the client. */
#ifndef PS_CLIENT_INTERNAL_H
#define PS_CLIENT_INTERNAL_H

#include "client.h"

/* client_sync_start: the lock, the conditions, a receiver per server and
 * a pusher per server when S > 1 (client.h, PARALLELISM). */
int client_sync_start(struct ps_client *c, char *err);

/* client_sync_stop: quit, wake and join the threads (SHUT_RDWR on every
 * connection first), free the lock and the conditions. Safe when not
 * started. */
void client_sync_stop(struct ps_client *c);

/* client_shutdown_all: the transport's shutdown(how) on every connection
 * that is up. */
void client_shutdown_all(struct ps_client *c, int how);

#endif /* PS_CLIENT_INTERNAL_H */
