/* auth_internal.h -- what the handshake (auth.c) gives the gate
 * (auth_net.c) and no one else needs. (auth.h is the interface; this is
 * the internal header.)
 */
#ifndef AUTH_INTERNAL_H
#define AUTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "auth.h"

/* auth_frame_take: in[0..len) as AUTH message `step` of hs's purpose and
 * keying, into *a. ERROR frames are the caller's to read; here they are
 * refusals. 0, or a negative err.h code with the reason in why (ERR_LEN
 * bytes, may be NULL): the gate calls it on a bare header for the reason
 * alone. */
int auth_frame_take(const struct auth_hs *hs, const uint8_t *in, size_t len, uint64_t step,
                    struct proto_auth *a, char *why);

#endif /* AUTH_INTERNAL_H */
