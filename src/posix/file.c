/* file.c: sendfile, fsync, fdatasync, sync_file_range and the opens of a
 * FIFO park only the user thread that makes them.
 *
 * - sendfile to a blocking descriptor: attempts with the output made
 *   O_NONBLOCK for the attempt alone, weft_poll(out, POLLOUT) between
 *   them, until all of it went out, the input's end, an error or the
 *   socket's SO_SNDTIMEO (then EAGAIN, or the part already sent), as the
 *   blocking call does. An O_NONBLOCK output: the call itself.
 * - fsync, fdatasync, sync_file_range: weft's ring has no fsync, so the
 *   call inside weft_blocking (the worker goes to another kernel thread
 *   while the disk works).
 * - open, openat (and open64, openat64, creat, creat64, the _2 names of
 *   _FORTIFY_SOURCE) read-only or write-only without O_NONBLOCK, which
 *   wait on a FIFO until the other end opens: the open is made with
 *   O_NONBLOCK, which never waits, and O_NONBLOCK cleared again (one
 *   fcntl) when it succeeded. A write-only open of a FIFO without a
 *   reader then fails with ENXIO, and a device or a leased file that would
 *   make the open wait with EAGAIN, EWOULDBLOCK or EBUSY: those repeat the
 *   open as asked inside weft_blocking. A read-only open is checked with
 *   fcntl(F_GETPIPE_SZ): a FIFO's is kept and waits, parked, for a
 *   writer (fifo_reader). Rejected: a stat of the path before each open (a
 *   second path walk, +50 % on an open and close of a cached file, where
 *   two fcntl cost less); and for a FIFO's reader, repeating the
 *   open as asked in weft_blocking (the probe let blocked writers in: one
 *   that opens, writes and closes meanwhile leaves that open waiting for
 *   ever), or a wait for data (two programs that open two FIFOs crosswise
 *   deadlock).
 *   Read-write opens (a FIFO's never waits), O_PATH, O_DIRECTORY,
 *   O_TMPFILE and O_CREAT|O_EXCL (a new regular file) are the call itself.
 * Kernel threads the program made otherwise, children of fork and every
 * thread before the runtime starts: glibc's call. Each is a cancellation
 * point acted on at the call.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "posix/calls.h"

/* At each call: pending pthread_kill signals run, a cancellation acts. */
static void enter(void)
{
    weft__posix_deliver();
    weft__posix_testcancel();
}

/* ---- calls made inside weft_blocking ---- */

struct call {
    int kind;
    int fd, flags;
    const char *path;
    mode_t mode;
    off64_t off, n;
    long result;
    int err;
};
enum { C_FSYNC, C_FDATASYNC, C_RANGE, C_OPEN };

static void run(void *arg)
{
    struct call *c = arg;
    switch (c->kind) {
    case C_FSYNC: c->result = weft__real_fsync(c->fd); break;
    case C_FDATASYNC: c->result = weft__real_fdatasync(c->fd); break;
    case C_RANGE:
        c->result = weft__real_sync_file_range(c->fd, c->off, c->n, (unsigned)c->flags);
        break;
    default: c->result = weft__real_openat(c->fd, c->path, c->flags, c->mode); break;
    }
    c->err = errno;
}

static long blocking(struct call *c)
{
    enter();
    if (weft_blocking(run, c) != 0)
        run(c);
    errno = c->err;
    return c->result;
}

PT_API int fsync(int fd)
{
    if (!weft__posix_calls_user())
        return weft__real_fsync(fd);
    struct call c = { .kind = C_FSYNC, .fd = fd };
    return (int)blocking(&c);
}

PT_API int fdatasync(int fd)
{
    if (!weft__posix_calls_user())
        return weft__real_fdatasync(fd);
    struct call c = { .kind = C_FDATASYNC, .fd = fd };
    return (int)blocking(&c);
}

PT_API int sync_file_range(int fd, off64_t off, off64_t n, unsigned flags)
{
    /* without SYNC_FILE_RANGE_WAIT_* it only starts the writes */
    if (!weft__posix_calls_user() ||
        !(flags & (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER)))
        return weft__real_sync_file_range(fd, off, n, flags);
    struct call c = { .kind = C_RANGE, .fd = fd, .off = off, .n = n, .flags = (int)flags };
    return (int)blocking(&c);
}

/* ---- sendfile ---- */

#define NS_PER_MS 1000000ll

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / NS_PER_MS;
}

/* One attempt that never waits: out is O_NONBLOCK (flags fl without it)
 * for the call alone. */
static ssize_t attempt(int out, int fl, int in, off_t *off, size_t n)
{
    if (fcntl(out, F_SETFL, fl | O_NONBLOCK) != 0)
        return -1;
    ssize_t r = weft__real_sendfile(out, in, off, n);
    int err = errno;
    fcntl(out, F_SETFL, fl);
    errno = err;
    return r;
}

