/* platform.h -- the simulated networks of bin/psring_sim, as SimGrid
 * platform XML files (written next to the results, so a result keeps the
 * network it ran on).
 *
 *   --platform            hosts h0..hN-1, and the network between them
 *   star                  one non-blocking switch; each host one full-duplex
 *                         link of --link-bw each way (SPLITDUPLEX) and half
 *                         of --link-latency on each of its two ends, so a
 *                         message pays a + m/bw: the emulated link's twin
 *   fat-tree:OVERSUB      two levels: leaf switches of PLATFORM_LEAF hosts
 *                         (star links as above) under one non-blocking core;
 *                         each leaf's uplink carries LEAF * bw / OVERSUB
 *                         each way (OVERSUB >= 1; 1 is non-blocking)
 *   racks:R:UPLINK        R racks (hosts dealt out in order, ceil(N/R) per
 *                         rack), each with one uplink of rate UPLINK each
 *                         way to a non-blocking core
 *   torus:X:Y             a 2D torus of X*Y hosts (SimGrid's TORUS cluster):
 *                         host i at (i mod X, i / X), a full-duplex link of
 *                         --link-bw each way and --link-latency to each of its
 *                         four neighbours, a message routed along X first,
 *                         then Y, the shorter way round each; it pays the
 *                         latency once per hop and shares every link it
 *                         crosses. Hosts have no port limit of their own:
 *                         psring's algorithms send one frame at a time, so
 *                         a rank injects on one port whatever the torus has
 *   file:PATH             a SimGrid platform file of your own; its hosts
 *                         in SimGrid's order are the ranks (PS: the
 *                         servers after the workers)
 * Uplinks add no latency: a message between racks pays the same a as
 * within one, and only the bandwidth of the shared uplink differs.
 */
#ifndef PLATFORM_H
#define PLATFORM_H

#define PLATFORM_LEAF 32          /* hosts per leaf switch of fat-tree */

enum platform_kind { PLATFORM_STAR = 1, PLATFORM_FAT_TREE, PLATFORM_RACKS, PLATFORM_FILE,
                     PLATFORM_TORUS };

struct platform {
    int kind;
    double oversub;               /* fat-tree */
    int racks;                    /* racks */
    double uplink;                /* racks: bytes/s */
    int tx, ty;                   /* torus: X, Y */
    const char *file;             /* file: (points into the spec) */
};

/* platform_parse: the --platform value. ERR_USAGE with one line in err. */
int platform_parse(const char *spec, struct platform *p, char *err);

/* platform_write: the XML of p for `hosts` hosts with links of bw bytes/s
 * and lat seconds, to path (a torus has its X*Y hosts whatever `hosts`
 * says). Not for PLATFORM_FILE. 0 or a negative code (ERR_USAGE: racks >
 * hosts) with one line in err. */
int platform_write(const struct platform *p, int hosts, double bw, double lat, const char *path,
                   char *err);

#endif /* PLATFORM_H */
