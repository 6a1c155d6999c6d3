/* model_stale.c -- the parameter server's modes on the emulated link
 * (model.h, THE STALE MODES ON THE EMULATED LINK): what the server's one
 * NIC does to a step when the pushes come in at their own times and the
 * frames share the link round-robin.
 *
 * Both directions of the server's link are PROCESSOR SHARING: the server
 * reads a piece from each socket that has one in turn (link.h, ingress)
 * and writes the weights frames a piece at a time, round-robin over the
 * workers with a frame to go (egress.h; server_mode.c, PACED). With
 * pieces small against a frame, n frames on the link at once each move at
 * bw / n. ps_finish below is that queue for frames of one size.
 */
#include <math.h>
#include <stdlib.h>

#include "model.h"

/* ps_finish: n frames of s seconds each (at the full rate), released at
 * rel[0] <= rel[1] <= ... on a processor-sharing link: fin[i], when frame
 * i's last byte is through. Frames of one size finish in the order they
 * came (the older one always has less left), so one pointer (head)
 * follows the oldest unfinished frame; v is the service every frame on
 * the link has had since the start, vin[i] its value when frame i came. */
static void ps_finish(int n, const double *rel, double s, double *vin, double *fin)
{
    double t = rel[0], v = 0;
    int head = 0, next = 0;

    while (head < n) {
        while (next < n && rel[next] <= t)
            vin[next++] = v;
        if (next == head) {         /* the link is idle until the next frame */
            t = rel[next];
            continue;
        }
        int on = next - head;
        double done = t + (vin[head] + s - v) * on;     /* head's last byte, if no one comes */

        if (next < n && rel[next] < done) {
            v += (rel[next] - t) / on;
            t = rel[next];
        } else {
            v = vin[head] + s;
            t = done;
            fin[head++] = t;
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* link_args_ok: k >= 1 finite compute times >= 0, frames > 0, bw > 0,
 * lat >= 0, all finite. */
static int link_args_ok(int k, const double *compute, double frame_in, double frame_out,
                        double bw, double lat)
{
    if (k < 1 || !compute || !(frame_in > 0) || !(frame_out > 0) || !(bw > 0) || !(lat >= 0) ||
        !isfinite(frame_in / bw + frame_out / bw + lat))
        return 0;
    for (int r = 0; r < k; r++)
        if (!isfinite(compute[r]) || compute[r] < 0)
            return 0;
    return 1;
}

double model_ps_link_step(int k, int used, const double *compute, double frame_in,
                          double frame_out, double bw, double lat)
{
    double *c, *fin_in, *fin_out, *vin, step;

    if (!link_args_ok(k, compute, frame_in, frame_out, bw, lat) || used < 1 || used > k)
        return NAN;
    c = malloc(4 * (size_t)k * sizeof *c);
    if (!c)
        return NAN;
    fin_in = c + k;
    fin_out = fin_in + k;
    vin = fin_out + k;
    for (int r = 0; r < k; r++)
        c[r] = compute[r];
    qsort(c, (size_t)k, sizeof *c, cmp_double);
    /* the pushes in, each from the end of its worker's compute */
    ps_finish(k, c, frame_in / bw, vin, fin_in);
    /* the step is applied when the used-th push is in; its `used` workers'
     * frames leave then, each late push's reply when that push is in */
    for (int i = 0; i < used; i++)
        c[i] = fin_in[used - 1];
    for (int i = used; i < k; i++)
        c[i] = fin_in[i];
    ps_finish(k, c, frame_out / bw, vin, fin_out);
    step = fin_out[used - 1] + 2 * lat;
    free(c);
    return step;
}

double model_async_link_rate(int k, const double *compute, int slow, double frame_in,
                             double frame_out, double bw, double lat)
{
    double s_in = frame_in / bw, s_out = frame_out / bw, *q, qin = 0, qout = 0, u = 0;

    if (!link_args_ok(k, compute, frame_in, frame_out, bw, lat) || slow >= k)
        return NAN;
    if (!(q = calloc(2 * (size_t)k, sizeof *q)))
        return NAN;
    /* Schweitzer's approximate MVA: worker r finds the others' mean queue
     * on each link (the totals less its own) ahead of its frame */
    for (int it = 0; it < 10000; it++) {
        double nin = 0, nout = 0, change = 0;

        u = 0;
        for (int r = 0; r < k; r++) {
            double rin = s_in * (1 + qin - q[2 * r]), rout = s_out * (1 + qout - q[2 * r + 1]);
            double x = 1 / (compute[r] + 2 * lat + rin + rout);

            change = fmax(change, fabs(x * rin - q[2 * r]) + fabs(x * rout - q[2 * r + 1]));
            q[2 * r] = x * rin;
            q[2 * r + 1] = x * rout;
            nin += q[2 * r];
            nout += q[2 * r + 1];
            u += x;
        }
        qin = nin;
        qout = nout;
        if (change < 1e-13)
            break;
    }
    free(q);
    /* ssp with a persistent straggler: the others wait for it; its push
     * finds the ingress idle and releases the K - 1 of them at once, whose
     * frames its own pull shares the egress with */
    if (slow >= 0)
        u = fmin(u, k / (compute[slow] + 2 * lat + s_in + k * s_out));
    return u;
}
