/* auth.h -- who may join a job: the secret, the AUTH handshake, and the
 * gate that keeps strangers from holding a listener.
 *
 * Every psring connection opens with three AUTH frames (proto.h, MESSAGE
 * FLOW A1-A3): a mutual challenge-response, HMAC-SHA256 (libsodium) over
 * both sides' fresh nonces, the direction and the purpose of the
 * connection, under the job's secret. Nothing of the job (HELLO, REGISTER,
 * TABLE) is sent or read before it succeeds. docs/security.md says what
 * this protects and what it does not (no encryption, no per-frame MAC).
 *
 * THE SECRET comes from --secret-file FILE (a common flag; the file must
 * not be readable by group or others) or else the PSRING_SECRET
 * environment variable: AUTH_SECRET_MIN..AUTH_SECRET_MAX bytes of text
 * (trailing blanks and newlines dropped). experiments/launch.sh makes one
 * per job (64 hex digits). Without one a process runs "unkeyed": the
 * handshake runs with an empty key and proves nothing; auth_policy allows
 * that only when every address the process uses is loopback, with one
 * warning line, and refuses it (exit 64) otherwise.
 *
 * THE HANDSHAKE as functions without sockets (struct auth_hs, fuzzed by
 * tests/fuzz_auth.c): the initiator makes A1 (auth_open), the responder
 * answers it with A2 (auth_answer), the initiator checks A2 and makes A3
 * (auth_prove), the responder checks A3 (auth_verify). Each takes a whole
 * frame (header and payload) as bytes and refuses anything else with a
 * reason that names no setting of the job.
 *
 * ON SOCKETS. auth_dial connects and runs the initiator's side, retrying
 * a refused connection or one reset during the handshake until its
 * deadline. auth_gate serves a listener: it accepts, runs the responders
 * of many connections at once under ABSOLUTE deadlines (a trickled byte
 * does not extend them), caps how many may be unauthenticated (a new one
 * evicts the oldest), and hands out only connections that passed. After
 * the handshake the callers' idle-progress timeouts (--timeout) apply.
 *
 * OWNERSHIP. struct auth_key is the caller's (no heap). auth_gate
 * allocates its table in auth_gate_init and frees it, closing every
 * connection it still holds, in auth_gate_close; a connection handed out
 * by auth_gate_next or auth_dial belongs to the caller.
 */
#ifndef AUTH_H
#define AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define AUTH_SECRET_MIN 16
#define AUTH_SECRET_MAX 1024
#define AUTH_FRAME (PROTO_HEADER_SIZE + PROTO_AUTH_SIZE)   /* 112 bytes */
#define AUTH_GATE_CAP 64                /* unauthenticated connections held at once */
#define AUTH_LABEL "psring-auth-2"      /* in every MAC; bump with PROTO_VERSION */

struct auth_key {
    int keyed;                          /* 0: no secret (empty HMAC key) */
    size_t len;
    uint8_t key[AUTH_SECRET_MAX];
};

/* auth_key_load: the secret from file (if not NULL) or else the value of
 * PSRING_SECRET (env; NULL or empty: none). OUT: *k (keyed 0 when there is
 * none). ERR_USAGE with one line in err for an unreadable file, one that
 * group or others may read, or a secret outside AUTH_SECRET_MIN..MAX. */
int auth_key_load(struct auth_key *k, const char *file, const char *env, char *err);

/* auth_key_derive: a key of its own for another use of the secret (the
 * checkpoint's MAC, common/ps/checkpoint.h): HMAC-SHA256(secret, label),
 * so that no MAC made for one use is valid for another (the handshake's
 * MACs are keyed with the secret itself over messages that begin with
 * AUTH_LABEL). k must be keyed. OUT: out[32]. */
void auth_key_derive(const struct auth_key *k, const char *label, uint8_t out[32]);

/* auth_is_loopback: host is 127.0.0.0/8, ::1 or "localhost" (a literal
 * check: a name that resolves to loopback is not trusted to). */
int auth_is_loopback(const char *host);

/* auth_policy: may a process with key k use these hosts (n of them: what
 * it binds and what it connects to)? With a secret, yes; it has one line
 * to say (prog: ...) when it listens on a wildcard or non-loopback
 * address (listen_host, NULL: none). Without one: all loopback gives one
 * warning line and 0; else ERR_USAGE with a line in err naming
 * --secret-file / PSRING_SECRET. The line is said by auth_policy_say, which
 * the program calls once every flag has been checked, just before its
 * first socket: a usage error stays one line. */
void auth_policy_say(void);
int auth_policy(const char *prog, const struct auth_key *k, const char *listen_host,
                const char *const *hosts, int n, char *err);

