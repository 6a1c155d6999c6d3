/* fuzzdrv.c -- a deterministic mutation driver for psring's fuzz targets.
 *
 * Every tests/fuzz_X.c defines the libFuzzer entry point
 * LLVMFuzzerTestOneInput. With clang, `make fuzz` links it with libFuzzer
 * for coverage-guided runs; everywhere else (gcc, `make check`) it is
 * linked with this file, which needs nothing but libc:
 *
 *     build/tests/fuzz_X [ROUNDS [SEED]]     ROUNDS defaults to 10000
 *
 * It feeds the target its seed inputs as they are, then ROUNDS inputs made
 * by mutating them without knowing their structure: bit flips, random
 * bytes, inserts, deletes, truncations, splices of two inputs, small
 * additions, long runs of one byte, and "interesting" integers (0, 1,
 * 0x7F.., 0xFF.., UINT64_MAX, ...) written little-endian at random offsets.
 * The PRNG is splitmix64 from a fixed seed, so a run is the same on every
 * machine and a failure is reproduced by running it again. There is no
 * coverage feedback: this is a smoke test that runs in seconds under the
 * sanitizers, not a replacement for libFuzzer.
 *
 * A target tells the driver about itself through these symbols:
 *     const char *const fuzz_name;               required: "proto-fuzz"
 *     const uint8_t *const fuzz_seeds[];         optional, all three:
 *     const size_t fuzz_seed_sizes[];            the starting corpus
 *     const size_t fuzz_nseeds;
 * and the driver ends with one line in check.h's format:
 *     ok   proto-fuzz-1 10004 inputs without a crash
 * (fuzz_name is the target's file name without fuzz_, then -fuzz: the
 * rule of tests/ids.awk, which keeps it apart from test_proto.c's ids).
 * A broken invariant or a sanitizer report ends the process instead, and
 * tests/run.sh counts that as a failure; on a signal the driver first
 * prints which input it was and its bytes.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_INPUT 4096          /* room for long runs past any text cap */
#define DEFAULT_ROUNDS 10000
#define DEFAULT_SEED 0x70737269ull   /* "psri": any fixed value will do */
#define EXIT_USAGE 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern const char *const fuzz_name;
/* Weak: a target without a corpus links, and these read as NULL. */
extern const uint8_t *const fuzz_seeds[] __attribute__((weak));
extern const size_t fuzz_seed_sizes[] __attribute__((weak));
extern const size_t fuzz_nseeds __attribute__((weak));

/* ---------------------------------------------------------------- random */

static uint64_t rng_state;

/* splitmix64 (Steele, Lea, Flood 2014): one add and a mix per number. */
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* below: uniform enough in [0, n) for n > 0 (the bias is < n / 2^64). */
static size_t below(size_t n)
{
    return (size_t)(rnd() % n);
}

/* ---------------------------------------------------------------- corpus */

static size_t nseeds(void)
{
    if (&fuzz_nseeds == NULL || fuzz_seeds == NULL || fuzz_seed_sizes == NULL)
        return 0;
    return fuzz_nseeds;
}

/* seed_copy: seed i into buf, cut at MAX_INPUT; its length. */
static size_t seed_copy(size_t i, uint8_t *buf)
{
    size_t len = fuzz_seed_sizes[i] < MAX_INPUT ? fuzz_seed_sizes[i] : MAX_INPUT;
    memcpy(buf, fuzz_seeds[i], len);
    return len;
}

/* ---------------------------------------------------------------- mutations
 * Each takes the input in buf[0..*len) with room for MAX_INPUT bytes and
 * changes it in place; one that cannot apply (an empty input) does nothing. */

static const uint64_t interesting[] = {
    0, 1, 2, 3, 4, 7, 8, 15, 16, 24, 39, 40, 41, 63, 64,
    0x7F, 0x80, 0xFF, 0x100, 0x3FF, 0x400, 0x401, 0x7FFF, 0x8000, 0xFFFF,
    0x10000, 0x10001, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF,
    0x100000000ull, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull,
    0xFFFFFFFFFFFFFFFEull, UINT64_MAX,
    /* IEEE-754 binary64 specials: +Inf, -Inf, a NaN, the least subnormal
     * is 1 above; and binary32 +Inf and NaN. */
    0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x7FF8000000000000ull,
    0x7F800000, 0x7FC00000,
};

