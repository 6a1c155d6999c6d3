/* client.h -- the worker's side of the parameter-server protocol: one TCP
 * connection per server, the HELLO/WELCOME handshake, then per step the
 * PUSH frames of the gradient sum (one per server, or one per bucket and
 * server: ps_client_push) and the WEIGHTS frames back; BYE at the end. The
 * wire format is common/wire/proto.h.
 *
 * RANGES. Each server says in its WELCOME which elements [lo, hi) of the
 * parameter vector it owns (its --shard I/S or --range FIRST:COUNT; uneven
 * ranges carry BytePS's split). ps_client_connect checks that the ranges
 * of the servers it was given tile [0, n) exactly, no gap and no overlap,
 * and refuses otherwise, naming the servers. The client pushes each server
 * its slice of the gradient and receives that slice of the new weights.
 *
 * PER-BUCKET PULL. A server sends a part of its new weights as soon as
 * every worker has pushed it (common/ps/store.h, RELEASE): while this
 * worker still pushes the lower buckets of its gradient, the weights of
 * the upper ones come back. So each connection has a RECEIVER thread that
 * reads the step's WEIGHTS frames as they come (from the top of the
 * server's range down, each ending where the one before began) into the
 * client's own buffer of n elements, not into the caller's weights: the
 * backward pass may still be reading those. ps_client_pull_begin starts
 * the receivers for a step (the worker calls it before the first push of
 * the step's last pass); ps_client_pull waits for them and copies the new
 * weights into the caller's buffer.
 *
 * OWN TIMELINE (issue 27; link.h, OWN CORES). A worker's host has cores
 * of its own; on one machine its receivers, woken when a server's last
 * weights are in, and then the caller, woken by the last receiver, wait
 * for a CPU that other "hosts" hold (a colocated job at K = 4 on 2 cores:
 * 0.2-7 ms a step after the link had released the last bytes). As a ring
 * rank's collective does, the pull's end is taken on the host's own
 * timeline: each receiver notes when its last bytes were in plus the CPU
 * it used since (io->own_end), and the pull ends at the latest of those,
 * or when the caller called ps_client_pull if that was later;
 * ps_client_pull_late says how much later the real return came. Only the
 * waits for a CPU after the bytes were in are taken back: the bytes'
 * arrival, the copy into the caller's buffer and everything before the
 * call stay real.
 *
 * PARALLELISM. With S > 1, one thread per server also runs that server's
 * pushes, so the S servers receive at the same time (a server's ingress
 * link is the bottleneck; sending to them one after the other would add
 * their ingress times up). With S = 1 the caller's thread pushes. Every
 * thread is started by ps_client_connect and waits on a condition
 * variable between steps, so a step creates no thread and allocates
 * nothing.
 *
 * STREAMED PUSHES (S > 1). ps_client_push queues the bucket (a ring of
 * PS_CLIENT_QUEUE entries) and returns; each server's pusher sends its
 * parts of the queued buckets in order, without waiting for the other
 * pushers. The servers' ranges are contiguous and the buckets too, so one
 * bucket mostly lands on one server: a barrier per bucket would use the
 * servers' links one after another, and BytePS's t_opt (every server
 * receiving all the time) could not be reached. The push of a pass's last
 * bucket (the one starting at element 0) waits until every queued part
 * is sent, so a pass's gradient buffer must stay valid, unchanged, from
 * its first push until its last push returns (the next micro-batch may
 * overwrite it after that: --mistake sync-every-micro). A full ring makes
 * the push wait for the slowest pusher. A failure is reported by the push
 * that finds it (the ones after it are dropped, not sent).
 *
 * THE EMULATED LINK (link.h) is not thread-safe as a whole, but its two
 * directions are independent: on each connection the pusher uses the
 * egress half and the receiver the ingress half. Each connection has its
 * own link, of rate --link-bw x (the server's elements / n): a NIC shared
 * by S flows of those sizes, all finishing together, as one link of rate
 * --link-bw would carry them. SIMPLIFICATION: it differs from one shared
 * link only when the flows do not start together (a real NIC would then
 * give the busy ones more). With S = 1 it is exactly the worker's one link.
 * With the host's link (cfg->link_host) every connection books the host's
 * one clock, and each connection to a server off the host also gets its
 * share of the host's egress (link.h, FLOW SHARES): its bytes per step
 * over the worker's pushes off the host, so that the pushes together may
 * take the whole NIC and finish together; the server on the host (another
 * process) takes its turn on the host's clock piece by piece. Theorem 1's
 * uneven split needs it: served piece by piece in turn, the small shards'
 * pushes would take as much of the NIC as the extra servers' big ones,
 * and those servers' links would idle early and finish late. (Until
 * issue 27 the shares were of the host's whole egress, the server's
 * weights included, so with one bucket, where the pushes and the weights
 * never overlap, the pushes went at (K-1)/K n over 2(K-1)/K n of the
 * rate: half of it, and a colocated step took 1.5-1.7x its model.)
 *
 * SERVER PARTS. A push goes to a server in frames of that server's share
 * of the bucket: count x (its elements / n). The servers' ranges are
 * contiguous and the buckets too, so a bucket mostly lands on one server;
 * whole, its part would take that server S times as long to come in from
 * every worker as the bucket takes on the worker's link, and its weights
 * could go back only then. In frames of its share, each server gets its
 * next part from all K workers in about one bucket's time on the link (as
 * if each bucket were split over the servers, as BytePS partitions
 * tensors), and releases it (store.h, RELEASE): the pipelined model's one
 * bucket of delay. With S = 1 a push is one frame. cfg->whole_parts (the
 * simulator) sends each server's part as one frame instead.
 *
 * WAITS. Every wait has the idle-progress timeout T (--timeout) but one:
 * the wait for each WEIGHTS header allows 1.5T, because it includes
 * waiting for the other workers, whom the server watches with T (see
 * client.c, PULL WAIT).
 *
 * ERRORS. Every function returns 0 or a negative err.h code and fills
 * err[ERR_LEN] with one line naming the server (index and address) and,
 * once training has started, the step. An ERROR frame from a server is
 * reported with its text; EOF, the idle timeout (--timeout) and a frame
 * that is not the one expected (type, step, element range, length) are
 * reported as what they are. After an error the client is only good for
 * ps_client_abort and ps_client_close.
 *
 * THE TRANSPORT AND THE THREADS. What a connection is (dial, send, receive,
 * shutdown, close) is a table of five functions, struct ps_client_io:
 * cfg->io NULL is TCP (ps_client_io_tcp: auth_dial, net_send_all and
 * net_recv_all through the connection's emulated link), which bin/ps_worker
 * uses; bin/psring_sim fills it with SimGrid byte streams (sim/ps_client.c).
 * Likewise what a thread, a lock and a condition variable are: cfg->exec
 * NULL is POSIX threads (common/train/overlap.h, THE EXECUTOR); the
 * simulator gives SimGrid's actors. The protocol above (client.c,
 * client_sync.c, frames.c) is the same code for both.
 *
 * SIZES. cfg->sizes_only: the client never sees an element (the
 * simulator's --payload sizes): no receive buffer, and the gradient and
 * weights given to the calls are NULL; the frames are the same, their
 * elements sent and received as NULL buffers the transport counts.
 *
 * OWNERSHIP. ps_client_init allocates the per-server state and the
 * receive buffer (n elements), which ps_client_close frees (after joining
 * the threads and closing the sockets); cfg->servers is parsed during init
 * and not kept. The gradient and weights buffers given to the calls are
 * the caller's; they must stay valid for the call only, but for the
 * gradient of a pass with S > 1 (STREAMED PUSHES).
 */
