/* test_link_virt.c -- the emulated hosts' own timeline (link.h, OWN
 * CORES AND THE VIRTUAL TIMELINE): the CHUNK stamp (proto.h, STAMP), the
 * reader's arrival on the sender's schedule, the restart of a forwarding
 * send, and a ring of late-waking ranks on a fake clock.
 *
 * Nothing here sleeps: times are numbers the test moves. The ring is one
 * rank and its left neighbour in lockstep (identical ranks on identical
 * links: the left's frame carries our own stamp and its pieces our own
 * deadlines), each piece handed over and each wake-up late by a random
 * amount, as on a machine with more ranks than cores.
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "base/err.h"
#include "wire/link.h"
#include "wire/net.h"
#include "wire/proto.h"

static double rnd01(void)
{
    return (double)rand() / ((double)RAND_MAX + 1.0);
}

static void t_stamp(void)
{
    const double ts[] = { 0.0, 1e-6, 12.3456789, 4294.967294, 4294.967296, 86400.5, 1e6 + 0.25 };
    const double ahead[] = { 0.0, 1e-6, 0.5, 3.0, 4000.0 };

    T_CASE("link-virt-1.1", "a CHUNK stamp: the sender's time to the microsecond (rounded up), "
           "rebuilt by the reader from its own later clock, across the wrap; 0 is none");
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        for (size_t j = 0; j < sizeof ahead / sizeof ahead[0]; j++) {
            uint32_t st = proto_stamp_of(ts[i]);
            double back = proto_stamp_time(st, ts[i] + ahead[j] + 1e-6);
            T_EQ_I(st != 0, 1);
            T_LE(ts[i] - 1e-9, back);
            T_LE(back, ts[i] + 1e-6 + 1e-9);
        }
    T_EQ_I((int)proto_stamp_of(-1.0), 0);
    T_EQ_I((int)proto_stamp_of(NAN), 0);
    T_EQ_I((int)proto_stamp_of(INFINITY), 0);
    T_EQ_I(isnan(proto_stamp_time(0, 5.0)), 1);
    /* A stamp from before the reader's clock began cannot be rebuilt. */
    T_EQ_I(isnan(proto_stamp_time(proto_stamp_of(10.0), 2.0)), 1);
    /* The chunk index keeps its 32 bits beside the stamp. */
    T_EQ_I((int)proto_chunk_tag(proto_chunk_aux(0xfffffffeu, 77u)) == -2, 1);
    T_EQ_I((int)proto_chunk_stamp(proto_chunk_aux(5u, 0xffffffffu)) == -1, 1);
    T_EQ_I((int)proto_chunk_tag(proto_chunk_aux(5u, 0xffffffffu)), 5);
    T_EQ_I((int)proto_chunk_stamp(proto_chunk_aux(5u, 0u)), 0);
    T_END();
}

static void t_frame(void)
{
    const double rate = 12.5e6, lat = 1e-3;        /* 100 Mbit/s, 1 ms */
    const size_t hdr = PROTO_HEADER_SIZE, n = 65536;
    struct link l;
    double t0 = 50.0, late = 3e-3, due;

    T_CASE("link-virt-1.2", "a stamped frame's bytes are in at stamp + bytes/B + L whenever "
           "the sender handed them over; an unstamped one when the link released it; a stamp "
           "from the future or older than LINK_STAMP_SPAN is not believed");
    T_EQ_I(link_init(&l, rate, lat), 0);
    T_EQ_I(isnan(link_in_ready(&l)), 1);
    /* The sender started at t0; its pieces came `late` after their
     * deadlines (it waited for a CPU). */
    due = link_ingress_join(&l, hdr, t0 + (hdr + 12500) / rate + lat + late, 1.0, 1);
    link_ingress_frame(&l, t0, hdr, due);
    T_NEAR(link_in_ready(&l), t0 + hdr / rate + lat, 1e-12);
    due = link_ingress_join(&l, 12500, t0 + (hdr + 12500) / rate + lat + late, 1.0, 0);
    due = link_ingress_join(&l, n - 12500, t0 + (hdr + n) / rate + lat + late, 2.0, 0);
    T_NEAR(link_in_ready(&l), t0 + (hdr + n) / rate + lat, 1e-12);
    T_LE(link_in_ready(&l) + late - 1e-9, due);      /* the link released them late */
    /* The restart ends the frame: the next bytes without a stamp are in
     * when the link releases them. */
    (void)link_send_restart(&l, due, 0.0, NAN);
    due = link_ingress_join(&l, hdr, due + 0.1, 3.0, 1);
    T_NEAR(link_in_ready(&l), due, 1e-12);
    /* Stamps that cannot be true are ignored. */
    link_ingress_frame(&l, due + 1e-3, hdr, due);                /* after now */
    T_NEAR(link_in_ready(&l), due, 1e-12);
    link_ingress_frame(&l, due - LINK_STAMP_SPAN - 1e-3, hdr, due);   /* too old */
    T_NEAR(link_in_ready(&l), due, 1e-12);
    T_END();
}

