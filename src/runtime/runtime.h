/* runtime.h: configuration parsing and the runtime's shutdown hooks. */
#ifndef WEFT_RUNTIME_RUNTIME_H
#define WEFT_RUNTIME_RUNTIME_H

#include <stddef.h>

#include "weft.h"

/* Decimal bytes with an optional K/M/G suffix (1024-based); 0 on success. */
int weft__parse_size(const char *s, size_t *out);

/* Called by weft_finalize once every user thread has finished and before
 * the workers stop: subsystems that own kernel threads or rings (timers,
 * I/O) release them here. */
void weft__runtime_stop_hooks(void);

#endif
