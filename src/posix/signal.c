/* signal.c: the runtime's preemption signal stays invisible to the
 * program's signal masks.
 *
 * A mask belongs to the kernel thread, which many user threads share: a
 * program that blocks every signal in one thread (libuv and node do, in
 * their worker threads) would block the runtime's preemption signal on a
 * worker's kernel thread, and with it preemption and the rescue of a
 * worker whose thread blocks in a system call (sched/preempt.c): the
 * other threads of that worker would wait for ever. pthread_sigmask and
 * sigprocmask never block it; a caller that asked for it blocked reads it
 * back as blocked (per kernel thread, as the masks themselves are).
 */
#include <errno.h>
#include <signal.h>

#include "policy/preempt.h"
#include "posix/posix.h"

extern __typeof__(pthread_sigmask) weft__real_pthread_sigmask;

static __thread int urg_blocked __attribute__((tls_model("initial-exec")));

static int set_mask(int how, const sigset_t *set, sigset_t *old)
{
    sigset_t mine;
    const sigset_t *use = set;
    int was = urg_blocked;
    if (set && sigismember(set, WEFT__PREEMPT_SIGNAL) == 1) {
        if (how == SIG_BLOCK || how == SIG_SETMASK) {
            mine = *set;
            sigdelset(&mine, WEFT__PREEMPT_SIGNAL);
            use = &mine;
            urg_blocked = 1;
        } else if (how == SIG_UNBLOCK) {
            urg_blocked = 0;
        }
    } else if (set && how == SIG_SETMASK) {
        urg_blocked = 0;
    }
    int r = weft__real_pthread_sigmask(how, use, old);
    if (r == 0 && old && was)
        sigaddset(old, WEFT__PREEMPT_SIGNAL);
    else if (r != 0)
        urg_blocked = was;
    return r;
}

PT_API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    return set_mask(how, set, old);
}

PT_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    int r = set_mask(how, set, old);
    if (r) {
        errno = r;
        return -1;
    }
    return 0;
}