static void t_restart(void)
{
    const double rate = 12.5e6, lat = 1e-3;
    struct link l;
    double slack, in, now;

    T_CASE("link-virt-1.3", "link_send_restart: a forward starts at the bytes' arrival plus "
           "its CPU, another send at now less its wait for a CPU; never later than now, never "
           "before the bytes were in or the call's entry, never more than a piece and the "
           "latency before now");
    T_EQ_I(link_init(&l, rate, lat), 0);
    slack = lat + (double)link_piece(&l) / rate;
    in = link_ingress_join(&l, 1000, 10.0, 1.0, 0);
    T_NEAR(link_in_ready(&l), in, 1e-12);
    /* A forward: arrival + CPU, whatever real time it is (within the slack). */
    now = in + 1.5e-3;
    T_NEAR(link_send_restart(&l, now, 0.0, 1e-4), in + 1e-4, 1e-12);
    T_NEAR(link_send_reserve(&l, 500, now, 0), in + 1e-4 + 500 / rate + lat, 1e-12);
    /* Its CPU past now: now. */
    in = link_ingress_join(&l, 1000, 20.0, 2.0, 0);
    T_NEAR(link_send_restart(&l, in + 1e-4, 0.0, 5e-4), in + 1e-4, 1e-12);
    /* Far behind real time: a piece and the latency before now at most,
     * so its first piece is due now, not in the past (no burst). */
    in = link_ingress_join(&l, 1000, 30.0, 3.0, 0);
    now = in + 10 * slack;
    T_NEAR(link_send_restart(&l, now, 0.0, 1e-5), now - slack, 1e-12);
    T_LE(now - 1e-12, link_send_reserve(&l, link_piece(&l), now, 0));
    /* Not a forward: now less the wait for a CPU, but not before the
     * bytes were in, nor more than the slack. */
    in = link_ingress_join(&l, 1000, 40.0, 4.0, 0);
    now = in + 5e-3;
    T_NEAR(link_send_restart(&l, now, 2e-4, NAN), now - 2e-4, 1e-12);
    T_NEAR(link_send_restart(&l, now, 4.5e-3, NAN), now - slack, 1e-12);
    T_NEAR(link_send_restart(&l, in + 1e-4, 1.0, NAN), in, 1e-12);
    T_NEAR(link_send_restart(&l, now, 0.0, NAN), now, 1e-12);
    /* A timed call entered at `now`: none of its sends starts earlier,
     * whatever the timeline carried over from the call before. */
    in = link_ingress_join(&l, 1000, 50.0, 5.0, 0);
    now = in + 1e-3;
    link_enter(&l, now - 1e-4);
    T_NEAR(link_send_restart(&l, now, 0.0, 1e-5), now - 1e-4, 1e-12);
    T_NEAR(link_send_restart(&l, now, 5e-4, NAN), now - 1e-4, 1e-12);
    /* Bytes read as the rest of an earlier piece are in when they came,
     * not when that piece's booking says. */
    T_EQ_I(link_init(&l, rate, lat), 0);
    (void)link_ingress_join(&l, 40, 55.0, 9.0, 1);
    (void)link_ingress_join(&l, 40, 55.2, 10.0, 1);         /* joins: the rest */
    T_LE(55.2, link_in_ready(&l));
    /* The wire's backlog still holds: the stamp is where the wire is free. */
    T_EQ_I(link_init(&l, rate, lat), 0);
    (void)link_send_reserve(&l, 125000, 60.0, 0);                  /* busy until 60.01 */
    T_NEAR(link_send_restart(&l, 60.002, 0.0, NAN), 60.01, 1e-12);
    T_END();
}

