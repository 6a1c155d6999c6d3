/* test_model.c -- the placements of the parameter server in the cost
 * model (common/measure/model.h, PLACEMENTS): Theorem 1 at its two ends (k = 0 is
 * all-reduce, k = K the separate PS), the colocated S = K bytes equal to
 * the ring's, the split adding up, and values worked out by hand. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "base/compress.h"
#include "measure/model.h"

#define N 1e6           /* bytes */
#define BW 1e8          /* bytes/s */
#define A 1e-4          /* seconds */

int main(void)
{
    T_CASE("model-5.1", "colocated, k = 0: t_opt and bytes equal the ring's, split 1/K");
    for (int k = 1; k <= 64; k *= 2) {
        struct model_split s = model_ps_split(k, 0);
        T_NEAR(s.colocated, 1.0 / k, 1e-12);
        T_NEAR(s.extra, 0.0, 0.0);
        T_NEAR(model_query(MODEL_PS_COLOC, MODEL_TOPT, k, 0, N, BW, A),
               model_query(MODEL_RING, MODEL_TOPT, k, 1, N, BW, A), 1e-12);
        T_NEAR(model_query(MODEL_PS_COLOC, MODEL_BYTES_IN, k, 0, N, BW, A),
               model_query(MODEL_RING, MODEL_BYTES_IN, k, 1, N, BW, A), 1e-6);
        T_NEAR(model_query(MODEL_PS_COLOC, MODEL_BYTES_OUT, k, 0, N, BW, A),
               2.0 * (k - 1) / k * N, 1e-6);
        T_NEAR(model_ps_topt(k, 0, N, BW), 2.0 * (k - 1) / k * N / BW, 1e-12);
    }
    T_END();

    T_CASE("model-5.2", "colocated, k = K: the separate PS with S = K (x = 0, y = 1/K, t = n / bw)");
    for (int k = 2; k <= 64; k *= 2) {
        struct model_split s = model_ps_split(k, k);
        T_NEAR(s.colocated, 0.0, 0.0);
        T_NEAR(s.extra, 1.0 / k, 1e-12);
        T_NEAR(model_query(MODEL_PS_COLOC, MODEL_TOPT, k, k, N, BW, A),
               model_query(MODEL_PS, MODEL_TOPT, k, k, N, BW, A), 1e-12);
        T_NEAR(model_query(MODEL_PS_COLOC, MODEL_TIME, k, k, N, BW, A),
               model_query(MODEL_PS, MODEL_TIME, k, k, N, BW, A), 1e-12);
        T_NEAR(model_ps_topt(k, k, N, BW), N / BW, 1e-12);
    }
    T_END();

    T_CASE("model-5.3", "Theorem 1 by hand: K = 8, k = 2: x = 6/76, y = 14/76, t_opt = 112/76 n/bw");
    {
        struct model_split s = model_ps_split(8, 2);
        T_NEAR(s.colocated, 6.0 / 76.0, 1e-12);
        T_NEAR(s.extra, 14.0 / 76.0, 1e-12);
        T_NEAR(8 * s.colocated + 2 * s.extra, 1.0, 1e-12);
        T_NEAR(model_query(MODEL_PS_COLOC, MODEL_TOPT, 8, 2, N, BW, A), 0.014736842105263158, 1e-12);
        T_NEAR(model_ps_topt(8, 2, N, BW), 0.014736842105263158, 1e-12);
        /* one-pull: the push phase's busiest link is an extra server's ingress,
         * K y n = 112/76 n (a worker host sends (1 - x) n = 70/76 n, takes in
         * (K-1) x n = 42/76 n): it only receives then, and only sends in the pull */
        T_NEAR(model_query(MODEL_PS_COLOC, MODEL_INGRESS, 8, 2, N, BW, A), A + 112.0 / 76.0 * N / BW, 1e-12);
        T_NEAR(model_query(MODEL_PS_COLOC, MODEL_TIME, 8, 2, N, BW, A), 2 * (A + 112.0 / 76.0 * N / BW), 1e-12);
        /* per-bucket pull, 64 KiB buckets: the extra server's push phase
         * of n is t_opt already, then its pull phase of the last bucket */
        T_NEAR(model_ps_pipelined(MODEL_PS_COLOC, 8, 2, N, 65536, BW, A),
               112.0 / 76.0 * (N + 65536) / BW + 2 * A, 1e-12);
        /* separate, one server: K (n + b) / bw; S = K: t_opt + b / bw;
         * colocated k = 0: t_opt; one bucket: the one-pull time */
        T_NEAR(model_ps_pipelined(MODEL_PS, 4, 1, N, 65536, BW, A), 4 * (N + 65536) / BW + 2 * A, 1e-12);
        T_NEAR(model_ps_pipelined(MODEL_PS, 8, 8, N, 65536, BW, A), (N + 65536) / BW + 2 * A, 1e-12);
        T_NEAR(model_ps_pipelined(MODEL_PS_COLOC, 8, 0, N, 65536, BW, A), 14.0 / 8.0 * N / BW + 2 * A, 1e-12);
        T_NEAR(model_ps_pipelined(MODEL_PS, 4, 1, N, N, BW, A), model_ps_step(4, N, BW, A), 1e-12);
        T_NEAR(model_ps_pipelined(MODEL_PS_COLOC, 8, 2, N, N, BW, A),
               model_query(MODEL_PS_COLOC, MODEL_TIME, 8, 2, N, BW, A), 1e-12);
    }
    T_END();

    T_CASE("model-5.4", "t_opt from the split equals the paper's closed form for 0 <= k <= K");
    for (int k = 1; k <= 33; k += 4)
        for (int e = 0; e <= k; e++) {
            struct model_split s = model_ps_split(k, e);
            T_NEAR(k * s.colocated + e * s.extra, 1.0, 1e-12);
            if (k > 1 || e == 0)
                T_NEAR(model_query(MODEL_PS_COLOC, MODEL_TOPT, k, e, N, BW, A), model_ps_topt(k, e, N, BW),
                       1e-12);
        }
    T_END();

    T_CASE("model-5.5", "separate S servers: K n / S each way, a worker's n once S > K");
    T_NEAR(model_query(MODEL_PS, MODEL_BYTES_IN, 8, 1, N, BW, A), 8 * N, 1e-6);
    T_NEAR(model_query(MODEL_PS, MODEL_BYTES_IN, 8, 4, N, BW, A), 2 * N, 1e-6);
    T_NEAR(model_query(MODEL_PS, MODEL_BYTES_IN, 8, 16, N, BW, A), N, 1e-6);
    T_NEAR(model_query(MODEL_PS, MODEL_TIME, 8, 4, N, BW, A), 2 * (A + 2 * N / BW), 1e-12);
    T_NEAR(model_query(MODEL_PS, MODEL_TOPT, 8, 4, N, BW, A), 2 * N / BW, 1e-12);
    T_END();

    T_CASE("model-5.6", "more extra servers than workers: the worker's n sets the pace; bad splits are NaN");
    T_NEAR(model_query(MODEL_PS_COLOC, MODEL_TOPT, 4, 8, N, BW, A), N / BW, 1e-12);
    T_TRUE(isnan(model_ps_topt(4, 8, N, BW)));
    T_TRUE(isnan(model_ps_mix(MODEL_TIME, 4, 0, 0.1, N, BW, A)));     /* 0.4 of the vector unowned */
    T_TRUE(isnan(model_ps_mix(MODEL_TIME, 4, 2, 0.3, N, BW, A)));     /* 1.2 of it owned */
    T_TRUE(isnan(model_ps_mix(MODEL_TIME, 4, 2, NAN, N, BW, A)));
    /* an even split over K + k = 10 servers, K = 8: x = y = 0.1; host (1 + 6 x) = 1.6 n, extra 0.8 n */
    T_NEAR(model_ps_mix(MODEL_TOPT, 8, 2, 0.1, N, BW, A), 1.6 * N / BW, 1e-12);
    T_END();

    {
        double c[8], step = 0.1, t = 0.02;

        for (int r = 0; r < 8; r++)
            c[r] = step;
        c[5] = 3 * step;    /* one worker 3x slower */
        T_CASE("model-6.1", "sync waits for the slowest; backup:1 gets the straggler-free step");
        T_NEAR(model_sync_step(8, c, t), 0.3 + 0.02, 1e-15);
        T_NEAR(model_backup_step(8, 1, c, t), 0.1 + 0.02, 1e-15);
        T_NEAR(model_backup_step(8, 0, c, t), model_sync_step(8, c, t), 0);
        c[2] = 2 * step;    /* two slow ones: backup:1 waits for the faster of them */
        T_NEAR(model_backup_step(8, 1, c, t), 0.2 + 0.02, 1e-15);
        T_NEAR(model_backup_step(8, 2, c, t), 0.1 + 0.02, 1e-15);
        c[2] = step;
        T_CASE("model-6.2", "async adds the workers' rates; ssp runs at the slowest's");
        T_NEAR(model_async_rate(8, c, t), 7 / 0.12 + 1 / 0.32, 1e-9);
        T_NEAR(model_ssp_rate(8, c, t), 8 / 0.32, 1e-12);
        T_CASE("model-6.3", "bad inputs are NaN");
        T_TRUE(isnan(model_backup_step(8, 8, c, t)));
        T_TRUE(isnan(model_backup_step(8, -1, c, t)));
        T_TRUE(isnan(model_sync_step(0, c, t)));
        T_TRUE(isnan(model_async_rate(8, c, -1)));
        c[0] = NAN;
        T_TRUE(isnan(model_ssp_rate(8, c, t)));
        T_END();
    }

    {
        /* THE STALE MODES ON THE LINK: frames of 1 s in and out (bytes = bw), a = 0.01 */
        double c[4] = { 0, 0.5, 0, 0 }, a = 0.01, x, r;

        T_CASE("model-6.4", "the PS modes on the link: pushes in and pulls out share each direction, by hand");
        /* one worker: its push, its pull, a latency each way */
        T_NEAR(model_ps_link_step(1, 1, c, 1e3, 1e3, 1e3, a), 0 + 1 + 1 + 2 * a, 1e-12);
        /* two pushes at 0 and 0.5: alone till 0.5, then half each: the
         * first is in at 1.5, the second at 2; sync sends both pulls at 2 */
        T_NEAR(model_ps_link_step(2, 2, c, 1e3, 1e3, 1e3, a), 2 + 2 + 2 * a, 1e-12);
        /* backup:1: the step at 1.5, its pull alone till the late push's
         * reply joins at 2, then half each: out at 3 */
        T_NEAR(model_ps_link_step(2, 1, c, 1e3, 1e3, 1e3, a), 3 + 2 * a, 1e-12);
        /* equal computes: K pushes in, K pulls out (model_ps_step's t); a
         * straggler far behind the others pays its push alone */
        c[1] = 0;
        T_NEAR(model_ps_link_step(4, 4, c, 1e3, 1e3, 1e3, a), 0 + 4 + 4 + 2 * a, 1e-12);
        c[1] = 10;
        T_NEAR(model_ps_link_step(4, 4, c, 1e3, 1e3, 1e3, a), 10 + 1 + 4 + 2 * a, 1e-12);
        T_NEAR(model_ps_link_step(4, 3, c, 1e3, 1e3, 1e3, a), 0 + 3 + 3 + 2 * a, 1e-12);
        T_TRUE(isnan(model_ps_link_step(4, 0, c, 1e3, 1e3, 1e3, a)));
        T_TRUE(isnan(model_ps_link_step(4, 5, c, 1e3, 1e3, 1e3, a)));
        T_TRUE(isnan(model_ps_link_step(4, 4, c, 1e3, 0, 1e3, a)));

        T_CASE("model-6.5", "async on the link: the MVA fixed point; ssp's cap with a straggler");
        /* K = 1: no one to queue behind */
        T_NEAR(model_async_link_rate(1, c, -1, 1e3, 1e3, 1e4, a), 1 / (0 + 2 * a + 0.2), 1e-12);
        /* K = 4 alike (compute 1 s, frames 0.1 s): each finds the other three's
         * queue, R = s (1 + 3 x R), and x = 1 / (c + 2a + 2R) */
        for (int i = 0; i < 4; i++)
            c[i] = 1;
        x = model_async_link_rate(4, c, -1, 1e3, 1e3, 1e4, a) / 4;
        r = 0.1 / (1 - 3 * x * 0.1);
        T_NEAR(x, 1 / (1 + 2 * a + 2 * r), 1e-9);
        T_TRUE(r > 0.1);    /* a wait beyond the frame's own time */
        c[1] = 3;   /* ssp, worker 1 persistently slower: its pull shares with K - 1 */
        T_NEAR(model_async_link_rate(4, c, 1, 1e3, 1e3, 1e4, a), 4 / (3 + 2 * a + 0.1 + 0.4), 1e-12);
        T_TRUE(model_async_link_rate(4, c, -1, 1e3, 1e3, 1e4, a) > 4 / (3 + 2 * a + 0.5));
        T_TRUE(isnan(model_async_link_rate(4, c, 4, 1e3, 1e3, 1e4, a)));
        T_TRUE(isnan(model_async_link_rate(4, c, -1, 1e3, 1e3, 1e4, -a)));
        T_END();
    }

    {
        const struct model_algo_row *r, *second;
        double t[2];

        T_CASE("model-7.1", "the algorithm table: every row is found by name and prices as model_query");
        for (int i = 0; i < model_nalgos; i++) {
            r = &model_algos[i];
            T_TRUE(model_algo_find(r->name) == r);
            T_NEAR(r->time(6, 1e6, 1e8, 1e-4), model_query(r->algo, MODEL_TIME, 6, 1, 1e6, 1e8, 1e-4), 0);
            T_NEAR(model_algo_time(r, 6, 1e6, 1e8, 1e-4, 0), r->time(6, 1e6, 1e8, 1e-4), 0);
        }
        T_TRUE(model_algo_find("ps") == NULL);
        T_TRUE(model_algo_find("auto") == NULL);
        T_TRUE(model_algo_find(NULL) == NULL);

        T_CASE("model-7.2", "the reduction term: g times the bytes reduced in sequence");
        r = model_algo_find("rd");      /* K = 6: 2 exchanges and the fold: 3 n */
        T_NEAR(model_algo_time(r, 6, 1e6, 1e8, 1e-4, 1e-9) - r->time(6, 1e6, 1e8, 1e-4), 3e-3, 1e-12);
        r = model_algo_find("ring");    /* (K-1)/K n */
        T_NEAR(model_algo_time(r, 4, 1e6, 1e8, 0, 1e-9) - r->time(4, 1e6, 1e8, 0), 0.75e-3, 1e-12);
        r = model_algo_find("rabenseifner");    /* K = 6: P = 4, 3/4 + the fold */
        T_NEAR(model_algo_time(r, 6, 1e6, 1e8, 0, 1e-9) - r->time(6, 1e6, 1e8, 0), 1.75e-3, 1e-12);

        T_CASE("model-7.3", "the selector: rd for small n, Rabenseifner for large at K = 8, by hand");
        /* 4 KiB, 4 MB/s, 1 ms: rd 3 (a + n/bw) = 6.072 ms; Rabenseifner
         * 6 a + 1.75 n/bw = 7.792 ms; the ring 14 a + ... = 15.8 ms */
        r = model_select(8, 4096, 4e6, 1e-3, 0, &second, t);
        T_TRUE(r && strcmp(r->name, "rd") == 0);
        T_TRUE(second && strcmp(second->name, "rabenseifner") == 0);
        T_NEAR(t[0], 3 * (1e-3 + 4096 / 4e6), 1e-12);
        T_NEAR(t[1], 6e-3 + 1.75 * 4096 / 4e6, 1e-12);
        r = model_select(8, 16 << 20, 4e6, 1e-3, 0, &second, t);  /* 8 a fewer than the ring */
        T_TRUE(r && strcmp(r->name, "rabenseifner") == 0);
        T_TRUE(second && strcmp(second->name, "ring") == 0);
        T_NEAR(t[1] - t[0], 8e-3, 1e-9);

        T_CASE("model-7.4", "the selector: ties go to the earlier row; g can turn the choice");
        r = model_select(1, 4096, 4e6, 1e-3, 0, &second, t);      /* K = 1: all 0 */
        T_TRUE(r == &model_algos[0]);
        /* K = 8, 8 KiB, 4 MB/s, 1 ms: rd 3 a + 3 n/bw = 9.144 ms beats
         * Rabenseifner's 6 a + 1.75 n/bw = 9.584 ms; with g = 1e-7 s/B rd
         * adds 3 n g = 2.46 ms of sums, Rabenseifner 0.875 n g = 0.72 ms */
        r = model_select(8, 8192, 4e6, 1e-3, 0, &second, t);
        T_TRUE(r && strcmp(r->name, "rd") == 0);
        r = model_select(8, 8192, 4e6, 1e-3, 1e-7, &second, t);
        T_TRUE(r && strcmp(r->name, "rabenseifner") == 0);
        T_TRUE(second && strcmp(second->name, "rd") == 0);
        T_END();
    }

    T_CASE("model-8.1", "the PS step from the last entry: the entry spread hides up to (K-1) pushes");
    /* K = 4, push n = 1 MB, pull 2 MB, 100 MB/s (10 ms a push), a = 0.1 ms:
     * no spread, model_ps_step's ingress; 15 ms: 40 - 15 = 25 ms of it
     * left; 50 ms: only the last push's 10 ms; a 10 KB push (0.1 ms)
     * hides nothing at 1 ms; the pull is K pulls out whatever the spread */
    T_NEAR(model_ps_spread(4, N, N, 0, BW, A), model_ps_step(4, N, BW, A), 1e-12);
    T_NEAR(model_ps_spread(4, N, 2 * N, 0.015, BW, A), 2 * A + 0.025 + 0.08, 1e-12);
    T_NEAR(model_ps_spread(4, N, 2 * N, 0.05, BW, A), 2 * A + 0.01 + 0.08, 1e-12);
    T_NEAR(model_ps_spread(4, 1e4, N, 1e-3, BW, A), 2 * A + 1e-4 + 0.04, 1e-12);
    T_NEAR(model_ps_spread(4, N, N, -1, BW, A), model_ps_step(4, N, BW, A), 1e-12);
    T_TRUE(isnan(model_ps_spread(0, N, N, 0, BW, A)) && isnan(model_ps_spread(4, N, N, 0, 0, A)));
    T_END();

    T_CASE("model-8.2", "the server's round-robin egress (model_ps_sched): the last pieces spread the workers, by hand");
    {
        /* 250 Mbit/s: pieces of 31250 bytes (1 ms of wire), a = 1 ms, K = 4;
         * a frame is its 40-byte header and the elements. 16 KiB: one
         * piece, 2a + (K+1) n / bw; 64 KiB: 31250 + 31250 + 3076, the
         * last three tails apart; 2 MiB: 67 pieces and 3442 bytes; 62500
         * bytes: 31250 + 31250 + 40; 8 Mbit/s, 4 KiB: 4096 + 40 (the
         * seeds' formula less 3 x 40 bytes); two servers: the seeds' */
        double bw = 31.25e6, a = 1e-3;

        T_EQ_U(model_link_piece(bw), 31250);
        T_EQ_U(model_link_piece(62.5e6), 61440);
        T_EQ_U(model_link_piece(1e3), 4096);
        T_NEAR(model_ps_sched(4, 1, 16384, 16384, bw, a), 2 * a + 5 * 16384 / bw, 1e-12);
        T_NEAR(model_ps_sched(4, 1, 65536, 65536, bw, a), 2 * a + (8 * 65536.0 - 3 * 3076) / bw, 1e-12);
        T_NEAR(model_ps_sched(4, 1, 2097152, 2097152, bw, a), 2 * a + (8 * 2097152.0 - 3 * 3442) / bw, 1e-12);
        T_NEAR(model_ps_sched(4, 1, 62500, 62500, bw, a), 2 * a + (8 * 62500.0 - 3 * 40) / bw, 1e-12);
        T_NEAR(model_ps_sched(4, 1, 4096, 4096, 1e6, a), 2 * a + (8 * 4096.0 - 3 * 40) / 1e6, 1e-12);
        T_NEAR(model_ps_sched(4, 2, 65536, 65536, bw, a), model_query(MODEL_PS, MODEL_TIME, 4, 2, 65536, bw, a), 1e-12);
        /* a compressed push of 1 KiB hides behind nothing: its own push, then K pulls */
        T_NEAR(model_ps_sched(4, 1, 1024, 16384, bw, a), 2 * a + 1024 / bw + 4 * 16384 / bw, 1e-12);
        T_TRUE(model_ps_sched(4, 1, 16384, 16384, bw, a) < model_ps_step(4, 16384, bw, a));
        T_TRUE(isnan(model_ps_sched(0, 1, 1, 1, bw, a)) && isnan(model_ps_sched(4, 0, 1, 1, bw, a)) &&
               isnan(model_ps_sched(4, 1, 1, 1, 0, a)));
    }
    T_END();

    T_CASE("model-8.3", "the codec counted as coll_cmp.c runs it (model_codec), by hand, per element of the vector");
    {
        /* per-op costs apart, so a miscount shows: enc 1, dec_add 10, dec 100, check 1000 */
        struct compress_costs c = { 1, 10, 100, 1000 };

        /* ring: n encodes, (K-1)/K n decode-and-adds, n decodes and checks */
        T_NEAR(model_codec(MODEL_RING, 4, 0, &c), 1 + 0.75 * 10 + 100 + 1000, 1e-12);
        T_NEAR(model_codec(MODEL_RING, 8, 0, &c), 1 + 0.875 * 10 + 100 + 1000, 1e-12);
        /* rd: R = 2 (K = 4), 3 (K = 5, 8) rounds of decode, add, encode; the first encode, the last decode */
        T_NEAR(model_codec(MODEL_RD, 4, 0, &c), 3 * 101 + 2 * 10 + 1000, 1e-12);
        T_NEAR(model_codec(MODEL_RD, 8, 0, &c), 4 * 101 + 3 * 10 + 1000, 1e-12);
        T_NEAR(model_codec(MODEL_RD, 5, 0, &c), model_codec(MODEL_RD, 8, 0, &c), 1e-12);
        /* top-k's all-gather: one encode, K frames added; the PS: the push's encode, the last add */
        T_NEAR(model_codec(MODEL_RING, 8, 1, &c), 1 + 8 * 10, 1e-12);
        T_NEAR(model_codec(MODEL_PS, 8, 1, &c), 1 + 10, 1e-12);
        T_EQ_D(model_codec(MODEL_RING, 1, 0, &c), 0);
        T_EQ_D(model_codec(MODEL_RD, 1, 0, &c), 0);
    }
    T_END();

    return t_done();
}
