/* test_auth.c -- common/wire/auth.c: the AUTH handshake as functions (right
 * and wrong secrets, a replayed answer, a reflected proof, keying and
 * purpose mismatches, frames out of place), the secret's sources, the
 * loopback policy, the gate under strangers (trickle, slot exhaustion),
 * and the handshake's cost on a real loopback connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wire/auth.h"
#include "check.h"
#include "base/clock.h"
#include "base/err.h"
#include "wire/net.h"
#include "wire/proto.h"

static struct auth_key key_a, key_b, no_key;

/* handshake: the three frames between an initiator with ki and a
 * responder with kr, for purposes pi and pr. Returns 0 when both sides
 * accept, else the first refusal's code, its reason in why. */
static int handshake(const struct auth_key *ki, uint32_t pi, const struct auth_key *kr,
                     uint32_t pr, char *why)
{
    struct auth_hs i, r;
    uint8_t a1[AUTH_FRAME], a2[AUTH_FRAME], a3[AUTH_FRAME];
    int rc;

    auth_hs_init(&i, ki, pi);
    auth_hs_init(&r, kr, pr);
    auth_open(&i, a1);
    if ((rc = auth_answer(&r, a1, sizeof a1, a2, why)) != 0)
        return rc;
    if ((rc = auth_prove(&i, a2, sizeof a2, a3, why)) != 0)
        return rc;
    return auth_verify(&r, a3, sizeof a3, why);
}

