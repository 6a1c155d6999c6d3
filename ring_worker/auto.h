/* auto.h -- ring_worker --algo auto: the all-reduce algorithm chosen by
 * the model (issue 29), from a, bw and g of this machine.
 *
 * THE CALIBRATION. a (one-way latency, s) and bw (bytes/s) are the
 * emulated link's as configured (--link-latency, --link-bw): the link the
 * run will pace by. g (seconds per byte reduced) comes from a local loop:
 * vec_add over two 256 KiB vectors of --dtype, the best of 16 passes (a
 * few milliseconds). With --calibration FILE an existing FILE is read
 * instead, and a missing one is written from this calibration, so later
 * runs reuse it:
 *     # psring --algo auto calibration
 *     latency_s 0.001
 *     bw_Bps 4000000
 *     gamma_s_per_byte 2.5e-10
 * (lines "key value", '#' comments; every key once; values finite, bw > 0).
 * Without an emulated link the loopback's a and bw are not known: such a
 * run needs a FILE that exists (written by hand, or by a run with the
 * link). The calibration never reads the map's measured cells.
 *
 * THE CHOICE. model_select (common/measure/model.h) at (K, n): the least
 * T_ab + g reduced n over the table model_algos; n is the benchmark's
 * largest size (--maxbytes; the whole sweep runs the one algorithm) or the
 * training vector's bytes. Only rank 0 chooses: the rendezvous carries its
 * peer table to every rank, and a rank with --algo auto takes it
 * (setup.h), so all ranks run the same algorithm whatever their own
 * clocks measured. The chosen algorithm is the records' `algo` column.
 */
#ifndef AUTO_H
#define AUTO_H

#include <stddef.h>

#define ALGO_AUTO (-2)      /* --algo auto before the choice (not an enum coll_algo) */

struct auto_calib {
    double lat, bw, gamma;  /* seconds, bytes/s, seconds per byte reduced */
    char source[64];        /* where they came from, for the log line */
};

/* auto_calibrate: a, bw and g (above) for elements of dtype. file may be
 * NULL. 0, or ERR_USAGE (no link and no file; a bad file) / a negative
 * code with one line in err[ERR_LEN]. */
int auto_calibrate(const char *file, double link_bw, double link_latency, int dtype,
                   struct auto_calib *cal, char *err);

/* auto_choose: the enum coll_algo of model_select's choice for K ranks
 * and n bytes; one line in line[len]: the choice and the runner-up with
 * their predicted times, and the calibration. */
int auto_choose(const struct auto_calib *cal, int k, double bytes, char *line, size_t len);

#endif /* AUTO_H */
