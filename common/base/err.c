/* err.c -- the text of psring's error codes (see err.h). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {
    [ERR_USAGE - ERR_BASE] = "bad usage",
    [ERR_TIMEOUT - ERR_BASE] = "timed out waiting for progress",
    [ERR_EOF - ERR_BASE] = "connection closed by peer",
    [ERR_RESOLVE - ERR_BASE] = "host does not resolve",
    [ERR_PROTO_MAGIC - ERR_BASE] = "bad frame magic (not a psring peer)",
    [ERR_PROTO_VERSION - ERR_BASE] = "unsupported protocol version",
    [ERR_PROTO_TYPE - ERR_BASE] = "unknown message type",
    [ERR_PROTO_LENGTH - ERR_BASE] = "frame payload exceeds the length cap",
    [ERR_PROTO_SIZE - ERR_BASE] = "frame payload size wrong for its type",
    [ERR_PROTO_RANK - ERR_BASE] = "frame rank out of range",
    [ERR_PROTO_WORLD - ERR_BASE] = "frame world size invalid or mismatched",
    [ERR_PROTO_FIELD - ERR_BASE] = "frame field out of range",
    [ERR_NONFINITE - ERR_BASE] = "NaN or Inf value",
    [ERR_MISMATCH - ERR_BASE] = "peers disagree on the job's shape",
    [ERR_FORMAT - ERR_BASE] = "malformed file",
};

const char *err_str(int code)
{
    if (code == 0)
        return "success";
    if (code < 0 && code > -4096)
        return strerror(-code);
    if (code >= ERR_BASE && code < ERR_LAST && names[code - ERR_BASE])
        return names[code - ERR_BASE];
    return "unknown error";
}

void err_say(char *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
    /* One line whatever went in (a path or a peer's text may hold a
     * newline or a terminal escape): control bytes become '?'. */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

void err_sayn(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}
