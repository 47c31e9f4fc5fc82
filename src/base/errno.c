/* errno.c: errno read and written through calls no compiler caches, for code that may switch kernel threads. */
#include "base/base.h"

#include <errno.h>

/* noipa: the callers must not learn that these only touch errno, or they
 * would treat them as glibc's __errno_location (const) and reuse a result
 * from before a switch. */
__attribute__((noipa)) int weft__errno_get(void)
{
    return errno;
}

__attribute__((noipa)) void weft__errno_set(int e)
{
    errno = e;
}
