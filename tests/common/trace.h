/* trace.h: an interleaving trace for ordering tests. Threads mark() a
 * letter as they run; expect() compares the trace so far with the exact
 * order wanted, then starts a new one. One trace per test program. */
#ifndef WEFT_TEST_TRACE_H
#define WEFT_TEST_TRACE_H

#include <stdio.h>
#include <string.h>

#include "check.h"

static char trace[512];
static int tn;

static inline void mark(char c)
{
    CHECK(tn < (int)sizeof trace - 1);
    trace[tn++] = c;
    trace[tn] = 0;
}

static inline void expect(const char *want)
{
    if (strcmp(trace, want) != 0) {
        fprintf(stderr, "trace %s\nwant  %s\n", trace, want);
        CHECK(!"interleaving differs");
    }
    tn = 0;
    trace[0] = 0;
}

#endif
