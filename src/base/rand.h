/* rand.h: the pseudo-random generator of victim selection (steals). */
#ifndef WEFT_BASE_RAND_H
#define WEFT_BASE_RAND_H

#include <stdint.h>

/* xorshift64: advances *state (never 0, or it stays 0) and returns it.
 * Cheap and good enough to spread steal attempts; nothing else uses it. */
static inline uint64_t weft__rand_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

#endif