#ifndef PS_CLIENT_H
#define PS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "wire/auth.h"
#include "base/err.h"
#include "wire/link.h"
#include "wire/net.h"
#include "wire/proto.h"

#define PS_CLIENT_MAX_SERVERS 256
#define PS_CLIENT_NAME_LEN (NET_ADDR_LEN + 32)
#define PS_CLIENT_QUEUE 64           /* buckets queued for the pushers (S > 1) */

struct ps_conn;
struct overlap_exec;

/* The flags of a send or a receive (struct ps_client_io). */
#define PS_IO_MORE 1        /* send: more of the same frame, or of the same push,
                               follows at once (a simulated stream sends them as
                               one message) */
#define PS_IO_ELEMENTS 2    /* the bytes are elements: the payload the records count; the
                               buffer is NULL with sizes_only */
#define PS_IO_UNPACED 4     /* not through the emulated link (not paced, not counted):
                               the best-effort ERROR frames of a client giving up */
#define PS_IO_FRAME 8       /* recv: part of the frame k->rframe follows (frames.c):
                               under its deadline (net.h, FRAME DEADLINES) */

/* A connection's transport (THE TRANSPORT AND THE THREADS): each function
 * gets the table's ctx and the connection (k->host, k->port, k->name,
 * k->link; k->io is the transport's own per-connection pointer, NULL
 * until dial). dial opens k and runs the AUTH handshake (c->key,
 * PROTO_AUTH_PS), retried until c->timeout; send and receive move exactly
 * len bytes or fail, waiting at most `idle` seconds without progress; a
 * failure returns a negative err.h code with one line naming the peer in
 * why (ERR_LEN). shutdown wakes whatever waits on k (how: SHUT_RD ends a
 * receive, SHUT_RDWR a send too); close ends k (once dial succeeded). */
