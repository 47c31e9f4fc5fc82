/* sem_eintr: a signal handler that runs while sem_wait, sem_timedwait or
 * sem_clockwait waits makes it fail with EINTR: in a process that never
 * made a thread (the Open POSIX suite's sem_timedwait/9-1, whose child of
 * fork waits), the timed ones with SA_RESTART too, and on a thread the
 * program made (pthread_kill). A kernel thread's wait is still woken by
 * a post from another thread (a child of fork of a process that ran
 * threads, whose threads are glibc's under the drop-in). Bounded by
 * alarm() in the parent and by the waits' deadlines. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

static sem_t sem;
static _Atomic int handled;

static void count(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

/* One wait on sem (value 0): 0 sem_wait, 1 sem_timedwait, 2 sem_clockwait,
 * the timed ones with a 5 s deadline. It must fail with EINTR once a
 * handler ran. */
static void wait_eintr(int how)
{
    int before = atomic_load(&handled);
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    rt.tv_sec += 5;
    mono.tv_sec += 5;
    errno = 0;
    int r = how == 0   ? sem_wait(&sem)
            : how == 1 ? sem_timedwait(&sem, &rt)
                       : sem_clockwait(&sem, CLOCK_MONOTONIC, &mono);
    if (r != -1 || errno != EINTR)
        fprintf(stderr, "wait %d: r %d errno %d\n", how, r, errno);
    CHECK(r == -1 && errno == EINTR);
    CHECK(atomic_load(&handled) > before);
}

/* In a child that never made a thread: SIGALRM every 20 ms breaks each
 * wait off. */
static int child_no_threads(void)
{
    CHECK(sem_init(&sem, 0, 0) == 0);
    pt_on_signal(SIGALRM, count, 0);
    struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    for (int how = 0; how < 3; how++)
        wait_eintr(how);
    /* SA_RESTART restarts no timed wait (glibc's neither) */
    pt_on_signal(SIGALRM, count, SA_RESTART);
    wait_eintr(1);
    wait_eintr(2);
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
    return 0;
}

static void *post_later(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    CHECK(sem_post(&sem) == 0);
    return NULL;
}

/* Waits on sem (value 0) in the caller while another thread posts. */
static void woken_by_post(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, post_later, NULL) == 0);
    CHECK(sem_wait(&sem) == 0);
    CHECK(pthread_join(t, NULL) == 0);
}

static void run_child(int (*fn)(void))
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(fn());
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int child_post(void)
{
    woken_by_post();
    return 0;
}

static _Atomic int waited;

static void *waiter(void *arg)
{
    wait_eintr((int)(intptr_t)arg);
    atomic_store(&waited, 1);
    return NULL;
}

/* A thread of the program waits; pthread_kill runs a handler there, every
 * 20 ms until the wait ended (one may come before it began). */
static void thread_killed(int how)
{
    pthread_t t;
    atomic_store(&waited, 0);
    CHECK(pthread_create(&t, NULL, waiter, (void *)(intptr_t)how) == 0);
    while (!atomic_load(&waited)) {
        usleep(20 * 1000);
        int r = pthread_kill(t, SIGUSR1);
        CHECK(r == 0 || r == ESRCH); /* ESRCH: it ended meanwhile */
    }
    CHECK(pthread_join(t, NULL) == 0);
}

int main(void)
{
    alarm(60);
    run_child(child_no_threads); /* before this process makes a thread */
    CHECK(sem_init(&sem, 0, 0) == 0);
    woken_by_post();
    run_child(child_post); /* after: its threads are glibc's under the drop-in */
    pt_on_signal(SIGUSR1, count, 0);
    thread_killed(1);
    thread_killed(2);
    pt_on_signal(SIGUSR1, count, SA_RESTART); /* restarts no timed wait */
    thread_killed(1);
    thread_killed(2);
    return 0;
}
