/* ring.h: liburing for io/, or inline stubs of the parts io/ uses where the
 * build has no liburing (WEFT__HAVE_URING 0).
 *
 * The stubs let the ring paths compile in both builds, so that a call site
 * reads `if (WEFT__HAVE_URING && ...)` (or tests a worker that only has a
 * ring when WEFT__HAVE_URING is 1) instead of wrapping code in #if: the
 * compiler checks both builds' code, and drops what a 0 makes dead. Without
 * liburing no ring ever exists (weft__io_ring returns NULL), so no stub
 * ever runs.
 */
#ifndef WEFT_IO_RING_H
#define WEFT_IO_RING_H

#include <stdint.h>

#if WEFT__HAVE_URING
#include <liburing.h>
#else
#include <linux/time_types.h> /* struct __kernel_timespec */
#include <sys/socket.h>

struct io_uring;
struct io_uring_sqe {
    uint8_t flags;
};
#define IOSQE_IO_LINK (1u << 2)

static inline void io_uring_sqe_set_data(struct io_uring_sqe *sqe, void *data)
{
}
static inline void io_uring_sqe_set_data64(struct io_uring_sqe *sqe, uint64_t data)
{
}
static inline void io_uring_sqe_set_flags(struct io_uring_sqe *sqe, unsigned flags)
{
}
static inline void io_uring_prep_read(struct io_uring_sqe *sqe, int fd, void *buf, unsigned n,
                                      uint64_t off)
{
}
static inline void io_uring_prep_write(struct io_uring_sqe *sqe, int fd, const void *buf,
                                       unsigned n, uint64_t off)
{
}
static inline void io_uring_prep_recv(struct io_uring_sqe *sqe, int fd, void *buf, size_t n,
                                      int flags)
{
}
static inline void io_uring_prep_send(struct io_uring_sqe *sqe, int fd, const void *buf, size_t n,
                                      int flags)
{
}
static inline void io_uring_prep_accept(struct io_uring_sqe *sqe, int fd, struct sockaddr *addr,
                                        socklen_t *len, int flags)
{
}
static inline void io_uring_prep_connect(struct io_uring_sqe *sqe, int fd,
                                         const struct sockaddr *addr, socklen_t len)
{
}
static inline void io_uring_prep_poll_add(struct io_uring_sqe *sqe, int fd, unsigned mask)
{
}
static inline void io_uring_prep_timeout(struct io_uring_sqe *sqe, struct __kernel_timespec *ts,
                                         unsigned count, unsigned flags)
{
}
static inline void io_uring_prep_link_timeout(struct io_uring_sqe *sqe,
                                              struct __kernel_timespec *ts, unsigned flags)
{
}
#endif

struct weft__worker;

/* Makes room for n SQEs in w's SQ ring (submitting what is queued if it
 * has less), so that the next n weft__io_sqe calls (io/io.h) submit
 * nothing: linked SQEs must reach the kernel in one submission. */
void weft__io_room(struct weft__worker *w, unsigned n);

/* A tag in the low bits of an SQE's user_data, which is otherwise its
 * struct weft__io_req (8-byte aligned): the linked timeout of a request,
 * whose CQE counts down req->pending but leaves req->res alone (uring.c's
 * reap). */
#define WEFT__IO_TAG_TIMEOUT ((uint64_t)2)

#endif