static void t_handshake(void)
{
    char why[ERR_LEN];

    T_CASE("auth-1.1", "same secret: all three messages accepted, both ways proven");
    T_EQ_I(handshake(&key_a, PROTO_AUTH_PS, &key_a, PROTO_AUTH_PS, why), 0);
    T_EQ_I(handshake(&no_key, PROTO_AUTH_DATA, &no_key, PROTO_AUTH_DATA, why), 0);

    T_CASE("auth-1.2", "a different secret: the initiator refuses the responder's proof");
    T_EQ_I(handshake(&key_b, PROTO_AUTH_PS, &key_a, PROTO_AUTH_PS, why), ERR_MISMATCH);
    T_HAS(why, "failed to prove");

    T_CASE("auth-1.3", "a stranger without the secret meets a keyed job: refused at A1, "
           "naming --secret-file/PSRING_SECRET");
    T_EQ_I(handshake(&no_key, PROTO_AUTH_PS, &key_a, PROTO_AUTH_PS, why), ERR_MISMATCH);
    T_HAS(why, "no secret");
    T_HAS(why, "PSRING_SECRET");
    T_EQ_I(handshake(&key_a, PROTO_AUTH_PS, &no_key, PROTO_AUTH_PS, why), ERR_MISMATCH);
    T_HAS(why, "runs without one");

    T_CASE("auth-1.4", "a worker's handshake at a coordinator: refused (purpose)");
    T_EQ_I(handshake(&key_a, PROTO_AUTH_PS, &key_a, PROTO_AUTH_RDV, why), ERR_MISMATCH);
    T_HAS(why, "coordinator");

    T_CASE("auth-1.5", "replay: a recorded A3 does not pass a new responder (fresh Nr)");
    {
        struct auth_hs i, r, r2;
        uint8_t a1[AUTH_FRAME], a2[AUTH_FRAME], a3[AUTH_FRAME], b2[AUTH_FRAME];
        auth_hs_init(&i, &key_a, PROTO_AUTH_PS);
        auth_hs_init(&r, &key_a, PROTO_AUTH_PS);
        auth_open(&i, a1);
        T_EQ_I(auth_answer(&r, a1, sizeof a1, a2, why), 0);
        T_EQ_I(auth_prove(&i, a2, sizeof a2, a3, why), 0);
        T_EQ_I(auth_verify(&r, a3, sizeof a3, why), 0);
        /* The attacker replays the recorded A1 and A3 on a new connection. */
        auth_hs_init(&r2, &key_a, PROTO_AUTH_PS);
        T_EQ_I(auth_answer(&r2, a1, sizeof a1, b2, why), 0);
        T_TRUE(memcmp(a2 + PROTO_HEADER_SIZE + 8, b2 + PROTO_HEADER_SIZE + 8, 32) != 0);
        T_EQ_I(auth_verify(&r2, a3, sizeof a3, why), ERR_MISMATCH);
        T_HAS(why, "wrong proof");
    }

    T_CASE("auth-1.6", "reflection: the responder's MAC sent back as the proof fails");
    {
        struct auth_hs i, r;
        uint8_t a1[AUTH_FRAME], a2[AUTH_FRAME], fake[AUTH_FRAME];
        struct proto_header h = proto_header_make(PROTO_AUTH, 0, 1, 0, 3, PROTO_AUTH_SIZE);
        auth_hs_init(&i, &key_a, PROTO_AUTH_PS);
        auth_hs_init(&r, &key_a, PROTO_AUTH_PS);
        auth_open(&i, a1);
        T_EQ_I(auth_answer(&r, a1, sizeof a1, a2, why), 0);
        memcpy(fake, a2, sizeof fake);
        proto_header_encode(&h, fake);              /* aux 3, MAC_R kept */
        memset(fake + PROTO_HEADER_SIZE + 8, 0, PROTO_NONCE_SIZE);
        T_EQ_I(auth_verify(&r, fake, sizeof fake, why), ERR_MISMATCH);
    }

    T_CASE("auth-1.7", "frames out of place: HELLO first, A3 first, a short frame, A1 twice");
    {
        struct auth_hs r;
        uint8_t buf[AUTH_FRAME], out[AUTH_FRAME];
        struct proto_header h = proto_header_make(PROTO_HELLO, 1, 4, 0, 0, PROTO_HELLO_SIZE);
        memset(buf, 0, sizeof buf);
        proto_header_encode(&h, buf);
        auth_hs_init(&r, &key_a, PROTO_AUTH_PS);
        T_TRUE(auth_answer(&r, buf, PROTO_HEADER_SIZE + PROTO_HELLO_SIZE, out, why) != 0);
        T_HAS(why, "HELLO before the AUTH handshake");
        h = proto_header_make(PROTO_AUTH, 0, 1, 0, 3, PROTO_AUTH_SIZE);
        proto_header_encode(&h, buf);
        T_EQ_I(auth_answer(&r, buf, sizeof buf, out, why), ERR_PROTO_FIELD);
        T_TRUE(auth_answer(&r, buf, 10, out, why) != 0);
        T_TRUE(auth_verify(&r, buf, sizeof buf, why) != 0);     /* before A1 */
    }

    T_CASE("auth-1.8", "the frames say nothing of the job: rank 0, world 1, step 0");
    {
        struct auth_hs i;
        uint8_t a1[AUTH_FRAME];
        struct proto_limits lim = { PROTO_AUTH_SIZE, 0, 0 };
        struct proto_header h;
        auth_hs_init(&i, &key_a, PROTO_AUTH_PS);
        auth_open(&i, a1);
        T_EQ_I(proto_header_decode(a1, &lim, &h), 0);
        T_EQ_U(h.type, PROTO_AUTH);
        T_EQ_U(h.rank, 0);
        T_EQ_U(h.world, 1);
        T_EQ_U(h.step, 0);
        T_EQ_U(h.aux, 1);
        T_EQ_U(h.length, PROTO_AUTH_SIZE);
        T_EQ_U(a1[PROTO_HEADER_SIZE], 1);       /* keyed */
    }

    T_CASE("auth-1.9", "an A1 with a wrong header field is refused naming that field, theirs and ours");
    {
        struct auth_hs r;
        uint8_t buf[AUTH_FRAME], out[AUTH_FRAME];
        struct proto_header h = proto_header_make(PROTO_AUTH, 0, 4, 0, 1, PROTO_AUTH_SIZE);
        memset(buf, 0, sizeof buf);
        proto_header_encode(&h, buf);
        auth_hs_init(&r, &key_a, PROTO_AUTH_PS);
        T_EQ_I(auth_answer(&r, buf, sizeof buf, out, why), ERR_PROTO_FIELD);
        T_HAS(why, "AUTH message 1 says world 4, ours is world 1");
        T_TRUE(strstr(why, "out of place") == NULL);
        h = proto_header_make(PROTO_AUTH, 0, 1, 5, 1, PROTO_AUTH_SIZE);
        proto_header_encode(&h, buf);
        auth_hs_init(&r, &key_a, PROTO_AUTH_PS);
        T_EQ_I(auth_answer(&r, buf, sizeof buf, out, why), ERR_PROTO_FIELD);
        T_HAS(why, "AUTH message 1 says step 5, ours is step 0");
        h = proto_header_make(PROTO_AUTH, 0, 1, 0, 2, PROTO_AUTH_SIZE);
        proto_header_encode(&h, buf);
        auth_hs_init(&r, &key_a, PROTO_AUTH_PS);
        T_EQ_I(auth_answer(&r, buf, sizeof buf, out, why), ERR_PROTO_FIELD);
        T_HAS(why, "AUTH message 2 out of place (expected 1)");
    }
    T_END();
}

