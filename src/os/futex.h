/* futex.h: the kernel's wait/wake on a 32-bit word, private to the process. */
#ifndef WEFT_OS_FUTEX_H
#define WEFT_OS_FUTEX_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* Sleeps while *word == expected. timeout: relative, NULL = forever.
 * Returns 0 when woken (or spuriously), else the errno (EAGAIN: the word
 * differed; ETIMEDOUT; EINTR). */
int weft__futex_wait(_Atomic uint32_t *word, uint32_t expected, const struct timespec *timeout);

/* Same with an absolute CLOCK_REALTIME or CLOCK_MONOTONIC deadline. */
int weft__futex_wait_abs(_Atomic uint32_t *word, uint32_t expected, const struct timespec *deadline,
                         int realtime);

/* Wakes up to n sleepers on word; returns how many were woken. */
int weft__futex_wake(_Atomic uint32_t *word, int n);

#endif