struct ps_client_io {
    int (*dial)(void *ctx, struct ps_conn *k, char *why);
    int (*send)(void *ctx, struct ps_conn *k, const void *buf, size_t len, double idle,
                int flags, char *why);
    int (*recv)(void *ctx, struct ps_conn *k, void *buf, size_t len, double idle, int flags,
                char *why);
    void (*shutdown)(void *ctx, struct ps_conn *k, int how);
    void (*close)(void *ctx, struct ps_conn *k);
    /* OWN TIMELINE (optional; NULL: none, as in the simulator, whose
     * clock is its own). now: the time, on the clock of link.h. own_end:
     * called by k's receiver right after its step's last receive: when,
     * on this emulated host's own timeline, that receive ended (its last
     * bytes in, plus the CPU the thread used since; link.h, OWN CORES),
     * or NAN when it cannot say. */
    double (*now)(void *ctx);
    double (*own_end)(void *ctx, struct ps_conn *k);
};

/* TCP sockets (client_io.c): bin/ps_worker's transport. */
extern const struct ps_client_io ps_client_io_tcp;

struct ps_client_cfg {
    const char *servers;        /* "HOST:PORT[,HOST:PORT...]" */
    uint32_t rank, world;       /* this worker, K */
    struct proto_hello hello;   /* n (the FULL count), dtype, workload,
                                   seed, batch: sent to every server */
    const struct auth_key *key; /* the job's secret (auth.h), kept by pointer */
    double link_bw;             /* bytes/s for the whole NIC, 0 = off */
    double link_latency;        /* seconds */
    const char *link_host;      /* --link-host FILE: the host's shared link (link.h,
                                   HOST LINKS), or NULL: a NIC of the worker's own,
                                   split equally over the S connections */
    int has_local, local_server; /* --local-server I: server I is on this host, its
                                   connection bypasses the link (has_local 0: none) */
    double timeout;             /* idle-progress timeout, seconds (> 0) */
    const struct ps_client_io *io;  /* the transport, NULL: TCP (kept by pointer) */
    void *io_ctx;               /* its ctx */
    const struct overlap_exec *exec;    /* the threads, NULL: POSIX (kept by pointer) */
    int sizes_only;             /* no elements anywhere (SIZES) */
    int whole_parts;            /* a push's part for a server is one frame, not
                                   frames of the server's share (SERVER PARTS): the
                                   simulator's simplification */
};

struct ps_client;

/* One server shard and the thread that talks to it. */
struct ps_conn {
    struct ps_client *owner;
    int index;                       /* i of S */
    char host[NET_HOST_LEN];
    int port;
    char name[PS_CLIENT_NAME_LEN];   /* "server I (HOST:PORT)", for messages */
    int fd;                          /* TCP: the socket, -1 when closed */
    int up;                          /* dialled and not closed */
    void *io;                        /* the transport's own (ps_client_io) */
    int clean;                       /* the stream is at a frame boundary */
    uint64_t lo, hi;                 /* elements this server owns (its WELCOME) */
    struct link link;                /* this connection's share of the NIC */
    unsigned char out[PROTO_HEADER_SIZE + PROTO_HELLO_SIZE];   /* frame head */
    unsigned char in[PROTO_HEADER_SIZE];
    struct net_frame rframe;         /* the incoming frame's deadline (PS_IO_FRAME) */
    void *thread;                    /* the executor's handle */
    int started;                     /* push thread running (S > 1) */
    uint64_t taken;                  /* queue entries it has finished (STREAMED PUSHES) */
    int rc;                          /* result of its failed push */
    int told;                        /* the server sent ERROR (its reason is in err) */
    uint64_t welcome_step;           /* the step its WELCOME said */
    int share;                       /* its link is its share of the worker's own NIC,
                                        re-rated by the range in WELCOME */
    char err[ERR_LEN];
    /* the receiver (PER-BUCKET PULL) */
    void *rthread;
    int rstarted;                    /* receiver running */
    uint64_t rseen;                  /* the pull generation it last finished */
    int rrc;                         /* its result */
    int rtold;                       /* its failure is the server's ERROR */
    double rend;                     /* its last receive's end on the host's own
                                        timeline (io->own_end; NAN: unknown) */
    char rerr[ERR_LEN];
};

