/* server.h -- the parameter server under its protocol: the server's and a
 * connection's state, and the one table through which the protocol uses a
 * transport (struct server_io). The protocol is these files of
 * common/ps/: server_conn.c (a connection's bytes in and out, the link's
 * pacing, the tick), server.c (what the server does with each event of
 * the protocol, and the run's end), server_mode.c (the modes other than
 * sync), server_measure.c (the loss against time, the waits) and resume.c
 * (checkpoints); with store, session, egress, silence and mode below them.
 * bin/ps_server is its libuv transport (ps_server/main.c, the only file
 * that includes uv.h) and its set-up from the flags (ps_server/setup.c).
 * No libuv here.
 *
 * ONE WAY. The transport calls the protocol through the server_* functions
 * below (a connection accepted, bytes read, a write done, a connection
 * closed, the timer, the tick); the protocol calls the transport only
 * through srv->io (send bytes to a connection, stop reading it, shut it
 * down, close it, arm the timer, the time) and measures the machine only
 * through srv->io->machine (its CPU time, its load, its peak RSS; the
 * test hook's SIGKILL). So the same protocol can run over another
 * transport (a simulated one) that fills the table.
 *
 * OWNERSHIP. A struct conn is allocated by the transport (inside a struct
 * of its own that adds its handles, struct conn first) before
 * server_conn_add, and freed by it only after server_conn_closed, which it
 * calls once io->close has finished (so callbacks that come before that,
 * cancelled writes, a shutdown, still find it). Its read buffer is
 * allocated when it joins (one per worker, none for strangers) and freed
 * in server_conn_closed. The store, the egress schedule, the clocks and
 * the record are allocated by setup_server before the loop starts and
 * freed by setup_destroy after it returns (ps_server/setup.c), through
 * server_free.
 */
#ifndef SERVER_H
#define SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "base/cli.h"
#include "train/cli_common.h"
#include "ps/egress.h"
#include "wire/auth.h"
#include "wire/link.h"
#include "train/losscurve.h"
#include "measure/hostload.h"
#include "measure/metrics.h"
#include "ps/mode.h"
#include "wire/net.h"
#include "wire/proto.h"
#include "ps/session.h"
#include "ps/silence.h"
#include "ps/store.h"

#define SERVER_PROG "ps_server"      /* the program's name, in the ERROR texts */
#define SMALL_READ 1024                 /* a stranger's reads, before the HELLO */

struct server;

/* The server's settings, from its command line (ps_server/flags.c parses
 * and checks them; see there for each flag). */
struct server_flags {
    struct cli_common c;          /* the common flags; world = K, rank = 0 */
    const char *listen_at;        /* --listen HOST:PORT, as typed */
    char host[NET_HOST_LEN];      /* ... parsed */
    int port;
    const char *port_file;        /* --port-file FILE, or NULL */
    int workers;                  /* K */
    int shard_i, shard_s;         /* --shard I/S (0/1 when not given) */
    uint64_t range_first, range_count;  /* --range FIRST:COUNT (count 0: not
                                           given; checked against n in set-up) */
    const char *loss_out;         /* --loss-out FILE, or NULL */
    int mistake;                  /* enum mistake (mistake.h) */
    const char *checkpoint;       /* --checkpoint FILE, or NULL (checkpoint.h) */
    int checkpoint_every;         /* --checkpoint-every N: after every N-th step */
    const char *resume;           /* --resume FILE, or NULL */
    int local_worker;             /* --local-worker R: EMULATED, worker R is on this host,
                                     its bytes bypass the link; -1 none */
    int sync_every;               /* --sync-every H: 1 every step; > 1 LOCAL SGD (the
                                     workers' deltas averaged every H steps; c.steps
                                     and c.warmup are then counted in rounds) */
    struct auth_key key;          /* the job's secret (--secret-file, PSRING_SECRET) */
    const char *mode;             /* --mode sync|async|ssp:N|backup:N, as typed (mode.h) */
    struct mode_cfg mode_cfg;     /* ... parsed (sync when not given) */
    const char *record;           /* --record FILE: the applied updates (mode.c), or NULL */
    const char *staleness_out;    /* --staleness-out FILE: the histogram (mode.h), or NULL */
    char record_file[CLI_PATH_MAX + 16];    /* --record FILE, FILE.I with --shard I/S */
    char staleness_file[CLI_PATH_MAX + 16]; /* --staleness-out FILE, likewise */
    char weights_file[CLI_PATH_MAX + 16];   /* --weights-out PATH (common): "PATH.server",
                                               then .I with S shards (weights.h) */
    const char *compress_arg;     /* --compress none|fp16|bf16, as typed */
    int compress;                 /* ... parsed: the pushes' format (store.h,
                                     COMPRESSED PUSHES) */
};

