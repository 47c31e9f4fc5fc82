/* sigwait.c: sigwait, sigwaitinfo, sigtimedwait, sigsuspend and pause of
 * a user thread park the user thread, not its worker.
 *
 * A waiter publishes its set (pt.sigwaiting), then claims a signal of the
 * set pending for it or for the process, else parks on its word
 * (pt.sigword). Whoever makes a signal of the set pending for it wakes
 * it: pthread_kill breaks its park.c wait off, the router bumps the word
 * (signal.c); the dispatcher leaves a signal that some sigwait waits for
 * to the router instead of running its handler, so that the waiter, not
 * the handler, consumes it (POSIX). The set is published before the
 * claim and the word read before both, so a signal made pending after
 * the claim finds the set, and its wake finds the word changed.
 * Other kernel threads: glibc's calls.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "posix/posix.h"
#include "posix/sig.h"

/* The common wait: a signal of set (0: none by abs, on CLOCK_MONOTONIC,
 * NULL: no limit; EAGAIN) into *si. */
static int wait_for(struct pt *p, uint64_t set, siginfo_t *si, const struct timespec *abs)
{
    weft__posix_sig_wait_mark(set);
    weft__posix_sig_watch(set);
    for (;;) {
        uint32_t seq = atomic_load(&p->sigword);
        atomic_store(&p->sigwaiting, set);
        int sig = weft__posix_sig_claim(p, set, si);
        if (sig) {
            atomic_store(&p->sigwaiting, 0);
            return sig;
        }
        int r = weft__posix_park(&p->sigword, seq, CLOCK_MONOTONIC, abs);
        atomic_store(&p->sigwaiting, 0);
        if (r == ETIMEDOUT)
            return -EAGAIN;
        if (r == EINTR && weft__posix_sig_run_ready(p))
            return -EINTR; /* a handler ran: POSIX's EINTR */
    }
}

static int timed(const sigset_t *set, siginfo_t *info, const struct timespec *rel)
{
    struct pt *p = weft__posix_sig_user();
    if (!p)
        return weft__posix_real_sigtimedwait(set, info, rel);
    if (rel && (rel->tv_nsec < 0 || rel->tv_nsec >= 1000000000 || rel->tv_sec < 0)) {
        errno = EINVAL;
        return -1;
    }
    struct timespec abs;
    if (rel) {
        clock_gettime(CLOCK_MONOTONIC, &abs);
        abs.tv_sec += rel->tv_sec;
        abs.tv_nsec += rel->tv_nsec;
        if (abs.tv_nsec >= 1000000000) {
            abs.tv_sec++;
            abs.tv_nsec -= 1000000000;
        }
    }
    siginfo_t si;
    int sig = wait_for(p, weft__posix_sig_bits(set), &si, rel ? &abs : NULL);
    if (sig < 0) {
        errno = -sig;
        return -1;
    }
    if (info)
        *info = si;
    return sig;
}

PT_API int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *t)
{
    return timed(set, info, t);
}

PT_API int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    return timed(set, info, NULL);
}

PT_API int sigwait(const sigset_t *set, int *sig)
{
    for (;;) {
        int r = timed(set, NULL, NULL);
        if (r > 0) {
            *sig = r;
            return 0;
        }
        if (errno != EINTR)
            return errno;
    }
}

/* The mask becomes *mask until a signal's action ran; then -1, EINTR. */
PT_API int sigsuspend(const sigset_t *mask)
{
    struct pt *p = weft__posix_sig_user();
    if (!p) {
        extern int weft__posix_real_sigsuspend(const sigset_t *);
        return weft__posix_real_sigsuspend(mask);
    }
    uint64_t old = atomic_load(&p->sigmask);
    uint64_t m = weft__posix_sig_bits(mask);
    weft__posix_sig_watch(m & ~old);
    atomic_store(&p->sigmask, m);
    for (;;) {
        uint32_t seq = atomic_load(&p->sigword);
        if (weft__posix_sig_run_ready(p))
            break;
        weft__posix_park(&p->sigword, seq, CLOCK_MONOTONIC, NULL);
    }
    atomic_store(&p->sigmask, old);
    errno = EINTR;
    return -1;
}

PT_API int pause(void)
{
    struct pt *p = weft__posix_sig_user();
    if (!p) {
        extern int weft__posix_real_pause(void);
        return weft__posix_real_pause();
    }
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    return sigsuspend(&cur);
}
