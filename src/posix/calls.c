/* calls.c: glibc's own definitions of the calls that io.c, proc.c and
 * file.c wrap (calls.h), reached past the drop-in's: one-instruction thunks
 * that jump through pointers resolved with dlsym(RTLD_NEXT). */
#include "posix/calls.h"

#define CALL_NAMES(X)                                                                              \
    X(ppoll)                                                                                       \
    X(pselect)                                                                                     \
    X(epoll_pwait2)                                                                                \
    X(wait4)                                                                                       \
    X(waitid)                                                                                      \
    X(sendfile)                                                                                    \
    X(fsync)                                                                                       \
    X(fdatasync)                                                                                   \
    X(sync_file_range)                                                                             \
    X(open)                                                                                        \
    X(openat)

#define THUNK(name) WEFT__REAL_THUNK(weft__calls_ptr_, name)
CALL_NAMES(THUNK)
#undef THUNK

int weft__posix_calls_resolved;

__attribute__((constructor(101))) void weft__posix_calls_resolve(void)
{
    if (__atomic_load_n(&weft__posix_calls_resolved, __ATOMIC_ACQUIRE))
        return;
#define RESOLVE(name) weft__calls_ptr_##name = weft__posix_real_sym(#name);
    CALL_NAMES(RESOLVE)
#undef RESOLVE
    __atomic_store_n(&weft__posix_calls_resolved, 1, __ATOMIC_RELEASE);
}
