/* model.c -- alpha-beta formulas (derivations in model.h). */
#include "model.h"

double model_ps_link_bytes(int k, double bytes)
{
    return (double)k * bytes;
}

double model_ring_link_bytes(int k, double bytes)
{
    return k <= 1 ? 0.0 : 2.0 * (double)(k - 1) / (double)k * bytes;
}

double model_ps_ingress(int k, double bytes, double bw, double lat)
{
    return lat + model_ps_link_bytes(k, bytes) / bw;
}

double model_ps_egress(int k, double bytes, double bw, double lat)
{
    return lat + model_ps_link_bytes(k, bytes) / bw;
}

double model_ps_step(int k, double bytes, double bw, double lat)
{
    return model_ps_ingress(k, bytes, bw, lat) + model_ps_egress(k, bytes, bw, lat);
}

double model_ring(int k, double bytes, double bw, double lat)
{
    return k <= 1 ? 0.0 : 2.0 * (double)(k - 1) * lat + model_ring_link_bytes(k, bytes) / bw;
}

/* Recursive doubling (ring_worker/rd.c): log2 K exchanges of the whole
 * vector when K is a power of two; otherwise the extra ranks fold in first
 * and get the result back at the end, two more exchanges. */
double model_rd(int k, double bytes, double bw, double lat)
{
    int steps = 0;
    while ((1 << (steps + 1)) <= k)
        steps++;
    if ((1 << steps) != k)
        steps += 2;
    return steps * (lat + bytes / bw);
}