static void t_secret(void)
{
    char path[] = "/tmp/psring-auth-test.XXXXXX", err[ERR_LEN];
    struct auth_key k;
    int fd;
    const char *remote[] = { "10.0.0.2" }, *local[] = { "127.0.0.1", "localhost", "::1" };

    T_CASE("auth-2.1", "the secret from a 0600 file (newline dropped); a 0644 file refused");
    fd = mkstemp(path);
    T_TRUE(fd >= 0);
    if (fd >= 0) {
        T_EQ_I(write(fd, "0123456789abcdef0123\n", 21), 21);
        close(fd);
        T_EQ_I(auth_key_load(&k, path, "ignored-because-the-file-wins", err), 0);
        T_EQ_I(k.keyed, 1);
        T_EQ_I(k.len, 20);
        chmod(path, 0644);
        T_EQ_I(auth_key_load(&k, path, NULL, err), ERR_USAGE);
        T_HAS(err, "chmod 600");
        unlink(path);
        T_EQ_I(auth_key_load(&k, path, NULL, err), ERR_USAGE);
        T_HAS(err, "cannot read");
    }

    T_CASE("auth-2.2", "PSRING_SECRET: too short refused; unset is no secret");
    T_EQ_I(auth_key_load(&k, NULL, "short", err), ERR_USAGE);
    T_HAS(err, "16 to");
    T_EQ_I(auth_key_load(&k, NULL, NULL, err), 0);
    T_EQ_I(k.keyed, 0);
    T_EQ_I(auth_key_load(&k, NULL, "", err), 0);
    T_EQ_I(k.keyed, 0);

    T_CASE("auth-2.3", "no secret: loopback allowed, another address or a wildcard refused");
    T_EQ_I(auth_policy("test", &no_key, "127.0.0.1", local, 3, err), 0);
    T_EQ_I(auth_policy("test", &no_key, "0.0.0.0", NULL, 0, err), ERR_USAGE);
    T_HAS(err, "--secret-file");
    T_EQ_I(auth_policy("test", &no_key, NULL, remote, 1, err), ERR_USAGE);
    T_HAS(err, "10.0.0.2");
    T_EQ_I(auth_policy("test", &key_a, "0.0.0.0", remote, 1, err), 0);
    T_EQ_I(auth_is_loopback("127.1.2.3"), 1);
    T_EQ_I(auth_is_loopback("127.0.0.1.evil.com"), 0);
    T_EQ_I(auth_is_loopback("::"), 0);
    T_END();
}

/* ------------------------------------------------------------- sockets */

struct dialer {
    int port, n, rc;
    const struct auth_key *k;
    double per_conn_s;
};

static void *dial_many(void *arg)
{
    struct dialer *d = arg;
    char err[ERR_LEN];
    double t0 = clock_now();

    for (int i = 0; i < d->n; i++) {
        int fd;
        d->rc = auth_dial("127.0.0.1", d->port, d->k, PROTO_AUTH_PS, 5.0, &fd, "gate", err);
        if (d->rc != 0) {
            printf("     %s\n", err);
            return NULL;
        }
        close(fd);
    }
    d->per_conn_s = (clock_now() - t0) / d->n;
    return NULL;
}

