/* sig_actions: the program's actions keep their meaning with per-thread
 * masks: a handler runs with its signal and sa_mask added to the thread's
 * mask (not with SA_NODEFER), SA_RESETHAND resets the action to SIG_DFL,
 * SIG_IGN discards, and SIG_DFL of SIGTERM ends a process whose initial
 * thread blocks it when it reaches a thread that does not (exit status:
 * killed by SIGTERM). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static _Atomic int in_mask_self, in_mask_extra, runs, nodefer_self;

static void h_mask(int sig)
{
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    in_mask_self = sigismember(&cur, sig);
    in_mask_extra = sigismember(&cur, SIGUSR2);
    runs++;
}

static void h_nodefer(int sig)
{
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    nodefer_self = sigismember(&cur, sig);
    runs++;
}

static void *actions(void *arg)
{
    (void)arg;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h_mask;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(raise(SIGUSR1) == 0);
    CHECK(runs == 1 && in_mask_self == 1 && in_mask_extra == 1);
    sigset_t cur;
    CHECK(pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0);
    CHECK(sigismember(&cur, SIGUSR1) == 0 && sigismember(&cur, SIGUSR2) == 0);

    sa.sa_handler = h_nodefer;
    sa.sa_flags = SA_NODEFER | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(pthread_kill(pthread_self(), SIGUSR1) == 0);
    CHECK(runs == 2);
#if !defined(__SANITIZE_THREAD__) /* its deferred handlers run with their own mask */
    CHECK(nodefer_self == 0);
#endif
    CHECK(sigaction(SIGUSR1, NULL, &old) == 0);
    CHECK(old.sa_handler == SIG_DFL); /* SA_RESETHAND */

    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(raise(SIGUSR1) == 0);
    CHECK(kill(getpid(), SIGUSR1) == 0);
    usleep(10000);
    CHECK(runs == 2);
    return NULL;
}

static _Atomic int child_up;
static void *child_open(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    CHECK(pthread_sigmask(SIG_UNBLOCK, &s, NULL) == 0);
    child_up = 1;
    for (;;)
        usleep(1000);
    return NULL;
}

int main(void)
{
    /* the fatal default first, in a fresh child that makes threads itself */
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGTERM);
        CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, child_open, NULL) == 0);
        while (!child_up)
            usleep(1000);
        CHECK(write(pfd[1], "u", 1) == 1);
        for (;;)
            usleep(1000); /* ends by SIGTERM, through the other thread */
    }
    char c;
    CHECK(read(pfd[0], &c, 1) == 1);
    CHECK(kill(pid, SIGTERM) == 0);
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, actions, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    printf("ok\n");
    return 0;
}
