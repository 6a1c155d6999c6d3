/* checkpoint.h -- the parameter server's checkpoint file: what a server
 * needs to go on after it was killed (--checkpoint FILE --checkpoint-every
 * N writes it, --resume FILE reads it; docs/design.md, "Checkpoint and
 * resume").
 *
 * A checkpoint holds one server's shard after the update of step s-1: the
 * weights of its element range, the step s it collects next, the job's
 * shape (so that a file of another job is refused) and a list of sections
 * (so that optimizer state, a loss curve, ... are added without a new
 * format). With S sharded servers each writes its own file.
 *
 * FILE FORMAT (little-endian, like the wire; version CKPT_VERSION, 2)
 *
 *   HEADER
 *   OFFSET SIZE DESCRIPTION
 *   0      8    magic: the bytes "PSRGCKPT"
 *   8      4    version: CKPT_VERSION (2; version 1: see VERSIONS below)
 *   12     4    nsections: 1 .. CKPT_MAX_SECTIONS
 *   16     4    K: workers
 *   20     4    dtype: enum dtype (1 f32, 2 f64)
 *   24     4    workload: enum workload_kind
 *   28     4    mistake: enum mistake (the server's update depends on it)
 *   32     4    shard index I
 *   36     4    shard count S
 *   40     4    pushes per worker per step (P, store.h)
 *   44     4    seal: what the trailer is: CKPT_SEAL_SHA256 (0, a job
 *               without a secret) or CKPT_SEAL_HMAC (1, a job with one)
 *   48     8    n: parameters of the whole job
 *   56     8    lo: first element this shard owns
 *   64     8    hi: one past its last
 *   72     8    seed
 *   80     8    batch: B, global examples per step
 *   88     8    lr: the learning rate, IEEE-754 binary64
 *   96     8    step: the next step to collect (steps 0 .. step-1 applied)
 *   104    8    steps: --steps of the run that wrote it (not checked)
 *   112         end of header (CKPT_HEADER_SIZE)
 *
 *   SECTIONS, nsections of them, back to back
 *   0      4    id: enum ckpt_section_id
 *   4      4    flags: bit 0 CKPT_REQUIRED (a reader that does not know the
 *               id refuses the file; without it an unknown section is
 *               skipped); other bits 0
 *   8      8    length: payload bytes
 *   16     ...  payload
 *
 *   TRAILER
 *   0      32   seal 0: SHA-256 of every byte before it (a checksum: anyone
 *               who can write the file can recompute it);
 *               seal 1: HMAC-SHA256 of every byte before it under the
 *               checkpoint key, HMAC-SHA256(secret, CKPT_KEY_LABEL): a key
 *               of its own, derived from the job's secret (auth.h,
 *               auth_key_derive), so no handshake MAC is ever a
 *               checkpoint's and the other way round (libsodium both)
 *
 * The file is exactly that long: a byte more or less is refused. Section
 * ids appear at most once each. Sections so far:
 *   CKPT_SEC_WEIGHTS (required): (hi - lo) elements of dtype, the weights.
 *   CKPT_SEC_LOSS (optional): step binary64 values, the global loss of
 *       steps 0 .. step-1 (NaN where not recorded), for --loss-out.
 *   CKPT_SEC_OPTIM (required; written when the optimizer has state,
 *       optim.h: momentum, adam): u32 kind, u32 0, u64 t (updates
 *       applied), binary64 momentum, beta1, beta2, eps (48 bytes).
 *   CKPT_SEC_OPTIM_STATE (required, with CKPT_SEC_OPTIM): the state,
 *       optim.h's slots x (hi - lo) elements of dtype (m; Adam: m then v).
 *   ids 18 .. 31 are kept for more optimizer state.
 *
 * VERSIONS. Version 1 had no seal field (offset 44 reserved, 0) and always
 * a SHA-256 trailer. ckpt_decode reads it only when it is given no key (a
 * job without a secret); a job with a secret refuses it, as it refuses a
 * version-2 file sealed with SHA-256: an unkeyed file proves nothing. A
 * job without a secret refuses a keyed file (it cannot check it).
 *
 * CHECKS. ckpt_decode refuses, with one line, anything that is not a whole
 * checkpoint of this version: a bad magic, version, seal or checksum/MAC, a
 * length that does not add up, a section past the end, a duplicate or
 * unknown required section, a header field out of range (lo < hi <= n, I <
 * S, K and dtype valid), a WEIGHTS or LOSS section of the wrong length.
 * Then THE VALUES, keyed or not (a checksum recomputed by a forger, or a
 * member that holds the secret, gets this far): step <= steps <=
 * CKPT_STEPS_MAX; every weight finite; the OPTIM and OPTIM_STATE sections
 * both or neither, OPTIM of CKPT_OPTIM_HEAD bytes with a known kind, t <=
 * step and finite hyperparameters, the state of the kind's slots x (hi -
 * lo) elements, every element finite and Adam's second moments (slot 1)
 * >= 0. The LOSS values are a record for --loss-out, never fed back into
 * training: taken as they are (NaN: not recorded).
 * ckpt_match then refuses a checkpoint of another job (K, n, dtype,
 * workload, seed, B, lr, mistake, P, the shard), naming the first field
 * that differs. Both are ERR_FORMAT / ERR_MISMATCH, and the server exits
 * CKPT_EXIT_DATA (65) on either (docs/design.md, "Exit codes").
 *
 * WRITING. ckpt_write writes through common/base/outfile.h: a temp file next
 * to the target, fsync, rename, fsync of the folder; a reader sees the old
 * checkpoint or the new one. A path that is not a regular file is never
 * replaced. A SIGKILL mid-write leaves the temp file; ckpt_sweep, at the
 * next start, removes it. TEST HOOK (test-only, never set it otherwise): with the
 * environment variable PSRING_TEST_KILL_BEFORE_RENAME=STEP the process
 * SIGKILLs itself while it writes the checkpoint of step STEP, after the
 * temp file is written, fsynced and closed, just before the rename
 * (tests/t_ps_ckpt.sh), so the old checkpoint must stay.
 *
 * OWNERSHIP. struct ckpt's section payloads point into the caller's
 * buffer: ckpt_decode's input, or the caller's own arrays for ckpt_encode
 * and ckpt_write. ckpt_load allocates the file's bytes (*buf), which the
 * caller frees with free(); the decoded struct is valid while *buf lives.
 */