/* auth_process_key: the key of this process, for code that is handed no
 * key (the ring's TCP transport opens its connections through
 * xport_conn.c without one); unkeyed until auth_process_key_set (main,
 * after auth_policy). The pointer stays valid for the process's life. */
const struct auth_key *auth_process_key(void);
void auth_process_key_set(const struct auth_key *k);

/* ------------------------------------------------------- the handshake */

struct auth_hs {
    const struct auth_key *key;
    uint32_t purpose;                   /* enum proto_auth_purpose */
    uint8_t ni[PROTO_NONCE_SIZE], nr[PROTO_NONCE_SIZE];
    int step;                           /* the next AUTH message expected/made */
};

/* auth_hs_init: a handshake for purpose under key k (kept by pointer). */
void auth_hs_init(struct auth_hs *hs, const struct auth_key *k, uint32_t purpose);

/* auth_open (initiator): A1 into out[AUTH_FRAME], with a fresh Ni. */
void auth_open(struct auth_hs *hs, uint8_t *out);

/* auth_answer (responder): in[0..len) must be A1 of our purpose and
 * keying; OUT: A2 in out[AUTH_FRAME], with a fresh Nr. 0, or an err.h
 * code and why[ERR_LEN]. */
int auth_answer(struct auth_hs *hs, const uint8_t *in, size_t len, uint8_t *out, char *why);

/* auth_prove (initiator): in must be A2 with a right MAC_R; OUT: A3. */
int auth_prove(struct auth_hs *hs, const uint8_t *in, size_t len, uint8_t *out, char *why);

/* auth_verify (responder): in must be A3 with a right MAC_I. 0 when the
 * peer holds the secret (or, unkeyed, spoke the protocol). */
int auth_verify(struct auth_hs *hs, const uint8_t *in, size_t len, char *why);

/* auth_refusal: an ERROR frame that says why and nothing of the job
 * (rank 0, world 1, step 0, aux code). OUT: out (PROTO_HEADER_SIZE +
 * PROTO_TEXT_MAX bytes); returns its length. */
size_t auth_refusal(uint8_t *out, int code, const char *why);

/* --------------------------------------------------------- on sockets */

/* auth_client: the initiator's side on a connected socket fd, by the
 * absolute deadline (clock_now() time). 0; ERR_MISMATCH when the peer
 * refused us or failed its proof (err says which); ERR_TIMEOUT,
 * ERR_EOF, -ECONNRESET ... for the transport (auth_retryable). */
int auth_client(int fd, const struct auth_key *k, uint32_t purpose, double deadline,
                const char *peer, char *err);

/* auth_server: the responder's side on one accepted socket fd, by the
 * absolute deadline: for tests and one-connection servers (a listener
 * with strangers at it wants auth_gate). A refusal is sent as ERROR. 0 or
 * the code, with a line in err. */
int auth_server(int fd, const struct auth_key *k, uint32_t purpose, double deadline,
                const char *peer, char *err);

/* auth_retryable: a failure of the connection itself (reset, closed), one
 * a dialler tries again within its deadline. */
int auth_retryable(int rc);

/* auth_dial: net_connect to host:port, then auth_client, both retried
 * (refusals by net_connect, resets and closes in the handshake) until
 * timeout_s from now. OUT: *fd. err: one line naming peer. */
int auth_dial(const char *host, int port, const struct auth_key *k, uint32_t purpose,
              double timeout_s, int *fd, const char *peer, char *err);

struct auth_gate_conn;

struct auth_gate {
    int lfd;
    const struct auth_key *key;
    uint32_t purpose;
    double timeout;                     /* each connection's pre-AUTH deadline */
    const char *what;                   /* "the data port", for log lines */
    int cap, n;
    struct auth_gate_conn *c;           /* cap entries; n in use, oldest first */
    uint64_t refused, evicted;          /* counters, for tests and logs */
};

/* auth_gate_init: serve listener lfd (not owned). ERR_USAGE-free: only
 * -ENOMEM. what names the listener in log lines. */
int auth_gate_init(struct auth_gate *g, int lfd, const struct auth_key *k, uint32_t purpose,
                   double timeout, int cap, const char *what);

/* auth_gate_next: accept and authenticate until one connection has passed
 * A3 or the absolute deadline. OUT: *fd (the caller's), peer
 * (NET_ADDR_LEN). ERR_TIMEOUT at the deadline (err untouched); another
 * error with a line in err. Refused connections are logged ("refused a
 * connection from ADDR on WHAT: why") and closed. */
int auth_gate_next(struct auth_gate *g, double deadline, int *fd, char *peer, char *err);

/* auth_gate_close: close what the gate still holds, free its table. */
void auth_gate_close(struct auth_gate *g);

#endif /* AUTH_H */
