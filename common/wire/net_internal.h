/* net_internal.h -- what net.c, net_xfer.c and net_vt.c share and no one else
 * needs. (net.h is the interface; this is the internal header.)
 */
#ifndef NET_INTERNAL_H
#define NET_INTERNAL_H

#include <poll.h>

/* net_wait_until: ppoll fds (n may be 0) until the absolute time `until`
 * on clock_now()'s scale (INFINITY: no limit). Returns ppoll's count, 0 on
 * timeout or signal, or a negative errno. */
int net_wait_until(struct pollfd *fds, nfds_t n, double until);

/* net_vt.c: what a thread did between its paced transfers, for the
 * emulated link's timeline (link.h, OWN CORES AND THE VIRTUAL TIMELINE;
 * net.h: net_queued_s, net_forward_cpu_s). net_vt_block: the thread is
 * about to block in a paced transfer; last: every direction of it is on
 * its last piece (the wait may be the transfer's last: the run delay is
 * read now; otherwise it is read once, at the end of the transfer,
 * net_vt_xfer_end, if no wait on a last piece came after: a pread per
 * transfer, not per wait); net_vt_waited: it blocked s seconds;
 * net_vt_read_done: it finished reading a frame's last bytes (or a
 * frameless paced receive) at now. */
void net_vt_block(int last);
void net_vt_xfer_end(void);
void net_vt_waited(double s);
void net_vt_read_done(double now);

#endif /* NET_INTERNAL_H */