#ifndef CHECKPOINT_H
#define CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#define CKPT_MAGIC        "PSRGCKPT"
#define CKPT_VERSION      2
#define CKPT_VERSION_V1   1       /* no seal field; read without a secret only */
#define CKPT_SEAL_SHA256  0
#define CKPT_SEAL_HMAC    1
#define CKPT_KEY_SIZE     32
#define CKPT_KEY_LABEL    "psring-checkpoint-key-1"
#define CKPT_STEPS_MAX    2147483647ull   /* --steps' bound, INT_MAX (cli_common.c) */
#define CKPT_HEADER_SIZE  112
#define CKPT_SECTION_HEAD 16
#define CKPT_OPTIM_HEAD   48      /* CKPT_SEC_OPTIM's payload */
#define CKPT_SUM_SIZE     32
#define CKPT_MAX_SECTIONS 32
#define CKPT_REQUIRED     1u
#define CKPT_EXIT_DATA    65      /* a --resume file that is not ours (EX_DATAERR) */
#define CKPT_FILE_MAX     (((uint64_t)1 << 44))   /* 2^40 f64 weights and more */
#define CKPT_KILL_ENV     "PSRING_TEST_KILL_BEFORE_RENAME"

enum ckpt_section_id {
    CKPT_SEC_WEIGHTS = 1,
    CKPT_SEC_LOSS = 2,
    CKPT_SEC_OPTIM = 16,        /* the optimizer: kind, t, hyperparameters */
    CKPT_SEC_OPTIM_STATE = 17,  /* its state vectors */
    CKPT_SEC_OPT_LAST = 31,     /* 18 .. 31: reserved for more */
};

