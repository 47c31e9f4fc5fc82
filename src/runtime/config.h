/* config.h: the configuration from weft_config and the environment (runtime/config.c). */
#ifndef WEFT_RUNTIME_CONFIG_H
#define WEFT_RUNTIME_CONFIG_H

#include <stddef.h>

#include "weft.h"

/* The most workers weft_config.workers and WEFT_WORKERS accept. */
#define WEFT__MAX_WORKERS 4096

/* CPUs in the calling thread's affinity mask (at least 1): what
 * "workers = 0" means. */
int weft__cpus_in_mask(void);

/* Decimal bytes with an optional K/M/G suffix (1024-based); 0 on success. */
int weft__parse_size(const char *s, size_t *out);

#endif
