/* log.h -- diagnostics on stderr, each line prefixed with role and rank.
 *
 *     ring_worker[3]: lost rank 2 (127.0.0.1:40112): connection closed
 *
 * Results never go through here: they go to stdout or a file.
 */
#ifndef LOG_H
#define LOG_H

/* log_init: the prefix for this process; rank < 0 prints no rank. The role
 * string must live as long as the process (a literal or argv[0]). */
void log_init(const char *role, int rank);

__attribute__((format(printf, 1, 2))) void log_msg(const char *fmt, ...);

/* log_sink: from now on each line (without prefix) goes to fn instead of
 * stderr; NULL: stderr again. bin/psring_sim runs the parameter server's
 * protocol in its server actors and keeps their lines (sim/ps_server.c). */
void log_sink(void (*fn)(const char *msg));

#endif /* LOG_H */
