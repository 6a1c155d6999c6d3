/* auth_secret.c -- the job's secret (auth.h, THE SECRET): read from
 * --secret-file or PSRING_SECRET and checked (auth_key_load), the
 * process's own key, and the policy that allows running without one only
 * on loopback (auth_policy).
 */
#include "auth.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/infile.h"

/* ------------------------------------------------------------ the secret */

int auth_key_load(struct auth_key *k, const char *file, const char *env, char *err)
{
    char buf[AUTH_SECRET_MAX + 2];
    const char *src = file ? file : "PSRING_SECRET";
    size_t n = 0;

    memset(k, 0, sizeof *k);
    if (file) {
        struct stat st;
        int rc;
        /* A FIFO, a device or a folder: refused before a byte is read
         * (infile.h); a FIFO is never waited on. */
        FILE *f = infile_fopen("--secret-file", file, &rc, err);
        if (!f)
            return ERR_USAGE;
        if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077) != 0) {
            fclose(f);
            err_say(err, "--secret-file: '%s' may be read by group or others (mode %03o); "
                "chmod 600 it", file, (unsigned)(st.st_mode & 0777));
            return ERR_USAGE;
        }
        n = fread(buf, 1, sizeof buf, f);
        fclose(f);
    } else if (env && *env) {
        n = strlen(env);
        if (n > sizeof buf)
            n = sizeof buf;
        memcpy(buf, env, n);
    } else {
        return 0;               /* no secret: unkeyed */
    }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
                     buf[n - 1] == '\t'))
        n--;
    if (n < AUTH_SECRET_MIN || n > AUTH_SECRET_MAX) {
        err_say(err, "%s: the secret must be %d to %d bytes (this one: %s%zu); e.g. 64 hex "
            "digits from /dev/urandom", src, AUTH_SECRET_MIN, AUTH_SECRET_MAX,
            n > AUTH_SECRET_MAX ? "over " : "", n > AUTH_SECRET_MAX ? (size_t)AUTH_SECRET_MAX : n);
        sodium_memzero(buf, sizeof buf);
        return ERR_USAGE;
    }
    memcpy(k->key, buf, n);
    k->len = n;
    k->keyed = 1;
    sodium_memzero(buf, sizeof buf);
    return 0;
}

void auth_key_derive(const struct auth_key *k, const char *label, uint8_t out[32])
{
    crypto_auth_hmacsha256_state st;

    crypto_auth_hmacsha256_init(&st, k->key, k->len);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)label, strlen(label));
    crypto_auth_hmacsha256_final(&st, out);
    sodium_memzero(&st, sizeof st);
}

static struct auth_key process_key;     /* unkeyed until set */

const struct auth_key *auth_process_key(void)
{
    return &process_key;
}

void auth_process_key_set(const struct auth_key *k)
{
    process_key = *k;
}

int auth_is_loopback(const char *host)
{
    if (!host || !*host)
        return 1;               /* net.h: no host is 127.0.0.1 */
    if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
        strcmp(host, "[::1]") == 0)
        return 1;
    /* 127.d.d.d */
    if (strncmp(host, "127.", 4) == 0) {
        int dots = 0;
        for (const char *p = host + 4; *p; p++) {
            if (*p == '.')
                dots++;
            else if (*p < '0' || *p > '9')
                return 0;
        }
        return dots == 2;
    }
    return 0;
}

static char notice[320];        /* auth_policy's line, said by auth_policy_say */

void auth_policy_say(void)
{
    if (notice[0])
        fputs(notice, stderr);
    notice[0] = '\0';
}

int auth_policy(const char *prog, const struct auth_key *k, const char *listen_host,
                const char *const *hosts, int n, char *err)
{
    const char *outside = NULL;

    if (listen_host && !auth_is_loopback(listen_host))
        outside = listen_host;
    for (int i = 0; i < n && !outside; i++)
        if (hosts[i] && !auth_is_loopback(hosts[i]))
            outside = hosts[i];
    if (k->keyed) {
        if (listen_host && !auth_is_loopback(listen_host))
            snprintf(notice, sizeof notice, "%s: listening on %s: reachable beyond this "
                     "machine; only processes with the job's secret are let in\n", prog,
                     *listen_host ? listen_host : "*");
        return 0;
    }
    if (outside) {
        err_say(err, "%s is not a loopback address: the job needs a secret "
            "(--secret-file FILE or PSRING_SECRET)", outside);
        return ERR_USAGE;
    }
    snprintf(notice, sizeof notice, "%s: warning: no secret (--secret-file, PSRING_SECRET): "
             "running unauthenticated on loopback\n", prog);
    return 0;
}
