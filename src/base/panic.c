/* panic.c: the last-resort error path and one-line notices. */
#include "base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(WEFT_SANITIZE_THREAD)
_Atomic int weft__fence_word;
#endif

/* One line on stderr, "weft: " first. */
static void say(const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "weft: %s\n", line);
}

void weft__notice(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
}

void weft__panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    abort();
}
