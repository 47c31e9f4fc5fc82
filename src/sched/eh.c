/* eh.c: finds the C++ runtime's per-thread exception globals (sched/eh.h). */
#include <dlfcn.h>
#include <stddef.h>

#include "sched/eh.h"

/* Weak: resolved when the program links the C++ runtime (a static
 * libstdc++ included), NULL in a C program. */
extern struct weft__eh_globals *__cxa_get_globals(void) __attribute__((weak));

__thread struct weft__eh_globals *weft__tls_eh __attribute__((tls_model("initial-exec")));

weft__eh_get_fn *weft__eh_get;

struct weft__eh_globals *weft__eh_here_slow(void)
{
    /* the address of a kernel thread's globals never changes */
    return weft__tls_eh = weft__eh_get();
}

weft__eh_get_fn *weft__eh_find(void)
{
    if (__cxa_get_globals)
        return __cxa_get_globals;
    /* a C++ runtime loaded by a library the program opened before
     * weft_init (RTLD_GLOBAL), or preloaded */
    return (weft__eh_get_fn *)dlsym(RTLD_DEFAULT, "__cxa_get_globals");
}
