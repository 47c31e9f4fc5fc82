/* bound.c: WEFT_POSIX_BOUND, the drop-in's bound threads (a kernel thread
 * each), and the affinity calls applied to them.
 *
 * WEFT_POSIX_BOUND=* makes every thread of pthread_create a weft bound
 * thread (weft_attr.bound): weft runs it on a kernel thread of its own,
 * whose %fs is then pointed at the user thread's own glibc block (its
 * __thread variables, errno and pthread_self() as for any user thread
 * here) for the thread's life, and back at the kernel thread's block for
 * its end. A name list (WEFT_POSIX_BOUND=a,b) binds the threads whose
 * pthread_setname_np name is in it, but a name can only be set once the
 * thread exists, and weft cannot move a running user thread onto a kernel
 * thread of its own (workers switch its context; a bound thread is made
 * on its kernel thread's stack): a named thread stays a user thread
 * (docs/posix.md).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posix/posix.h"
#include "sched/sched.h"
#include "sched/switch.h"

static int bind_all = -1; /* -1: not read yet; the first creation reads it */

/* WEFT_POSIX_BOUND lists "*" (the only entry that binds, see above); read
 * at the first creation (a program may set it before its first thread). */
static int read_env(void)
{
    const char *v = getenv("WEFT_POSIX_BOUND");
    for (const char *s = v; s; s++) {
        if (s[0] == '*' && (s == v || s[-1] == ',') && (s[1] == ',' || s[1] == '\0'))
            return 1;
        if (!*s)
            break;
    }
    return 0;
}

int weft__posix_bound_all(void)
{
    int b = __atomic_load_n(&bind_all, __ATOMIC_RELAXED);
    if (WEFT_UNLIKELY(b < 0)) {
        b = read_env();
        /* relaxed: every reader computes the same value */
        __atomic_store_n(&bind_all, b, __ATOMIC_RELAXED);
    }
    return b;
}

/* First thing in a bound user thread (thread.c: start): %fs goes to its
 * own block, with the runtime's kernel-thread locals (weft_self's bound
 * descriptor among them) carried over. */
void weft__posix_bound_enter(struct pt *p)
{
    struct weft_thread *t = weft__tls_bound;
    p->ktid = gettid();
    weft__fs_enter(NULL, p->tcb);
    weft__tls_bound = t;
    *(pid_t *)((char *)p->tcb + TCB_TID) = p->ktid;
}

/* Back to the kernel thread's own block (the thread's end; pthread_exit,
 * whose unwinding is glibc's in a bound thread). */
void weft__posix_bound_leave(void)
{
    weft__fs_enter(NULL, NULL);
}

int weft__posix_bound_setaffinity(struct pt *p, size_t n, const cpu_set_t *set)
{
    return sched_setaffinity(p->ktid, n, set) == 0 ? 0 : errno;
}

int weft__posix_bound_getaffinity(struct pt *p, size_t n, cpu_set_t *set)
{
    return sched_getaffinity(p->ktid, n, set) == 0 ? 0 : errno;
}
