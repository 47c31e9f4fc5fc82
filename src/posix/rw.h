/* rw.h: what rw.c and futex.c share: glibc's own I/O calls and syscall()
 * (the weft__real_* that real_io.h renames the core's calls to) and the
 * test for a user thread on a worker. */
#ifndef WEFT_POSIX_RW_H
#define WEFT_POSIX_RW_H

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "posix/posix.h"

extern __typeof__(read) weft__real_read;
extern __typeof__(write) weft__real_write;
extern __typeof__(readv) weft__real_readv;
extern __typeof__(writev) weft__real_writev;
extern __typeof__(pread) weft__real_pread;
extern __typeof__(pwrite) weft__real_pwrite;
extern __typeof__(recv) weft__real_recv;
extern __typeof__(send) weft__real_send;
extern __typeof__(recvfrom) weft__real_recvfrom;
extern __typeof__(sendto) weft__real_sendto;
extern __typeof__(recvmsg) weft__real_recvmsg;
extern __typeof__(sendmsg) weft__real_sendmsg;
extern __typeof__(accept) weft__real_accept;
extern __typeof__(accept4) weft__real_accept4;
extern __typeof__(connect) weft__real_connect;
extern long weft__real_syscall(long nr, ...);

/* Resolves the weft__real_* pointers (once; a constructor calls it, and
 * so does any wrapper that runs before it). */
void weft__posix_rw_resolve(void);
extern int weft__posix_rw_resolved;

/* 1: the caller is a user thread on a worker, whose blocking calls go to
 * weft's mirrors. 0: a kernel thread the program made otherwise, a user
 * thread inside weft_blocking or handed off (it waits as a kernel thread),
 * any thread in a child of fork, or the runtime not started. */
static inline int weft__posix_rw_user(void)
{
    if (__builtin_expect(!weft__posix_rw_resolved, 0))
        weft__posix_rw_resolve();
    return !weft__posix_forked && weft_self() != NULL && weft_worker_id() >= 0;
}

#endif
