/* pollfd.c: poll of one descriptor parks only the user thread.
 *
 * A user thread's poll of a single descriptor (what thread-per-connection
 * servers make before each read: civetweb's pull and its master's accept
 * loop) waits in weft_poll, an io_uring poll with a linked timeout on the
 * worker's ring: no kernel thread per waiting connection. A look with
 * timeout 0 comes first, so a descriptor that is ready costs one poll(2). More than one
 * descriptor with a timeout that is not 0: a look with timeout 0, then
 * io.c's wait on a private epoll set (weft__posix_poll_many).
 * A timeout of 0, another kernel thread, a child of fork: glibc's poll.
 *
 * The drop-in's only poll: io.c has ppoll, epoll_wait and select.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>

#include "posix/calls.h"

static __typeof__(poll) *real_poll;

static int call_real(struct pollfd *fds, nfds_t n, int timeout)
{
    if (__builtin_expect(!real_poll, 0))
        real_poll = (__typeof__(poll) *)dlsym(RTLD_NEXT, "poll");
    return real_poll(fds, n, timeout);
}

/* One descriptor through weft_poll: poll(2)'s result and revents. */
static int one_fd(struct pollfd *p, int timeout)
{
    int err = errno;
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    int64_t end_ms = (int64_t)end.tv_sec * 1000 + end.tv_nsec / 1000000 + timeout;
    for (;;) {
        int r = weft_poll(p->fd, p->events, timeout);
        int broken = r < 0 && errno == ECANCELED;
        if (r == 0 && timeout > 0) { /* the timeout, or broken off before it */
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            int64_t left = end_ms - ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
            broken = left > 0;
            timeout = (int)left;
        }
        if (!broken) {
            if (r < 0)
                return -1;
            p->revents = (short)r;
            errno = err;
            return r != 0;
        }
        /* broken off by a signal or a cancellation: poll never restarts */
        if (weft__posix_sig_broken(0)) {
            errno = EINTR;
            return -1;
        }
    }
}

PT_API int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    if (timeout == 0 || !weft__posix_rw_user())
        return call_real(fds, n, timeout);
    weft__posix_deliver();
    weft__posix_testcancel();
    /* A look first, for one descriptor too: what is ready already (the
     * request a client sent with its connect, a listening socket's backlog
     * under load) is answered by one system call, without a ring poll, its
     * linked timeout, their two completions and a switch. */
    int r = call_real(fds, n, 0);
    if (r != 0)
        return r;
    if (n == 1 && fds[0].fd >= 0)
        return one_fd(fds, timeout < 0 ? -1 : timeout);
    return weft__posix_poll_many(fds, n, timeout);
}

PT_API int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
    if (fdslen / sizeof *fds < n)
        __builtin_trap(); /* glibc's __chk_fail aborts: the array overflows */
    return poll(fds, n, timeout);
}
