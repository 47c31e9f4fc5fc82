/* futex.c: thin wrappers over the futex system call. */
#include "os/futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

int weft__futex_wait(_Atomic uint32_t *word, uint32_t expected, const struct timespec *timeout)
{
    long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, timeout, NULL, 0);
    return r == 0 ? 0 : errno;
}

int weft__futex_wait_abs(_Atomic uint32_t *word, uint32_t expected, const struct timespec *deadline,
                         int realtime)
{
    int op = FUTEX_WAIT_BITSET_PRIVATE | (realtime ? FUTEX_CLOCK_REALTIME : 0);
    long r =
        syscall(SYS_futex, (uint32_t *)word, op, expected, deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    return r == 0 ? 0 : errno;
}

int weft__futex_wake(_Atomic uint32_t *word, int n)
{
    long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
    return r < 0 ? 0 : (int)r;
}
