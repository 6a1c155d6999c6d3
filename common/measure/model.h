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
 *   Rabenseifner (--algo rabenseifner): recursive halving then doubling,
 *   K = P a power of two: T = 2 log2 K a + 2 (K-1)/K n / bw; otherwise
 *   MPICH's rule: with P = 2^floor(log2 K) and r = K - P, the first 2r
 *   ranks pair up and the odd ones fold into the even ones before (one
 *   whole vector in) and get the result after (one out), 2 more steps of
 *   n: T = (2 log2 P + 2) a + (2 (P-1)/P + 2) n / bw. The busiest link
 *   (an even rank of a pair) carries 2 (P-1)/P n + n each way
 *   (common/coll/rabenseifner.c).
 *   the pipelined tree (--algo tree) and the double binary tree (--algo
 *   dbtree, two trees on half the vector each; common/coll/tree.c): the
 *   vector cut into S segments of at most 128 KiB (S = ceil(n / 128 KiB),
 *   per tree for dbtree), reduced up and broadcast down in periods of C
 *   swaps each (D = ceil(log2 K), S + 2D - 1 periods), as TCP runs them on
 *   one wire each way per host: a frame goes without waiting for its
 *   receiver (its header and first piece at once, the rest after the
 *   other end's header), a host's frames one after the other, a swap ends
 *   when the other end's frame is in; the calls back to back, each rank's
 *   timed from the end of its last (base/tree_shape.h, tree_cost: the
 *   schedule replayed, exact in a, b, n, K; the steps, MODEL_STEPS, are
 *   the latencies on the path that sets it):
 *     tree, dbtree  T = tree_cost(K, trees, S, n/(trees S), a, b)
 *   (K = 2: C = 1 and 2; K = 3: 2 and 4). The busiest link carries C n /
 *   trees each way: 3 n (tree), 2 n (dbtree).
 *   Swing (--algo swing-lat|swing-bw; common/coll/swing.c): rd's and
 *   Rabenseifner's steps and bytes with peers at distance 1, -1, 3, -5,
 *   ... instead of 1, 2, 4, ..., and Rabenseifner's fold for K not a power
 *   of two (the first 2r ranks pair up, the odd ones fold in):
 *     swing-lat  T = log2 K (a + n b); else (log2 P + 2)(a + n b)
 *     swing-bw   T = 2 log2 K a + 2 (K-1)/K n b;
 *                else (2 log2 P + 2) a + (2 (P-1)/P + 2) n b
 *   The same as rd's and Rabenseifner's: a model with one a and one b per
 *   rank knows no distance. Swing's gain is in the hops a torus's
 *   messages cross (psring_sim --platform torus:X:Y).
 *   the hierarchical ring (--algo hring --ranks-per-host G; common/coll/
 *   hring.c): a ring reduce-scatter inside each host (G ranks), a ring
 *   all-reduce across the H = K/G hosts of the matching chunks, a ring
 *   all-gather inside; with the links inside a host a_l + m b_l and
 *   across a + m b:
 *     T = 2 (G-1) (a_l + n/G b_l) + 2 (H-1) (a + n/K b)
 *   (model_hring_links). The emulated link gives every process one NIC of
 *   the same rate, whoever its peer is, so model_hring and model_query
 *   assume a_l = a, b_l = b: T = 2 (G + H - 2) a + 2 (K-1)/K n b, the
 *   ring's bytes in G + H - 2 latencies a phase instead of K - 1. G must
 *   divide K (no rule for a partial host: NaN otherwise). The busiest
 *   link carries the ring's 2 (K-1)/K n each way.
 *   ring against rd: equal at n* = (2(K-1) - s) a / ((s - 2(K-1)/K) b);
 *   below n* rd is faster, above it the ring. None (NaN) when rd is never
 *   slower (K = 2) or never faster.
 *
 * The server's link carries K n bytes per step; a ring worker's 2(K-1)/K n
 * whatever K is. That contrast is the lab.
 *
 * PLACEMENTS of the parameter server (a host is one emulated link; roles
 * on one host share it, and bytes between them never cross it):
 *
 *   separate (MODEL_PS, servers = S): S server hosts of their own, shard
 *     i the i-th 1/S of the vector. A server's link carries K n / S each
 *     way, a worker's n; the busiest carries max(K/S, 1) n. (Before issue
 *     15 the model ignored S.)
 *   colocated (MODEL_PS_COLOC, servers = k extra): one shard on each of
 *     the K worker hosts, owning a fraction x of the vector each, plus k
 *     extra CPU-only server hosts owning y = (1 - K x) / k each. BytePS
 *     (OSDI'20). Per step, each direction:
 *       worker host: its worker's push of what is not local, (1 - x) n,
 *                    plus its shard's sums for K-1 remote workers, (K-1) x n:
 *                    (1 + (K-2) x) n        (the pull: the same, reversed)
 *       extra host:  K y n
 *     THEOREM 1. Balancing the two (1 + (K-2) x = K y) gives
 *       x = (K - k) / (K^2 + k K - 2k),  y = 2 (K-1) / (K^2 + k K - 2k)
 *       t_opt = 2 K (K-1) n / ((K^2 + k K - 2k) bw)
 *     k = 0: x = 1/K, t_opt = 2(K-1)/K n / bw, the ring's bytes exactly
 *     (colocated S = K is reduce-scatter + all-gather in other clothes);
 *     k = K: x = 0, t_opt = n / bw, the separate PS with S = K. For k > K
 *     the worker's own n sets the pace: x = 0, y = 1/k, t_opt = n / bw.
 *   t_opt assumes push and pull overlap fully (MODEL_TOPT, no latency). A
 *   per-bucket pull approaches it: compare with model_ps_pipelined (below;
 *   t_opt + bucket / bw + 2a where the busiest link is a server's of
 *   S = K). A one-pull PS (every push, then every pull)
 *   is MODEL_TIME: ingress (the push phase, whose busiest link is the max
 *   of (1 - x) n out of a worker host, (K-1) x n into it, K y n into an
 *   extra server) then egress (the same, reversed). Theorem 1's split
 *   balances a whole step's traffic, not a phase's: an extra server only
 *   takes in during the push and only sends during the pull, so a one-pull
 *   PS with extra servers sits well above t_opt (K = 8, k = 2: each phase
 *   112/76 n / bw, t_opt 112/76 n / bw for the whole step).
 *
 * Everything that draws or prints the model reads it from here: psr_merge
 * (metrics.c, the CSV's model_s), bin/model (experiments/model.c: the seed's
 * table and one number per query, for the plots and the experiment scripts).
 */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>

/* The emulated link's PIECE (wire/link.h says why these sizes), here so
 * that the cost model prices the pieces the link sends (model_ps_sched):
 *     piece = min(max(LINK_PIECE_MIN, B * LINK_PIECE_S),
 *                 max(LINK_PIECE_CAP, B * LINK_PIECE_FAST_S), LINK_PIECE_MAX) */
#define LINK_PIECE_S    1e-3            /* a piece, in seconds of wire time */
#define LINK_PIECE_MIN  4096.0          /* ... but at least this many bytes */
#define LINK_PIECE_CAP  61440.0         /* ... and at most this many (HEAD_MAX, loopback's MSS) */
#define LINK_PIECE_FAST_S 250e-6        /* ... unless this much wire is more */
#define LINK_PIECE_MAX  (16u << 20)     /* largest piece at any rate */
/* The parameter server's weights go in pieces of at most MODEL_PS_CHUNK
 * (ps_server's write; common/ps/egress.h), a frame being its header's
 * MODEL_FRAME_HEADER bytes (wire/proto.h's PROTO_HEADER_SIZE; egress.c
 * checks that they agree) and the elements. */
#define MODEL_PS_CHUNK  (1u << 20)
#define MODEL_FRAME_HEADER 40

/* model_link_piece: the piece at rate B bytes/s > 0 (the formula above). */
size_t model_link_piece(double rate);
/* model_ps_piece: the parameter server's weights piece at rate B > 0:
 * min(model_link_piece(B), MODEL_PS_CHUNK) (common/ps/egress.c, whose
 * chunk is ps_server's MODEL_PS_CHUNK). model_last_piece: the last of the
 * pieces a frame of `frame` > 0 bytes is cut into: (0, piece]. The model
 * (model_ps_sched) and psring_sim's server (sim/ps_wire.h, ROUND-ROBIN
 * EGRESS) both cut by these. */
double model_ps_piece(double rate);
double model_last_piece(double frame, double piece);
/* model_ps_tail: the elements in the last piece of a weights frame of n
 * elements' bytes, its header included in the cut, pieces of `piece`
 * bytes (model_ps_sched's p). */
double model_ps_tail(double n, double piece);

/* MODEL_PS: S separate servers (servers = S). MODEL_PS_COLOC: a shard on
 * each worker's host plus `servers` = k >= 0 extra server hosts, Theorem
 * 1's split. */
enum model_algo { MODEL_PS, MODEL_RING, MODEL_RD, MODEL_PS_COLOC, MODEL_RABENSEIFNER,
                  MODEL_TREE, MODEL_DBTREE, MODEL_SWING_LAT, MODEL_SWING_BW, MODEL_HRING };

/* The trees' segment (common/coll/tree.h, TREE_SEG_BYTES; test_tree.c
 * checks that the two agree). */
#define MODEL_TREE_SEG_BYTES 131072.0

enum model_quantity {
    MODEL_TIME,       /* seconds per step (PS: ingress + egress) */
    MODEL_INGRESS,    /* PS only: the server's push phase, seconds */
    MODEL_EGRESS,     /* PS only: the server's pull phase, seconds */
    MODEL_BYTES_IN,   /* bytes into the busiest link per step (PS: one server's) */
    MODEL_BYTES_OUT,  /* bytes out of it per step */
    MODEL_STEPS,      /* messages in sequence per step: how many times a is paid */
    MODEL_TOPT,       /* bytes_in / bw: the step with every transfer overlapped and no
                       * latency (BytePS's t_opt for the PS placements) */
};

/* model_query: one quantity of one algorithm for K workers (k >= 1), S
 * servers (MODEL_PS: servers >= 1; MODEL_PS_COLOC: the extra servers,
 * >= 0; MODEL_HRING: G, the ranks per host, dividing K; ignored
 * otherwise), n bytes, bw bytes/s (> 0 for the times), lat
 * seconds. NaN when the quantity does not apply (ingress/egress of the
 * ring or rd). */
double model_query(enum model_algo algo, enum model_quantity q, int k, int servers,
                   double bytes, double bw, double lat);

/* model_psgd: --compress powersgd:R (base/powersgd.h) on the ring's or
 * rd's all-reduce of an n-byte vector of es-byte elements, seen as one
 * near-square matrix rows x cols (psgd_near_square): two all-reduces, of
 * rows R and of cols R elements, each model_query's (bytes and steps add
 * up); a time adds the compressor's own cost, cost seconds per element of
 * the vector (psgd_cost: measured). A matrix that does not pay at R
 * travels whole, one model_query of n bytes. */
double model_psgd(enum model_algo algo, enum model_quantity q, int k, double bytes, double es,
                  int rank, double cost, double bw, double lat);

/* model_codec: a compressor's CPU seconds per element of the vector in
 * one all-reduce by one rank of `algo` at K, from the costs of its
 * operations measured apart (base/compress.h, compress_cost), counted as
 * the code runs them (K = 1: nothing):
 *   ring (coll_cmp.c): encodes of n (the reduce-scatter's (K-1)/K n,
 *     own_final's n/K), decode-and-adds of (K-1)/K n (the reduce-scatter),
 *     decodes and finite checks of n (the all-gather's (K-1)/K n,
 *     own_final's n/K): enc + (K-1)/K dec_add + dec + check;
 *   ring, framed (top-k as an all-gather, coll_sparse.c): one encode of
 *     its own vector, K frames added: enc + K dec_add;
 *   rd (coll_cmp.c, the slowest rank: R = ceil(log2 K) rounds that add):
 *     the first encode, per round a decode, a decode-and-add and an
 *     encode, the last decode and its check: (R+1) (enc + dec) + R dec_add
 *     + check;
 *   PS (framed: frames.c's encode, store_frame.c's add): the worker's
 *     encode and the server's add of the last push (the K - 1 before it
 *     run while the later pushes arrive): enc + dec_add. */
struct compress_costs;
double model_codec(enum model_algo algo, int k, int framed, const struct compress_costs *c);

/* The byte split of a colocated placement: the fraction of the vector
 * each colocated shard owns, and each extra server. */
struct model_split {
    double colocated;   /* x, each of the K shards on the worker hosts */
    double extra;       /* y, each of the k extra servers (0 when k = 0) */
};
/* model_ps_split: Theorem 1's split for K workers and `extra` extra
 * servers (PLACEMENTS above); K x + k y = 1. */
struct model_split model_ps_split(int k, int extra);
/* model_ps_ranges: the split as element ranges of a vector of `elements`
 * elements, for the K + k servers in the order colocated 0..K-1, extra
 * 0..k-1 (even: 1/(K+k) each instead of Theorem 1's): server i owns
 * [first[i], first[i] + count[i]); each range ends where the cumulative
 * fraction times `elements` rounds to, so the ranges tile [0, elements)
 * (count 0: a server the split gives nothing). bin/model --split prints
 * these; launch.sh and psring_sim place them. */
void model_ps_ranges(int k, int extra, int even, unsigned long long elements,
                     unsigned long long *first, unsigned long long *count);
/* model_ps_mix: a quantity of the colocated placement under a split given
 * by hand (x each colocated shard, the rest shared equally by the extra
 * servers): model_query(MODEL_PS_COLOC, ...) is this at model_ps_split's
 * x. An even split over K + k servers is x = 1 / (K + k). NaN for a split
 * that is not one (x outside [0, 1/K], or x < 1/K with no extra server). */
double model_ps_mix(enum model_quantity q, int k, int extra, double x, double bytes,
                    double bw, double lat);
/* model_ps_topt: Theorem 1 as the paper writes it, 2 K (K-1) n /
 * ((K^2 + k K - 2k) bw), for 0 <= extra <= K (the tests hold
 * MODEL_TOPT to it); NaN outside that range. */
double model_ps_topt(int k, int extra, double bytes, double bw);
/* model_ps_pipelined: what a PS whose pull is per bucket is compared
 * with (issue 15; the CSV's model_s of a row with several buckets): the
 * pull of bucket i overlaps the push of bucket i+1, so the step is
 *     max(t_opt(n), P(n) + Q(b)) + 2a
 * t_opt(n): MODEL_TOPT of `algo` (MODEL_PS or MODEL_PS_COLOC), the
 * busiest link's whole step; P(n): the push phase of the vector and Q(b)
 * the pull phase of one bucket (MODEL_INGRESS, MODEL_EGRESS without a):
 * the last bucket's weights cannot leave before it is in. Separate,
 * S <= K: the server's link, (K/S)(n + b) / bw + 2a (one server: K (n +
 * b) / bw; measured 0.534 s against this 0.503 s at K = 4, n = 1 MiB, 2
 * buckets, 100 Mbit/s, where the t_opt + b / bw + 2a says 0.377
 * s); S = K: exactly the t_opt + b / bw + 2a; colocated, k = 0:
 * t_opt + 2a, the host's link busy with its own pushes while its shard
 * sends the earlier buckets' weights. One bucket (b = n) gives the
 * one-pull MODEL_TIME. Assumed: every bucket spreads over the servers as
 * the vector does (a bucket inside one shard leaves the other servers
 * idle meanwhile: not modelled). */
double model_ps_pipelined(enum model_algo algo, int k, int servers, double bytes,
                          double bucket, double bw, double lat);
/* model_ps_mix_pipelined: the same for the colocated placement under a
 * split given by hand (model_ps_mix's x; equal shards over K + k servers:
 * x = 1 / (K + k)). */
double model_ps_mix_pipelined(int k, int extra, double x, double bytes, double bucket,
                              double bw, double lat);

/* model_ps_spread: the one-server sync step, timed as time_s is (from the
 * LAST worker's entry, metrics.h), when the K workers entered over
 * `spread` seconds (their compute skew; evenly spread), pushing `push`
 * bytes each (a compressed frame) and pulling `pull` (the dense weights):
 *     T = a + max(push / bw, K push / bw - spread) + a + K pull / bw
 * The pushes of the workers that entered earlier are on the server's
 * link already when the last one enters (push j of K, entered (K-j)/(K-1)
 * spread early: the link ends at the latest of e_j + (K-j+1) push / bw,
 * which is the first or the last of them), so the skew hides up to
 * (K-1) push / bw of the ingress; a push smaller than the skew hides
 * nothing but itself. spread = 0: model_ps_step's t (pull = push). This
 * is why the uncompressed PS ran under model_ps_step and sign and top-k
 * over theirs (mlp, K = 4, 1 Gbit/s, entries 1.2-2.2 ms apart: none 4.86
 * ms against 5.24, sign 4.35 against 3.65; this model 4.03 and 3.63,
 * both 0.7-0.8 ms under the run: the host's, alike). Assumed: the
 * entries spread evenly, one spread for every step (lab_compression.sh
 * measures the median).
 * NaN for k < 1 or bw <= 0. */
double model_ps_spread(int k, double push, double pull, double spread, double bw, double lat);

/* model_ps_sched: the one-server sync step (a server on a host of its
 * own) as bin/ps_server's egress serves it, timed as time_s is; the seeds' 2a + 2 K n / bw (model_ps_step) stays the headline, and
 * this is what a row's model_s holds (metrics.h). The server cuts each
 * worker's weights frame (its header and n bytes of elements) into pieces
 * of P = min(model_link_piece(bw), MODEL_PS_CHUNK) and sends them
 * ROUND-ROBIN (common/ps/egress.h, as K flows through one NIC: each piece
 * at the link's full rate, one after the other). The full rounds end
 * together; the last round's pieces, p bytes each (the frame's tail: the
 * whole frame when it fits one piece), end p / bw apart, so the worker
 * served first has its weights (K-1) p / bw before the last, computes,
 * and its next push crosses the server's ingress (the link's other
 * direction) while the others still wait: the spread that
 * model_ps_spread prices,
 *     T = model_ps_spread(K, push, n, (K-1) p / bw, bw, a)
 *       = 2a + (K+1) n / bw             when the frame is one piece,
 *       = 2a + (2 K n - (K-1) p) / bw    when it is longer,
 * p counted in the model's bytes, elements only: n for a frame of one
 * piece, else the last piece of the frame with its header (all elements;
 * 40 bytes when n is a multiple of P: at 8 Mbit/s, 4096-byte pieces,
 * every power-of-two n from 4 KiB, which leaves the seeds' formula;
 * model_ps_tail). psring_sim cuts its frames the same way, --payload
 * sizes too (whose frames carry no header bytes on the wire);
 * and the same step after step (every step's last entry is the last
 * served). The seeds' formula is the limit of a fine-grained egress
 * (p -> 0), which no NIC that sends a flow's bytes in segments is; at
 * 250 Mbit/s, K = 4: 16 KiB 4.62 ms against 6.19 (measured 4.87),
 * 256 KiB 67.9 against 69.1, 4 MiB 1073 against 1074 (docs/link.md).
 * push: the pushed bytes (n, or a compressed frame's). Assumed: the
 * workers' compute is alike (a skew among them adds to the spread; bin/
 * model --spread prices a measured one) and the server sends nothing else
 * (its own host; colocated servers share the link with their worker's
 * pushes: model_ps_mix). S > 1 servers: the seeds' ingress + egress, not
 * derived (a worker's S pushes share its own link, so an early worker
 * feeds each server at bw / S: with the round-robin on, psring_sim read
 * 66.6 ms at K = 6, S = 3, 1 MiB, 500 Mbit/s, between this formula's 64.1
 * and the seeds' 67.5; it serves S > 1 servers' frames as flows that
 * share the wire, the seeds' formula). NaN for k < 1, servers < 1 or
 * bw <= 0. */
double model_ps_sched(int k, int servers, double push, double bytes, double bw, double lat);

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
double model_rabenseifner(int k, double bytes, double bw, double lat);
double model_tree(int k, double bytes, double bw, double lat);
double model_dbtree(int k, double bytes, double bw, double lat);
/* model_link_util: the share of the busiest rank's link (its egress) that
 * algo's own schedule keeps busy (metrics.h, MERGE RULES: link_util):
 * the trees' from their replay (base/tree_shape.h, tree_cost: util); 1
 * for every other name (the ring, rd, Rabenseifner, hring, Swing: in
 * lockstep every link is busy but for latency, which counts as busy),
 * NaN when out of memory. */
double model_link_util(const char *algo, int k, double bytes, double bw, double lat);
double model_swing_lat(int k, double bytes, double bw, double lat);
double model_swing_bw(int k, double bytes, double bw, double lat);
/* model_hring: the hierarchical ring, G ranks per host, every link alike;
 * model_hring_links: with the links inside a host of bw_local bytes/s and
 * lat_local seconds (NaN when G does not divide K). */
double model_hring(int k, int g, double bytes, double bw, double lat);
double model_hring_links(int k, int g, double bytes, double bw, double lat, double bw_local,
                         double lat_local);

/* ---------------------------------------------------------------------
 * THE ALL-REDUCE ALGORITHMS, ONE TABLE (issue 29). Whatever names, prices
 * or chooses an all-reduce reads model_algos[]: bin/model --algo,
 * psr_merge's model_s (metrics_merge.c), the selector (model_select:
 * ring_worker --algo auto, bin/model --algo auto) and the map
 * (experiments/lab_algorithms.sh, through bin/model). An algorithm joins
 * all of them with one row here (and its formula in model_query). The
 * hierarchical ring is not a row: its time needs the hosts' G (a topology
 * the row's (K, n, bw, a) does not carry), so psr_merge prices "hring:G"
 * itself and the selector and the map leave it out. Swing's rows are
 * twins (row.twin) of rd's and Rabenseifner's: the same a-b formula, so
 * they tie and the selector and the map skip them (Swing's gain is a
 * torus's hops: psring_sim --platform torus:X:Y).
 *
 * THE REDUCTION TERM g. The a-b model above (the CSV's model_s, the
 * seeds') counts only the wire. The selector adds g seconds per byte
 * reduced (one received element added into the local one; ring_worker
 * measures it with a local loop, ring_worker/auto.h) times the bytes the
 * busiest rank reduces in sequence, `reduced` x n:
 *     ring            (K-1)/K
 *     rd              floor(log2 K), +1 when K is not a power of two (the fold)
 *     rabenseifner    (P-1)/P, +1 likewise (P = 2^floor(log2 K))
 *     tree            2 (an inner rank adds two children; K = 2: 1)
 *     dbtree          1 (inner in one tree: two children of n/2)
 *     swing-lat, -bw  rd's and rabenseifner's (the same sums, other peers)
 *     ps              K / S (a server sums K pushes of its n / S; bin/model)
 *   T = T_ab + g reduced n
 * Assumed: the additions do not overlap the wire (they do in part, when a
 * piece is summed while the next arrives: the term is an upper bound).
 */
struct model_algo_row {
    const char *name;           /* --algo's spelling, the CSV's algo column */
    enum model_algo algo;
    const char *remainder;      /* the rule for K not a power of two */
    double (*time)(int k, double bytes, double bw, double lat);    /* T_ab */
    double (*reduced)(int k);   /* bytes reduced in sequence per byte of n */
    const char *twin;           /* the row whose formula this one has (Swing's on one
                                 * switch: rd's, Rabenseifner's), or NULL; a twin only
                                 * ties its row, so the selector and the map skip it */
};
extern const struct model_algo_row model_algos[];
extern const int model_nalgos;

/* model_algo_find: the row of an all-reduce named NAME, or NULL. */
const struct model_algo_row *model_algo_find(const char *name);
/* model_algo_time: T_ab + g reduced n of row A (gamma 0: the a-b model). */
double model_algo_time(const struct model_algo_row *a, int k, double bytes, double bw,
                       double lat, double gamma);
/* model_select: the row with the least model_algo_time at (K, n); ties go
 * to the earlier row (the ring first), so every rank that asks with the
 * same numbers gets the same answer. OUT: *runner the second best (NULL
 * with one row), t[0] the best's time, t[1] the runner-up's. */
const struct model_algo_row *model_select(int k, double bytes, double bw, double lat,
                                          double gamma, const struct model_algo_row **runner,
                                          double t[2]);
/* Bytes one direction of the busiest link carries per step. */
double model_ps_link_bytes(int k, double bytes);
double model_ring_link_bytes(int k, double bytes);

/* ---------------------------------------------------------------------
 * THE OTHER COLLECTIVES, TENSOR AND PIPELINE PARALLELISM (seed 003).
 *
 * Standalone collectives of n bytes (n: what one rank contributes, the
 * size nccl-tests prints), as ring_worker --bench --coll runs them:
 *   all_reduce      the ring above: 2(K-1) a + 2(K-1)/K n b
 *   reduce_scatter  one ring phase: (K-1) a + (K-1)/K n b
 *   all_gather      the same
 *   broadcast       a pipelined chain of P = ceil(n / seg) segments (seg:
 *   reduce          ring_worker's --piece): (P + K - 2) (a + n b / P);
 *                   every rank's link carries n one way
 *   alltoall        pairwise exchange, K-1 steps; with imbalance F (the hot
 *                   rank gets F n / K from each rank, a2a.h) every step
 *                   waits for a block of F n / K:
 *                   (K-1) a + (K-1) F n b / K   (F = 1: balanced)
 * Bytes of the busiest rank's link per collective: 2(K-1)/K n (all_reduce),
 * (K-1)/K n (reduce_scatter, all_gather), n (broadcast, reduce), and for
 * alltoall (K-1) F n / K in (the hot rank), n - the own block out.
 * busbw = algbw x nccl-tests' factor (model_busbw_factor): 2(K-1)/K,
 * (K-1)/K, (K-1)/K, 1, 1, (K-1)/K.
 *
 * Tensor parallelism (Megatron): each transformer layer ends its attention
 * and its MLP block in an all-reduce of the activations [b x s x h] over
 * the t tensor-parallel ranks in the forward pass, and their conjugates
 * in the backward pass: 4 ring all-reduces per layer per step (the seed's
 * "4 x num_layers all-reduces per step"), on the critical path.
 *     T_layer = 4 (2(t-1) a + 2(t-1)/t A b),   A = b s h x element bytes
 * Pipeline parallelism, p stages, m micro-batches (GPipe, also 1F1B):
 *     bubble = (p - 1) / (m + p - 1)
 */
enum model_coll {
    MODEL_COLL_ALL_REDUCE, MODEL_COLL_REDUCE_SCATTER, MODEL_COLL_ALL_GATHER,
    MODEL_COLL_BROADCAST, MODEL_COLL_REDUCE, MODEL_COLL_ALLTOALL,
};

/* model_coll_parse: nccl-tests' name ("all_reduce", ... "alltoall") -> the
 * collective, or -1; model_coll_name: the reverse, or NULL. */
int model_coll_parse(const char *name);
const char *model_coll_name(int coll);
/* model_busbw_factor: nccl-tests' busbw / algbw for K ranks (0 at K = 1). */
double model_busbw_factor(int coll, int k);
/* model_coll: quantity q (MODEL_TIME, MODEL_BYTES_IN, MODEL_BYTES_OUT,
 * MODEL_STEPS; NaN for the others) of the collective for K ranks and n
 * bytes; seg: the chain's segment in bytes (broadcast, reduce; NaN there
 * without one), imbalance F in 1 .. K (alltoall; NaN there without one;
 * ignored by the others). */
double model_coll(int coll, enum model_quantity q, int k, double bytes, double bw, double lat,
                  double seg, double imbalance);
/* model_tp_layer: the tensor-parallel all-reduces of one layer per step
 * (4 ring all-reduces of act_bytes over t ranks), seconds. */
double model_tp_layer(int t, double act_bytes, double bw, double lat);
/* model_pipeline_bubble: (p-1)/(m+p-1), the idle share of a pipeline of
 * p >= 1 stages and m >= 1 micro-batches. */
double model_pipeline_bubble(int p, int m);

/* ---------------------------------------------------------------------
 * STRAGGLERS AND THE PARAMETER SERVER'S MODES (issue 16; common/ps/mode.h).
 *
 * Worker r computes a step in c_r seconds (EMULATED: common/train/compute.h,
 * --backward-time times its --straggler factor and jitter); t is the
 * step's communication, from the models above (model_ps_step for the PS,
 * model_ring for the ring), the same for every worker.
 *
 *   sync (ring, sync PS)  every step waits for the slowest:
 *                            T_sync = max_r c_r + t
 *   backup:b              a step takes the first K - b pushes: the
 *                         (K-b)-th smallest c_r sets it:
 *                            T_backup = c_(K-b) + t
 *                         one straggler and b >= 1: the straggler-free
 *                         step c + t. Each step uses (K-b)/K of the batch.
 *   async                 worker r applies an update every c_r + t, alone:
 *                            U_async = sum_r 1 / (c_r + t)  updates/s
 *                         each of b_r examples (one worker's share), stale
 *                         by about U (c_r + t) - 1 updates on average
 *                         (K - 1 when all are equal).
 *   ssp:s                 async, but no worker more than s steps ahead of
 *                         the slowest: with a PERSISTENT straggler every
 *                         worker runs at the slowest one's pace in the
 *                         long run, U_ssp = K / (max_r c_r + t); the slack
 *                         s only absorbs transient jitter and pauses (not
 *                         modelled).
 *
 * Assumed (with --comm; on the link, THE STALE MODES below): the server's
 * link is not saturated by the extra pushes of the
 * fast workers in async/ssp (their t is the unloaded one), and compute
 * does not overlap communication. Time to a target loss is NOT modelled:
 * it depends on how staleness and smaller effective batches slow
 * convergence, which the lab measures (experiments/lab.sh --only
 * stragglers).
 *
 * compute[k]: c_r in seconds (finite, >= 0); t >= 0; NaN otherwise (and
 * for b outside 0 .. K-1). model_backup_step is O(K^2): K in the
 * hundreds. */
double model_sync_step(int k, const double *compute, double t);
double model_backup_step(int k, int b, const double *compute, double t);
double model_async_rate(int k, const double *compute, double t);
double model_ssp_rate(int k, const double *compute, double t);

/* THE STALE MODES ON THE EMULATED LINK (issue 30; model_stale.c;
 * server_mode.c, PACED). With the link (bin/model --stragglers --bytes N
 * --bw RATE) a frame is s_in = (header + n)/bw seconds in, s_out out, a
 * latency a each way, and BOTH directions of the server's NIC are
 * PROCESSOR SHARING: the server reads a piece from each socket with one in
 * turn and writes the weights frames a piece at a time round-robin, so m
 * frames on the link at once each move at bw / m. The ring: model_ring's t.
 *
 * sync and backup:b (model_ps_link_step, per step, used = K - b): every
 * worker starts the step when its pull is in (round-robin: the pulls end
 * together) and pushes when ITS compute c_r ends, so the pushes of the
 * early workers go in while the later ones still compute; the step is
 * applied when the used-th push is in, and the used frames go out then,
 * each late push's reply (the current weights, backup) joining the
 * round-robin when that push is in:
 *     A    = the used-th finish of K frames of s_in released at c_r
 *     step = the used frames' finish, released at A with the late
 *            replies, frames of s_out, + 2a
 * With every c_r equal (no jitter, no straggler) the sync step is
 * c + K (s_in + s_out) + 2a, model_ps_step's t with headers; with a 3x
 * straggler it is its c + s_in + K s_out + 2a: the other pushes are in
 * before it (what the old "max c_r + model_ps_step" charged again). A
 * straggler that is late for every step (backup) lands at a random phase
 * of the others' steps, which a per-step model cannot place: left out
 * (its frames add s_in + s_out of the link's time once per its own step).
 *
 * async (model_async_link_rate, on each worker's MEAN compute c_r over the
 * steps: the long-run rate): a closed network, each worker a customer who
 * computes c_r, pays 2a, and queues a frame on each PS direction; its rate
 * by Schweitzer's approximate mean value analysis: worker r's frame finds
 * the others' mean queue Q_i - q_ri ahead of it on link direction i,
 *     R_ri = s_i (1 + Q_i - q_ri),   X_r = 1 / (c_r + 2a + R_rin + R_rout),
 *     q_ri = X_r R_ri,               U = sum_r X_r   updates/s
 * iterated to its fixed point (exact for K = 1; a PS queue's mean is the
 * same for any service time spread, so the jitter needs no term). Each
 * update carries s_in + s_out of the link's time and 2 (header + n) bytes.
 * ssp:s with a PERSISTENT straggler (slow: its rank; -1 for async, and
 * for ssp without one, where the slack absorbs the jitter): async's rate,
 * but no more than the straggler's pace: the others run s steps ahead and
 * wait for it, so its push finds the ingress idle and releases the K - 1
 * of them at once, and its own pull shares the egress with their K - 1
 * frames:
 *     U <= K / (c_slow + 2a + s_in + K s_out)
 * (simplified: the others are taken to be waiting at every push of the
 * straggler, true once its step is longer than theirs plus a round of the
 * link; a straggler barely slower than the others' jitter would not keep
 * them all waiting).
 *
 * Both: NaN for a bad input (k < 1, a compute time not finite or < 0,
 * frame bytes or bw not > 0, a < 0; used outside 1 .. K; slow >= K). Frames of
 * frame_in and frame_out bytes, headers included, at bw bytes/s. */
double model_ps_link_step(int k, int used, const double *compute, double frame_in,
                          double frame_out, double bw, double lat);
double model_async_link_rate(int k, const double *compute, int slow, double frame_in,
                             double frame_out, double bw, double lat);

#endif /* MODEL_H */
