/* panic.c: the last-resort error path and one-line notices. */
#include "base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(WEFT_SANITIZE_THREAD)
_Atomic int weft__fence_word;
#endif

void weft__notice(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "weft: %s\n", line);
}

void weft__panic(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "weft: %s\n", line);
    abort();
}
