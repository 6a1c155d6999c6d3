/* report.c -- bin/psring_sim's verdict and outputs (report.h). */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/err.h"
#include "base/outfile.h"

/* names: 2 when msg names the loss itself (needle, not relayed), 1 when
 * it relays it ("... reported: ..."), 0 when it does not name it. */
static int names(const char *msg, const char *needle)
{
    return !strstr(msg, needle) ? 0 : strstr(msg, " reported: ") ? 1 : 2;
}

/* host_bytes_write: "HOST BYTES_IN BYTES_OUT" per host, the payload bytes
 * its actors moved across its link over the whole run (--host-bytes). */
static int host_bytes_write(const char *path, const struct sim_slot *slots, int nslots,
                            int nhosts, char *err)
{
    int rc;
    struct outfile *f = outfile_new("--host-bytes", path, &rc, err);

    if (!f)
        return rc;
    outfile_printf(f, "# host bytes_in bytes_out   (payload across the host's link, the whole run)\n");
    for (int h = 0; h < nhosts; h++) {
        unsigned long long in = 0, out = 0;

        for (int i = 0; i < nslots; i++)
            if (slots[i].host == h) {
                in += slots[i].bytes_in;
                out += slots[i].bytes_out;
            }
        outfile_printf(f, "h%d %llu %llu\n", h, in, out);
    }
    return outfile_end(f, err);
}

int sim_verdict(const struct sim_opts *o, const struct sim_job *j,
                const struct sim_slot *slots, int nslots)
{
    int first_bad = -1;

    for (int i = 0; i < nslots; i++) {
        char needle[48];

        if (slots[i].rc == 0)
            continue;
        snprintf(needle, sizeof needle, "lost %s %d (", j->ps ? "worker" : "rank", o->kill_rank);
        if (first_bad < 0 || (o->kill_rank >= 0 && names(slots[i].err, needle) >
                              names(slots[first_bad].err, needle)))
            first_bad = i;
    }
    if (first_bad >= 0) {
        fprintf(stderr, SIM_PROG ": %s %d: %s\n", slots[first_bad].rec.role, slots[first_bad].rank,
                slots[first_bad].err[0] ? slots[first_bad].err : err_str(slots[first_bad].rc));
        return 1;
    } else if (o->kill_rank >= 0) {
        fprintf(stderr, SIM_PROG ": --kill %d@%d: the others finished without it\n", o->kill_rank,
                o->kill_step);
        return 1;
    }
    return 0;
}

int sim_report(const struct sim_opts *o, const struct sim_job *j, struct sim_slot *slots,
               struct metrics_record *recs, int nslots, int nhosts, const char *placement,
               int status)
{
    struct metrics_row row;
    char err[ERR_LEN];

    for (int i = 0; i < nslots; i++) {
        slots[i].rec.cpu_s = 0;         /* virtual time: the host never sets the pace */
        slots[i].rec.wall_s = 0;
        recs[i] = slots[i].rec;
    }
    if (o->bench) {
        /* the records bench.c wrote, one per rank, in place of the slots' */
        for (int i = 0; i < nslots; i++) {
            char path[4200];

            sim_rec_path(path, sizeof path, i);
            if (status == 0) {
                metrics_record_free(&slots[i].rec);
                if (metrics_record_read(&slots[i].rec, path, err) != 0) {
                    fprintf(stderr, SIM_PROG ": %s\n", err);
                    status = 1;
                }
                slots[i].rec.cpu_s = 0;
                slots[i].rec.wall_s = 0;
                slots[i].rec.ncpu = 1;
                snprintf(slots[i].rec.transport, METRICS_NAME_LEN, "sim");
                recs[i] = slots[i].rec;
            }
            unlink(path);
        }
    }
    if (status == 0 && (metrics_merge(recs, (size_t)nslots, &row, err) != 0 ||
                        (j->ps && metrics_row_place(&row, placement, err) != 0))) {
        fprintf(stderr, SIM_PROG ": %s\n", err);
        status = 1;
    }
    if (status == 0 && o->host_bytes && host_bytes_write(o->host_bytes, slots, nslots, nhosts,
                                                         err) != 0) {
        fprintf(stderr, SIM_PROG ": %s\n", err);
        status = 1;
    }
    if (status == 0 && (!o->bench || o->csv_out)) {
        FILE *f = stdout;
        int header = 1;

        if (o->csv_out) {
            int rc;         /* a symlink out of its folder, a FIFO: refused (outfile.h) */
            f = outfile_append("--csv-out", o->csv_out, &header, &rc, err);
            if (!f) {
                fprintf(stderr, SIM_PROG ": %s\n", err);
                status = rc == ERR_USAGE ? CLI_EXIT_USAGE : 1;
            }
        }
        if (f) {
            if (header)
                metrics_csv_header(f);
            metrics_row_write(f, &row);
            if (f != stdout && fclose(f) != 0) {
                fprintf(stderr, SIM_PROG ": --csv-out %s: %s\n", o->csv_out, strerror(errno));
                status = 1;
            }
        }
    }
    if (status == 0 && o->json_out &&
        metrics_row_append_json("--json-out", o->json_out, &row, NULL, err) != 0) {
        fprintf(stderr, SIM_PROG ": %s\n", err);
        status = 1;
    }
    return status;
}
