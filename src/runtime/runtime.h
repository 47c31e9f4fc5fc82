/* runtime.h: the runtime's shutdown hooks. */
#ifndef WEFT_RUNTIME_RUNTIME_H
#define WEFT_RUNTIME_RUNTIME_H

#include "weft.h"

/* Called by weft_finalize once every user thread has finished and before
 * the workers stop: subsystems that own kernel threads or rings (timers,
 * I/O) release them here. */
void weft__runtime_stop_hooks(void);

#endif
