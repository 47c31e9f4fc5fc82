/* sig_exit: a process-directed signal is never lost when the one thread
 * that does not block it ends right after it was sent: its handler has
 * run, or the signal is still pending for the process. The thread spends
 * its time in libc (memset), where the drop-in holds a routed signal back
 * until the thread's own code, so without a delivery at its end the
 * signal would leave with it. Main blocks the signal throughout. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

enum { ROUNDS = 40, BUF = 1 << 18 };
static _Atomic int hits, stop, up;
static char buf[BUF];

static void handler(int sig)
{
    (void)sig;
    hits++;
}

static void *in_libc(void *arg)
{
    (void)arg;
    pt_mask_one(SIG_UNBLOCK, SIGUSR1);
    up = 1;
    while (!stop)
        memset(buf, (int)stop + 1, sizeof buf); /* nearly all the time in libc */
    return NULL;
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    return 77; /* ThreadSanitizer holds process signals back at its own points */
#endif
    pt_on_signal(SIGUSR1, handler, 0);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK(pthread_sigmask(SIG_BLOCK, &usr1, NULL) == 0);
    for (int r = 0; r < ROUNDS; r++) {
        hits = 0;
        stop = 0;
        up = 0;
        pthread_t t;
        CHECK(pthread_create(&t, NULL, in_libc, NULL) == 0);
        while (!up)
            sched_yield();
        struct timespec pause = { 0, 2000000 }; /* it computes meanwhile */
        nanosleep(&pause, NULL);
        CHECK(kill(getpid(), SIGUSR1) == 0);
        stop = 1; /* it ends at once */
        CHECK(pthread_join(t, NULL) == 0);
        sigset_t pend;
        CHECK(sigpending(&pend) == 0);
        int pending = sigismember(&pend, SIGUSR1);
        if (pending) { /* natively, it may end before the kernel delivers */
            struct timespec zero = { 0, 0 };
            CHECK(sigtimedwait(&usr1, NULL, &zero) == SIGUSR1);
        }
        CHECK(hits + pending == 1); /* ran once, or waits: never lost */
    }
    return 0;
}
