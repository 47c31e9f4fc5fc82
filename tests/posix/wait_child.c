/* wait_child: waitpid, wait4, waitid and wait for a child give the
 * kernel's pid, status bits, siginfo and ECHILD, natively and under the
 * drop-in. Under the drop-in the program runs on one worker without
 * preemption (so without the rescue of a held worker): 40 threads wait for
 * their children at once while the initial thread runs and lets the
 * children end, and they hold no kernel thread each (/proc/self/task at
 * most 2 x CPUs + 16). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

enum { NT = 40 };
static pid_t kids[NT];
static int gates[NT][2]; /* a child ends with code i once its gate is written */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started;

/* A child that reads one byte from gate and ends with code. */
static pid_t spawn(int gate_r, int gate_w, int code)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(gate_w);
        char c;
        _exit(read(gate_r, &c, 1) == 1 ? code : 99);
    }
    close(gate_r);
    return pid;
}

static void *waiter(void *arg)
{
    int i = (int)(intptr_t)arg;
    pt_count_signal(&m, &cv, &started);
    int st = 0;
    switch (i % 3) {
    case 0: CHECK(waitpid(kids[i], &st, 0) == kids[i]); break;
    case 1: {
        struct rusage ru;
        CHECK(wait4(kids[i], &st, 0, &ru) == kids[i]);
        break;
    }
    default: {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        CHECK(waitid(P_PID, (id_t)kids[i], &si, WEXITED) == 0);
        CHECK(si.si_pid == kids[i] && si.si_code == CLD_EXITED && si.si_status == i);
        CHECK(si.si_signo == SIGCHLD);
        return NULL;
    }
    }
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == i);
    return NULL;
}

/* The calls' other answers, in a thread of the program. */
static void *others(void *arg)
{
    (void)arg;
    int st;
    errno = 0;
    CHECK(waitpid(-1, &st, 0) == -1 && errno == ECHILD);
    CHECK(waitpid(getpid(), &st, 0) == -1 && errno == ECHILD); /* not a child */
    CHECK(wait(&st) == -1 && errno == ECHILD);
    int g[2];
    CHECK(pipe(g) == 0);
    pid_t a = spawn(g[0], g[1], 7);
    CHECK(waitpid(a, &st, WNOHANG) == 0);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CHECK(waitid(P_PID, (id_t)a, &si, WEXITED | WNOHANG) == 0 && si.si_pid == 0);
    CHECK(write(g[1], "x", 1) == 1);
    /* WNOWAIT leaves it to be waited for again */
    memset(&si, 0, sizeof si);
    CHECK(waitid(P_PID, (id_t)a, &si, WEXITED | WNOWAIT) == 0 && si.si_pid == a);
    CHECK(wait(&st) == a && WIFEXITED(st) && WEXITSTATUS(st) == 7); /* any child */
    close(g[1]);
    /* a child killed by a signal */
    CHECK(pipe(g) == 0);
    a = spawn(g[0], g[1], 0);
    CHECK(kill(a, SIGKILL) == 0);
    CHECK(waitpid(a, &st, 0) == a && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    close(g[1]);
    /* stopped, seen with WUNTRACED; then ended */
    CHECK(pipe(g) == 0);
    a = spawn(g[0], g[1], 3);
    CHECK(kill(a, SIGSTOP) == 0);
    CHECK(waitpid(a, &st, WUNTRACED) == a && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
    CHECK(kill(a, SIGCONT) == 0);
    CHECK(write(g[1], "x", 1) == 1);
    struct rusage ru;
    CHECK(wait3(&st, 0, &ru) == a && WIFEXITED(st) && WEXITSTATUS(st) == 3);
    close(g[1]);
    return NULL;
}

int main(void)
{
    setenv("WEFT_WORKERS", "1", 1);
    setenv("WEFT_QUANTUM", "off", 1);
    alarm(60); /* a wait that held the only worker would hang */
    pthread_t o;
    CHECK(pthread_create(&o, NULL, others, NULL) == 0);
    CHECK(pthread_join(o, NULL) == 0);
    for (int i = 0; i < NT; i++) {
        CHECK(pipe(gates[i]) == 0);
        kids[i] = spawn(gates[i][0], gates[i][1], i);
    }
    pthread_t t[NT];
    for (int i = 0; i < NT; i++)
        CHECK(pthread_create(&t[i], NULL, waiter, (void *)(intptr_t)i) == 0);
    pt_wait_count(&m, &cv, &started, NT);
    usleep(100 * 1000); /* into their waits */
    pt_check_few_tasks(pt_tasks(), "threads waiting for children");
    for (int i = 0; i < NT; i++)
        CHECK(write(gates[i][1], "x", 1) == 1);
    for (int i = 0; i < NT; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    return 0;
}
