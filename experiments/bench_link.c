/* bench_link.c -- how faithful is the EMULATED link? (bin/bench_link)
 *
 * Two processes on 127.0.0.1 joined by one TCP connection: the parent
 * measures, the child (forked) obeys small command messages on the same
 * socket: "send N bytes paced at B", "echo C pings with latency L", "quit".
 * Three figures come out, as columns under `#` headers (gnuplot's `index`
 * separates the blocks, two blank lines apart):
 *
 *   1. the unpaced loopback TCP rate: what the host can move at all;
 *   2. rate accuracy: for B from 10 MB/s to half the loopback rate, the
 *      time to move N = B * T bytes over N/B, with the link on the sender
 *      (egress), on the receiver (ingress), and on both; 1.000 is exact;
 *   3. the latency floor: a 64-byte ping-pong with --link-latency L on both
 *      ends; one-way = RTT/2, median and p90 against L.
 *
 * Every figure is the median of --reps runs (3). This is a benchmark: it
 * prints figures and never passes or fails on them; it exits non-zero only
 * when the transfer itself fails.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/err.h"
#include "wire/link.h"
#include "wire/net.h"

#define CHUNK      (4u << 20)     /* bytes per send_all / recv_all call */
#define PING_BYTES 64
#define IDLE_S     30.0           /* any transfer stalled this long fails */
#define MAX_REPS   99

enum { CMD_QUIT = 0, CMD_STREAM = 1, CMD_ECHO = 2 };

/* One command, parent -> child, native byte order (same host). */
struct cmd {
    double op;          /* CMD_* */
    double bytes;       /* STREAM: bytes to send */
    double rate;        /* the child's link rate, bytes/s (0: off) */
    double latency;     /* the child's link latency, seconds */
    double count;       /* ECHO: round trips */
};

static const double rate_list[] = { 10e6, 30e6, 100e6, 300e6, 1e9, 3e9, 10e9, 30e9 };
static const double lat_list[] = { 0, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3 };
#define NRATE (sizeof rate_list / sizeof rate_list[0])
#define NLAT (sizeof lat_list / sizeof lat_list[0])

static unsigned char *buf;

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_link: %s: %s\n", what, err);
    exit(1);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: bench_link [--quick] [--loopback] [--reps N] [--seconds T]\n"
        "Measures the EMULATED link (link.h) over 127.0.0.1 TCP between two\n"
        "processes: the unpaced loopback rate, the rate accuracy (time over\n"
        "N/B) for egress, ingress and both, and the latency floor of a 64-byte\n"
        "ping-pong. Columns under '#' headers on stdout (gnuplot blocks).\n"
        "  --quick       shorter runs (about 10 s in all)\n"
        "  --loopback    only the unpaced loopback rate (about a second); the\n"
        "                last line is 'loopback_MBps RATE'\n"
        "  --reps N      runs per figure, median reported (default 3)\n"
        "  --seconds T   target duration of one paced transfer (default 0.5;\n"
        "                --quick: 0.15)\n"
        "  --help        this text\n"
        "  --version     the version\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* quantile of v[0..n) (sorts v): q = 0.5 median (middle two averaged). */