struct ps_client {
    uint32_t rank, world;
    int nservers;
    size_t n, elem;
    int dtype;
    double timeout;
    double link_bw, link_latency;    /* the NIC, shared out after the WELCOMEs */
    int host_link;                   /* cfg->link_host was given */
    int local;                       /* cfg->local_server, or -1 */
    struct proto_hello hello;
    const struct auth_key *key;
    const struct ps_client_io *io;
    void *io_ctx;
    const struct overlap_exec *ex;   /* the threads (never NULL after init) */
    int sizes_only;
    int whole_parts;                 /* cfg->whole_parts */
    const struct compressor *comp;   /* hello.compress's (store.h, COMPRESSED PUSHES) */
    size_t push_elem;                /* bytes of one PUSH element on the wire */
    unsigned char *wire;             /* comp not "none": n encoded elements, each
                                        push's part encoded here before it goes
                                        (owned; NULL with sizes_only) */
    unsigned char *ef;               /* comp not linear: its error-feedback state,
                                        each server's range's at lo x state_elems
                                        elements (owned; NULL otherwise) */
    struct ps_conn *conns;           /* nservers entries (owned) */
    /* The threads' hand-off: the push queue and the pull generation,
     * under mu. */
    void *mu;                        /* the executor's lock and conditions */
    void *go, *done;
    int sync_ready;                  /* mu/go/done/rgo/rdone initialised */
    void *rgo, *rdone;               /* the receivers' start and end */
    uint64_t pull_gen;               /* bumped by ps_client_pull_begin */
    uint64_t pull_step;              /* the step the receivers are on */
    int pulling;                     /* pull_gen is started, not yet collected */
    double pull_late;                /* the last ps_client_pull's end: how much later
                                        than on the host's own timeline (OWN TIMELINE) */
    double late_total;               /* pull_late summed over every pull */
    unsigned char *incoming;         /* n elements: the weights received (owned; NULL
                                        with sizes_only) */
    /* The queue of buckets (STREAMED PUSHES), under mu: entry j lives at
     * queue[j % PS_CLIENT_QUEUE] while some pusher's taken <= j < head. */
    struct ps_push {
        uint64_t step;
        struct proto_push_meta meta;
        const unsigned char *grad;
        uint64_t first, count;
    } queue[PS_CLIENT_QUEUE];
    uint64_t head;                   /* entries queued since init */
    uint64_t server_step;            /* the servers' step at the last connect */
    int failed;                      /* first conn whose push failed, or -1 */
    int quit;
};

/* ps_client_init: parse cfg->servers (1..PS_CLIENT_MAX_SERVERS addresses,
 * at most one per element), set up the links, allocate the receive
 * buffer. No connection yet. ERR_USAGE with the reason for a bad list or link
 * setting. On failure ps_client_close may still be called. */
int ps_client_init(struct ps_client *c, const struct ps_client_cfg *cfg, char *err);

/* ps_client_connect: connect to every server and run the AUTH handshake
 * (auth_dial: each retried with backoff until cfg->timeout, also when a
 * server resets the connection during the handshake: "no server at ..."
 * if none answers), send HELLO, wait for every WELCOME and take each
 * server's range from it; check that the ranges tile [0, n) (ERR_MISMATCH
 * naming the servers: "servers' ranges do not tile ..."); then start the
 * threads. c->server_step is the step the WELCOMEs said (RESUME,
 * proto.h: 0 for a fresh server; a resumed one then sends the weights of
 * server_step - 1, for ps_client_pull); servers at different steps:
 * ERR_MISMATCH. After ps_client_disconnect it may be called again (a
 * worker's --reconnect-window). */
int ps_client_connect(struct ps_client *c, char *err);

/* ps_client_step: one combine step. Pushes *meta and the gradient sum
 * grad (n elements of dtype; each server gets its slice) for `step` to
 * every server, then receives the new weights of that step into weights
 * (n elements). Returns when every server's weights are in, or at the
 * first failure (the others are left as they are: close the client).
 * weights NULL: push only, no pull: one of the P pushes of a step to
 * servers that take P per worker (--mistake sync-every-micro,
 * common/ps/store.h); the last push of the step then comes with the
 * weights buffer. */
int ps_client_step(struct ps_client *c, uint64_t step, const struct proto_push_meta *meta,
                   const void *grad, void *weights, char *err);

/* ps_client_push: push elements [first, first + count) of grad (n
 * elements; 1 <= count, first + count <= n) for `step`: to each server,
 * the part of them it owns, if any; no pull. One BUCKET (store.h): a pass
 * of a step's gradient is a series of these from the top down, each range
 * ending where the one before began, the last starting at element 0; then
 * ps_client_pull. *meta (the example count and loss) travels with the
 * push that ends at a server's last element, the first of the pass (zeros
 * with the others), so it must be final by the time the first bucket is
 * pushed. NULL meta: zeros. ERR_USAGE (nothing sent) for a range outside
 * the vector. */
