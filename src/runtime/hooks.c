/* hooks.c: shutdown of optional subsystems, linked in only when present. */
#include "runtime/runtime.h"

/* Weak: a subsystem that is not built leaves the symbol NULL. */
void weft__timer_shutdown(void) __attribute__((weak));
void weft__io_shutdown(void) __attribute__((weak));

void weft__runtime_stop_hooks(void)
{
    if (weft__io_shutdown)
        weft__io_shutdown();
    if (weft__timer_shutdown)
        weft__timer_shutdown();
}
