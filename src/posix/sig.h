/* sig.h: what signal.c and sigwait.c share: glibc's signal calls past the
 * drop-in's definitions, raw system calls for signal context, and the
 * pending sets (design block in signal.c). */
#ifndef WEFT_POSIX_SIG_H
#define WEFT_POSIX_SIG_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "posix/posix.h"

/* glibc's sigaction and sigtimedwait (its restorer, its checks). */
int weft__posix_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int weft__posix_real_sigtimedwait(const sigset_t *set, siginfo_t *si, const struct timespec *t);

/* A system call without errno or wrappers: async-signal-safe, and past
 * the drop-in's write and syscall. Returns -errno on failure. */
static inline long syscall_raw3(long nr, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return r;
}

/* Process-directed signals pending (bit sig-1). */
extern _Atomic uint64_t weft__posix_proc_pending;

int weft__posix_sig_managed(int sig);
/* Some user thread blocks or waits for the signals of b (the dispatcher
 * takes over their SIG_DFL; the router starts). */
void weft__posix_sig_watch(uint64_t b);
/* Some sigwait waits for the signals of b: process-directed ones go to
 * the router first. */
void weft__posix_sig_wait_mark(uint64_t b);
/* Takes one signal of b pending for p or for the process into *si; 0:
 * none. */
int weft__posix_sig_claim(struct pt *p, uint64_t b, siginfo_t *si);
/* Runs p's (the caller's) pending signals that it does not block; 1 if
 * any ran. */
int weft__posix_sig_run_ready(struct pt *p);
/* The user thread running on this kernel thread, or NULL. */
struct pt *weft__posix_sig_user(void);

/* The signals of s as bits (bit sig-1). */
uint64_t weft__posix_sig_bits(const sigset_t *s);

#endif
