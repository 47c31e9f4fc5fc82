/* calls.h: what io.c, pollfd.c, proc.c and file.c share: glibc's own
 * definitions of the waits, child waits and file calls they wrap (jumps
 * through dlsym(RTLD_NEXT) pointers that calls.c resolves) and the
 * multi-descriptor wait that parks a user thread (io.c). */
#ifndef WEFT_POSIX_CALLS_H
#define WEFT_POSIX_CALLS_H

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/wait.h>

#include "posix/rw.h"

/* real.c resolves these four (real.h names them for the core) */
extern __typeof__(poll) weft__real_poll;
extern __typeof__(epoll_wait) weft__real_epoll_wait;
extern __typeof__(epoll_pwait) weft__real_epoll_pwait;
extern __typeof__(select) weft__real_select;

/* calls.c resolves these */
extern __typeof__(ppoll) weft__real_ppoll;
extern __typeof__(pselect) weft__real_pselect;
extern __typeof__(epoll_pwait2) weft__real_epoll_pwait2;
extern __typeof__(wait4) weft__real_wait4;
extern __typeof__(waitid) weft__real_waitid;
extern __typeof__(sendfile) weft__real_sendfile;
extern __typeof__(fsync) weft__real_fsync;
extern __typeof__(fdatasync) weft__real_fdatasync;
extern __typeof__(sync_file_range) weft__real_sync_file_range;
extern __typeof__(open) weft__real_open;
extern __typeof__(openat) weft__real_openat;

/* Resolves the pointers above (once: a constructor calls it, and so does
 * any wrapper that runs before it). */
void weft__posix_calls_resolve(void);
extern int weft__posix_calls_resolved;

/* weft__posix_rw_user() (rw.h), with the pointers above resolved. */
static inline int weft__posix_calls_user(void)
{
    if (__builtin_expect(!__atomic_load_n(&weft__posix_calls_resolved, __ATOMIC_ACQUIRE), 0))
        weft__posix_calls_resolve();
    return weft__posix_rw_user();
}

/* A user thread's poll(2) of several descriptors whose look with timeout 0
 * found nothing: parks it until something is ready or timeout (ms, < 0
 * none) passes, then poll(2)'s own result (io.c). */
int weft__posix_poll_many(struct pollfd *fds, nfds_t n, int timeout);

#endif