struct conn {
    struct server *srv;
    struct conn *next, *prev;        /* srv->conns */
    struct conn *held_next;          /* srv's queue of held reads */
    char peer[NET_ADDR_LEN];
    struct session ses;
    int joined;                      /* worker ses.rank, in srv->by_rank */
    int unauth;                      /* counted in srv->nunauth (no AUTH yet) */
    int finished;                    /* said BYE, or closed cleanly at the end */
    int reading, closing, lingering;  /* io->read_start'ed; io->close'd; ERROR sent, draining */
    double accepted, linger_until;
    /* reading: sbuf before the join, rbuf (owned) after */
    unsigned char *rbuf;
    size_t rcap;
    int held;                        /* bytes read and held by the link */
    const unsigned char *held_p;
    size_t held_len;
    double held_due;
    double held_at;                  /* when the link began to hold them */
    double frame_t0;                 /* FRAME DEADLINES (net.h): the joined worker's
                                        frame in progress began then, link holds
                                        excused; NAN between frames */
    int resumed;                     /* released by the timer, not read since */
    /* writing */
    uint64_t wqueued;                /* bytes of a weights piece queued */
    unsigned char whdr[PROTO_HEADER_SIZE];  /* the header of its WEIGHTS frame in progress */
    unsigned char *wsnap;            /* MODES (server_mode.c): a whole WEIGHTS frame being
                                        written (owned; freed when written or at close) */
    size_t wlen, woff;               /* MODES on the link: its bytes, and those handed out */
    double wready;                   /* when its next bytes became ready (egress.h) */
    int wblocked;                    /* a piece of it is queued on the socket */
    int inq;                         /* in srv's queue of paced mode frames */
    struct conn *mq_next;
    int cbusy;                       /* a WELCOME or ERROR is queued */
    uint64_t cqueued;
    unsigned char cbuf[PROTO_HEADER_SIZE + PROTO_TEXT_MAX];
    unsigned char sbuf[SMALL_READ];
};

/* Payload bytes (elements only) per step, one direction: what the byte
 * counters of the model count (K x count x size). */
struct payload {
    uint64_t per_step;                /* the first step's */
    uint64_t total, steps;
    int uneven;                       /* a step differed from the first */
};

/* One buffer of a write: len bytes at p. */
struct server_buf {
    const unsigned char *p;
    size_t len;
};

/* The writes a connection may have queued at once, one of each. */
enum server_write {
    SERVER_WRITE_CTL,       /* the rest of a control frame (c->cbuf) */
    SERVER_WRITE_WEIGHTS,   /* the rest of a weights piece (egress) */
    SERVER_WRITE_SNAP,      /* the rest of a mode's whole frame (c->wsnap) */
};

/* struct server_machine: the machine under the protocol, as the protocol
 * sees it: what it measures of the process it runs in (the record's cpu_s
 * and its machine0/machine1 samples, metrics.h; the peak RSS of the run's
 * last line) and the test hook that ends that process (resume.h). The
 * protocol reads no clock of the OS, no /proc and no rusage, and raises
 * no signal, itself: it calls these. ps_server/main.c fills them with the
 * real calls (clock_cpu_seconds, hostload_sample_read, getrusage,
 * raise(SIGKILL)); sim/ps_server.c with the simulator's (no CPU time, no
 * samples, no RSS, no hook: said there); tests/test_ps_server.c with
 * fakes whose values it finds in the record. */
struct server_machine {
    /* cpu_s: the CPU seconds (user + system) the process has used so far. */
    double (*cpu_s)(const struct server *srv);
    /* load: a sample of the machine's load now into *s (hostload.h);
     * s->ok 0: no sample (the record then carries none). */
    void (*load)(const struct server *srv, struct hostload_sample *s);
    /* peak_rss_mib: the process's peak resident set so far, MiB; negative:
     * not known. */
    double (*peak_rss_mib)(const struct server *srv);
    /* test_kill: TEST HOOK (resume.h): the update of `step` (and its
     * checkpoint, when one was due) is done. The real one SIGKILLs the
     * process when PSRING_TEST_KILL_AT_STEP names the step, and does not
     * return then; otherwise it returns and the run goes on. */
    void (*test_kill)(struct server *srv, uint64_t step);
    /* run_delay: how long the loop's thread has waited for a CPU (the
     * kernel's run delay) since it last blocked waiting for events, in
     * seconds; 0 when the kernel cannot say. NULL: never asked (the
     * simulator, whose clock is its own). server_own_wait. */
    double (*run_delay)(const struct server *srv);
};

