/* Tests that weft_dump's deadlock report, read while threads run, reports no
 * deadlock where there is none and survives what it reads going away:
 *  - workers lock and unlock shared mutexes, holding one at a time (a
 *    holder never waits, so no consistent snapshot has a cycle, but reads
 *    at different instants easily make one: a waited for b, b now waits
 *    for a);
 *  - others lock a heap mutex, have a child park on it, unlock, join the
 *    child and free the mutex (the dump may read a freed mutex's word);
 *  - the dumps come from the initial thread and from a plain pthread.
 * No dump may print a "deadlock:" line, and none may fail. Bounded in time
 * (RUN_NS); runs on 2 workers. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "dump_test.h"
#include "testutil.h"

#define RUN_NS  (1500 * 1000000ull)
#define LOCKERS 6
#define FREEERS 2
#define NMUTEX  2

static weft_mutex mx[NMUTEX] = { WEFT_MUTEX_INIT, WEFT_MUTEX_INIT };
static atomic_int stop;
static atomic_long false_cycles, dumps;

static void *locker(void *arg)
{
    long i = (long)(intptr_t)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_mutex *m = &mx[i++ % NMUTEX];
        CHECK_EQ(weft_mutex_lock(m), 0);
        if (i % 3 == 0)
            weft_yield(); /* holds it a while: others park */
        CHECK_EQ(weft_mutex_unlock(m), 0);
    }
    return NULL;
}

static void *lock_child(void *arg)
{
    weft_mutex *m = arg;
    CHECK_EQ(weft_mutex_lock(m), 0);
    CHECK_EQ(weft_mutex_unlock(m), 0);
    return NULL;
}

static void *freeer(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_mutex *m = malloc(sizeof *m);
        CHECK(m != NULL);
        CHECK_EQ(weft_mutex_init(m), 0);
        CHECK_EQ(weft_mutex_lock(m), 0);
        weft_thread *c;
        CHECK_EQ(weft_spawn(&c, lock_child, m, NULL), 0);
        weft_yield(); /* the child parks on m, here or on the other worker */
        CHECK_EQ(weft_mutex_unlock(m), 0);
        CHECK_EQ(weft_join(c, NULL), 0);
        CHECK_EQ(weft_mutex_destroy(m), 0);
        memset(m, 0xa5, sizeof *m);
        free(m);
    }
    return NULL;
}

/* One dump into a memory file; counts its deadlock lines. */
static void dump_once(int fd)
{
    CHECK_EQ(ftruncate(fd, 0), 0);
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    CHECK_EQ(weft_dump(fd), 0);
    CHECK(lseek(fd, 0, SEEK_END) > 0);
    char *s = dump_read(fd);
    CHECK(strstr(s, "weft dump end\n") != NULL);
    for (const char *p = s; (p = strstr(p, "\ndeadlock:")) != NULL; p++) {
        fprintf(stderr, "false deadlock: %.*s\n", (int)strcspn(p + 1, "\n"), p + 1);
        atomic_fetch_add(&false_cycles, 1);
    }
    atomic_fetch_add(&dumps, 1);
    free(s);
}

static void *pthread_dumper(void *arg)
{
    (void)arg;
    int fd = memfd_create("dump-p", 0);
    CHECK(fd >= 0);
    while (!atomic_load(&stop))
        dump_once(fd);
    close(fd);
    return NULL;
}

int main(void)
{
    test_clear_env();
    test_init(2, WEFT_WORK_FIRST);
    weft_thread *t[LOCKERS + FREEERS];
    for (int i = 0; i < LOCKERS; i++)
        CHECK_EQ(weft_spawn(&t[i], locker, (void *)(intptr_t)i, NULL), 0);
    for (int i = 0; i < FREEERS; i++)
        CHECK_EQ(weft_spawn(&t[LOCKERS + i], freeer, NULL, NULL), 0);
    pthread_t p;
    CHECK_EQ(pthread_create(&p, NULL, pthread_dumper, NULL), 0);
    int fd = memfd_create("dump", 0);
    CHECK(fd >= 0);
    uint64_t t0 = check_now_ns();
    while (check_now_ns() - t0 < RUN_NS)
        dump_once(fd);
    atomic_store(&stop, 1);
    close(fd);
    CHECK_EQ(pthread_join(p, NULL), 0);
    for (int i = 0; i < LOCKERS + FREEERS; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    fprintf(stderr, "%ld dumps, %ld false deadlock lines\n", atomic_load(&dumps),
            atomic_load(&false_cycles));
    CHECK(atomic_load(&dumps) > 0);
    CHECK_EQ(atomic_load(&false_cycles), 0);
    return 0;
}