static void put_le(uint8_t *p, uint64_t v, size_t width)
{
    for (size_t i = 0; i < width; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t width)
{
    uint64_t v = 0;
    for (size_t i = width; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static size_t random_width(void)
{
    return (size_t)1 << below(4);       /* 1, 2, 4 or 8 bytes */
}

/* make_room: open k bytes at pos (pos <= *len), clamped to the space left;
 * how many were opened. */
static size_t make_room(uint8_t *buf, size_t *len, size_t pos, size_t k)
{
    if (k > MAX_INPUT - *len)
        k = MAX_INPUT - *len;
    memmove(buf + pos + k, buf + pos, *len - pos);
    *len += k;
    return k;
}

static void mutate_once(uint8_t *buf, size_t *len)
{
    size_t n = *len, pos, k, w;
    uint8_t other[MAX_INPUT];
    size_t olen;

    switch (below(11)) {
    case 0:     /* flip one bit */
        if (n)
            buf[below(n)] ^= (uint8_t)(1u << below(8));
        break;
    case 1:     /* one random byte */
        if (n)
            buf[below(n)] = (uint8_t)rnd();
        break;
    case 2:     /* insert up to 16 random bytes */
        pos = below(n + 1);
        k = make_room(buf, len, pos, 1 + below(16));
        for (size_t i = 0; i < k; i++)
            buf[pos + i] = (uint8_t)rnd();
        break;
    case 3:     /* delete up to 16 bytes */
        if (!n)
            break;
        pos = below(n);
        k = 1 + below(n - pos < 16 ? n - pos : 16);
        memmove(buf + pos, buf + pos + k, n - pos - k);
        *len = n - k;
        break;
    case 4:     /* truncate */
        *len = below(n + 1);
        break;
    case 5:     /* splice: our head, then another input's tail */
        if (!nseeds())
            break;
        olen = seed_copy(below(nseeds()), other);
        pos = below(n + 1);
        k = below(olen + 1);            /* where the other's tail starts */
        if (olen - k > MAX_INPUT - pos)
            k = olen - (MAX_INPUT - pos);
        memcpy(buf + pos, other + k, olen - k);
        *len = pos + (olen - k);
        break;
    case 6:     /* overwrite with a chunk of another input */
        if (!nseeds() || !n)
            break;
        olen = seed_copy(below(nseeds()), other);
        if (!olen)
            break;
        k = below(olen);
        w = 1 + below(olen - k);
        pos = below(n);
        if (w > n - pos)
            w = n - pos;
        memcpy(buf + pos, other + k, w);
        break;
    case 7:     /* an interesting integer, little-endian */
    case 8:
        w = random_width();
        if (n < w)
            break;
        put_le(buf + below(n - w + 1),
               interesting[below(sizeof interesting / sizeof interesting[0])], w);
        break;
    case 9:     /* add or subtract a little */
        w = random_width();
        if (n < w)
            break;
        pos = below(n - w + 1);
        k = 1 + below(35);
        put_le(buf + pos, below(2) ? get_le(buf + pos, w) + k
                                   : get_le(buf + pos, w) - k, w);
        break;
    case 10:    /* a long run of one byte: lengths past any small cap */
        pos = below(n + 1);
        w = below(2) ? 0 : (uint8_t)rnd();
        k = make_room(buf, len, pos, 1 + below(1200));
        memset(buf + pos, (int)w, k);
        break;
    }
}

/* ---------------------------------------------------------------- crash report */

static const uint8_t *cur_input;
static size_t cur_size;
static unsigned long long cur_index;

/* write_str/write_hex: async-signal-safe output (write(2) only). */
static void write_str(const char *s)
{
    ssize_t r = write(2, s, strlen(s));
    (void)r;
}

static void write_num(unsigned long long v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    tmp[--i] = 0;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    write_str(tmp + i);
}

/* on_fatal: name the input that killed the target, then die of the same
 * signal, so the exit status still says what happened. */
static void on_fatal(int sig)
{
    static const char hex[] = "0123456789abcdef";
    char pair[3] = { 0, 0, 0 };

    write_str("fuzzdrv: ");
    write_str(fuzz_name);
    write_str(": fatal signal at input ");
    write_num(cur_index);
    write_str(" (");
    write_num(cur_size);
    write_str(" bytes):");
    for (size_t i = 0; cur_input && i < cur_size && i < 512; i++) {
        pair[0] = hex[cur_input[i] >> 4];
        pair[1] = hex[cur_input[i] & 15];
        write_str(i % 32 ? " " : "\n  ");
        write_str(pair);
    }
    write_str("\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

/* run_one: the target sees a heap copy of exactly `size` bytes, so a read
 * one byte past the end is caught by ASan instead of landing in buf. */
static void run_one(const uint8_t *buf, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) {
        fprintf(stderr, "fuzzdrv: out of memory\n");
        exit(1);
    }
    if (size)
        memcpy(copy, buf, size);
    cur_input = copy;
    cur_size = size;
    LLVMFuzzerTestOneInput(copy, size);
    cur_input = NULL;
    free(copy);
    cur_index++;
}

/* parse_u64: a whole decimal number, nothing else ("10abc", "-1" refused). */
static int parse_u64(const char *s, unsigned long long *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
    static uint8_t buf[MAX_INPUT];
    unsigned long long rounds = DEFAULT_ROUNDS, seed = DEFAULT_SEED;
    size_t len = 0;
    static const int fatal[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };

    if (argc > 3 || (argc > 1 && parse_u64(argv[1], &rounds) != 0)
        || (argc > 2 && parse_u64(argv[2], &seed) != 0)) {
        fprintf(stderr, "usage: %s [ROUNDS [SEED]]  (decimal; defaults %d and %llu)\n",
                argv[0], DEFAULT_ROUNDS, (unsigned long long)DEFAULT_SEED);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], on_fatal);
    rng_state = seed;

    for (size_t i = 0; i < nseeds(); i++)
        run_one(fuzz_seeds[i], fuzz_seed_sizes[i]);

    for (unsigned long long r = 0; r < rounds; r++) {
        /* Half the time start again from a seed, else keep mutating the
         * last input: short walks stay near valid frames, long ones reach
         * the odd corners. */
        if (nseeds() && (len == 0 || below(2)))
            len = seed_copy(below(nseeds()), buf);
        for (size_t m = (size_t)1 << below(4); m > 0; m--)
            mutate_once(buf, &len);
        run_one(buf, len);
    }

    printf("ok   %s-1 %llu inputs without a crash\n", fuzz_name, cur_index);
    return 0;
}
