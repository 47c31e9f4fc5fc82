/* pshared_cancel: waits on process-shared objects (in MAP_SHARED memory)
 * are broken off as private ones are: a thread cancelled in
 * pthread_cond_wait and pthread_cond_timedwait leaves with the mutex held
 * (its cleanup handler sees it) and ends cancelled; one cancelled in
 * sem_wait ends too; a handler sent by pthread_kill runs while the thread
 * still waits on the condition variable. A timed wait on such a
 * condition variable with the default clock (CLOCK_REALTIME) times out,
 * in a thread and in a child of fork (LTP's pthread_cond_wait/2-3,
 * pthread_cond_timedwait/2-6 and 2-7). Bounded by alarm(). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

struct shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sem_t sem;
    _Atomic int waiting; /* the waiter is about to wait */
    _Atomic int cleaned; /* its cleanup handler found the mutex held */
    _Atomic int handled; /* its signal handler ran */
};

static struct shared *sh;

static void init_objects(clockid_t clk)
{
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    CHECK(pthread_mutexattr_init(&ma) == 0);
    CHECK(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED) == 0);
    CHECK(pthread_mutex_init(&sh->mu, &ma) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED) == 0);
    CHECK(pthread_condattr_setclock(&ca, clk) == 0);
    CHECK(pthread_cond_init(&sh->cv, &ca) == 0);
    CHECK(sem_init(&sh->sem, 1, 0) == 0);
    sh->waiting = sh->cleaned = sh->handled = 0;
}

static void fini_objects(void)
{
    CHECK(pthread_cond_destroy(&sh->cv) == 0);
    CHECK(pthread_mutex_destroy(&sh->mu) == 0);
    CHECK(sem_destroy(&sh->sem) == 0);
}

static void unlock_it(void *arg)
{
    (void)arg;
    if (pthread_mutex_trylock(&sh->mu) == EBUSY) /* held: by us */
        sh->cleaned = 1;
    pthread_mutex_unlock(&sh->mu);
}

/* Waits on the condition variable for ever (arg NULL) or for 100 s
 * (timed on the clock *arg, the object's). */
static void *cond_waiter(void *arg)
{
    struct timespec abs;
    clock_gettime(arg ? *(clockid_t *)arg : CLOCK_REALTIME, &abs);
    abs.tv_sec += 100;
    CHECK(pthread_mutex_lock(&sh->mu) == 0);
    pthread_cleanup_push(unlock_it, NULL);
    sh->waiting = 1;
    for (;;)
        if (arg)
            pthread_cond_timedwait(&sh->cv, &sh->mu, &abs);
        else
            pthread_cond_wait(&sh->cv, &sh->mu);
    pthread_cleanup_pop(1);
    return NULL;
}

static void *sem_waiter(void *arg)
{
    (void)arg;
    sh->waiting = 1;
    for (;;)
        sem_wait(&sh->sem);
    return NULL;
}

/* Runs fn(arg) in a thread, cancels it once it waits and checks that it
 * ended cancelled. */
static void cancel_waiting(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    void *r;
    CHECK(pthread_create(&t, NULL, fn, arg) == 0);
    while (!sh->waiting)
        sched_yield();
    usleep(20000); /* in its wait, most likely */
    CHECK(pthread_cancel(t) == 0);
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == PTHREAD_CANCELED);
}

static void on_usr1(int sig)
{
    (void)sig;
    sh->handled = 1;
}

/* A handler runs in a thread that waits on the condition variable,
 * which then goes on waiting (or wakes spuriously) until signalled. */
static void kill_waiting(void)
{
    pthread_t t;
    void *r;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(pthread_create(&t, NULL, cond_waiter, NULL) == 0);
    while (!sh->waiting)
        sched_yield();
    usleep(20000);
    CHECK(pthread_kill(t, SIGUSR1) == 0);
    while (!sh->handled)
        usleep(1000); /* alarm() ends a wait that the signal cannot reach */
    CHECK(pthread_cancel(t) == 0);
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == PTHREAD_CANCELED);
}

/* A 30 ms timed wait on the condition variable (clock clk): ETIMEDOUT
 * with the mutex held. 0 if so. */
static int timed_wait(clockid_t clk)
{
    struct timespec abs = pt_deadline_ns(clk, 30 * 1000 * 1000);
    CHECK(pthread_mutex_lock(&sh->mu) == 0);
    int r;
    do
        r = pthread_cond_timedwait(&sh->cv, &sh->mu, &abs);
    while (r == 0);
    int held = pthread_mutex_trylock(&sh->mu) == EBUSY;
    CHECK(pthread_mutex_unlock(&sh->mu) == 0);
    return r == ETIMEDOUT && held ? 0 : 1;
}

static void *timed_thread(void *arg)
{
    return (void *)(intptr_t)timed_wait(*(clockid_t *)arg);
}

static void timed_waits(clockid_t clk)
{
    pthread_t t;
    void *r;
    CHECK(pthread_create(&t, NULL, timed_thread, &clk) == 0);
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(timed_wait(clk));
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    alarm(60); /* a wait that nothing breaks off hangs: end the test */
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC };
    for (int c = 0; c < 2; c++) {
        clockid_t clk = clocks[c];
        init_objects(clk);
        timed_waits(clk);
        cancel_waiting(cond_waiter, NULL);
        CHECK(sh->cleaned);
        fini_objects();
        init_objects(clk);
        cancel_waiting(cond_waiter, &clk);
        CHECK(sh->cleaned);
        fini_objects();
        init_objects(clk);
        cancel_waiting(sem_waiter, NULL);
        fini_objects();
        init_objects(clk);
        kill_waiting();
        fini_objects();
    }
    printf("ok\n");
    return 0;
}
