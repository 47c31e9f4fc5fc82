/* runtime.h: weft_init with a pool plug-in. */
#ifndef WEFT_RUNTIME_RUNTIME_H
#define WEFT_RUNTIME_RUNTIME_H

#include "weft.h"

struct weft__pool_ops;

/* weft_init with a scheduling-policy plug-in (sched/sched.h: struct
 * weft__pool_ops; NULL: work stealing). */
int weft__init_with_pool(const weft_config *cfg, const struct weft__pool_ops *pool);

#endif
