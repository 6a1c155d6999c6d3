/* compress.h -- gradient compressors: what a vector becomes on the wire
 * (--compress none|fp16|bf16|powersgd:R|topk:F|sign), behind one interface:
 * the linear codecs (fp16, bf16) summed hop by hop, PowerSGD's two rounds
 * of factors (its own module), and top-k and sign frames
 * (compress_sparse.c, NOT-LINEAR COMPRESSORS below).
 *
 * A compressor turns n elements of a gradient (f32 or f64, the job's
 * dtype) into wire bytes and back. The collectives only ever call the
 * table below; they never see the format:
 *   encode(wire, src, n, dtype, state)   src -> wire; state: the error-
 *                                        feedback residual (state_elems
 *                                        per element, the caller's, zeroed
 *                                        at start), NULL when state_elems
 *                                        is 0 (fp16, bf16: no feedback)
 *   decode(dst, wire, n, dtype)          wire -> dst (overwritten)
 *   add_finite(acc, wire, n, dtype, &bad)  acc[i] += decode(wire)[i] in
 *                                        dtype, THE CHECK fused in
 *                                        (vec_add_finite's contract: 0, or
 *                                        ERR_NONFINITE and the first i
 *                                        whose sum is not finite: a NaN or
 *                                        Inf decoded, or an overflow)
 *   wire_bytes   bytes per element on the wire (0: the dtype's own size,
 *                "none"; a sparse compressor would say 0 and give its own
 *                size function, a later extension)
 *   linear       1 when encoded vectors may be decoded, summed and
 *                re-encoded hop by hop (the ring's reduce-scatter, rd's
 *                exchanges): fp16, bf16, PowerSGD's factors. Top-k with
 *                each worker's own indices is not: it needs the PS.
 *   rounds       all-reduces per step: 1 (the codecs above), 2 for
 *                PowerSGD (P, then Q; A PARAMETERIZED KIND below), whose
 *                encode, decode and add_finite are NULL.
 *
 * THE FORMATS. fp16: IEEE 754 binary16 (1, 5, 10 bits: max 65504,
 * subnormals down to 2^-24). bf16: the top 16 bits of an f32 (1, 8, 7:
 * f32's range, 3 significant decimal digits). Both little-endian on the
 * wire, like every psring payload. Conversions round to nearest, ties to
 * even, in portable bit manipulation (no F16C, no tables): a finite value
 * too large for fp16 becomes Inf (and THE CHECK then fires where it is
 * decoded), NaN stays NaN (quiet), subnormals are kept. An f64 vector is
 * first rounded to f32, then to 16 bits (double rounding: a value within
 * 2^-40 of a halfway point may round the other way than a direct
 * conversion would; both ends of every conversion use these same
 * functions, so results stay bit-identical across ranks and reruns).
 *
 * OWNERSHIP. The tables are static; compress_get never allocates.
 */
#ifndef COMPRESS_H
#define COMPRESS_H

#include <stddef.h>
#include <stdint.h>

enum compress_kind { COMPRESS_NONE = 0, COMPRESS_FP16, COMPRESS_BF16, COMPRESS_POWERSGD,
                    COMPRESS_TOPK = 8, COMPRESS_SIGN = 9 };

/* THE SETTING. What --compress says, in one int (the HELLO's u32, the
 * records): the kind in bits 0-7, COMPRESS_NOEF (bit 8: no error feedback,
 * "topk:F:noef", "sign:noef", "powersgd:R:noef"), a parameter in bits
 * 9-30 (topk: F in millionths, 1..1000000; powersgd: R, 1..PSGD_MAX_RANK).
 * fp16 and bf16 are their kind alone, so every setting that existed
 * before is unchanged. compress_get masks the kind and refuses a setting
 * whose other bits do not belong to it.
 *
 * PowerSGD (rounds 2) has no encode/decode/add_finite and no frame: its
 * factors depend on the layers' shapes and on two all-reduces, so it runs
 * in its own module (base/powersgd.h, coll/coll_psgd.h) and the one-pass
 * collectives (coll_cmp.h) refuse it. */
#define COMPRESS_KIND(s)   ((int)((unsigned)(s) & 0xffu))
#define COMPRESS_NOEF      0x100
#define COMPRESS_PARAM(s)  ((unsigned)(s) >> 9)
#define COMPRESS_PSGD(r, noef) (COMPRESS_POWERSGD | ((r) << 9) | ((noef) ? COMPRESS_NOEF : 0))
#define COMPRESS_PSGD_RANK(k) ((int)COMPRESS_PARAM(k))
#define COMPRESS_PSGD_EF(k) (((k) & COMPRESS_NOEF) == 0)
#define COMPRESS_LABEL_MAX 32

