/* test_model.c -- the placements of the parameter server in the cost
 * model (common/measure/model.h, PLACEMENTS): Theorem 1 at its two ends (k = 0 is
 * all-reduce, k = K the separate PS), the colocated S = K bytes equal to
 * the ring's, the split adding up, and values worked out by hand. */
#include <math.h>

#include "check.h"
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

    return t_done();
}
