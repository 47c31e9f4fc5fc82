/* check.h: the assertion helpers every test program uses. */
#ifndef WEFT_TEST_CHECK_H
#define WEFT_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CHECK(cond): on failure prints file:line and the expression, then exits 1. */
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* CHECK_EQ(a, b) for integers: prints both values on failure. */
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                            \
        if (check_a_ != check_b_) {                                                                \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__,          \
                    __LINE__, #a, check_a_, #b, check_b_);                                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define SKIP(why)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "skipped: %s\n", why);                                                     \
        exit(77);                                                                                  \
    } while (0)

static inline double check_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline unsigned long long check_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* The number a one-number file holds (such as /proc/sys/vm/max_map_count),
 * or dflt where it cannot be opened or read. */
static inline long check_read_long(const char *path, long dflt)
{
    FILE *f = fopen(path, "r");
    long v = dflt;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = dflt;
        fclose(f);
    }
    return v;
}

#endif
