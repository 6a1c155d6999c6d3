/* platform.c -- --platform parsing and the XML it becomes (platform.h).
 *
 * Every generated platform is built from one piece, a <cluster>: hosts
 * h<lo>..h<hi>, each with a private SPLITDUPLEX link (bw each way, lat/2)
 * to the cluster's router and no backbone (the switch is non-blocking). A
 * star is one cluster. A tree (fat-tree, racks) is a Full-routed zone of
 * such clusters, one per rack, whose routers reach each other through the
 * racks' SPLITDUPLEX uplinks: up the source rack's, down the
 * destination's, written out for both directions. A torus is SimGrid's
 * own TORUS cluster (its links and dimension-order routing).
 */
#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/outfile.h"
#include "base/units.h"

/* torus_parse: "torus:X:Y", X and Y 1..65536, X*Y at most 65536 hosts. */
static int torus_parse(const char *spec, struct platform *p, char *err)
{
    const char *x = spec + 6, *colon = strchr(x, ':');
    char num[32], why[ERR_LEN];
    long long tx, ty;

    p->kind = PLATFORM_TORUS;
    if (!colon || (size_t)(colon - x) >= sizeof num) {
        err_say(err, "--platform: torus:X:Y, not '%s'", spec);
        return ERR_USAGE;
    }
    memcpy(num, x, (size_t)(colon - x));
    num[colon - x] = '\0';
    if (cli_parse_ll(num, 1, 65536, &tx, why) != 0 ||
        cli_parse_ll(colon + 1, 1, 65536, &ty, why) != 0 || tx * ty > 65536) {
        err_say(err, "--platform: torus:X:Y wants X, Y >= 1 and X*Y <= 65536 hosts, not '%s'",
                spec);
        return ERR_USAGE;
    }
    p->tx = (int)tx;
    p->ty = (int)ty;
    return 0;
}

int platform_parse(const char *spec, struct platform *p, char *err)
{
    char why[ERR_LEN];

    memset(p, 0, sizeof *p);
    if (strcmp(spec, "star") == 0) {
        p->kind = PLATFORM_STAR;
        return 0;
    }
    if (strncmp(spec, "fat-tree:", 9) == 0) {
        p->kind = PLATFORM_FAT_TREE;
        if (cli_parse_double(spec + 9, &p->oversub, why) != 0 || !(p->oversub >= 1.0) ||
            p->oversub > 1e6) {
            err_say(err, "--platform: fat-tree:OVERSUB wants a ratio >= 1, not '%s'", spec + 9);
            return ERR_USAGE;
        }
        return 0;
    }
    if (strncmp(spec, "racks:", 6) == 0) {
        const char *r = spec + 6, *colon = strchr(r, ':');
        char num[32];
        long long racks;

        p->kind = PLATFORM_RACKS;
        if (!colon || (size_t)(colon - r) >= sizeof num) {
            err_say(err, "--platform: racks:R:UPLINK, not '%s'", spec);
            return ERR_USAGE;
        }
        memcpy(num, r, (size_t)(colon - r));
        num[colon - r] = '\0';
        if (cli_parse_ll(num, 1, 65536, &racks, why) != 0) {
            err_say(err, "--platform: racks:R:UPLINK: R '%s' is not 1..65536", num);
            return ERR_USAGE;
        }
        p->racks = (int)racks;
        if (cli_parse_rate(colon + 1, &p->uplink, why) != 0 || !(p->uplink > 0)) {
            err_say(err, "--platform: racks:R:UPLINK: '%s' is not a positive rate", colon + 1);
            return ERR_USAGE;
        }
        return 0;
    }
    if (strncmp(spec, "torus:", 6) == 0)
        return torus_parse(spec, p, err);
    if (strncmp(spec, "file:", 5) == 0 && spec[5] != '\0') {
        p->kind = PLATFORM_FILE;
        p->file = spec + 5;
        return 0;
    }
    err_say(err, "--platform: '%s' is not star, fat-tree:OVERSUB, racks:R:UPLINK, torus:X:Y or "
            "file:PATH",
            spec);
    return ERR_USAGE;
}

