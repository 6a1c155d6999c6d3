/* store_int.h -- what store.c and store_modes.c share and nobody else
 * uses: a worker's phase and the helpers below. Not part of the store's
 * interface (store.h); the store__ prefix says so.
 */
#ifndef STORE_INT_H
#define STORE_INT_H

#include <stdint.h>

#include "store.h"

/* A worker's phase in the step its clock names (struct store_worker). */
enum {
    STORE_W_WAITING = 0,    /* no push yet for the current step */
    STORE_W_RECEIVING,      /* push_begin seen, bytes arriving */
    STORE_W_DONE,           /* push_end seen */
};

/* store__fail: the store becomes FAILED with this code and the message
 * already in err; later calls repeat it. Returns code. */
int store__fail(struct store *s, int code, const char *err);

/* store__failed_again: the answer to any call on a FAILED store (rank
 * PROTO_RANK_SERVER: a call not about one worker). Returns its code. */
int store__failed_again(const struct store *s, uint32_t rank, char *err);

/* store__rank_in: 0 when rank is below K; else the refusal in err
 * ("worker R: WHAT AT STEP refused: rank not below K = K", where at names
 * the number: "for step", "at version") and ERR_PROTO_RANK. */
int store__rank_in(const struct store *s, uint32_t rank, const char *what, const char *at,
                   uint64_t step, char *err);

/* store__sum_of: where worker w's pushes are added: the accumulator, or
 * its own buffer (PER-WORKER BUFFERS). */
unsigned char *store__sum_of(const struct store *s, const struct store_worker *w);

/* NOT-LINEAR PUSHES (store.h; store_frame.c): the frames' buffers, a
 * frame's bytes as they come, and its decode-and-add at its end. */
int store__frame_init(struct store *s, int setting, char *err);
int store__frame_data(struct store *s, struct store_worker *w, uint32_t rank,
                      const void *bytes, size_t nbytes, char *err);
int store__frame_end(struct store *s, struct store_worker *w, uint32_t rank, char *err);

/* POWERSGD PUSHES (store.h; store_psgd.c): the rounds' state, a round's
 * push begun, its bytes, its end (the frame put whole). */
int store__psgd_init(struct store *s, const struct store_cfg *cfg, char *err);
void store__psgd_destroy(struct store *s);
int store__psgd_begin(struct store *s, struct store_worker *w, uint32_t rank, uint64_t step,
                      const struct proto_push_meta *meta, uint64_t first, uint64_t count,
                      char *err);
int store__psgd_data(struct store *s, struct store_worker *w, uint32_t rank,
                     const void *bytes, size_t nbytes, char *err);
int store__psgd_end(struct store *s, struct store_worker *w, uint32_t rank, char *err);

#endif /* STORE_INT_H */
