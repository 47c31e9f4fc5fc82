/* pshared_sync: process-shared objects in MAP_SHARED memory work across
 * fork: a mutex + condition variable ping-pong between a thread of the
 * parent and the child, 10,000 rounds each way, while another parent
 * thread keeps running; a barrier of 2 processes, several rounds; a
 * read-write lock held for writing by the child blocks the parent's
 * writer until the child unlocks it. Bounded by alarm(). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

enum { ROUNDS = 10000, BAR_ROUNDS = 50 };

struct shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_barrier_t bar;
    pthread_rwlock_t rw;
    int turn; /* 0: the parent's move, 1: the child's; under mu */
    int moves;
    _Atomic int rw_held;  /* the child holds rw for writing */
    _Atomic int rw_out;   /* the child released it */
    _Atomic int rw_tried; /* the parent found it held (trywrlock) */
};

static struct shared *sh;
static struct pt_spinner spinner;

/* One side of the ping-pong: waits for its turn, hands it over. */
static void play(int me)
{
    for (int i = 0; i < ROUNDS; i++) {
        CHECK(pthread_mutex_lock(&sh->mu) == 0);
        while (sh->turn != me)
            CHECK(pthread_cond_wait(&sh->cv, &sh->mu) == 0);
        sh->turn = !me;
        sh->moves++;
        CHECK(pthread_cond_signal(&sh->cv) == 0);
        CHECK(pthread_mutex_unlock(&sh->mu) == 0);
    }
}

static void *parent_side(void *arg)
{
    (void)arg;
    play(0);
    for (int r = 0; r < BAR_ROUNDS; r++) {
        int b = pthread_barrier_wait(&sh->bar);
        CHECK(b == 0 || b == PTHREAD_BARRIER_SERIAL_THREAD);
    }
    while (!atomic_load(&sh->rw_held))
        usleep(1000);
    CHECK(pthread_rwlock_trywrlock(&sh->rw) == EBUSY);
    atomic_store(&sh->rw_tried, 1);
    CHECK(pthread_rwlock_wrlock(&sh->rw) == 0);
    CHECK(atomic_load(&sh->rw_out)); /* not before the child let go */
    CHECK(pthread_rwlock_unlock(&sh->rw) == 0);
    return NULL;
}

static void child(void)
{
    alarm(60);
    play(1);
    for (int r = 0; r < BAR_ROUNDS; r++) {
        int b = pthread_barrier_wait(&sh->bar);
        CHECK(b == 0 || b == PTHREAD_BARRIER_SERIAL_THREAD);
    }
    CHECK(pthread_rwlock_wrlock(&sh->rw) == 0);
    atomic_store(&sh->rw_held, 1);
    while (!atomic_load(&sh->rw_tried)) /* held until the parent has tried */
        usleep(1000);
    usleep(50000);
    atomic_store(&sh->rw_out, 1);
    CHECK(pthread_rwlock_unlock(&sh->rw) == 0);
    _exit(0);
}

int main(void)
{
    alarm(60);
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    pthread_barrierattr_t ba;
    pthread_rwlockattr_t ra;
    CHECK(pthread_mutexattr_init(&ma) == 0);
    CHECK(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED) == 0);
    CHECK(pthread_mutex_init(&sh->mu, &ma) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED) == 0);
    CHECK(pthread_cond_init(&sh->cv, &ca) == 0);
    CHECK(pthread_barrierattr_init(&ba) == 0);
    CHECK(pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED) == 0);
    CHECK(pthread_barrier_init(&sh->bar, &ba, 2) == 0);
    CHECK(pthread_rwlockattr_init(&ra) == 0);
    CHECK(pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED) == 0);
    CHECK(pthread_rwlock_init(&sh->rw, &ra) == 0);

    /* threads first (under the drop-in the runtime runs), then the fork */
    pthread_t sp, ps;
    CHECK(pthread_create(&sp, NULL, pt_spinner_run, &spinner) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        child();
    CHECK(pthread_create(&ps, NULL, parent_side, NULL) == 0);
    long before = pt_spinner_spins(&spinner);
    CHECK(pthread_join(ps, NULL) == 0);
    CHECK(pt_spinner_spins(&spinner) > before); /* the spinner ran meanwhile */
    pt_spinner_stop(&spinner);
    CHECK(pthread_join(sp, NULL) == 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(sh->moves == 2 * ROUNDS);
    CHECK(pthread_mutex_destroy(&sh->mu) == 0);
    CHECK(pthread_cond_destroy(&sh->cv) == 0);
    CHECK(pthread_barrier_destroy(&sh->bar) == 0);
    CHECK(pthread_rwlock_destroy(&sh->rw) == 0);
    puts("pshared_sync ok");
    return 0;
}