/* ring: `steps` lockstep ring steps of n bytes and a header as xport_tcp.c
 * sends them, each rank waking up to `wmax` late for every piece it hands
 * over and for the chunk it receives, and spending `cpu` seconds between
 * the chunk's arrival and its next send. vt: the send forwards (the CPU is
 * known: VIRTUAL TIMELINE), else it restarts at real time. OUT: the real
 * end of the last step; the first piece of each step never due before its
 * restart (*burst: 1 if one was). Returns the bytes' last arrival on the
 * timeline (link_in_ready). */
static double ring(struct link *l, int steps, size_t n, double cpu, double wmax, int vt,
                   double t0, double *real_end, int *burst)
{
    const size_t hdr = PROTO_HEADER_SIZE;
    size_t piece = link_piece(l);
    double now = t0;

    *burst = 0;
    for (int s = 0; s < steps; s++) {
        double ws = link_send_restart(l, now, 0.0, vt && s > 0 ? cpu : NAN);
        double t = now, own_end = now, in_end = now, d = now;
        size_t done = 0;

        while (done < hdr + n) {
            size_t p = hdr + n - done < piece ? hdr + n - done : piece;
            double late = wmax * rnd01();
            d = link_send_reserve(l, p, t, done > 0);
            if (done == 0 && d < now - 1e-12)
                *burst = 1;
            t = fmax(t, d) + wmax * rnd01();          /* our own late hand-over */
            link_send_woke(l, t);
            own_end = t;
            /* The left's identical piece, handed over late by its rank. */
            in_end = d + late;
            /* The header first, as xport_tcp.c reads it, then the rest;
             * each read asks for exactly what is left of its part (cut):
             * a small frame's next header then joins this frame's piece
             * (link_ingress_join: the rest of a piece cut short). */
            if (done == 0) {
                (void)link_ingress_join(l, hdr, in_end, (double)s, 1);
                link_ingress_frame(l, ws, hdr, in_end);
                (void)link_ingress_join(l, p - hdr, in_end, (double)s, 1);
            } else {
                (void)link_ingress_join(l, p, in_end, (double)s + (double)done * 1e-9, 1);
            }
            done += p;
        }
        now = fmax(own_end, in_end + wmax * rnd01()) + cpu;  /* woke late, then computed */
    }
    *real_end = now;
    return link_in_ready(l);
}

static void t_ring(void)
{
    const double rate = 12.5e6, lat = 1e-3, cpu = 5e-5;   /* 100 Mbit/s, 1 ms */
    const size_t n = 65536;                               /* a K = 16 ring's chunk of 1 MiB */
    const int steps = 30;
    double step = lat + (PROTO_HEADER_SIZE + n) / rate, end_vt, end_rt, v;
    struct link l;
    int burst;

    T_CASE("link-virt-1.4", "a ring whose ranks wake up to 0.6 ms late (less than a piece and "
           "the latency) keeps to L + (header + n)/B + its CPU a step on the timeline and in real "
           "time within one step's lateness; restarting at real time carries every step's "
           "lateness into the next");
    srand(7);
    T_EQ_I(link_init(&l, rate, lat), 0);
    v = ring(&l, steps, n, cpu, 0.6e-3, 1, 100.0, &end_vt, &burst);
    T_NEAR(v - 100.0, steps * step + (steps - 1) * cpu, 1e-9);
    T_LE(end_vt - 100.0, steps * step + steps * cpu + 3 * 0.6e-3);
    T_EQ_I(burst, 0);
    /* Without the timeline: the lateness adds up, step after step. */
    T_EQ_I(link_init(&l, rate, lat), 0);
    (void)ring(&l, steps, n, cpu, 0.6e-3, 0, 100.0, &end_rt, &burst);
    T_LE(steps * step + steps * 0.25e-3, end_rt - 100.0);
    /* Small frames (one piece each, the next header joining the last
     * piece) and a long latency: every step still pays it, on the
     * timeline and in real time (a stale arrival once let each restart
     * go a latency early: a 4 KiB all-reduce at 10 ms took 0.5 ms). */
    T_EQ_I(link_init(&l, rate, 10e-3), 0);
    v = ring(&l, steps, 1024, cpu, 0.2e-3, 1, 200.0, &end_vt, &burst);
    T_NEAR(v - 200.0, steps * (10e-3 + (PROTO_HEADER_SIZE + 1024) / rate) + (steps - 1) * cpu,
           1e-9);
    T_LE(steps * (10e-3 + (PROTO_HEADER_SIZE + 1024) / rate), end_vt - 200.0);
    /* Later than the slack: the pieces go late, never in a burst, and
     * real time (not the timeline) shows it. */
    T_EQ_I(link_init(&l, rate, lat), 0);
    (void)ring(&l, steps, n, cpu, 8e-3, 1, 100.0, &end_vt, &burst);
    T_EQ_I(burst, 0);
    T_LE(steps * step + steps * 2e-3, end_vt - 100.0);
    T_END();
}

