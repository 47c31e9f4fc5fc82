/* kthread.h: starting the library's own kernel threads (the timer service,
 * the preemption monitor, the poller, the dump thread). */
#ifndef WEFT_OS_KTHREAD_H
#define WEFT_OS_KTHREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create(pt, attr, fn, arg), the new thread starting with every
 * signal blocked: signals are the program's, so a process-directed one (a
 * test's alarm, the dump signal) goes to a thread that runs the program's
 * code, never to one of these. It is named `name` (15 characters at most)
 * for top, gdb and /proc, not after its creator. The caller's mask is
 * unchanged on return. Returns pthread_create's result. */
static inline int weft__kthread_start(pthread_t *pt, const pthread_attr_t *attr,
                                      void *(*fn)(void *), void *arg, const char *name)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(pt, attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        pthread_setname_np(*pt, name);
    return rc;
}

#endif
