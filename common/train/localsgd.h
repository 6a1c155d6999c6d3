/* localsgd.h -- LOCAL SGD (--sync-every H > 1): each rank takes H local
 * steps on its own share of each step's global batch, with its own
 * optimizer, and then the ranks average their weights.
 *
 * A LOCAL STEP (localsgd_run): this rank's gradient sum over its share
 * [lo, hi) (step_gradient, one pass, no mistake), checked finite, and
 * the apply op with divide_by = the rank's own count (a rank with an empty
 * share keeps its weights). Nothing is sent.
 *
 * THE SYNC, after every H-th step (s + 1 a multiple of H) and after the
 * run's last step (a shorter last round), so that every rank ends with
 * the same weights: the DELTA since the last sync, w - anchor (anchor: the
 * weights at the last sync, the same bits on every rank), with the trailer
 * of step.h (the round's count and loss sum, this rank's), goes through
 * the adapter's combine as ONE job of n + 3 elements (the ring: one
 * coll_allreduce, so ring, rd and rabenseifner alike); then every rank
 * sets w = anchor + sum / K and anchor = w. The ranks' deltas summed and
 * divided by K are the mean of their weights (they all start a round from
 * the same anchor); each rank counts 1, also under --shard-weights. The
 * combined count must be B times the round's steps.
 *
 * THE OPTIMIZER's state (momentum, Adam) stays each rank's own: it is not
 * averaged. H = 1 (or 0) is not local SGD: step.c's every-step path runs,
 * the same bits as without the flag.
 *
 * WHAT IT TAKES: host memory (no device), no ZeRO, no --mistake, an
 * adapter with STEP_TRAILER (the ring); localsgd_init says ERR_USAGE
 * otherwise. It turns the overlap off (nothing is sent during a local
 * step's backward pass; the sync is one job).
 *
 * THE RESULT (struct step_result): a local step has local = 1, the rank's
 * own count and mean loss, comm 0; a sync step local = 0, the combined
 * count of the round and the mean loss over all its examples (each rank's
 * at its own weights), comm the sync's combine. */
#ifndef LOCALSGD_H
#define LOCALSGD_H

#include "step.h"

/* localsgd_init: the checks above and the anchor (a copy of the initial
 * weights); called by step_init when cfg->sync_every > 1. 0, or a
 * negative code and a line. step_destroy frees the anchor. */
int localsgd_init(struct step *d, char *err);

/* localsgd_run: step s, a local step and, at a round's end, the sync;
 * step_run's contract otherwise (times kept, trace flushed). */
int localsgd_run(struct step *d, int s, struct step_result *r, char *err);

#endif /* LOCALSGD_H */