/* The job's shape: what must match to resume. */
struct ckpt_job {
    uint32_t world;         /* K */
    uint32_t dtype;
    uint32_t workload;
    uint32_t mistake;
    uint32_t shard_i, shard_s;
    uint32_t per_step;      /* P */
    uint64_t n, lo, hi;
    uint64_t seed, batch;
    double lr;
};

struct ckpt_section {
    uint32_t id, flags;
    uint64_t len;
    const void *data;
};

/* The checkpoint key: keyed 0 for a job without a secret (SHA-256). */
struct ckpt_key {
    int keyed;
    unsigned char k[CKPT_KEY_SIZE];
};

struct ckpt {
    struct ckpt_job job;
    uint32_t version;       /* as read (ckpt_encode writes CKPT_VERSION) */
    uint64_t step;          /* next step to collect */
    uint64_t steps;         /* --steps of the writer */
    uint32_t nsec;
    struct ckpt_section sec[CKPT_MAX_SECTIONS];
};

/* ckpt_size: the bytes ckpt_encode makes of *ck. */
uint64_t ckpt_size(const struct ckpt *ck);

/* ckpt_key_make: the checkpoint key of a job with this secret (auth.h;
 * auth_key_derive with CKPT_KEY_LABEL); NULL or unkeyed: keyed 0. */
struct auth_key;
void ckpt_key_make(struct ckpt_key *key, const struct auth_key *secret);

/* ckpt_encode: *ck as a version-2 file, handed in order to put(ctx,
 * bytes, n) (the seal last: HMAC under key when key->keyed, else
 * SHA-256; key NULL: none). ck must be valid (ckpt_decode would accept the
 * result); asserted for the counts only. */
void ckpt_encode(const struct ckpt *ck, const struct ckpt_key *key,
                 void (*put)(void *ctx, const void *p, size_t n), void *ctx);

/* ckpt_decode: len bytes of buf as a checkpoint into *out (sections point
 * into buf), checked against key (NULL or keyed 0: a job without a
 * secret; VERSIONS above) and its values checked (CHECKS). 0, or
 * ERR_FORMAT with the reason in err[ERR_LEN]. */
int ckpt_decode(const unsigned char *buf, size_t len, const struct ckpt_key *key,
                struct ckpt *out, char *err);

/* ckpt_find: the section with this id, or NULL. */
const struct ckpt_section *ckpt_find(const struct ckpt *ck, uint32_t id);

/* ckpt_match: 0 when ck is a checkpoint of the job *want, else
 * ERR_MISMATCH naming the first field that differs ("K 3 in the
 * checkpoint, 2 here"). */
int ckpt_match(const struct ckpt *ck, const struct ckpt_job *want, char *err);

/* ckpt_write: *ck to path, atomically (outfile.h; flag "--checkpoint"
 * names it in messages). 0, or a negative code with the line in err. */
int ckpt_write(const char *path, const struct ckpt *ck, const struct ckpt_key *key, char *err);

/* ckpt_load: the whole file at path into *buf (allocated; *len bytes) and
 * decoded into *out. A file that cannot be read: a negative errno
 * ("--resume: cannot read PATH: ..."); not a checkpoint: ERR_FORMAT. On
 * failure *buf is NULL. */
int ckpt_load(const char *path, const struct ckpt_key *key, unsigned char **buf, size_t *len,
              struct ckpt *out, char *err);

/* ckpt_sweep: remove what writers of the checkpoint at path that died
 * mid-write left: its temp files "DIR/.BASE.tmp.PID.N" (outfile.h) whose
 * PID no longer exists (kill(PID, 0) fails with ESRCH). A file of a live
 * process (or of a PID reused since) is kept, and so is anything that is
 * not a regular file or does not have exactly that name. Also for the
 * file a final symlink at path names. Returns how many were removed (the
 * caller logs it); errors are skipped: the sweep is a courtesy. */
int ckpt_sweep(const char *path);

#endif /* CHECKPOINT_H */
