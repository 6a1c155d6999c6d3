/* net_internal.h -- what net.c and net_xfer.c share and no one else
 * needs. (net.h is the interface; this is the internal header.)
 */
#ifndef NET_INTERNAL_H
#define NET_INTERNAL_H

#include <poll.h>

/* net_wait_until: ppoll fds (n may be 0) until the absolute time `until`
 * on clock_now()'s scale (INFINITY: no limit). Returns ppoll's count, 0 on
 * timeout or signal, or a negative errno. */
int net_wait_until(struct pollfd *fds, nfds_t n, double until);

#endif /* NET_INTERNAL_H */
