/* model.c -- the alpha-beta model as a table: parameter-server ingress
 * against ring all-reduce for any gradient size, link and worker counts.
 *
 *     model [--elements P] [--elem-bytes E] [--bw RATE] [--latency TIME]
 *           [--workers K1,K2,...]
 *
 * The defaults are the seed's exercise (000_3fcac0ad83665df8.txt): P = 2e9
 * elements of 2 bytes (4 GB), links of 25 GB/s, K in {8, 64, 512}. The
 * formulas are common/model.h's; nothing here is measured. Columns:
 *
 *   K              workers
 *   ps_ingress_s   a + K n / bw: the server's inbound link carries K gradients
 *   ps_step_s      ingress + egress (the same again outbound)
 *   ring_s         2(K-1) a + 2(K-1)/K n / bw: what each ring worker's link carries
 *   ps_over_ring   ps_ingress_s / ring_s (about K/2 when latency is small)
 *   server_GB      bytes into the server per step (K n), in 1e9 bytes
 *   ring_GB        bytes into one ring worker per step (2(K-1)/K n)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "err.h"
#include "model.h"

int main(int argc, char **argv)
{
    double elements = 2e9, elem_bytes = 2, bw = 25e9, latency = 0;
    const char *workers = "8,64,512";
    const struct cli_opt table[] = {
        { "elements", CLI_DOUBLE, &elements, "P", "gradient elements (default 2e9, the seed's exercise)", 0, 0, NULL },
        { "elem-bytes", CLI_DOUBLE, &elem_bytes, "E", "bytes per element (default 2)", 0, 0, NULL },
        { "bw", CLI_RATE, &bw, "RATE", "link bandwidth each way (default 25GB = 25e9 bytes/s)", 0, 0, NULL },
        { "latency", CLI_TIME, &latency, "TIME", "one-way link latency a (default 0)", 0, 0, NULL },
        { "workers", CLI_STRING, &workers, "K,...", "worker counts (default 8,64,512)", 0, 0, NULL },
        { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
    };
    const struct cli_opt *const tables[] = { table, NULL };
    char err[ERR_LEN];
    double *ks = NULL;
    int nk = 0;

    cli_main_parse("model", "[--elements P] [--elem-bytes E] [--bw RATE] [--latency TIME] [--workers K,...]\n"
                   "The alpha-beta model: parameter-server ingress time against ring all-reduce time.",
                   argc, argv, tables);
    if (!(elements >= 1) || !(elem_bytes > 0) || !(bw > 0)) {
        fprintf(stderr, "model: --elements must be >= 1, --elem-bytes and --bw > 0\n");
        return CLI_EXIT_USAGE;
    }
    if (cli_parse_list(workers, &ks, &nk, err) != 0) {
        fprintf(stderr, "model: --workers: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    for (int i = 0; i < nk; i++) {
        if (ks[i] != floor(ks[i]) || ks[i] < 1 || ks[i] > 1e7) {
            fprintf(stderr, "model: --workers: %g is not a worker count (a whole number 1..1e7)\n", ks[i]);
            free(ks);
            return CLI_EXIT_USAGE;
        }
    }

    double n = elements * elem_bytes;
    printf("# alpha-beta model (common/model.h), nothing measured: P = %g elements x %g B = %g GB per gradient,\n"
           "# links of %g GB/s each way, latency a = %g s\n", elements, elem_bytes, n / 1e9, bw / 1e9, latency);
    printf("# %-8s %14s %14s %14s %12s %12s %10s\n", "K", "ps_ingress_s", "ps_step_s", "ring_s",
           "ps_over_ring", "server_GB", "ring_GB");
    for (int i = 0; i < nk; i++) {
        int k = (int)ks[i];
        double ps_in = model_ps_ingress(k, n, bw, latency);
        double ring = model_ring(k, n, bw, latency);
        printf("  %-8d %14.4g %14.4g %14.4g %12.4g %12.4g %10.4g\n", k, ps_in,
               model_ps_step(k, n, bw, latency), ring, ring > 0 ? ps_in / ring : INFINITY,
               model_ps_link_bytes(k, n) / 1e9, model_ring_link_bytes(k, n) / 1e9);
    }
    printf("# The server's ingress grows as K n / bw; a ring worker's traffic 2(K-1)/K n tends to 2n,\n"
           "# so its time barely moves with K. Their ratio is K^2 / (2(K-1)), about K/2.\n");
    free(ks);
    return 0;
}
