/* frames.h -- one connection of the worker's client (client.h): the
 * frames it sends and receives, checked, and the failures named, through
 * the client's transport table (client.h, struct ps_client_io). Used by
 * client.c and client_sync.c only; no state of its own (everything is in
 * struct ps_conn and its struct ps_client).
 *
 * Every function returns 0 or a negative err.h code with one line in
 * err[ERR_LEN] that starts with ctx ("hello", "step 7") and names the
 * server (k->name). An ERROR frame from the server is read and its text
 * reported, its code returned.
 */
#ifndef PS_FRAMES_H
#define PS_FRAMES_H

#include <stdint.h>

#include "client.h"

/* How long a failed send looks for the ERROR frame that explains it (it is
 * normally in the socket already); ps_client_abort's sends are bounded by
 * it too. */
#define FRAMES_LATE_ERROR_S 0.5

/* The wait for each WEIGHTS header is FRAMES_PULL_IDLE_FACTOR x --timeout
 * (frames.c, PULL WAIT). */
#define FRAMES_PULL_IDLE_FACTOR 1.5

/* The count and loss of a push that carries none. */
extern const struct proto_push_meta frames_no_meta;

/* frames_expect: the next frame from server k is `type`, sent by a server,
 * with `length` payload bytes, for `step` and `aux` (these two not checked
 * for WELCOME), waiting up to `idle` seconds without progress. Its payload
 * is left in the socket. */
int frames_expect(struct ps_conn *k, const char *ctx, double idle, uint16_t type,
                  uint64_t step, uint64_t aux, uint64_t length, char *err);

/* frames_send_head: a header for server k, followed by the first `extra`
 * bytes already placed after it in k->out, in one write. */
int frames_send_head(struct ps_conn *k, const char *ctx, uint16_t type, uint64_t step,
                     uint64_t aux, uint64_t length, size_t extra, char *err);

/* frames_push: push to server k the part of elements [first, first +
 * count) of grad it owns (nothing when none), for `step`; *meta with the
 * part that ends at the server's last element (the first push of a pass,
 * common/ps/store.h BUCKETS), frames_no_meta with the others. */
int frames_push(struct ps_conn *k, uint64_t step, const struct proto_push_meta *meta,
                const unsigned char *grad, uint64_t first, uint64_t count, char *err);

/* frames_receive: step `step`'s WEIGHTS parts from server k into `into`
 * (n elements; its range filled), from the top of the range down, until
 * the range is whole. *told: the failure is the server's ERROR frame.
 * A NaN or Inf weight received: ERR_NONFINITE naming the server and the
 * element (the caller copies nothing into the caller's weights then). */
int frames_receive(struct ps_conn *k, uint64_t step, unsigned char *into, int *told,
                   char *err);

#endif /* PS_FRAMES_H */
