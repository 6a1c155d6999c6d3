/* client_io.c -- the worker client's transport on TCP sockets
 * (client.h, THE TRANSPORT AND THE THREADS): what bin/ps_worker's
 * connections are. A connection is k->fd; its bytes go through net.h's
 * calls and, but for PS_IO_UNPACED, the connection's emulated link
 * (k->link, which paces them and counts them). PS_IO_MORE and
 * PS_IO_ELEMENTS change nothing on a socket: the kernel's buffer already
 * joins writes, and every byte is real.
 */
#include "client.h"

#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "wire/auth.h"
#include "wire/net.h"

static int tcp_dial(void *ctx, struct ps_conn *k, char *why)
{
    struct ps_client *c = k->owner;
    int rc;

    (void)ctx;
    rc = auth_dial(k->host, k->port, c->key, PROTO_AUTH_PS, c->timeout, &k->fd, k->name, why);
    if (rc != 0)
        k->fd = -1;
    return rc;
}

static int tcp_send(void *ctx, struct ps_conn *k, const void *buf, size_t len, double idle,
                    int flags, char *why)
{
    (void)ctx;
    return net_send_all(k->fd, buf, len, flags & PS_IO_UNPACED ? NULL : &k->link, idle,
                        k->name, why);
}

static int tcp_recv(void *ctx, struct ps_conn *k, void *buf, size_t len, double idle,
                    int flags, char *why)
{
    (void)ctx;
    return net_recv_frame(k->fd, buf, len, flags & PS_IO_UNPACED ? NULL : &k->link, idle,
                          flags & PS_IO_FRAME ? &k->rframe : NULL, k->name, why);
}

static void tcp_shutdown(void *ctx, struct ps_conn *k, int how)
{
    (void)ctx;
    if (k->fd >= 0)
        (void)shutdown(k->fd, how);
}

static void tcp_close(void *ctx, struct ps_conn *k)
{
    (void)ctx;
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
}

static double tcp_now(void *ctx)
{
    (void)ctx;
    return clock_now();
}

/* tcp_own_end (client.h, OWN TIMELINE): a paced receive ended when its
 * last bytes were in (link_in_ready: the link released them) plus the
 * CPU this thread used since, if it did nothing but compute and wait for
 * a CPU since (net_forward_cpu_s); otherwise (the unpaced connection to
 * the server on this host) now less the thread's wait for a CPU since it
 * last slept in a transfer. Never later than now. */
static double tcp_own_end(void *ctx, struct ps_conn *k)
{
    double now = clock_now(), ready = link_in_ready(&k->link), cpu = net_forward_cpu_s(now);

    (void)ctx;
    if (link_active(&k->link) && cpu >= 0.0 && ready <= now)
        return ready + cpu < now ? ready + cpu : now;
    return now - net_queued_s();
}

const struct ps_client_io ps_client_io_tcp = {
    tcp_dial, tcp_send, tcp_recv, tcp_shutdown, tcp_close, tcp_now, tcp_own_end,
};
