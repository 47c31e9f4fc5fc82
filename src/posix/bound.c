/* bound.c: WEFT_POSIX_BOUND, the drop-in's bound threads (a kernel thread
 * each), and the affinity calls applied to them.
 *
 * WEFT_POSIX_BOUND=* makes every thread of pthread_create a weft bound
 * thread (weft_attr.bound): weft runs it on a kernel thread of its own,
 * whose %fs is then pointed at the user thread's own glibc block (its
 * __thread variables, errno and pthread_self() as for any user thread
 * here) for the thread's life, and back at the kernel thread's block for
 * its end.
 *
 * A name in the list (WEFT_POSIX_BOUND=a,b) binds a thread once it has the
 * name, which is only after it started: a running user thread is bound in
 * place. It keeps the kernel thread it runs on, and its worker goes to
 * another kernel thread (an idle or new machine, policy/machine.c:
 * weft__rescue_keep), as for a thread rescued from a blocked system call,
 * except that nothing settles it back until its end (thread.c:
 * thread_end). From then on it runs on no
 * worker: its waits and blocking calls are a kernel thread's (sync/wait.c),
 * its kernel thread runs nothing else, and gettid() is that thread's for
 * good. A thread that names itself is bound when pthread_setname_np
 * returns; one named by another thread binds itself at its start if it had
 * not started, else at its next cancellation point (thread.c:
 * weft__posix_testcancel, which the blocking calls, sleeps and waits
 * pass), as nothing makes a running thread leave its worker from outside
 * (docs/posix.md).
 * Rejected: moving the thread's context to a new kernel thread (its parks,
 * readies and resumes would need a private scheduler loop in the core's
 * switch paths, on every switch, for a rare case).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/machine.h"
#include "posix/posix.h"
#include "sched/sched.h"
#include "sched/switch.h"

static int bind_all = -1; /* -1: not read yet; the first creation reads it */
static char *bound_names; /* WEFT_POSIX_BOUND's copy, NULL: none; set with bind_all */
static pthread_once_t env_once = PTHREAD_ONCE_INIT; /* glibc's */

/* WEFT_POSIX_BOUND, read once (at the first creation or naming: a
 * program may set it before its first thread). */
static void read_env(void)
{
    const char *v = getenv("WEFT_POSIX_BOUND");
    int all = 0;
    for (const char *s = v; s && *s; s++)
        if (s[0] == '*' && (s == v || s[-1] == ',') && (s[1] == ',' || s[1] == '\0'))
            all = 1;
    if (v && *v)
        bound_names = strdup(v);
    /* relaxed: the once orders it for every reader that goes through it */
    __atomic_store_n(&bind_all, all, __ATOMIC_RELAXED);
}

int weft__posix_bound_all(void)
{
    int b = __atomic_load_n(&bind_all, __ATOMIC_RELAXED);
    if (WEFT_UNLIKELY(b < 0)) {
        extern __typeof__(pthread_once) weft__real_pthread_once;
        weft__real_pthread_once(&env_once, read_env);
        b = __atomic_load_n(&bind_all, __ATOMIC_RELAXED);
    }
    return b;
}

int weft__posix_bound_named(const char *name)
{
    weft__posix_bound_all();
    size_t n = strlen(name);
    for (const char *s = bound_names; s && *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && n && memcmp(s, name, n) == 0)
            return 1;
        if (!e)
            break;
        s = e + 1;
    }
    return 0;
}

/* The caller, user thread p on a worker, becomes bound in place (see
 * above). 0, or EAGAIN when no kernel thread could be had for its worker. */
int weft__posix_bind_self(struct pt *p)
{
    if (p->ktid || !weft__tls_worker)
        return 0; /* bound already, or on no worker (a rescued call, a child of fork) */
    if (weft__rescue_keep() != 0)
        return EAGAIN;
    p->ktid = gettid();
    return 0;
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