static double quantile(double *v, int n, double q)
{
    double pos;
    int i;

    qsort(v, (size_t)n, sizeof *v, cmp_double);
    if (q == 0.5 && n % 2 == 0)
        return 0.5 * (v[n / 2 - 1] + v[n / 2]);
    pos = q * (n - 1);
    i = (int)floor(pos);
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* ---------------------------------------------------------------- child */

static void child_loop(int fd)
{
    char err[ERR_LEN];
    struct cmd c;
    struct link l;

    for (;;) {
        if (net_recv_all(fd, &c, sizeof c, NULL, 0, "parent", err) != 0)
            die("child", err);
        if (c.op == CMD_QUIT)
            return;
        if (link_init(&l, c.rate, c.latency) != 0)
            die("child", "bad link values");
        if (c.op == CMD_STREAM) {
            double left = c.bytes;
            while (left > 0) {
                size_t n = left > CHUNK ? CHUNK : (size_t)left;
                if (net_send_all(fd, buf, n, &l, IDLE_S, "parent", err) != 0)
                    die("child", err);
                left -= (double)n;
            }
        } else {
            unsigned char ping[PING_BYTES];
            for (double k = 0; k < c.count; k++) {
                if (net_recv_all(fd, ping, sizeof ping, &l, IDLE_S, "parent", err) != 0 ||
                    net_send_all(fd, ping, sizeof ping, &l, IDLE_S, "parent", err) != 0)
                    die("child", err);
            }
        }
    }
}

/* --------------------------------------------------------------- parent */

static void send_cmd(int fd, int op, double bytes, double rate, double latency, double count)
{
    struct cmd c = { op, bytes, rate, latency, count };
    char err[ERR_LEN];

    if (net_send_all(fd, &c, sizeof c, NULL, IDLE_S, "child", err) != 0)
        die("parent", err);
}

/* stream: the child sends `bytes` (its egress paced at erate), the parent
 * receives them (its ingress paced at irate). Seconds from the command to
 * the last byte. */
static double stream(int fd, double bytes, double erate, double irate)
{
    char err[ERR_LEN];
    struct link l;
    double t0, left = bytes;

    if (link_init(&l, irate, 0.0) != 0)
        die("parent", "bad link values");
    t0 = clock_now();
    send_cmd(fd, CMD_STREAM, bytes, erate, 0.0, 0);
    while (left > 0) {
        size_t n = left > CHUNK ? CHUNK : (size_t)left;
        if (net_recv_all(fd, buf, n, &l, IDLE_S, "child", err) != 0)
            die("parent", err);
        left -= (double)n;
    }
    return clock_now() - t0;
}

/* pingpong: count 64-byte round trips with latency L on both ends; one-way
 * times (RTT/2) into ow[0..count). */
static void pingpong(int fd, double lat, int count, double *ow)
{
    unsigned char ping[PING_BYTES] = { 0 };
    char err[ERR_LEN];
    struct link l;

    if (link_init(&l, 0.0, lat) != 0)
        die("parent", "bad link values");
    send_cmd(fd, CMD_ECHO, 0, 0.0, lat, count);
    for (int k = 0; k < count; k++) {
        double t0 = clock_now();
        if (net_send_all(fd, ping, sizeof ping, &l, IDLE_S, "child", err) != 0 ||
            net_recv_all(fd, ping, sizeof ping, &l, IDLE_S, "child", err) != 0)
            die("parent", err);
        ow[k] = 0.5 * (clock_now() - t0);
    }
}

static int loopback_only;

static int parse_args(int argc, char **argv, int *quick, int *reps, double *secs)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("bench_link (psring) %s\n", PSRING_VERSION);
            exit(0);
        } else if (strcmp(a, "--quick") == 0) {
            *quick = 1;
        } else if (strcmp(a, "--loopback") == 0) {
            loopback_only = 1;
            *quick = 1;
        } else if (strcmp(a, "--reps") == 0 && i + 1 < argc) {
            long v = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || v < 1 || v > MAX_REPS) {
                char q[CLI_VALUE_BUF], msg[ERR_LEN];
                snprintf(msg, sizeof msg, "--reps %s: not an integer 1..%d",
                         cli_value(argv[i], q), MAX_REPS);
                cli_usage_print("bench_link", msg);
                return -1;
            }
            *reps = (int)v;
        } else if (strcmp(a, "--seconds") == 0 && i + 1 < argc) {
            double v = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !(v >= 0.01 && v <= 60)) {
                char q[CLI_VALUE_BUF], msg[ERR_LEN];
                snprintf(msg, sizeof msg, "--seconds %s: not a time 0.01..60 (seconds)",
                         cli_value(argv[i], q));
                cli_usage_print("bench_link", msg);
                return -1;
            }
            *secs = v;
        } else {
            char q[CLI_VALUE_BUF], msg[ERR_LEN];
            snprintf(msg, sizeof msg, "%s: %s", cli_value(a, q),
                     strcmp(a, "--reps") == 0 || strcmp(a, "--seconds") == 0 ? "missing value"
                                                                          : "unknown option");
            cli_usage_print("bench_link", msg);
            return -1;
        }
    }
    return 0;
}

