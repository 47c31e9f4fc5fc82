/* robust: robust mutexes whose owner dies holding them. A thread that
 * returns holding a robust mutex (private, and process-shared) leaves it
 * to the next locker with EOWNERDEAD; pthread_mutex_consistent makes it
 * usable again; unlocked without it, it is ENOTRECOVERABLE for good. A
 * process-shared robust mutex held by a child process: a fork-first child
 * killed while a thread of the parent waits for the mutex (the waiter
 * wakes with EOWNERDEAD), and a child of a threaded parent that exits
 * holding it. Bounded by alarm(). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

struct shared {
    pthread_mutex_t mu;
    int data;
};

static void init_robust(pthread_mutex_t *m, int pshared)
{
    pthread_mutexattr_t a;
    CHECK(pthread_mutexattr_init(&a) == 0);
    CHECK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) == 0);
    if (pshared)
        CHECK(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) == 0);
    CHECK(pthread_mutex_init(m, &a) == 0);
    CHECK(pthread_mutexattr_destroy(&a) == 0);
}

static void *lock_and_leave(void *arg)
{
    CHECK(pthread_mutex_lock(arg) == 0);
    return NULL;
}

/* A thread ends holding m: the next locker recovers it, or not. */
static void thread_owner_dies(pthread_mutex_t *m)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, lock_and_leave, m) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(pthread_mutex_lock(m) == EOWNERDEAD);
    CHECK(pthread_mutex_consistent(m) == 0);
    CHECK(pthread_mutex_unlock(m) == 0);
    CHECK(pthread_mutex_lock(m) == 0);
    CHECK(pthread_mutex_consistent(m) == EINVAL); /* consistent already */
    CHECK(pthread_mutex_unlock(m) == 0);

    CHECK(pthread_create(&t, NULL, lock_and_leave, m) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(pthread_mutex_trylock(m) == EOWNERDEAD);
    CHECK(pthread_mutex_unlock(m) == 0); /* without consistent */
    CHECK(pthread_mutex_lock(m) == ENOTRECOVERABLE);
    CHECK(pthread_mutex_trylock(m) == ENOTRECOVERABLE);
}

static struct shared *sh;
static _Atomic int waiting;

static void *wait_for_dead_owner(void *arg)
{
    (void)arg;
    atomic_store(&waiting, 1);
    CHECK(pthread_mutex_lock(&sh->mu) == EOWNERDEAD);
    CHECK(sh->data == 1);
    sh->data = 2;
    CHECK(pthread_mutex_consistent(&sh->mu) == 0);
    CHECK(pthread_mutex_unlock(&sh->mu) == 0);
    return NULL;
}

static struct shared *map_shared(void)
{
    struct shared *s =
        mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    init_robust(&s->mu, 1);
    return s;
}

int main(void)
{
    alarm(60);
    /* fork first (no thread yet: Apache's order): the child is killed
     * holding the mutex while a thread of the parent waits for it */
    sh = map_shared();
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(pthread_mutex_lock(&sh->mu) == 0);
        sh->data = 1;
        CHECK(write(p[1], "x", 1) == 1);
        for (;;)
            pause();
    }
    char c;
    CHECK(read(p[0], &c, 1) == 1);
    CHECK(pthread_mutex_trylock(&sh->mu) == EBUSY);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wait_for_dead_owner, NULL) == 0);
    while (!atomic_load(&waiting))
        usleep(1000);
    usleep(20000); /* it waits in the lock */
    CHECK(kill(pid, SIGKILL) == 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(sh->data == 2);
    CHECK(pthread_mutex_lock(&sh->mu) == 0);
    CHECK(pthread_mutex_unlock(&sh->mu) == 0);

    /* a child of a threaded parent exits holding it */
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(pthread_mutex_lock(&sh->mu) == 0);
        sh->data = 1;
        _exit(0);
    }
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(pthread_create(&t, NULL, wait_for_dead_owner, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(sh->data == 2);

    /* threads that end holding one: private and process-shared */
    pthread_mutex_t priv;
    init_robust(&priv, 0);
    thread_owner_dies(&priv);
    thread_owner_dies(&map_shared()->mu);
    puts("robust ok");
    return 0;
}
