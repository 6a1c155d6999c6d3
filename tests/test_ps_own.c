/* test_ps_own.c -- the PS worker's pull on its host's own timeline
 * (common/ps/client.h, OWN TIMELINE): the rule ps_client_own_late, on
 * made-up times, without sockets or a clock.
 *
 *   ps-own-1.x  the pull ends at the latest of its call and its receivers'
 *               ends; what came after that (the waits for a CPU) is taken
 *               back, and nothing else: not without a link, not when a
 *               receiver could not say, not the time before the call
 *   ps-own-2.x  the server's loop (common/ps/server.h, server_own_wait):
 *               its wait for a CPU since it last blocked is taken off,
 *               at most a piece's wire time and the latency, and only on
 *               a link with a rate and a machine that can say
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "ps/client.h"
#include "ps/server.h"

/* The fake machine's run delay (server_own_wait's input). */
static double fake_delay;

static double run_delay(const struct server *srv)
{
    (void)srv;
    return fake_delay;
}

static const struct server_machine fake_machine = { .run_delay = run_delay };
static const struct server_machine no_hook = { .run_delay = NULL };
static struct server_io fake_io;
static struct server srv;   /* static: large, zeroed */

/* client: S servers of 4 elements each (server 2 of none when empty2),
 * their receivers' ends as given, on a link of 500 Mbit/s. */
static void client(struct ps_client *c, struct ps_conn *k, int s, const double *ends, int empty2)
{
    memset(c, 0, sizeof *c);
    memset(k, 0, (size_t)s * sizeof *k);
    c->nservers = s;
    c->conns = k;
    c->link_bw = 62.5e6;
    c->link_latency = 200e-6;
    for (int i = 0; i < s; i++) {
        k[i].lo = 4u * (unsigned)i;
        k[i].hi = empty2 && i == 2 ? k[i].lo : k[i].lo + 4;
        k[i].rend = ends[i];
    }
}

int main(void)
{
    struct ps_client c;
    struct ps_conn k[3];

    T_CASE("ps-own-1.1", "the receivers' last end: what came after it is taken back");
    {
        const double ends[3] = { 10.050, 10.052, 10.051 };
        client(&c, k, 3, ends, 0);
        /* called at 10.000, returned at 10.059: 7 ms after the last end */
        T_NEAR(ps_client_own_late(&c, 10.000, 10.059), 0.007, 1e-12);
        /* returned when the last receiver ended: nothing to take back */
        T_NEAR(ps_client_own_late(&c, 10.000, 10.052), 0.0, 0.0);
    }
    T_END();

    T_CASE("ps-own-1.2", "a pull called after its weights were in: only the time since the call");
    {
        const double ends[3] = { 10.050, 10.052, 10.051 };
        client(&c, k, 3, ends, 0);
        /* the caller pushed or computed until 10.060: that was no CPU wait */
        T_NEAR(ps_client_own_late(&c, 10.060, 10.061), 0.001, 1e-12);
    }
    T_END();

    T_CASE("ps-own-1.3", "a receiver that could not say (NAN), or ended after now: nothing taken");
    {
        const double nan3[3] = { 10.050, NAN, 10.051 };
        const double after[3] = { 10.050, 10.070, 10.051 };
        client(&c, k, 3, nan3, 0);
        T_NEAR(ps_client_own_late(&c, 10.000, 10.059), 0.0, 0.0);
        client(&c, k, 3, after, 0);
        T_NEAR(ps_client_own_late(&c, 10.000, 10.059), 0.0, 0.0);
    }
    T_END();

    T_CASE("ps-own-1.4", "a server with no elements is not waited for: its old end is ignored");
    {
        const double ends[3] = { 10.050, 10.052, NAN };
        client(&c, k, 3, ends, 1);
        T_NEAR(ps_client_own_late(&c, 10.000, 10.059), 0.007, 1e-12);
    }
    T_END();

    T_CASE("ps-own-1.5", "no emulated link, or a lateness past LINK_STAMP_SPAN: nothing taken");
    {
        const double ends[3] = { 10.050, 10.052, 10.051 };
        client(&c, k, 3, ends, 0);
        c.link_bw = 0.0;
        c.link_latency = 0.0;
        T_NEAR(ps_client_own_late(&c, 10.000, 10.059), 0.0, 0.0);
        c.link_latency = 200e-6;        /* a latency alone is an emulated link */
        T_NEAR(ps_client_own_late(&c, 10.000, 10.059), 0.007, 1e-12);
        T_NEAR(ps_client_own_late(&c, 10.000, 10.052 + LINK_STAMP_SPAN + 0.001), 0.0, 0.0);
    }
    T_END();

    T_CASE("ps-own-2.1", "the loop's wait for a CPU is taken off, up to a piece's wire time + L");
    {
        double cap;
        fake_io.machine = &fake_machine;
        srv.io = &fake_io;
        T_EQ_I(link_init(&srv.link, 62.5e6, 200e-6), 0);    /* 500 Mbit/s: a 60 KiB piece */
        cap = (double)link_piece(&srv.link) / 62.5e6 + 200e-6;
        T_NEAR(cap, 61440.0 / 62.5e6 + 200e-6, 1e-15);
        fake_delay = 0.3e-3;
        T_NEAR(server_own_wait(&srv), 0.3e-3, 0.0);
        fake_delay = 10e-3;                 /* longer than the bound: the bound */
        T_NEAR(server_own_wait(&srv), cap, 0.0);
        fake_delay = 0.0;
        T_NEAR(server_own_wait(&srv), 0.0, 0.0);
    }
    T_END();

    T_CASE("ps-own-2.2", "no rate, or no hook (the simulator): nothing taken off");
    {
        fake_io.machine = &fake_machine;
        srv.io = &fake_io;
        fake_delay = 0.3e-3;
        T_EQ_I(link_init(&srv.link, 0.0, 200e-6), 0);      /* a latency alone */
        T_NEAR(server_own_wait(&srv), 0.0, 0.0);
        T_EQ_I(link_init(&srv.link, 62.5e6, 200e-6), 0);
        fake_io.machine = &no_hook;
        T_NEAR(server_own_wait(&srv), 0.0, 0.0);
        fake_io.machine = NULL;
        T_NEAR(server_own_wait(&srv), 0.0, 0.0);
    }
    T_END();

    return t_done();
}
