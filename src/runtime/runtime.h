/* runtime.h: weft_init with a pool plug-in, and the runtime's shutdown
 * hooks. */
#ifndef WEFT_RUNTIME_RUNTIME_H
#define WEFT_RUNTIME_RUNTIME_H

#include "weft.h"

struct weft__pool_ops;

/* weft_init with a scheduling-policy plug-in (sched/sched.h: struct
 * weft__pool_ops; NULL: work stealing). */
int weft__init_with_pool(const weft_config *cfg, const struct weft__pool_ops *pool);

/* Called by weft_finalize once every user thread has finished and before
 * the workers stop: subsystems that own kernel threads or rings (timers,
 * I/O) release them here. */
void weft__runtime_stop_hooks(void);

#endif
