/* rng.h -- the seeded random numbers behind every workload.
 *
 * xoshiro256** (Blackman and Vigna) seeded through splitmix64, and normal
 * deviates by Marsaglia's polar method. psring writes its own so that a
 * seed means the same data on every machine and libc, in every process.
 */
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

struct rng {
    uint64_t s[4];
    double spare;       /* the polar method makes normals in pairs */
    int has_spare;
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* rng_uniform: in [0, 1), 53 random bits. */
double rng_uniform(struct rng *r);
/* rng_normal: standard normal. */
double rng_normal(struct rng *r);
/* rng_mix: splitmix64's finalizer, a stateless 64-bit hash. */
uint64_t rng_mix(uint64_t x);

#endif /* RNG_H */
