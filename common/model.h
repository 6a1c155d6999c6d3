/* model.h -- the alpha-beta cost model, the formulas in one place.
 *
 * Sending a message of n bytes over a link costs T(n) = a + n b: a is the
 * latency (seconds), b = 1/bandwidth (seconds per byte). psring's emulated
 * link gives every process one NIC of bandwidth bw in each direction and
 * one-way latency a; the models below follow from docs/design.md:
 *
 *   parameter server, one step (push then pull), K workers, n bytes each,
 *   S servers (each holds 1/S of the vector, so each link carries 1/S):
 *     ingress  = a + K n / (S bw)   (K pushes share a server's inbound link)
 *     egress   = a + K n / (S bw)   (K copies of the weights leave through it)
 *     step     = ingress + egress
 *   ring all-reduce: 2(K-1) steps of n/K bytes each way, full duplex:
 *     T = 2(K-1) a + 2 (K-1)/K n / bw
 *   recursive doubling (--algo rd), K a power of two: s = log2 K exchanges
 *   of the whole vector, T = s (a + n / bw); otherwise s = floor(log2 K) + 2
 *   (the fold of the extra ranks in and the result back out, docs/rd.md)
 *   ring against rd: equal at n* = (2(K-1) - s) a / ((s - 2(K-1)/K) b);
 *   below n* rd is faster, above it the ring. None (NaN) when rd is never
 *   slower (K = 2) or never faster.
 *
 * The server's link carries K n bytes per step; a ring worker's 2(K-1)/K n
 * whatever K is. That contrast is the lab.
 *
 * Everything that draws or prints the model reads it from here: psr_merge
 * (metrics.c, the CSV's model_s), bin/model (experiments/model.c: the seed's
 * table and one number per query, for the plots and the experiment scripts).
 */
#ifndef MODEL_H
#define MODEL_H

enum model_algo { MODEL_PS, MODEL_RING, MODEL_RD };

enum model_quantity {
    MODEL_TIME,       /* seconds per step (PS: ingress + egress) */
    MODEL_INGRESS,    /* PS only: the server's push phase, seconds */
    MODEL_EGRESS,     /* PS only: the server's pull phase, seconds */
    MODEL_BYTES_IN,   /* bytes into the busiest link per step (PS: one server's) */
    MODEL_BYTES_OUT,  /* bytes out of it per step */
    MODEL_STEPS,      /* messages in sequence per step: how many times a is paid */
};

/* model_query: one quantity of one algorithm for K workers (k >= 1), S
 * servers (servers >= 1, PS only; 1 otherwise), n bytes, bw bytes/s (> 0
 * for the times), lat seconds. NaN when the quantity does not apply
 * (ingress/egress of the ring or rd). */
double model_query(enum model_algo algo, enum model_quantity q, int k, int servers,
                   double bytes, double bw, double lat);
/* model_crossover: n* in bytes where the ring and rd cost the same at K
 * workers; NaN when they never cross. */
double model_crossover(int k, double bw, double lat);
/* model_rd_steps: recursive doubling's exchanges per step, s above. */
int model_rd_steps(int k);

/* The one-server shorthands that psr_merge and the table use. */
double model_ps_ingress(int k, double bytes, double bw, double lat);
double model_ps_step(int k, double bytes, double bw, double lat);
double model_ring(int k, double bytes, double bw, double lat);
double model_rd(int k, double bytes, double bw, double lat);
/* Bytes one direction of the busiest link carries per step. */
double model_ps_link_bytes(int k, double bytes);
double model_ring_link_bytes(int k, double bytes);

#endif /* MODEL_H */