/* server_own_wait (link.h, OWN CORES): the loop's wait for a CPU since it
 * last blocked for events (machine->run_delay), at most a piece's wire
 * time and the latency, that a host with cores of its own would not have
 * waited: the link books the bytes a read found (server_conn_read) and a
 * release's weights (step_release) that much earlier than now. 0 without
 * a bandwidth limit or the hook. The bound keeps the link's promise: a
 * release's first piece is due now at the earliest, and a read's bytes
 * pass at most a piece early. */
double server_own_wait(const struct server *srv);

/* struct server_io: the transport, as the protocol sees it. Every call is
 * made from the transport's own callbacks or from server_start's caller,
 * never from another thread. Error codes are the transport's negative
 * ints; strerror names them. */
struct server_io {
    /* now: the transport's clock, seconds (clock.h's clock_now for libuv). */
    double (*now)(const struct server *srv);
    /* try_write: as much of the nb buffers (at most 2) as goes now, without
     * waiting: the bytes taken (0: none would go), or a negative code. */
    int (*try_write)(struct conn *c, const struct server_buf *b, unsigned nb);
    /* write: queue the nb buffers (at most 2; they live until written);
     * server_written(c, slot, status) follows when they are, or fail. 0,
     * or a negative code (nothing queued, no callback). */
    int (*write)(struct conn *c, enum server_write slot, const struct server_buf *b,
                 unsigned nb);
    /* read_start: read c into server_conn_buffer's buffer, each read to
     * server_conn_read (or server_conn_lost). 0, or a negative code.
     * read_stop: no more reads until read_start. */
    int (*read_start)(struct conn *c);
    void (*read_stop)(struct conn *c);
    /* shutdown: shut c's sending side once its queued writes are out. 0,
     * or a negative code (the protocol then closes c). */
    int (*shutdown)(struct conn *c);
    /* close: close c; server_conn_closed(c) follows, once the transport
     * is done with it. */
    void (*close)(struct conn *c);
    /* timer_want: call server_timer at t (now's clock) or earlier. */
    void (*timer_want)(struct server *srv, double t);
    /* over: the run is over: accept no more connections; with nconns 0
     * also close the rest, so that the transport's loop ends. */
    void (*over)(struct server *srv, unsigned nconns);
    const char *(*strerror)(int code);
    /* machine: what the protocol measures of the machine (above). */
    const struct server_machine *machine;
    /* frame_deadlines: hold a joined worker's frames to FRAME DEADLINES
     * (net.h; a member that trickles its push is failed, named). Set by
     * the socket transport; a simulated one, whose wire and clock are
     * SimGrid's, leaves it 0. */
    int frame_deadlines;
};

/* A worker's wait (server_measure.c): its waits (metrics.h, WAIT), when
 * its last push (part) arrived, and (modes) whether a timed push awaits
 * its weights. */
struct server_wait {
    struct metrics_wait w;
    double push_at;
    unsigned char pending;
    uint64_t util_step;               /* the link's utilization: the step + 1 it
                                         last began pushing (0: none) */
};

/* A slot of the async/ssp window: an applied push's loss sum and examples. */
struct server_win {
    double loss;
    uint64_t n;
};

