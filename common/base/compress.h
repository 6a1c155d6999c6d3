/* compress.h -- gradient compressors: what a vector becomes on the wire
 * (--compress none|fp16|bf16|powersgd:R), behind one interface that later
 * compressors (PowerSGD, top-k, sign) take too.
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

enum compress_kind { COMPRESS_NONE = 0, COMPRESS_FP16, COMPRESS_BF16, COMPRESS_POWERSGD };

/* A PARAMETERIZED KIND (powersgd:R[:noef]): the int that --compress
 * parses to, the HELLO carries (u32 at 24) and the rendezvous compares
 * holds the enum in its low 8 bits and the compressor's parameters above
 * (powersgd: R in bits 8..15, 1..PSGD_MAX_RANK; bit 16 set: no error
 * feedback). compress_get takes the whole int and refuses parameters a
 * kind does not have; the table entry is the kind's, whatever R. A
 * compressor with rounds 2 (PowerSGD) has no encode/decode/add_finite:
 * its factors depend on the layers' shapes and on two all-reduces, so
 * it runs in its own module (base/powersgd.h, coll/coll_psgd.h) and the
 * one-pass collectives (coll_cmp.h) refuse it. */
#define COMPRESS_KIND(k) ((k) & 0xff)
#define COMPRESS_PSGD(r, noef) (COMPRESS_POWERSGD | ((r) << 8) | ((noef) ? 1 << 16 : 0))
#define COMPRESS_PSGD_RANK(k) (((k) >> 8) & 0xff)
#define COMPRESS_PSGD_EF(k) (((k) >> 16 & 1) == 0)

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
};

/* compress_get: the compressor of kind, or NULL for a value that is none. */
const struct compressor *compress_get(int kind);
/* compress_parse: "none", "fp16", "bf16", "powersgd:R" or
 * "powersgd:R:noef" (R 1..16) -> 0 and *kind; else ERR_USAGE. */
int compress_parse(const char *s, int *kind);
/* compress_name: the kind's name as --compress spells it ("powersgd:2",
 * "powersgd:4:noef"), "?" for a value that is none. */
const char *compress_name(int kind);
/* compress_wire_size: bytes per element on the wire for dtype. */
size_t compress_wire_size(const struct compressor *c, int dtype);

/* The conversions themselves (THE FORMATS), for tests and references. */
uint16_t compress_f32_to_f16(float f);
float compress_f16_to_f32(uint16_t h);
uint16_t compress_f32_to_bf16(float f);
float compress_bf16_to_f32(uint16_t h);

#endif /* COMPRESS_H */
