/* log.c -- prefixed diagnostics on stderr (see log.h). One fprintf per
 * line, so lines of processes sharing a terminal do not interleave. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

static const char *log_role = "psring";
static int log_rank = -1;
static void (*log_fn)(const char *msg);

void log_sink(void (*fn)(const char *msg))
{
    log_fn = fn;
}

void log_init(const char *role, int rank)
{
    log_role = role;
    log_rank = rank;
}

void log_msg(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_fn)
        log_fn(msg);
    else if (log_rank >= 0)
        fprintf(stderr, "%s[%d]: %s\n", log_role, log_rank, msg);
    else
        fprintf(stderr, "%s: %s\n", log_role, msg);
}
