/* pshared_sem: a named semaphore (sem_open) and an unnamed process-shared
 * sem_t in MAP_SHARED memory, posted by a child process and waited by
 * threads of the parent, while another thread of the parent keeps
 * running; the parent's waiters start before the child posts. Bounded by
 * alarm(). */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

enum { WAITERS = 4, POSTS = 200 };

static sem_t *named, *unnamed;
static _Atomic int waiting;
static struct pt_spinner spinner;

static void *waiter(void *arg)
{
    sem_t *s = arg;
    atomic_fetch_add(&waiting, 1);
    for (int i = 0; i < POSTS / WAITERS; i++)
        CHECK(sem_wait(s) == 0);
    return NULL;
}

int main(void)
{
    alarm(60);
    char name[64];
    snprintf(name, sizeof name, "/weft-pshared-sem-%d", (int)getpid());
    named = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
    CHECK(named != SEM_FAILED);
    CHECK(sem_unlink(name) == 0);
    unnamed =
        mmap(NULL, sizeof *unnamed, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(unnamed != MAP_FAILED);
    CHECK(sem_init(unnamed, 1, 0) == 0);

    pthread_t sp, w[2 * WAITERS];
    CHECK(pthread_create(&sp, NULL, pt_spinner_run, &spinner) == 0);
    for (int i = 0; i < WAITERS; i++) {
        CHECK(pthread_create(&w[i], NULL, waiter, named) == 0);
        CHECK(pthread_create(&w[WAITERS + i], NULL, waiter, unnamed) == 0);
    }
    while (atomic_load(&waiting) < 2 * WAITERS)
        usleep(1000);
    usleep(20000); /* the waiters are asleep in sem_wait */
    /* the spinner runs on while the waiters wait (the bound only stops a
     * hung run: a raw sleep of this thread may hold its worker a while) */
    long before = pt_spinner_spins(&spinner);
    for (int i = 0; i < 5000 && pt_spinner_spins(&spinner) < before + 100; i++)
        usleep(1000);
    CHECK(pt_spinner_spins(&spinner) >= before + 100);

    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(60);
        for (int i = 0; i < POSTS; i++) {
            CHECK(sem_post(named) == 0);
            CHECK(sem_post(unnamed) == 0);
            if (i % 16 == 0)
                usleep(100);
        }
        _exit(0);
    }
    for (int i = 0; i < 2 * WAITERS; i++)
        CHECK(pthread_join(w[i], NULL) == 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    int v = -1;
    CHECK(sem_getvalue(named, &v) == 0 && v == 0);
    CHECK(sem_getvalue(unnamed, &v) == 0 && v == 0);
    /* a timed wait on the empty shared semaphores times out */
    struct timespec dl = pt_deadline_ns(CLOCK_REALTIME, 20000000);
    CHECK(sem_timedwait(unnamed, &dl) == -1);
    pt_spinner_stop(&spinner);
    CHECK(pthread_join(sp, NULL) == 0);
    CHECK(sem_close(named) == 0);
    CHECK(sem_destroy(unnamed) == 0);
    puts("pshared_sem ok");
    return 0;
}
