/* hooks.c: the subsystems' part of weft_finalize, once every user thread
 * has finished and before the workers stop. */
#include "io/io.h"
#include "runtime/runtime.h"
#include "sync/timer.h"

void weft__runtime_stop_hooks(void)
{
    weft__timer_shutdown();
}