struct server {
    const struct server_io *io;       /* the transport (ps_server/main.c's libuv) */
    /* settings */
    struct server_flags f;            /* the command line; f.c the common flags */
    const char *loss_out;             /* --loss-out FILE (shard 0 writes), or NULL */
    struct session_cfg scfg;
    uint32_t k;
    size_t es, rcap;
    double timeout, linger_s;
    /* state */
    struct store store;
    struct egress eg;
    struct link link;
    struct silence sil;
    unsigned char *sil_state;         /* K entries, enum silence_state, for each tick */
    struct conn **by_rank;            /* K entries */
    struct conn *conns;
    unsigned nconns, nstrangers;
    unsigned nunauth;                 /* connections without AUTH (cap: AUTH_GATE_CAP) */
    uint32_t joined, finished;
    struct conn *held_head, *held_tail;
    /* MODES on the link (server_mode.c, PACED): the conns with a whole
     * frame to go, served round-robin a piece at a time; mq_res the one
     * whose piece (mq_len bytes, due mq_due) is reserved on the link. */
    struct conn *mq_head, *mq_tail, *mq_res;
    size_t mq_len;
    double mq_due;
    int over;                         /* the run ended: no new work */
    int exit_code;
    double last_log;
    uint64_t sending;                 /* step whose weights are going out */
    uint64_t first_step;              /* the first step of this run (--resume: its step) */
    int resending;                    /* resumed: the weights of first_step - 1 going out */
    const void *wbuf;                 /* ... and the store buffer holding them */
    int psgd_reply;                   /* POWERSGD PUSHES: 1 or 2 while round 0's or
                                         round 1's sum goes out in their place */
    uint64_t psgd_n;                  /* ... the egress's n, given back after it */
    /* the modes (mode.h): the policy and, per worker, the version of the
     * weights it was last sent and whether it waits for weights (SSP may
     * hold them) */
    struct mode mode;
    uint64_t *sent_version;           /* K entries */
    unsigned char *want_pull;         /* K entries */
    uint64_t steps_seen;              /* steps every worker has pushed (the record) */
    /* measurement */
    struct losscurve loss;            /* --loss-out, --loss-time-out, --target-loss: the
                                         loss of every applied step (update: server_measure.c) */
    const char *loss_time_out;        /* --loss-time-out FILE (shard 0 writes), or NULL */
    double t_run0;                    /* the first join: wall_s's zero; NaN before */
    struct server_wait *wait;         /* K entries: each worker's */
    struct server_win *win;           /* K: async/ssp: the last K applied pushes (slot u mod K) */
    struct metrics_record rec;
    struct metrics_step cur;          /* the step whose weights are going out */
    int in_started;
    double in_first, in_last, out_first, out_last;
    /* The link's utilization (link.h, UTILIZATION; metrics.h, link_util),
     * sync mode: a span runs from the last worker's first push of a step
     * to its weights' last write, joined with the next step's when that
     * began first (server_measure.c). */
    int util_open;
    uint32_t util_entered;            /* workers that began pushing step util_step - 1 */
    uint64_t util_step;
    double util_t0, util_idle0, util_span, util_idle;
    uint64_t in_mark, out_mark;
    struct payload pay_in, pay_out;   /* per step: store_payload_in, eg.payload_out */
    uint64_t pay_in_mark, pay_out_mark;
    int timing;
    double t0_wall, t0_cpu;
};

/* server_alloc: the rest of a server whose settings (f, k, es, timeout,
 * linger_s, rcap, scfg), store, link and mode are set, by whatever builds
 * it (ps_server/setup.c from its flags, bin/psring_sim's server actor,
 * tests/test_ps_server.c): the per-worker tables, the egress schedule
 * (chunk: a weights write's bytes without the link), the silence clocks
 * (from now), the record (room for the timed steps) and the measurements.
 * 0, or -ENOMEM (server_free frees what was made). server_free: all of
 * it, with the store and the mode; not srv->f.c's strings. */
int server_alloc(struct server *srv, size_t chunk, double now);
void server_free(struct server *srv);

/* For the transport (ONE WAY above). server_start: the run begins (the
 * loop is about to run). server_conn_add: c (zeroed) is a new connection,
 * before the transport knows its peer; server_conn_ready: ... and now it
 * does: it may read. server_conn_buffer: OUT where c's next read goes.
 * server_conn_read: n bytes read into it. server_conn_lost: the peer
 * closed (reason NULL) or the connection broke. server_written: a queued
 * write's end (status 0 or a negative code). server_conn_close: the
 * transport gives up on c (its accept or shutdown failed): io->close
 * follows. server_conn_closed: io->close is done; the transport frees c
 * after it. server_timer: io->timer_want's
 * time came. server_tick: every sil.period_ms. server_end: the loop
 * returned: the record and the loss files; the exit status (then
 * server_free, above). */
void server_start(struct server *srv);
void server_conn_add(struct server *srv, struct conn *c);
void server_conn_ready(struct conn *c, const char *peer);
void server_conn_buffer(struct conn *c, unsigned char **p, size_t *len);
void server_conn_read(struct conn *c, const unsigned char *p, size_t n);
void server_conn_lost(struct conn *c, const char *reason);
void server_written(struct conn *c, enum server_write slot, int status);
void server_conn_close(struct conn *c);
void server_conn_closed(struct conn *c);
void server_timer(struct server *srv);
void server_tick(struct server *srv);
int server_end(struct server *srv);

