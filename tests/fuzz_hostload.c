/* fuzz_hostload.c -- fuzz target for the /proc/stat and /proc/loadavg
 * parsers (common/measure/hostload.c) and the rule that reads their samples.
 *
 * Each input goes, as the exact byte range (no NUL added: the parsers must
 * not read past it), to hostload_parse_stat, hostload_parse_loadavg and
 * hostload_parse_schedstat;
 * two parsed samples (the input cut in two at its first byte's offset) go
 * to hostload_decide. Crashes and undefined behaviour are the sanitizers'
 * to find; the invariants callers rely on are checked here, each an
 * abort() when broken:
 *   - a refused stat text leaves the sample not ok; an accepted one has
 *     busy <= total and running -1 or 0..1000000;
 *   - loadavg gives -1 or 0..1000000;
 *   - a verdict's shares are NaN or within [0, 1] (machine_busy) and >= 0
 *     (job_busy, other_cores); bound is 0 or 1, and "link" iff not bound.
 * Built with tests/fuzzdrv.c (deterministic driver, `make check`) or with
 * clang -fsanitize=fuzzer (`make fuzz`).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/hostload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

const char *const fuzz_name = "hostload-fuzz";

#define SEED(s) (const uint8_t *)(s)
const uint8_t *const fuzz_seeds[] = {
    SEED("cpu  53026 72422 101263 246955 811 0 5447 0 0 0\n"
         "cpu0 25975 34083 49511 127564 132 0 2728 0 0 0\n"
         "intr 1 2 3\nctxt 9\nprocs_running 4\nprocs_blocked 0\n"),
    SEED("cpu 1 2 3 4\n"),
    SEED("cpu  10 0 10 50 0 0 0 30 7 3\nprocs_running 1"),
    SEED("2.49 2.16 2.17 4/111 13812\n"),
    SEED("cpu  18446744073709551615 0 0 0\n"),
    SEED("7748083 1792024 2\n"),
};
const size_t fuzz_seed_sizes[] = { 145, 12, 44, 27, 32, 18 };    /* strlen of each */
const size_t fuzz_nseeds = sizeof fuzz_seeds / sizeof fuzz_seeds[0];

_Static_assert(sizeof fuzz_seeds / sizeof fuzz_seeds[0]
               == sizeof fuzz_seed_sizes / sizeof fuzz_seed_sizes[0],
               "one size per seed");

#define must(cond)                                                        \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "fuzz-hostload: invariant broken: %s\n", #cond); \
            abort();                                                      \
        }                                                                 \
    } while (0)

static void check_sample(const struct hostload_sample *s, int rc)
{
    if (rc != 0) {
        must(!s->ok);
        return;
    }
    must(s->ok);
    must(s->busy <= s->total);
    must(s->running == -1 || (s->running >= 0 && s->running <= 1000000));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy of exactly size bytes: a read past it is ASan's. */
    char *text = malloc(size ? size : 1);
    struct hostload_sample a, b;
    struct hostload_verdict v;
    size_t cut;
    int ra, rb, r;

    if (!text)
        return 0;
    memcpy(text, data, size);
    r = hostload_parse_stat(text, size, &a);
    check_sample(&a, r);
    r = hostload_parse_loadavg(text, size);
    must(r == -1 || (r >= 0 && r <= 1000000));
    must(hostload_parse_schedstat(text, size) >= -1);

    cut = size ? (uint8_t)text[0] % (size + 1) : 0;
    ra = hostload_parse_stat(text, cut, &a);
    rb = hostload_parse_stat(text + cut, size - cut, &b);
    check_sample(&a, ra);
    check_sample(&b, rb);
    hostload_decide(&a, &b, size ? text[size - 1] / 16.0 : 0, 1.0, 100, 1 + (int)(cut % 64),
                    1 + (int)(size % 16), NAN, &v);
    must(isnan(v.machine_busy) || (v.machine_busy >= 0 && v.machine_busy <= 1));
    must(v.job_busy >= 0);
    must(isnan(v.other_cores) || v.other_cores >= 0);
    must(v.bound == 0 || v.bound == 1);
    must((v.by == HOSTLOAD_LINK) == !v.bound);
    hostload_wait(&v, size ? text[0] / 8.0 : NAN, 1.0, 1 + (int)(size % 16));
    must(isnan(v.wait_share) || v.wait_share >= 0);
    must(v.bound == 0 || v.bound == 1);
    must((v.by == HOSTLOAD_LINK) == !v.bound);
    free(text);
    return 0;
}