/* The rate section's verdict: the range of B within 3% in every mode (up
 * to the first B that is not, once one was) and its worst ratio. */
struct rate_summary {
    double worst_in_range, lo_ok, hi_ok;
};

/* rate_accuracy: the time to move N = B * secs bytes over N/B, the link
 * on the sender, the receiver, both, for the rates below CAP and CAP. */
static void rate_accuracy(int b, double cap, double secs, int reps, struct rate_summary *out)
{
    double worst_in_range = 1, lo_ok = 0, hi_ok = 0;
    int broke = 0;
    printf("\n\n# rate accuracy: time to move N = B * %.2f s over N/B (1.000 = exact),\n"
           "# link on the sender (egress), the receiver (ingress), both; B up to half\n"
           "# the loopback rate (%.0f MB/s)\n"
           "# rate_MBps bytes egress ingress both\n", secs, cap / 1e6);
    /* The list below the cap, then the cap itself: the range ends
     * at half the loopback rate, so that point is always measured. */
    double rates[NRATE + 1];
    size_t nrates = 0;
    for (size_t i = 0; i < NRATE; i++)
        if (rate_list[i] < 0.9 * cap)
            rates[nrates++] = rate_list[i];
    rates[nrates++] = cap;
    for (size_t i = 0; i < nrates; i++) {
        double B = rates[i], n = floor(B * secs), ideal = n / B, ratio[3], t[MAX_REPS];
        for (int m = 0; m < 3; m++) {
            for (int r = 0; r < reps; r++)
                t[r] = stream(b, n, m != 1 ? B : 0.0, m != 0 ? B : 0.0) / ideal;
            ratio[m] = quantile(t, reps, 0.5);
        }
        printf("%.0f %.0f %.4f %.4f %.4f\n", B / 1e6, n, ratio[0], ratio[1], ratio[2]);
        fflush(stdout);
        int ok = 1;
        for (int m = 0; m < 3; m++)
            ok &= fabs(ratio[m] - 1.0) <= 0.03;
        if (ok && !broke) {
            if (lo_ok == 0)
                lo_ok = B;
            hi_ok = B;
            for (int m = 0; m < 3; m++)
                if (fabs(ratio[m] - 1) > fabs(worst_in_range - 1))
                    worst_in_range = ratio[m];
        } else if (lo_ok > 0) {
            broke = 1;
        }
    }
    out->worst_in_range = worst_in_range;
    out->lo_ok = lo_ok;
    out->hi_ok = hi_ok;
}

/* The latency section's verdict: the one-way median at L = 0, and the
 * smallest L from which every larger L is within (-1: none) with its median. */
struct lat_summary {
    double floor_l, floor_med, zero_med;
};

/* latency_floor: COUNT ping-pongs per configured latency. */
static void latency_floor(int b, int count, struct lat_summary *out)
{
    double *ow = malloc(sizeof *ow * (size_t)count), floor_l = -1, floor_med = 0, zero_med = 0;
    double lat_med[NLAT];
    int lat_ok[NLAT];
    if (!ow)
        die("setup", "out of memory");
    printf("\n\n# latency floor: %d-byte ping-pong, %d round trips per row, one-way =\n"
           "# RTT/2 in microseconds; excess = median - configured\n"
           "# latency_us median_us p90_us excess_us\n", PING_BYTES, count);
    for (size_t i = 0; i < NLAT; i++) {
        double L = lat_list[i], med, p90;
        pingpong(b, L, count, ow);
        med = quantile(ow, count, 0.5);
        p90 = quantile(ow, count, 0.9);
        printf("%.0f %.1f %.1f %.1f\n", L * 1e6, med * 1e6, p90 * 1e6, (med - L) * 1e6);
        fflush(stdout);
        lat_ok[i] = fabs(med - L) <= fmax(0.2 * L, 30e-6);
        lat_med[i] = med;
        if (L == 0)
            zero_med = med;
    }
    free(ow);
    /* The floor: the smallest L from which every larger L is within. */
    for (size_t i = NLAT; i-- > 1 && lat_ok[i];) {
        floor_l = lat_list[i];
        floor_med = lat_med[i];
    }
    out->floor_l = floor_l;
    out->floor_med = floor_med;
    out->zero_med = zero_med;
}