/* NOT-LINEAR COMPRESSORS (linear 0: top-k, sign; compress_sparse.c). One
 * frame carries a whole vector of n elements and cannot be summed hop by
 * hop: it is decoded and added where the sum is taken (the PS's store;
 * the ring's all-gather, coll_sparse.h). The setting travels with each
 * call (top-k's fraction):
 *   bytes(setting, n, dtype)   the frame's size for n elements (fixed:
 *                              the encoder always fills it)
 *   encode(setting, frame, src, n, dtype, state)   src -> frame with
 *                              error feedback: p = src + e (e the state's
 *                              first n elements of dtype, zeroed at
 *                              start; not added under COMPRESS_NOEF),
 *                              frame = C(p), e = p - decode(frame). state:
 *                              state_elems x n elements of dtype, the
 *                              caller's (top-k keeps its selection scratch
 *                              in the second half)
 *   add(setting, acc, frame, bytes, n, dtype, &bad, why)   acc += decode
 *                              of a frame of `bytes` bytes as received.
 *                              Validated whole before anything is added:
 *                              a hostile frame (a count or a size that
 *                              does not fit, an index out of range or out
 *                              of order, padding bits set) is
 *                              ERR_PROTO_FIELD with one line in why and
 *                              acc untouched; a non-finite value decoded,
 *                              or a sum that overflows, ERR_NONFINITE and
 *                              the element in *bad (vec_add_finite's). */
struct compress_frame {
    size_t (*bytes)(int setting, size_t n, int dtype);
    void (*encode)(int setting, void *frame, const void *src, size_t n, int dtype, void *state);
    int (*add)(int setting, void *acc, const void *frame, size_t bytes, size_t n, int dtype,
               size_t *bad, char *why);
};

struct compressor {
    int kind;                   /* enum compress_kind */
    const char *name;           /* "none", "fp16", "bf16": --compress and the CSV */
    size_t wire_bytes;          /* per element; 0: the dtype's size */
    int linear;                 /* summable hop by hop (ring, rd) */
    size_t state_elems;         /* error-feedback state per element; 0: none */
    int rounds;                 /* all-reduces per step: 1, or 2 (PowerSGD: P, then Q) */
    void (*encode)(void *wire, const void *src, size_t n, int dtype, void *state);
    void (*decode)(void *dst, const void *wire, size_t n, int dtype);
    int (*add_finite)(void *acc, const void *wire, size_t n, int dtype, size_t *bad);
    const struct compress_frame *frame;     /* not linear: the frame codec; else NULL */
};

/* What --compress takes, for usage lines: "not " COMPRESS_CHOICES. */
#define COMPRESS_CHOICES "none, fp16 or bf16 (or powersgd:R[:noef] with R 1..16, topk:F[:noef], sign[:noef])"
#define COMPRESS_METAVAR "none|fp16|bf16|powersgd:R|topk:F|sign"

/* compress_get: the compressor of a setting (THE SETTING), or NULL for a
 * value that is none. */
const struct compressor *compress_get(int kind);
/* compress_parse: "none", "fp16", "bf16", "powersgd:R[:noef]" (R 1..16),
 * "topk:F[:noef]" (0 < F <= 1, in millionths), "sign[:noef]" -> 0 and the
 * setting in *kind; else ERR_USAGE. */
int compress_parse(const char *s, int *kind);
/* compress_name: the kind's name ("topk", "sign"), PowerSGD's as --compress
 * spells it ("powersgd:2", "powersgd:4:noef"), "?" for a value that is none. */
const char *compress_name(int kind);
/* compress_label: the setting as --compress spells it ("topk:0.01:noef")
 * into buf[len] (COMPRESS_LABEL_MAX is enough); returns buf. */
const char *compress_label(int setting, char *buf, size_t len);
/* compress_frame_bytes: bytes of n elements on the wire, any compressor
 * (linear: n x compress_wire_size; not linear: one frame). Headers apart. */
size_t compress_frame_bytes(int setting, size_t n, int dtype);
/* compress_state_bytes: the error-feedback state n elements need (0: none). */
size_t compress_state_bytes(int setting, size_t n, int dtype);
/* compress_topk_k: the k of top-k for n elements: ceil(F n), 1..n. */
size_t compress_topk_k(int setting, size_t n);
/* compress_wire_size: bytes per element on the wire for dtype. */
size_t compress_wire_size(const struct compressor *c, int dtype);

/* compress_cost: the codec's own CPU seconds per element of each of its
 * operations, measured apart on the spot (n elements, capped at 2^22,
 * at least 15 ms of CPU time each): enc (encode), dec_add (decode and
 * add, the non-finite check of the sum included), dec (a plain decode;
 * 0 for a framed codec, which has none), check (vec_check_finite, what
 * follows a plain decode). All 0 for none and PowerSGD (its own
 * psgd_cost); 0, or a negative error code when out of memory. How often
 * each algorithm runs each: model_codec (common/measure/model.h);
 * bin/model's --compress time adds that when --compress-cost is not given. */
struct compress_costs {
    double enc, dec_add, dec, check;
};
int compress_cost(int setting, size_t n, int dtype, struct compress_costs *cc);

/* The conversions themselves (THE FORMATS), for tests and references. */
uint16_t compress_f32_to_f16(float f);
float compress_f16_to_f32(uint16_t h);
uint16_t compress_f32_to_bf16(float f);
float compress_bf16_to_f32(uint16_t h);

/* The not-linear codecs' tables (compress_sparse.c), for compress.c's. */
extern const struct compress_frame compress_topk_frame, compress_sign_frame;

#endif /* COMPRESS_H */
