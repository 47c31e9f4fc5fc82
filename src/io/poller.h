/* poller.h: waiting for readiness instead of holding a kernel thread, for
 * the weft_* calls made without a ring (design block in poller.c). */
#ifndef WEFT_IO_POLLER_H
#define WEFT_IO_POLLER_H

#include <stddef.h>
#include <stdint.h>

/* A read or write (out), or a recv or send (sockcall), at the file's
 * position, from a user thread
 * on a worker, on a pipe or socket: made without blocking the kernel
 * thread, the thread parking until the descriptor is ready whenever the
 * call would block, with the result of the blocking call (a blocking write
 * or stream send writes everything). Returns 1 with the result in *res
 * (-1 and errno on failure); 0 when it cannot serve the call (another kind
 * of file, a caller that may block its kernel thread, no poller to be had,
 * a socket with a send or receive timeout): the caller then makes the call
 * itself, handed off. */
int weft__poller_transfer(int out, int sockcall, int fd, void *buf, size_t n, int flags, long *res);

/* weft_sleep_ns of a user thread on a worker: parks it on a timer. 1 once
 * slept; 0 when it cannot (not such a thread, or no timer to be had). */
int weft__poller_sleep(uint64_t ns);

/* Ends the poller thread (finalize, after every user thread finished); the
 * next wait starts a new one. */
void weft__poller_shutdown(void);

#endif