static void t_late(void)
{
    const double rate = 12.5e6, lat = 1e-3;
    struct link l;
    double in;

    T_CASE("link-virt-1.6", "link_vt_late: a timed call that returns after its last bytes were in "
           "and its CPU is that much late, counted in credited_s; nothing when it read nothing, "
           "waited for something else, or is unpaced");
    T_EQ_I(link_init(&l, rate, lat), 0);
    link_enter(&l, 10.0);
    T_NEAR(link_vt_late(&l, 10.5, 1e-3), 0.0, 0.0);                 /* read nothing */
    in = link_ingress_join(&l, 1000, 10.2, 1.0, 0);
    T_NEAR(link_vt_late(&l, in + 5e-3, 1e-3), 4e-3, 1e-12);
    T_NEAR(l.credited_s, 4e-3, 1e-12);
    T_NEAR(link_vt_late(&l, in + 5e-3, NAN), 0.0, 0.0);             /* not a forward */
    T_NEAR(link_vt_late(&l, in + 5e-4, 1e-3), 0.0, 0.0);            /* on time */
    link_enter(&l, in + 1e-3);                                      /* the next call */
    T_NEAR(link_vt_late(&l, in + 5e-3, 1e-3), 0.0, 0.0);            /* read before it */
    T_EQ_I(link_init(&l, 0.0, 0.0), 0);                             /* unpaced */
    link_enter(&l, 1.0);
    (void)link_ingress_join(&l, 1000, 1.5, 3.0, 0);
    T_NEAR(link_vt_late(&l, 2.0, 0.0), 0.0, 0.0);
    T_END();
}

static void t_enter(void)
{
    const double rate = 12.5e6, lat = 1e-3;
    struct link l;
    double in, start;

    T_CASE("link-virt-1.9", "link_enter_vt: a call after the last one's bytes and some CPU starts "
           "at their arrival plus that CPU (the wait for a CPU left out), and a restarted send "
           "is stamped from there; now when the thread did anything else, read nothing since "
           "the last call, lags beyond LINK_STAMP_SPAN, or is unpaced");
    T_EQ_I(link_init(&l, rate, lat), 0);
    link_enter(&l, 10.0);
    T_NEAR(link_enter_vt(&l, 10.5, 1e-4), 10.5, 0.0);               /* read nothing */
    link_enter(&l, 10.0);
    in = link_ingress_join(&l, 1000, 10.2, 1.0, 0);
    start = link_enter_vt(&l, in + 5e-4, 1e-4);
    T_NEAR(start, in + 1e-4, 1e-12);                                /* 0.4 ms of CPU wait off */
    T_NEAR(link_send_restart(&l, in + 6e-4, 0.0, 2e-4), in + 2e-4, 1e-12);
    link_enter(&l, 10.0);
    T_NEAR(link_enter_vt(&l, in + 5e-4, NAN), in + 5e-4, 0.0);      /* waited for something else */
    link_enter(&l, 10.0);
    T_NEAR(link_enter_vt(&l, in + 5e-5, 1e-4), in + 5e-5, 0.0);     /* on time: now */
    T_NEAR(link_enter_vt(&l, in + 5e-4, 1e-4), in + 5e-4, 0.0);     /* read before the last call */
    link_enter(&l, 10.0);
    T_NEAR(link_enter_vt(&l, in + 2.0, 1e-4), in + 2.0, 0.0);       /* beyond LINK_STAMP_SPAN */
    T_EQ_I(link_init(&l, 0.0, 0.0), 0);                             /* unpaced */
    link_enter(&l, 1.0);
    (void)link_ingress_join(&l, 1000, 1.5, 3.0, 0);
    T_NEAR(link_enter_vt(&l, 2.0, 0.0), 2.0, 0.0);
    T_END();
}