int main(int argc, char **argv)
{
    int quick = 0, reps = 3, lfd, port, a, b, status;
    double secs = -1, loop_rate;
    struct rate_summary rs;
    struct lat_summary ls;
    char err[ERR_LEN], peer[NET_ADDR_LEN];
    pid_t pid;

    if (parse_args(argc, argv, &quick, &reps, &secs) != 0)
        return CLI_EXIT_USAGE;
    if (secs < 0)
        secs = quick ? 0.15 : 0.5;
    clock_precise_timers();
    signal(SIGPIPE, SIG_IGN);
    buf = calloc(1, CHUNK);
    if (!buf)
        die("setup", "out of memory");
    if (net_listen("127.0.0.1", 0, &lfd, &port, err) != 0 ||
        net_connect("127.0.0.1", port, 5.0, &a, err) != 0 ||
        net_accept(lfd, 5.0, &b, peer, err) != 0)
        die("setup", err);
    close(lfd);
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        die("fork", strerror(errno));
    if (pid == 0) {
        close(b);
        child_loop(a);
        _exit(0);
    }
    close(a);

    printf("# bench_link: accuracy of the EMULATED link (link.h) over 127.0.0.1 TCP,\n"
           "# two processes, %ld CPUs online; median of %d runs%s\n",
           sysconf(_SC_NPROCESSORS_ONLN), reps, quick ? " (--quick)" : "");

    /* 1. unpaced loopback rate */
    {
        double bytes = quick ? 128.0 * (1 << 20) : 512.0 * (1 << 20), t[MAX_REPS];
        for (int r = 0; r < reps; r++)
            t[r] = stream(b, bytes, 0.0, 0.0);
        double med = quantile(t, reps, 0.5);
        loop_rate = bytes / med;
        printf("\n# loopback TCP, no link: bytes, median seconds, rate MB/s\n"
               "# bytes seconds rate_MBps\n%.0f %.6f %.1f\n", bytes, med, loop_rate / 1e6);
        fflush(stdout);
    }
    if (loopback_only) {
        send_cmd(b, CMD_QUIT, 0, 0, 0, 0);
        close(b);
        waitpid(pid, &status, 0);
        printf("loopback_MBps %.0f\n", loop_rate / 1e6);
        free(buf);
        return 0;
    }

    /* 2. rate accuracy; 3. latency floor */
    rate_accuracy(b, loop_rate / 2, secs, reps, &rs);
    latency_floor(b, quick ? 200 : 1000, &ls);

    send_cmd(b, CMD_QUIT, 0, 0, 0, 0);
    close(b);
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("child", "did not exit cleanly");

    printf("\n\n# summary: loopback %.0f MB/s unpaced.\n", loop_rate / 1e6);
    if (rs.lo_ok > 0)
        printf("# summary: rate within 3%% (egress, ingress and both) for B = %.0f .. %.0f MB/s"
               " (worst ratio %.4f)\n", rs.lo_ok / 1e6, rs.hi_ok / 1e6, rs.worst_in_range);
    else
        printf("# summary: no rate within 3%% on this run (host too busy?)\n");
    printf("# summary: latency floor (L = 0) %.1f us one-way; ", ls.zero_med * 1e6);
    if (ls.floor_l > 0)
        printf("every L >= %.0f us is within max(20%%, 30 us) (L = %.0f us: median %.1f us)\n",
               ls.floor_l * 1e6, ls.floor_l * 1e6, ls.floor_med * 1e6);
    else
        printf("the largest L is not within max(20%%, 30 us)\n");
    free(buf);
    return 0;
}
