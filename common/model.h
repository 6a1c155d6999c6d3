/* model.h -- the alpha-beta cost model, the formulas in one place.
 *
 * Sending a message of n bytes over a link costs T(n) = a + n b: a is the
 * latency (seconds), b = 1/bandwidth (seconds per byte). psring's emulated
 * link gives every process one NIC of bandwidth bw in each direction and
 * one-way latency a; the models below follow from docs/design.md:
 *
 *   parameter server, one step (push then pull), K workers, n bytes each:
 *     ingress  = a + K n / bw     (K pushes share the server's one inbound link)
 *     egress   = a + K n / bw     (K copies of the weights leave through it)
 *     step     = ingress + egress
 *   ring all-reduce: 2(K-1) steps of n/K bytes each way, full duplex:
 *     T = 2(K-1) a + 2 (K-1)/K n / bw
 *   recursive doubling (--algo rd), K a power of two: log2 K exchanges of
 *   the whole vector, T = log2 K (a + n / bw); otherwise two more (the
 *   fold of the extra ranks in and the result back out)
 *
 * The server's link carries K n bytes per step; a ring worker's carries
 * 2(K-1)/K n whatever K is. That contrast is the lab.
 */
#ifndef MODEL_H
#define MODEL_H

double model_ps_ingress(int k, double bytes, double bw, double lat);
double model_ps_egress(int k, double bytes, double bw, double lat);
double model_ps_step(int k, double bytes, double bw, double lat);
double model_ring(int k, double bytes, double bw, double lat);
double model_rd(int k, double bytes, double bw, double lat);
/* Bytes one direction of the busiest link carries per step. */
double model_ps_link_bytes(int k, double bytes);
double model_ring_link_bytes(int k, double bytes);

#endif /* MODEL_H */