int ps_client_push(struct ps_client *c, uint64_t step, const struct proto_push_meta *meta,
                   const void *grad, uint64_t first, uint64_t count, char *err);

/* ps_client_psgd: POWERSGD PUSHES (--compress powersgd:R[:noef];
 * common/ps/store.h, the server's half): step `step`'s gradient sum grad
 * (n elements of dtype) to every server in two rounds through ps (the
 * whole vector's plan, this worker's error feedback and warm start:
 * psgd_server_plan): per server, round 0 (P and the raw elements, with
 * *meta) pushed and its sum received, round 1 (Q) pushed and its sum
 * received, the range decoded into scratch (n elements: P^ Q^T, which the
 * server applies itself; the decode keeps ps's residual and Q). A server
 * whose range holds no compressed matrix takes one plain push. The
 * servers one after the other (SIMPLIFICATION: with S > 1 their rounds do
 * not overlap). Call it before ps_client_pull_begin: the receivers must
 * not read the rounds' sums. ERR_NONFINITE for a sum not finite (the
 * server named). */
struct psgd;
int ps_client_psgd(struct ps_client *c, struct psgd *ps, uint64_t step,
                   const struct proto_push_meta *meta, const void *grad, void *scratch,
                   char *err);

/* ps_client_pull_begin: the receivers start reading step `step`'s WEIGHTS
 * frames in the background (PER-BUCKET PULL). Call it before the first
 * push of the step's last pass, so that the weights of the first buckets
 * are read while the others are pushed; a second call for the same step
 * does nothing. ERR_USAGE for another step while one is still going. */
int ps_client_pull_begin(struct ps_client *c, uint64_t step, char *err);

/* ps_client_pull: wait for step `step`'s new weights from every server
 * (ps_client_pull_begin first, if not yet) and copy them into weights (n
 * elements). At the first receiver's failure, the others are cut short
 * and its error returned. */
int ps_client_pull(struct ps_client *c, uint64_t step, void *weights, char *err);

/* ps_client_pull_late: how much later than on this emulated host's own
 * timeline the last ps_client_pull returned (OWN TIMELINE, below): the
 * time its receivers and the caller waited for a CPU another host held
 * after the weights were in; 0 without a transport that can say. The
 * caller takes its pull's end that much earlier, as a ring rank's
 * collective does (link.h, OWN CORES). */
double ps_client_pull_late(const struct ps_client *c);

/* ps_client_own_late: the rule ps_client_pull_late comes from, without a
 * clock of its own (tests/test_ps_own.c): a pull called at t0 that returns
 * at now ended, on the host's own timeline, at the latest of t0 and its
 * receivers' ends (conns[i].rend, for every server with elements);
 * returns now less that, or 0 when a receiver could not say (NAN), one
 * ended after now, the lateness is over LINK_STAMP_SPAN, or there is no
 * emulated link (link_bw and link_latency 0). */
double ps_client_own_late(const struct ps_client *c, double t0, double now);

/* ps_client_bye: send BYE (step = steps done) to every server. */
int ps_client_bye(struct ps_client *c, uint64_t step, char *err);

/* ps_client_abort: after a failure, tell every server this worker can
 * still write to cleanly why it is leaving: an ERROR frame (step, aux =
 * code, the reason text), best effort, each send bounded by 0.5 s. */
void ps_client_abort(struct ps_client *c, uint64_t step, int code, const char *reason);

/* ps_client_bytes: bytes sent and received so far, over all connections.
 * Call between steps (not while ps_client_step runs). */
void ps_client_bytes(const struct ps_client *c, uint64_t *in, uint64_t *out);

/* ps_client_told: 1 when a server explained the last failure with an
 * ERROR frame (it refused, or its run failed), 0 when the connection
 * itself was lost (EOF, reset, silence): only then is redialling worth it. */
int ps_client_told(const struct ps_client *c);

/* ps_client_disconnect: stop and join the threads, close the sockets;
 * the client keeps its servers and links, for ps_client_connect again. */
void ps_client_disconnect(struct ps_client *c);

/* ps_client_close: stop and join the threads (a thread blocked on a
 * socket is woken by shutting the socket down), close the sockets, free
 * what init allocated. Safe after any failure and twice. */
void ps_client_close(struct ps_client *c);

#endif /* PS_CLIENT_H */
