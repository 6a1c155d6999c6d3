/* engine.c -- SimGrid set up for bin/psring_sim (engine.h): sg_trial,
 * sim_platform_load, sim_actors_start.
 */
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>

#include "base/compress.h"
#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "measure/metrics.h"

/* sg_trial: SimGrid aborts the process (an uncaught C++ exception, exit
 * 134 and a backtrace) on a --cfg key it does not know, a value it cannot
 * read, or a platform file it cannot parse. What the user gave (--sg-cfg,
 * --platform file:PATH) is therefore first tried in a child: SimGrid
 * initialised with these arguments and the platform loaded, nothing run.
 * A child that does not exit 0 ends the run here with one line, exit 64,
 * naming SimGrid's own reason where it printed one. */
static void sg_trial(int argc, char **argv, const char *xml, int n_cfg)
{
    int fd[2], st = 0;
    char buf[8192], why[200] = "";
    size_t len = 0;
    ssize_t got;
    pid_t pid;

    if (pipe(fd) != 0)
        return;                             /* cannot try: the real load decides */
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        dup2(fd[1], STDERR_FILENO);
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        simgrid_init(&argc, argv);
        simgrid_load_platform(xml);
        _exit(0);
    }
    close(fd[1]);
    while ((got = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0 || (got < 0 && errno == EINTR))
        if (got > 0 && (len += (size_t)got) == sizeof buf - 1)
            len = 0;                        /* keep reading; only the start matters */
    buf[len] = '\0';
    close(fd[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return;
    /* SimGrid's reason: its CRITICAL line, or the exception's what(). */
    const char *r = strstr(buf, "CRITICAL] ");
    r = r ? r + 10 : strstr(buf, "what():  ");
    if (r && r == strstr(buf, "what():  "))
        r += 9;
    if (r)
        snprintf(why, sizeof why, "%.*s", (int)strcspn(r, "\n"), r);
    char line[ERR_LEN + 256];
    snprintf(line, sizeof line, "SimGrid refused %s%s%s",
             n_cfg ? "--sg-cfg" : "the platform file",
             why[0] ? ": " : " (it gave no reason)", why);
    sim_usage_fail(line);
}

int sim_platform_load(char *argv0, const struct sim_opts *o, const struct cli_common *c,
                      const struct platform *pf, const struct sim_job *j, int nhosts,
                      char *xml, size_t xml_len, int *tmp_xml)
{
    static char arg_buf[SIM_MAX_CFG + 8][160];
    static char *sg_argv[SIM_MAX_CFG + 10];
    char err[ERR_LEN];
    int sg_argc = 0;

    if (pf->kind == PLATFORM_FILE) {
        snprintf(xml, xml_len, "%s", pf->file);
        if (access(xml, R_OK) != 0)
            sim_usage_fail("--platform file:PATH: cannot read PATH");
    } else {
        if (o->platform_out) {
            snprintf(xml, xml_len, "%s", o->platform_out);
        } else {
            snprintf(xml, xml_len, "%s/psring_sim.%d.xml", getenv("TMPDIR") ? getenv("TMPDIR")
                     : "/tmp", (int)getpid());
            *tmp_xml = 1;
        }
        int rc = platform_write(pf, o->hosts, c->link_bw, c->link_latency, xml, err);
        if (rc == ERR_USAGE)
            sim_usage_fail(err);
        if (rc != 0) {
            fprintf(stderr, SIM_PROG ": %s\n", err);
            return 1;
        }
    }
    sg_argv[sg_argc++] = argv0;
    {
        const char *cfgs[] = {
            "network/model:CM02", "network/latency-factor:1", "network/bandwidth-factor:1",
            "network/crosstraffic:0", "network/TCP-gamma:0", "network/optim:Full",
            "contexts/stack-size:256",
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
            "contexts/factory:thread",
#endif
        };
        int nc = (int)(sizeof cfgs / sizeof cfgs[0]);

        for (int i = 0; i < nc + o->n_cfg; i++) {
            snprintf(arg_buf[i], sizeof arg_buf[i], "--cfg=%s", i < nc ? cfgs[i] : o->sg_cfg[i - nc]);
            sg_argv[sg_argc++] = arg_buf[i];
        }
        snprintf(arg_buf[nc + o->n_cfg], sizeof arg_buf[0], "--log=root.thres:warning");
        sg_argv[sg_argc++] = arg_buf[nc + o->n_cfg];
        snprintf(arg_buf[nc + o->n_cfg + 1], sizeof arg_buf[0], "--log=xbt_cfg.thres:warning");
        sg_argv[sg_argc++] = arg_buf[nc + o->n_cfg + 1];
    }
    sg_argv[sg_argc] = NULL;
    log_init(SIM_PROG, 0);
    if (o->n_cfg > 0 || pf->kind == PLATFORM_FILE)
        sg_trial(sg_argc, sg_argv, xml, o->n_cfg);
    simgrid_init(&sg_argc, sg_argv);
    simgrid_load_platform(xml);
    if ((int)sg_host_count() < nhosts) {
        snprintf(err, sizeof err, "K %d%s is more than the platform's %d hosts", j->k,
                 j->ps ? " + servers" : "", (int)sg_host_count());
        sim_usage_fail(err);
    }
    return 0;
}

void sim_actors_start(const struct sim_opts *o, const struct cli_common *c,
                      const struct platform *pf, const struct sim_job *j,
                      struct sim_slot *slots, int nslots)
{
    sg_host_t *hl = sg_host_list();

    for (int i = 0; i < nslots; i++) {
        struct sim_slot *sl = &slots[i];
        int server = i >= j->k;
        char name[32];
        sg_host_t h;

        sl->job = j;
        sl->rank = server ? i - j->k : i;
        sl->slot = i;
        sl->host = server ? j->srv[sl->rank].host : i;
        metrics_record_init(&sl->rec, (size_t)(c->steps - c->warmup));
        snprintf(sl->rec.clock_id, sizeof sl->rec.clock_id, "sim");   /* enter_t: virtual */
        snprintf(sl->rec.system, METRICS_NAME_LEN, "%s", j->ps ? "ps" : "ring");
        snprintf(sl->rec.role, METRICS_NAME_LEN, "%s", server ? "server" : j->ps ? "worker"
                 : "rank");
        snprintf(sl->rec.algo, METRICS_NAME_LEN, "%s", j->ps ? "" : o->algo);
        if (!j->ps && j->group > 0)     /* --algo hring: coll_algo_name's "hring:G" */
            snprintf(sl->rec.algo, METRICS_NAME_LEN, "hring:%u", (unsigned)j->group % 1000000u);
        snprintf(sl->rec.transport, METRICS_NAME_LEN, "sim");
        sl->rec.rank = sl->rank;
        sl->rec.world = j->k;
        sl->rec.bytes = j->bytes;
        if (!j->ps) {           /* ring_worker's: the wire's bytes (metrics.h, compress) */
            const struct compressor *k = compress_get(j->compress);
            snprintf(sl->rec.compress, sizeof sl->rec.compress, "%s", compress_name(j->compress));
            sl->rec.wire_bytes = j->bytes / dtype_size(c->dtype) * compress_wire_size(k, c->dtype);
        }
        sl->rec.link_bw = c->link_bw;
        sl->rec.link_latency = c->link_latency;
        sl->rec.ncpu = 1;
        if (pf->kind == PLATFORM_FILE) {
            h = hl[sl->host];
        } else {
            snprintf(name, sizeof name, "h%d", sl->host);
            h = sg_host_by_name(name);
        }
        snprintf(name, sizeof name, "%s%d", server ? "server" : j->ps ? "worker" : "rank",
                 sl->rank);
        sg_actor_t a = sg_actor_init(name, h);
        sg_actor_set_data(a, sl);
        sg_actor_start(a, server ? sim_ps_server : j->ps ? sim_ps_worker : sim_ring_actor, 0,
                       NULL);
    }
    free(hl);
}
