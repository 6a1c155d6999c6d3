/* resume.h -- the server's side of checkpoint and resume: what of the
 * server's state goes into a checkpoint (checkpoint.h, the file) and how
 * a server goes on from one. No libuv; server.c and ps_server/setup.c
 * call in here.
 *
 * SAVE. After the update of step s (server.c, step_done), when (s + 1) is a
 * multiple of --checkpoint-every, resume_after_apply writes --checkpoint:
 * the job's shape, step s + 1, this shard's weights and (with --loss-out)
 * the loss of every step so far. The write is synchronous, on the event
 * loop, before the weights of step s go out. SIMPLIFICATION: a large
 * shard's write holds the loop for its fsync; --checkpoint-every sets how
 * often that is paid.
 *
 * KEYED. With the job's secret (--secret-file, PSRING_SECRET; srv->f.key)
 * the checkpoint is sealed with an HMAC under a key derived from it
 * (checkpoint.h): a checkpoint of another secret, or one without a MAC,
 * is refused on resume. Without one it is SHA-256, as in version 1.
 * Either way its values are checked before any reaches the store.
 *
 * RESUME. resume_load (ps_server/setup.c, --resume FILE) reads the file, refuses one
 * of another job, and puts its weights and step into the store. The server
 * then announces that step in every WELCOME and, once all K workers have
 * joined, sends them the weights of step s - 1 (server.c) before it takes
 * pushes for step s. The workers' data are a function of the step
 * (workload.h), so the run goes on as if it had never stopped: the same
 * bits (tests/t_ps_ckpt.sh).
 *
 * ROLLBACK. A server with --checkpoint also writes one at start (step 0,
 * unless it resumed), so there always is a file to go back to. When a
 * joined worker's connection is lost (server.c, run_lost) such a server does
 * not fail the run: it closes every worker, loads its checkpoint again
 * (resume_load) and takes K HELLOs, as a server started with --resume
 * would. The workers redial (--reconnect-window) and a restarted one
 * joins; all go on from the checkpoint's step, with the same bits. A
 * worker that does not come back within --timeout fails the run ("not
 * joined"). A worker's ERROR frame, a NaN or a refused frame still end
 * the run: only a lost connection is rolled back.
 *
 * TEST HOOK (test-only): PSRING_TEST_KILL_AT_STEP=S makes the server
 * SIGKILL itself right after the update of step S (and its checkpoint,
 * when one is due), so a test kills it at a step it chose. The protocol
 * only says when a step's update is done (resume_after_apply calls the
 * machine's test_kill, server.h); bin/ps_server's (ps_server/main.c) reads
 * the variable and raises the signal; the simulated server's does nothing.
 */
#ifndef RESUME_H
#define RESUME_H

#include "ps/checkpoint.h"
#include "ps/server.h"

#define RESUME_KILL_ENV "PSRING_TEST_KILL_AT_STEP"

/* resume_job: the shape of this server's job, what a checkpoint must
 * match (ckpt_match). */
void resume_job(const struct server *srv, struct ckpt_job *job);

/* resume_load: --resume path into the store (and the loss curve). 0; a
 * file that cannot be read: a negative errno (exit 64); not a checkpoint
 * or another job's: ERR_FORMAT or ERR_MISMATCH (exit CKPT_EXIT_DATA).
 * The one-line reason in err. */
int resume_load(struct server *srv, const char *path, char *err);

/* resume_save: --checkpoint now: the store as it is (its step, its
 * weights) and the loss so far. 0, or a negative code with the line. */
int resume_save(struct server *srv, char *err);

/* resume_sweep: at start, with --checkpoint, the temp files that writers
 * of it killed mid-write left (ckpt_sweep: only those whose PID is gone);
 * one log line when there were any. */
void resume_sweep(const struct server *srv);

/* resume_after_apply: step `step` was just applied: the checkpoint if one
 * is due, then the test hook. 0, or a negative code with the line in err
 * (the write failed: the run fails, the old checkpoint stays). */
int resume_after_apply(struct server *srv, uint64_t step, char *err);

#endif /* RESUME_H */
