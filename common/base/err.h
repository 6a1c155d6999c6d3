/* err.h -- psring's error codes and the one function that names them.
 *
 * Every function in common/ that can fail returns an int: 0 for success, a
 * negative code otherwise. Codes from -1 to -4095 are negative errno values
 * (the convention libuv uses), so a system call's failure passes through
 * unchanged as -errno; psring's own codes live below ERR_BASE. err_str()
 * turns either kind into text. Functions that talk to a peer also fill a
 * caller's message buffer (char err[ERR_LEN]) with one line naming the peer,
 * the way Redis's anet does; the code says what, the line says where.
 */
#ifndef ERR_H
#define ERR_H

#include <stddef.h>
#include <stdint.h>

#define ERR_LEN 256     /* size of a caller's message buffer */

enum err_code {
    ERR_BASE = -10000,
    ERR_USAGE = ERR_BASE,   /* bad command-line value (exit status 64) */
    ERR_TIMEOUT,            /* no progress within the idle timeout */
    ERR_EOF,                /* the peer closed the connection */
    ERR_RESOLVE,            /* a host name that does not resolve */
    ERR_PROTO_MAGIC,        /* frame: wrong magic */
    ERR_PROTO_VERSION,      /* frame: unsupported version */
    ERR_PROTO_TYPE,         /* frame: unknown message type */
    ERR_PROTO_LENGTH,       /* frame: payload longer than the cap */
    ERR_PROTO_SIZE,         /* frame: payload size wrong for its type */
    ERR_PROTO_RANK,         /* frame: rank >= world */
    ERR_PROTO_WORLD,        /* frame: world 0, too large, or not ours */
    ERR_PROTO_FIELD,        /* frame: a payload field out of range */
    ERR_NONFINITE,          /* NaN or Inf where a finite number belongs */
    ERR_MISMATCH,           /* peers disagree on n, dtype, K or workload */
    ERR_FORMAT,             /* a file (record, CSV) that does not parse */
    ERR_LAST
};

/* err_str: a static string for any code (never NULL, never freed). */
const char *err_str(int code);

/* err_say: the printf-style one-line reason into err[ERR_LEN] (truncated
 * to fit; control bytes, a newline among them, become '?'); nothing when
 * err is NULL. What every module's failures use. */
__attribute__((format(printf, 2, 3)))
void err_say(char *err, const char *fmt, ...);

/* err_sayn: snprintf into buf[len] for a message that a long peer name or
 * path may cut (the cut is wanted: -Wformat-truncation is not told). No
 * control-byte scrub: the caller's pieces are its own or already scrubbed. */
__attribute__((format(printf, 3, 4)))
void err_sayn(char *buf, size_t len, const char *fmt, ...);

/* ull: a uint64_t for a %llu in a message. One cast, said once; the
 * messages read better with %llu than with PRIu64's string pasting. */
static inline unsigned long long ull(uint64_t x)
{
    return (unsigned long long)x;
}

#endif /* ERR_H */
