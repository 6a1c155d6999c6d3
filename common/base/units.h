/* units.h -- the strict value parsers every flag goes through (units.c).
 *
 * UNITS (docs/design.md): sizes "4096", "4K", "64M", "1G", "4KiB", "64MiB",
 * "1GiB" are powers of 1024; rates "500Mbit", "1Gbit" (10^6/10^9 bits/s),
 * "100MB", "1GB" (10^6/10^9 bytes/s), "100MiB", "1GiB" (2^20/2^30 bytes/s),
 * each optionally followed by "/s", a bare number being bytes/s; times
 * "50us", "2ms", "1.5s", a bare number being seconds. Anything else
 * ("abc", "10abc", " 5", "5 ", negative, overflowing) is refused.
 * CASE: sizes also take k/m/g/t (as nccl-tests) and T/TiB, never "MB"
 * (a size is 1024-based, so "64MB" is refused as ambiguous); rates also
 * take tc's kbit/mbit/gbit and "B", but "M", "Mb", "Mbps" are refused as
 * ambiguous (bits or bytes). Sizes are whole numbers; rates and times may
 * be fractional and take an exponent ("1.5Gbit", "0.5ms", "1e9").
 *
 * Each parser returns 0 and writes *out, or returns ERR_USAGE, leaves *out
 * alone and writes one line quoting the value into err (ERR_LEN bytes).
 * They keep the cli_ prefix: they are the command line's, and cli.h
 * includes this header (the fuzz target calls them too).
 */
#ifndef UNITS_H
#define UNITS_H

#include <stdint.h>

int cli_parse_ll(const char *s, long long min, long long max, long long *out, char *err);
int cli_parse_u64(const char *s, uint64_t *out, char *err);
int cli_parse_size(const char *s, uint64_t *out, char *err);
int cli_parse_rate(const char *s, double *out, char *err);
int cli_parse_time(const char *s, double *out, char *err);
int cli_parse_double(const char *s, double *out, char *err);
/* "w0,w1,...": positive finite weights. OUT: malloc'd array (caller frees);
 * -ENOMEM when it cannot be had. */
int cli_parse_list(const char *s, double **out, int *n, char *err);

#endif /* UNITS_H */
