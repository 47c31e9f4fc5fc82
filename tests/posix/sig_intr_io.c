/* sig_intr_io: pthread_kill breaks off a target's blocking read, accept and
 * poll as under NPTL (signal(7) "Interruption of system calls"): the
 * handler runs on the target; without SA_RESTART read and accept return
 * EINTR, with it they restart (the read then returns the data); poll
 * returns EINTR either way. pthread_cancel ends a thread blocked in read
 * or accept at once. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static _Atomic int ran_on_target, waiting, finished;
static pthread_t target;
static int pfd[2], lfd;

enum {
    READ_EINTR,
    READ_RESTART,
    ACCEPT_EINTR,
    POLL_EINTR,
    POLL_TIMED_EINTR,
    READ_CANCEL,
    ACCEPT_CANCEL,
    NKINDS
};

static void handler(int sig)
{
    (void)sig;
    ran_on_target = pthread_equal(pthread_self(), target);
}

static void set_restart(int on)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = on ? SA_RESTART : 0;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
}

/* No addressable locals: ASan does not unpoison a frame that a
 * cancellation unwinds, and flags the thread's end natively. */
static char cbuf;
static void *cancelled(void *arg)
{
    waiting = 1;
    if ((intptr_t)arg == READ_CANCEL)
        read(pfd[0], &cbuf, 1);
    else
        accept(lfd, NULL, NULL);
    CHECK(0); /* not reached: cancelled */
    return NULL;
}

static void *blocked(void *arg)
{
    int kind = (int)(intptr_t)arg;
    char c = 0;
    waiting = 1;
    switch (kind) {
    case READ_EINTR: CHECK(read(pfd[0], &c, 1) == -1 && errno == EINTR); break;
    case READ_RESTART: CHECK(read(pfd[0], &c, 1) == 1 && c == 'x'); break;
    case ACCEPT_EINTR: CHECK(accept(lfd, NULL, NULL) == -1 && errno == EINTR); break;
    case POLL_EINTR: {
        struct pollfd p = { pfd[0], POLLIN, 0 };
        CHECK(poll(&p, 1, -1) == -1 && errno == EINTR);
        break;
    }
    case POLL_TIMED_EINTR: {
        struct pollfd p = { pfd[0], POLLIN, 0 };
        CHECK(poll(&p, 1, 10000) == -1 && errno == EINTR);
        break;
    }
    }
    CHECK(ran_on_target);
    finished = 1;
    return NULL;
}

int main(void)
{
    CHECK(pipe(pfd) == 0);
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lfd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(lfd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(lfd, 8) == 0);
    time_t start = time(NULL);
    for (int kind = 0; kind < NKINDS; kind++) {
        set_restart(kind == READ_RESTART || kind == POLL_EINTR);
        waiting = 0;
        ran_on_target = 0;
        int cancel = kind == READ_CANCEL || kind == ACCEPT_CANCEL;
        CHECK(pthread_create(&target, NULL, cancel ? cancelled : blocked, (void *)(intptr_t)kind) ==
              0);
        while (!waiting)
            sched_yield();
        usleep(50000); /* let it reach its wait */
        void *res = NULL;
        if (cancel) {
            CHECK(pthread_cancel(target) == 0);
            CHECK(pthread_join(target, &res) == 0);
            CHECK(res == PTHREAD_CANCELED);
            continue;
        }
        finished = 0;
        CHECK(pthread_kill(target, SIGUSR1) == 0);
        if (kind == READ_RESTART) {
            usleep(50000); /* the handler ran, the read waits again */
            CHECK(write(pfd[1], "x", 1) == 1);
        }
        /* again if it came before the call began to wait (a loaded machine) */
        for (int i = 0; kind != READ_RESTART && !finished && i < 100; i++) {
            usleep(100000);
            if (!finished)
                CHECK(pthread_kill(target, SIGUSR1) == 0);
        }
        CHECK(pthread_join(target, NULL) == 0);
        CHECK(time(NULL) - start < 30);
    }
    printf("ok\n");
    return 0;
}
