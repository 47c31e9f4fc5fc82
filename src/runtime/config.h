/* config.h: the configuration from weft_config and the environment (runtime/config.c). */
#ifndef WEFT_RUNTIME_CONFIG_H
#define WEFT_RUNTIME_CONFIG_H

#include <stddef.h>

#include "io/io.h"
#include "sync/wait.h"
#include "weft.h"

/* The most workers weft_config.workers and WEFT_WORKERS accept. */
#define WEFT__MAX_WORKERS 4096

/* CPUs in the calling thread's affinity mask (at least 1): what
 * "workers = 0" means. */
int weft__cpus_in_mask(void);

/* Decimal bytes with an optional K/M/G suffix (1024-based); 0 on success. */
int weft__parse_size(const char *s, size_t *out);

/* The WEFT_* variables that are not weft_config fields (docs/env.md).
 * weft_init reads them at each start (WEFT_WAIT and WEFT_IO at the first
 * only), whatever config it was given, and hands each value to the layer it
 * configures: those sit below runtime/ and read nothing from it. Written by
 * weft_init before any worker starts; read-only until the next weft_init. */
struct weft__env {
    int stack_guard;             /* WEFT_STACK_GUARD: WEFT__GUARDREQ_*, for weft__stack_init */
    int affinity;                /* WEFT_AFFINITY: 0 leaves workers 1..n-1 unpinned */
    int stats;                   /* WEFT_STATS: counters printed by weft_finalize */
    enum weft__wait_policy wait; /* WEFT_WAIT, for weft__wait_set_policy */
    enum weft__io_mode io;       /* WEFT_IO, for weft__io_set_mode */
    int dump_signal;             /* WEFT_DUMP_SIGNAL: signal number, 0 = none */
    const char *trace;           /* WEFT_TRACE: the trace file, NULL = no tracing */
};

/* Fills *env from the environment; a malformed value prints one notice
 * naming the variable and leaves the default. */
void weft__env_read(struct weft__env *env);

/* The default time quantum (weft_config.quantum_us 0): 10 ms, as Go's
 * scheduler slice. */
#define WEFT__QUANTUM_DEFAULT_US 10000L

#endif
