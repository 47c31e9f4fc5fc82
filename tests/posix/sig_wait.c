/* sig_wait: with SIGUSR1 blocked in every thread, a sigwait thread receives
 * each kill(getpid(), SIGUSR1) (100, one at a time, counted), the handler
 * never runs; sigtimedwait times out with EAGAIN; sigwaitinfo returns a
 * pthread_sigqueue value; sigpending shows a blocked pending signal, and
 * pthread_sigmask that unblocks it runs its handler before it returns. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

enum { N = 100 };
static _Atomic int got, handled, handled2;
static _Atomic int ready;
static sigset_t usr1;

static void handler(int sig)
{
    (void)sig;
    handled++;
}
static void handler2(int sig)
{
    (void)sig;
    handled2++;
}

static void *waiter(void *arg)
{
    (void)arg;
    /* its mask is main's (inherited): SIGUSR1 blocked */
    sigset_t cur;
    CHECK(pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0);
    CHECK(sigismember(&cur, SIGUSR1) == 1);
    for (int i = 0; i < N; i++) {
        ready = 1;
        int sig = 0;
        CHECK(sigwait(&usr1, &sig) == 0);
        CHECK(sig == SIGUSR1);
        got++;
    }
    struct timespec t = { 0, 20 * 1000 * 1000 };
    siginfo_t si;
    CHECK(sigtimedwait(&usr1, &si, &t) == -1 && errno == EAGAIN);
    return NULL;
}

static void *queued(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGRTMIN + 1);
    CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
    ready = 1;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CHECK(sigwaitinfo(&s, &si) == SIGRTMIN + 1);
    CHECK(si.si_signo == SIGRTMIN + 1);
    CHECK(si.si_code == SI_QUEUE);
    CHECK(si.si_value.sival_int == 4242);
    return NULL;
}

static void *pender(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR2);
    CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
    CHECK(pthread_kill(pthread_self(), SIGUSR2) == 0);
    CHECK(handled2 == 0);
    sigset_t p;
    CHECK(sigpending(&p) == 0);
    CHECK(sigismember(&p, SIGUSR2) == 1);
    CHECK(pthread_sigmask(SIG_UNBLOCK, &s, NULL) == 0);
    CHECK(handled2 == 1); /* delivered before pthread_sigmask returned */
    CHECK(sigpending(&p) == 0);
    CHECK(sigismember(&p, SIGUSR2) == 0);
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    pt_on_signal(SIGUSR1, handler, 0);
    sa.sa_handler = handler2;
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK(pthread_sigmask(SIG_BLOCK, &usr1, NULL) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
    time_t start = time(NULL);
    for (int i = 0; i < N; i++) {
        while (!ready)
            CHECK(time(NULL) - start < 60);
        ready = 0;
        while (got < i && time(NULL) - start < 60)
            sched_yield();
        CHECK(kill(getpid(), SIGUSR1) == 0);
        /* the next kill once this one was taken: signals do not queue */
        while (got < i + 1) {
            CHECK(time(NULL) - start < 60);
            usleep(100);
        }
    }
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(got == N);
    CHECK(handled == 0);

    ready = 0;
    CHECK(pthread_create(&t, NULL, queued, NULL) == 0);
    while (!ready)
        sched_yield();
    usleep(10000);
    union sigval v = { .sival_int = 4242 };
    CHECK(pthread_sigqueue(t, SIGRTMIN + 1, v) == 0);
    CHECK(pthread_join(t, NULL) == 0);

    CHECK(pthread_create(&t, NULL, pender, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(handled2 == 1);
    printf("ok\n");
    return 0;
}
