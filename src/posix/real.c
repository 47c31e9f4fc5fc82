/* real.c: glibc's thread functions, reached past the drop-in's own
 * definitions of the same names (real.h says who calls them).
 *
 * Each weft__real_<name> is a one-instruction thunk that jumps through a
 * pointer which the first constructor of libweft-pthread fills from
 * dlsym(RTLD_NEXT): no prototype is restated and the arguments pass
 * through untouched. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "posix/posix.h"

#define REAL_NAMES(X)                                                                              \
    X(pthread_attr_destroy)                                                                        \
    X(pthread_attr_getstack)                                                                       \
    X(pthread_attr_init)                                                                           \
    X(pthread_attr_setdetachstate)                                                                 \
    X(pthread_attr_setguardsize)                                                                   \
    X(pthread_attr_setsigmask_np)                                                                  \
    X(pthread_attr_setstack)                                                                       \
    X(pthread_attr_setstacksize)                                                                   \
    X(pthread_create)                                                                              \
    X(pthread_detach)                                                                              \
    X(pthread_exit)                                                                                \
    X(pthread_getaffinity_np)                                                                      \
    X(pthread_getattr_np)                                                                          \
    X(pthread_getspecific)                                                                         \
    X(pthread_join)                                                                                \
    X(pthread_key_create)                                                                          \
    X(pthread_mutex_destroy)                                                                       \
    X(pthread_mutex_init)                                                                          \
    X(pthread_mutex_lock)                                                                          \
    X(pthread_mutex_unlock)                                                                        \
    X(pthread_once)                                                                                \
    X(pthread_setaffinity_np)                                                                      \
    X(pthread_setname_np)                                                                          \
    X(pthread_setspecific)                                                                         \
    X(pthread_sigmask)                                                                             \
    X(pthread_kill)                                                                                \
    X(pthread_mutex_trylock)                                                                       \
    X(pthread_cond_wait)                                                                           \
    X(pthread_cond_signal)                                                                         \
    X(pthread_cond_broadcast)                                                                      \
    X(pthread_getname_np)                                                                          \
    X(pthread_getcpuclockid)                                                                       \
    X(pthread_sigqueue)                                                                            \
    X(clock_gettime)                                                                               \
    X(poll)                                                                                        \
    X(epoll_wait)                                                                                  \
    X(epoll_pwait)                                                                                 \
    X(select)                                                                                      \
    X(nanosleep)                                                                                   \
    X(clock_nanosleep)                                                                             \
    X(usleep)                                                                                      \
    X(__pthread_register_cancel)                                                                   \
    X(__pthread_unregister_cancel)                                                                 \
    X(__pthread_unwind_next)                                                                       \
    X(pthread_cancel)                                                                              \
    X(pthread_setcancelstate)                                                                      \
    X(pthread_setcanceltype)                                                                       \
    X(pthread_testcancel)                                                                          \
    X(clock_getres)                                                                                \
    X(sched_yield)

#define THUNK(name) WEFT__REAL_THUNK(weft__real_ptr_, name)
REAL_NAMES(THUNK)

void *weft__posix_real_sym(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        fprintf(stderr, "weft-pthread: glibc has no %s; refusing to run\n", name);
        _exit(127);
    }
    return p;
}

void weft__posix_real_init(void)
{
#define RESOLVE(name) weft__real_ptr_##name = weft__posix_real_sym(#name);
    REAL_NAMES(RESOLVE)
#undef RESOLVE
}