static void cluster(struct outfile *f, const char *id, int lo, int hi, double bw, double lat)
{
    outfile_printf(f, "  <cluster id=\"%s\" prefix=\"h\" suffix=\"\" radical=\"%d-%d\" speed=\"1Gf\"\n"
               "           bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\""
               " router_id=\"%s-router\"\n"
               "           loopback_bw=\"1e18Bps\" loopback_lat=\"0s\"/>\n",
            id, lo, hi, bw, lat / 2, id);
}

int platform_write(const struct platform *p, int hosts, double bw, double lat, const char *path,
                   char *err)
{
    int racks, per, rc;
    double up;
    /* Through outfile.h: a symlink out of its folder (a planted
     * /tmp/psring_sim.PID.xml among them), a FIFO, a device: refused. */
    struct outfile *f = outfile_new("--platform-out", path, &rc, err);

    if (!f)
        return rc;
    outfile_printf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<!-- psring_sim: %d hosts, links %.17g B/s, latency %.17g s -->\n"
               "<platform version=\"4.1\">\n", hosts, bw, lat);
    if (p->kind == PLATFORM_STAR) {
        outfile_printf(f, "<zone id=\"world\" routing=\"Full\">\n");
        cluster(f, "star", 0, hosts - 1, bw, lat);
        outfile_printf(f, "</zone>\n</platform>\n");
        return outfile_end(f, err);
    }
    if (p->kind == PLATFORM_TORUS) {
        /* Every link of the torus: bw each way (SPLITDUPLEX), the whole
         * latency (a hop pays a, as a star's message does). */
        outfile_printf(f, "<zone id=\"world\" routing=\"Full\">\n"
                   "  <cluster id=\"torus\" prefix=\"h\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\"\n"
                   "           bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"\n"
                   "           topology=\"TORUS\" topo_parameters=\"%d,%d\""
                   " loopback_bw=\"1e18Bps\" loopback_lat=\"0s\"/>\n"
                   "</zone>\n</platform>\n", p->tx * p->ty - 1, bw, lat, p->tx, p->ty);
        return outfile_end(f, err);
    }
    if (p->kind == PLATFORM_FAT_TREE) {
        per = PLATFORM_LEAF;
        racks = (hosts + per - 1) / per;
        up = per * bw / p->oversub;
    } else {
        racks = p->racks;
        if (racks > hosts) {
            outfile_abort(f);
            free(f);
            err_say(err, "--platform: %d racks for %d hosts", racks, hosts);
            return ERR_USAGE;
        }
        per = (hosts + racks - 1) / racks;
        racks = (hosts + per - 1) / per;
        up = p->uplink;
    }
    outfile_printf(f, "<zone id=\"world\" routing=\"Full\">\n");
    for (int r = 0; r < racks; r++) {
        char id[32];
        int hi = (r + 1) * per - 1;

        snprintf(id, sizeof id, "rack%d", r);
        cluster(f, id, r * per, hi < hosts ? hi : hosts - 1, bw, lat);
    }
    for (int r = 0; r < racks; r++)
        outfile_printf(f, "  <link id=\"up%d\" bandwidth=\"%.17gBps\" latency=\"0s\""
                   " sharing_policy=\"SPLITDUPLEX\"/>\n", r, up);
    for (int a = 0; a < racks; a++)
        for (int b = 0; b < racks; b++)
            if (a != b)
                outfile_printf(f, "  <zoneRoute src=\"rack%d\" dst=\"rack%d\" gw_src=\"rack%d-router\""
                           " gw_dst=\"rack%d-router\" symmetrical=\"NO\">"
                           "<link_ctn id=\"up%d\" direction=\"UP\"/>"
                           "<link_ctn id=\"up%d\" direction=\"DOWN\"/></zoneRoute>\n",
                        a, b, a, b, a, b);
    outfile_printf(f, "</zone>\n</platform>\n");
    return outfile_end(f, err);
}