static void t_gate(void)
{
    struct auth_gate g;
    char peer[NET_ADDR_LEN], err[ERR_LEN];
    int lfd = -1, port = 0, fd = -1, strangers[AUTH_GATE_CAP + 8];
    pthread_t t;
    struct dialer d = { 0, 0, 0, &key_a, 0 };

    T_CASE("auth-3.1", "handshake cost on loopback: 2000 connections, connect + AUTH each, "
           "under 1 ms");
    T_EQ_I(net_listen("127.0.0.1", 0, &lfd, &port, err), 0);
    T_EQ_I(auth_gate_init(&g, lfd, &key_a, PROTO_AUTH_PS, 2.0, AUTH_GATE_CAP, "the test port"),
           0);
    d.port = port;
    d.n = 2000;
    pthread_create(&t, NULL, dial_many, &d);
    for (int i = 0; i < d.n; i++) {
        if (auth_gate_next(&g, clock_now() + 5.0, &fd, peer, err) != 0)
            break;
        close(fd);
    }
    pthread_join(t, NULL);
    T_EQ_I(d.rc, 0);
    printf("     handshake: %.1f us per connection (connect, A1-A3, close; both sides)\n",
           d.per_conn_s * 1e6);
    T_LE(d.per_conn_s, 1e-3);

    T_CASE("auth-3.2", "slot exhaustion: cap + 8 idle strangers, then a member still gets "
           "in (the oldest strangers evicted)");
    for (size_t i = 0; i < sizeof strangers / sizeof strangers[0]; i++)
        T_EQ_I(net_connect("127.0.0.1", port, 1.0, &strangers[i], err), 0);
    d.n = 1;
    pthread_create(&t, NULL, dial_many, &d);
    T_EQ_I(auth_gate_next(&g, clock_now() + 5.0, &fd, peer, err), 0);
    pthread_join(t, NULL);
    T_EQ_I(d.rc, 0);
    T_TRUE(g.evicted >= 8);
    close(fd);

    T_CASE("auth-3.3", "a trickling stranger: dropped at its absolute deadline (2 s), "
           "though it sends a byte every 100 ms");
    {
        struct auth_gate g2;
        int s;
        double t0;
        T_EQ_I(auth_gate_init(&g2, lfd, &key_a, PROTO_AUTH_PS, 2.0, AUTH_GATE_CAP, "test"), 0);
        for (size_t i = 0; i < sizeof strangers / sizeof strangers[0]; i++)
            close(strangers[i]);
        /* drain what g still holds */
        auth_gate_close(&g);
        T_EQ_I(net_connect("127.0.0.1", port, 1.0, &s, err), 0);
        t0 = clock_now();
        {
            const char *magic = "PSRG";
            for (int i = 0; i < 4; i++) {
                T_EQ_I(send(s, magic + i, 1, MSG_NOSIGNAL), 1);
                (void)auth_gate_next(&g2, clock_now() + 0.1, &fd, peer, err);
            }
        }
        while (g2.n > 0 && clock_now() - t0 < 10) {
            if (send(s, "\x02", 1, MSG_NOSIGNAL) != 1)
                break;
            (void)auth_gate_next(&g2, clock_now() + 0.1, &fd, peer, err);
        }
        T_EQ_I(g2.n, 0);
        T_LE(clock_now() - t0, 2.5);
        T_LE(1.9, clock_now() - t0);
        close(s);
        auth_gate_close(&g2);
    }
    close(lfd);
    T_END();
}

int main(void)
{
    char err[ERR_LEN];

    auth_key_load(&key_a, NULL, "secret-A-0123456789abcdef", err);
    auth_key_load(&key_b, NULL, "secret-B-0123456789abcdef", err);
    t_handshake();
    t_secret();
    t_gate();
    return t_done();
}