PT_API ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
    if (!weft__posix_calls_user())
        return weft__real_sendfile(out, in, off, n);
    enter();
    int err = errno;
    int fl = fcntl(out, F_GETFL);
    if (fl < 0 || (fl & O_NONBLOCK) || n == 0) {
        errno = err;
        return weft__real_sendfile(out, in, off, n); /* its own EBADF */
    }
    struct timeval tv = { 0, 0 };
    socklen_t len = sizeof tv;
    int64_t deadline = -1;
    if (getsockopt(out, SOL_SOCKET, SO_SNDTIMEO, &tv, &len) == 0 && (tv.tv_sec || tv.tv_usec))
        deadline = now_ms() + (int64_t)tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000;
    errno = err;
    size_t done = 0;
    for (;;) {
        ssize_t r = attempt(out, fl, in, off, n - done);
        if (r > 0) {
            done += (size_t)r;
            if (done == n)
                break;
            continue;
        }
        if (r == 0)
            break; /* the input's end */
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return done ? (ssize_t)done : -1;
        int ms = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0) {
                errno = EAGAIN; /* the socket's timeout */
                return done ? (ssize_t)done : -1;
            }
            ms = left > INT_MAX ? INT_MAX : (int)left;
        }
        if (weft_poll(out, POLLOUT, ms) < 0)
            return done ? (ssize_t)done : -1;
    }
    errno = err;
    return (ssize_t)done;
}

PT_API ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
    return sendfile(out, in, (off_t *)off, n);
}

/* ---- open ---- */

/* An open that may wait: read-only or write-only without O_NONBLOCK, and
 * none of the flags whose open never waits on a FIFO. */
static int may_wait(int flags)
{
    int acc = flags & O_ACCMODE;
    return (acc == O_RDONLY || acc == O_WRONLY) && !(flags & (O_NONBLOCK | O_PATH | O_DIRECTORY)) &&
           (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
}

/* The flags fcntl(F_SETFL) keeps from an open's: all but O_NONBLOCK (and
 * O_ASYNC, which open ignores and F_SETFL would arm). */
#define KEPT (O_APPEND | O_DIRECT | O_NOATIME)

/* A read-only open of a FIFO, made with O_NONBLOCK (fd): waits until a
 * writer has opened since, as the blocking open does. tee() with
 * SPLICE_F_NONBLOCK tells without taking anything: > 0 there is data,
 * EAGAIN a writer holds it open, 0 none does; a writer that came and
 * went leaves data or a hang-up. A writer that opens and stays silent
 * wakes nothing, so the wait looks again every 1, 2, 4 ... 64 ms. */
static int fifo_reader(int fd)
{
    int s[2];
    if (pipe2(s, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    int r = 0;
    for (int ms = 1;; ms = ms < 64 ? ms * 2 : 64) {
        ssize_t k = tee(fd, s[1], 1, SPLICE_F_NONBLOCK);
        if (k > 0 || (k < 0 && errno == EAGAIN))
            break;
        struct pollfd p = { fd, POLLIN, 0 };
        if (k < 0 || weft_poll(fd, POLLIN, ms) < 0) {
            r = -1;
            break;
        }
        if (weft__real_poll(&p, 1, 0) != 0)
            break; /* a hang-up or data: a writer was here */
    }
    int err = errno;
    close(s[0]);
    close(s[1]);
    errno = err;
    return r;
}

static int open_user(int dir, const char *path, int flags, mode_t mode)
{
    enter();
    int err = errno;
    int fd = weft__real_openat(dir, path, flags | O_NONBLOCK, mode);
    if (fd < 0) {
        if (errno != ENXIO && errno != EAGAIN && errno != EWOULDBLOCK && errno != EBUSY)
            return -1;
        errno = err;
        struct call c = { .kind = C_OPEN, .fd = dir, .path = path, .flags = flags, .mode = mode };
        return (int)blocking(&c);
    }
    /* F_GETPIPE_SZ answers only for a pipe (a FIFO, opened by path):
     * cheaper than an fstat */
    if ((flags & O_ACCMODE) == O_RDONLY && fcntl(fd, F_GETPIPE_SZ) >= 0 && fifo_reader(fd) != 0)
        goto fail;
    if (fcntl(fd, F_SETFL, flags & KEPT) != 0)
        goto fail;
    errno = err;
    return fd;
fail:
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* open and openat: only a user thread's open that may wait (a FIFO's,
 * may_wait) goes to open_user. */
static int open_in(int dir, const char *path, int flags, mode_t mode)
{
    if (weft__posix_calls_user() && may_wait(flags))
        return open_user(dir, path, flags, mode);
    return dir == AT_FDCWD ? weft__real_open(path, flags, mode)
                           : weft__real_openat(dir, path, flags, mode);
}

PT_API int openat(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return open_in(dir, path, flags, mode);
}

PT_API int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return open_in(AT_FDCWD, path, flags, mode);
}

PT_API int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return open_in(AT_FDCWD, path, flags, mode);
}

PT_API int openat64(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return open_in(dir, path, flags, mode);
}

PT_API int creat(const char *path, mode_t mode)
{
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

PT_API int creat64(const char *path, mode_t mode)
{
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/* _FORTIFY_SOURCE's opens without a mode: glibc's abort when one is
 * needed (O_CREAT, O_TMPFILE). */
static void check_no_mode(int flags)
{
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
        __builtin_trap();
}

PT_API int __open_2(const char *path, int flags)
{
    check_no_mode(flags);
    return open(path, flags);
}

PT_API int __open64_2(const char *path, int flags)
{
    check_no_mode(flags);
    return open(path, flags);
}

PT_API int __openat_2(int dir, const char *path, int flags)
{
    check_no_mode(flags);
    return openat(dir, path, flags);
}

PT_API int __openat64_2(int dir, const char *path, int flags)
{
    check_no_mode(flags);
    return openat(dir, path, flags);
}