/* server_conn.c: a connection's writes and closes, for the protocol's files. */
void conn_close(struct conn *c);
void conn_linger(struct conn *c, int code, const char *text);
int conn_send_ctl(struct conn *c, uint16_t type, int code, const char *text);
int conn_send_raw(struct conn *c, const void *p, size_t len);
/* conn_send_weights: MODES: the whole frame (len bytes, malloc'd: owned by
 * c from the call on, freed when written or at close) to c, past the
 * egress schedule; c->ses.pulling until it is written. 0, or -1: the
 * connection is broken (the caller fails the run). */
int conn_send_weights(struct conn *c, unsigned char *frame, size_t len);
void conn_unauth_release(struct conn *c);
void server_maybe_stop(struct server *srv);
void server_egress_pump(struct server *srv);

/* server.c: the protocol's events, and the run's end. */
void conn_process(struct conn *c, const unsigned char *p, size_t len, double now);
void conn_refuse(struct conn *c, int code, const char *why);
void conn_finished(struct conn *c);
void run_succeed(struct server *srv);
void run_fail(struct server *srv, struct conn *culprit, int code, const char *msg);
void run_lost(struct server *srv, struct conn *c, int code, const char *msg);
void server_egress_done(struct server *srv);

/* server_psgd.c: POWERSGD PUSHES (store.h). server_psgd_release: a
 * round's sum is complete: it goes out to every worker as a WEIGHTS frame
 * of the round's elements (step s, aux the range's first), through the
 * egress like the weights; 1 (or the run failed, said why); 0: none, the
 * barrier's path goes on. server_psgd_sent: the sum is written to all K;
 * the egress is the weights' again. */
int server_psgd_release(struct server *srv);
void server_psgd_sent(struct server *srv);

/* server_mode.c: the modes other than sync (mode.h). server_mode_push: worker
 * c's push is complete; 0: sync, the barrier's path goes on
 * (step_release); 1: taken here (or the run failed, said why).
 * server_mode_finish: at the run's end, the mode's line, --staleness-out,
 * --record, --weights-out; 0, or 1 after logging why. */
int server_mode_push(struct server *srv, struct conn *c, double now);
int server_mode_finish(struct server *srv);
/* server_mode_pump: MODES on the link: write the mode frames' pieces that
 * are due; arm the timer for the next (a no-op with none queued).
 * server_mode_gone: c closes: it leaves that queue. */
void server_mode_pump(struct server *srv);
void server_mode_gone(struct server *srv, struct conn *c);
/* server_mode_written: the queued rest of c's piece is written (at now). */
void server_mode_written(struct server *srv, struct conn *c, double now);
/* server_weights_header: the header of the WEIGHTS frame piece pc begins (step
 * srv->sending, its elements) into out[PROTO_HEADER_SIZE]. */
void server_weights_header(const struct server *srv, const struct egress_piece *pc,
                           unsigned char *out);
int server_waiting_for(struct server *srv, const struct conn *skip, char *out, size_t len);
void run_silence_check(struct server *srv, double now);
void run_idle_fail(struct server *srv);

/* server_measure.c: the loss against time, the time to target, the
 * waits (server_measure.c says what each records and when).
 * measure_timed_begin, measure_timed_end: the timed part's wall_s, cpu_s,
 * machine0 and machine1, through io->machine. measure_init: -1 when out
 * of memory. measure_finish: at the run's end, the wait lines and the
 * record's ttt_s and wait_s. measure_write: the loss files (also after a
 * failure); 0, or 1 after logging why. */
int measure_init(struct server *srv);
void measure_destroy(struct server *srv);
void measure_timed_begin(struct server *srv, double now);
void measure_timed_end(struct server *srv, double now);
/* measure_util_enter: worker r began pushing `step` (a PUSH's first
 * part); measure_util_close: the step's weights are all written. The
 * link's utilization over the steps (server_measure.c). */
void measure_util_enter(struct server *srv, uint32_t r, uint64_t step, double now);
void measure_util_close(struct server *srv, double now);
void measure_joined(struct server *srv, double now);
void measure_push_end(struct server *srv, uint32_t r, double now);
void measure_released(struct server *srv, uint64_t step, double loss, double now);
void measure_pushed(struct server *srv, uint32_t r, uint64_t step);
void measure_sent(struct server *srv, uint32_t r, double now);
void measure_step(struct server *srv, uint64_t step, double loss, double now);
void measure_update(struct server *srv, uint64_t u, double loss, uint64_t examples, double now);
void measure_finish(struct server *srv);
int measure_write(struct server *srv);

#endif /* SERVER_H */
