/* bound_threads: with WEFT_POSIX_BOUND=* (set here, before the first
 * thread), every thread is a kernel thread of its own: 8 threads alive at
 * once at a barrier each see a different gettid(), and a thread that
 * blocks in a raw system call holds nobody else up; per-thread state is
 * still the thread's own (__thread, errno, pthread_self, its name); and
 * pthread_setaffinity_np on such a thread is the real call on its kernel
 * thread (the thread's own sched_getaffinity sees it). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pcheck.h"

enum { N = 8 };

static pthread_barrier_t bar;
static _Atomic pid_t tids[N]; /* polled by main */
static __thread int mine;
static pthread_t selves[N];
static _Atomic int affinity_set;

static void *run(void *arg)
{
    int i = (int)(intptr_t)arg;
    mine = i + 100;
    errno = i;
    selves[i] = pthread_self();
    atomic_store(&tids[i], (pid_t)syscall(SYS_gettid));
    char name[16];
    snprintf(name, sizeof name, "bound-%d", i);
    CHECK(pthread_setname_np(pthread_self(), name) == 0);
    pthread_barrier_wait(&bar); /* all alive at once */
    if (i == 0) {
        /* a raw blocking call on this thread's kernel thread */
        struct timespec ts = { 0, 20000000 };
        CHECK(syscall(SYS_nanosleep, &ts, NULL) == 0);
        while (!atomic_load(&affinity_set))
            sched_yield();
        cpu_set_t s;
        CHECK(sched_getaffinity(0, sizeof s, &s) == 0);
        CHECK(CPU_COUNT(&s) == 1 && CPU_ISSET(0, &s));
    }
    pthread_barrier_wait(&bar);
    char got[16];
    CHECK(pthread_getname_np(pthread_self(), got, sizeof got) == 0);
    CHECK(strcmp(got, name) == 0);
    CHECK(mine == i + 100 && errno == i && pthread_equal(selves[i], pthread_self()));
    return (void *)(intptr_t)i;
}

int main(void)
{
    alarm(60);
    CHECK(setenv("WEFT_POSIX_BOUND", "*", 1) == 0);
    CHECK(pthread_barrier_init(&bar, NULL, N) == 0);
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        CHECK(pthread_create(&t[i], NULL, run, (void *)(intptr_t)i) == 0);
    while (!atomic_load(&tids[0]))
        usleep(1000);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    CHECK(pthread_setaffinity_np(t[0], sizeof one, &one) == 0);
    cpu_set_t back;
    CHECK(pthread_getaffinity_np(t[0], sizeof back, &back) == 0);
    CHECK(CPU_COUNT(&back) == 1 && CPU_ISSET(0, &back));
    atomic_store(&affinity_set, 1);
    for (int i = 0; i < N; i++) {
        void *r;
        CHECK(pthread_join(t[i], &r) == 0);
        CHECK(r == (void *)(intptr_t)i);
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            CHECK(tids[i] != tids[j]); /* a kernel thread each */
    puts("bound_threads ok");
    return 0;
}
