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