static void t_queued(void)
{
    double q0 = clock_thread_queued_seconds(), q1;
    volatile double x = 0;

    T_CASE("link-virt-1.5", "this thread's wait for a CPU: non-negative and growing, or NaN "
           "where the kernel cannot say; net_queued_s and net_forward_cpu_s before any "
           "transfer: 0 and NaN");
    for (int i = 0; i < 2000000; i++)
        x += i;
    q1 = clock_thread_queued_seconds();
    if (isnan(q0)) {
        T_EQ_I(isnan(q1), 1);
    } else {
        T_LE(0.0, q0);
        T_LE(q0, q1);
    }
    T_NEAR(net_queued_s(), 0.0, 0.0);
    T_EQ_I(isnan(net_forward_cpu_s(clock_now())), 1);
    T_END();
}

/* frame_parts_main: a fresh thread (its own net_vt state) reads a
 * 2000-byte frame in two parts through a paced link, checking after each
 * part whether the CPU clock was sampled (net_forward_cpu_s). */
static void *frame_parts_main(void *arg)
{
    int *ok = arg, sv[2];
    unsigned char out[2000], in[2000];
    struct link l;
    struct net_frame f;
    char err[ERR_LEN] = "";

    memset(out, 5, sizeof out);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || link_init(&l, 1e6, 0.0) != 0)
        return NULL;
    if (net_send_all(sv[0], out, sizeof out, NULL, 5.0, "a", err) == 0) {
        net_frame_begin(&f, 16);
        f.whole = sizeof in;                    /* the caller knows: not at 16 */
        ok[0] = net_recv_frame(sv[1], in, 16, &l, 5.0, &f, "b", err) == 0 &&
                isnan(net_forward_cpu_s(clock_now()));
        f.len = sizeof in;                      /* as the header would say */
        ok[0] &= net_recv_frame(sv[1], in + 16, 984, &l, 5.0, &f, "b", err) == 0 &&
                 isnan(net_forward_cpu_s(clock_now()));
        ok[1] = net_recv_frame(sv[1], in + 1000, 1000, &l, 5.0, &f, "b", err) == 0 &&
                net_forward_cpu_s(clock_now()) >= 0.0;
        ok[2] = memcmp(in, out, sizeof in) == 0;
    }
    close(sv[0]);
    close(sv[1]);
    return NULL;
}

/* own_schedstat: every descriptor of this process open on a thread's
 * schedstat is one of this process's threads' (checked in a fork's
 * child: its copy of the parent's must be gone). 1 yes, 0 no. */
static int own_schedstat(void)
{
    char path[300], want[64], link[256];
    struct dirent *e;
    DIR *d = opendir("/proc/self/fd");
    int ok = 1;
    ssize_t n;

    if (!d)
        return 1;
    snprintf(want, sizeof want, "/proc/%ld/task/", (long)getpid());
    while ((e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (strstr(link, "/schedstat") && strncmp(link, want, strlen(want)) != 0) {
            printf("     the child reads %s\n", link);
            ok = 0;
        }
    }
    closedir(d);
    return ok;
}

static void t_lazy(void)
{
    int ok[3] = { 0, 0, 0 }, status = -1;
    pthread_t th;
    pid_t pid;

    T_CASE("link-virt-1.7", "a paced frame read in parts samples the CPU clock at its last "
           "bytes only, its header not (net_frame.whole): net_forward_cpu_s NaN after the "
           "header and the first part, a number after the last");
    T_EQ_I(pthread_create(&th, NULL, frame_parts_main, ok), 0);
    pthread_join(th, NULL);
    T_EQ_I(ok[0], 1);
    T_EQ_I(ok[1], 1);
    T_EQ_I(ok[2], 1);
    T_END();

    T_CASE("link-virt-1.8", "a fork's child reads its own run delay, not its parent thread's "
           "(clock_thread_queued_seconds keeps no descriptor of the parent's across fork)");
    if (!isnan(clock_thread_queued_seconds())) {
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            double q = clock_thread_queued_seconds();
            int mine = own_schedstat();
            fflush(stdout);
            _exit(!isnan(q) && q >= 0.0 && mine ? 0 : 1);
        }
        T_TRUE(pid > 0);
        T_EQ_I(waitpid(pid, &status, 0), pid);
        T_EQ_I(status, 0);
    }
    T_END();
}

int main(void)
{
    t_stamp();
    t_frame();
    t_restart();
    t_ring();
    t_late();
    t_enter();
    t_queued();
    t_lazy();
    return t_done();
}
