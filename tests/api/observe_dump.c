/* Tests weft_dump and weft_thread_info_get on threads in every state:
 * parked on each kind of object (the word the dump prints), ready,
 * blocking in weft_blocking, running (the caller, with its own live
 * backtrace), and joined (gone from the dump, ESRCH). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "dump_test.h"
#include "testutil.h"

static weft_mutex mu = WEFT_MUTEX_INIT;
static weft_mutex cmu = WEFT_MUTEX_INIT;
static weft_cond cv = WEFT_COND_INIT;
static int cv_go;
static weft_rwlock rw = WEFT_RWLOCK_INIT;
static weft_barrier bar;
static weft_sem sem, sem_ready;
static int io_pipe[2], blk_pipe[2];
static weft_thread *sleeper_child;

static __attribute__((noinline)) void *park_mutex(void *a)
{
    CHECK_EQ(weft_mutex_lock(&mu), 0);
    CHECK_EQ(weft_mutex_unlock(&mu), 0);
    return a;
}

static __attribute__((noinline)) void *park_cond(void *a)
{
    CHECK_EQ(weft_mutex_lock(&cmu), 0);
    while (!cv_go)
        CHECK_EQ(weft_cond_wait(&cv, &cmu), 0);
    CHECK_EQ(weft_mutex_unlock(&cmu), 0);
    return a;
}

static __attribute__((noinline)) void *park_rwlock(void *a)
{
    CHECK_EQ(weft_rwlock_rdlock(&rw), 0);
    CHECK_EQ(weft_rwlock_unlock(&rw), 0);
    return a;
}

static __attribute__((noinline)) void *park_barrier(void *a)
{
    weft_barrier_wait(&bar);
    return a;
}

static __attribute__((noinline)) void *park_sem(void *a)
{
    CHECK_EQ(weft_sem_wait(&sem), 0);
    return a;
}

static __attribute__((noinline)) void *park_sem_ready(void *a)
{
    CHECK_EQ(weft_sem_wait(&sem_ready), 0);
    return a;
}

static __attribute__((noinline)) void *park_io(void *a)
{
    char c;
    CHECK_EQ(weft_read(io_pipe[0], &c, 1), 1);
    return a;
}

static void *sleeper(void *a)
{
    weft_sleep_ns(300 * 1000000ull);
    return a;
}

static void *sleeper_free(void *a)
{
    return a; /* work-first: finished before weft_spawn returns */
}

static __attribute__((noinline)) void *park_join(void *a)
{
    CHECK_EQ(weft_spawn(&sleeper_child, sleeper, NULL, NULL), 0);
    CHECK_EQ(weft_join(sleeper_child, NULL), 0);
    return a;
}

static weft_thread_info inside_info;
static int inside_rc = -1;

static void blocking_read(void *a)
{
    inside_rc = weft_thread_info_get(NULL, &inside_info); /* the caller, inside the call */
    char c;
    CHECK_EQ(read(blk_pipe[0], &c, 1), 1);
    (void)a;
}

static atomic_int in_blocking;
static void *blocker(void *a)
{
    atomic_store(&in_blocking, 1);
    CHECK_EQ(weft_blocking(blocking_read, NULL), 0);
    return a;
}

enum { T_MUTEX, T_COND, T_RWLOCK, T_BARRIER, T_SEM, T_IO, T_JOIN, T_READY, T_BLOCKING, NT };
static const char *const names[NT] = { "p-mutex", "p-cond", "p-rwlock", "p-barrier", "p-sem",
                                       "p-io",    "p-join", "r-ready",  "b-blocking" };
static weft_fn const fns[NT] = { park_mutex, park_cond, park_rwlock,    park_barrier, park_sem,
                                 park_io,    park_join, park_sem_ready, blocker };
static const char *const words[NT] = { "mutex", "cond", "rwlock", "barrier", "sem",
                                       "io",    "join", "ready",  "blocking" };
static const char *const frames[NT] = { "park_mutex",   "park_cond",      "park_rwlock",
                                        "park_barrier", "park_sem",       "park_io",
                                        "park_join",    "park_sem_ready", NULL };

/* The header line of thread id and the backtrace lines after it. */
static char *thread_block(const char *dump, uint64_t id)
{
    const char *p = dump_thread(dump, id);
    if (!p)
        return NULL;
    const char *end = strstr(p + 1, "\nthread ");
    if (!end)
        end = p + strlen(p);
    return strndup(p, (size_t)(end - p));
}

int main(void)
{
    test_clear_env();
    weft_thread_info info;
    CHECK_EQ(weft_thread_info_get(NULL, &info), ESRCH); /* not running yet */
    CHECK_EQ(weft_dump(1), EAGAIN);
    test_init(1, WEFT_WORK_FIRST);
    CHECK_EQ(weft_thread_info_get(NULL, NULL), EINVAL);
    CHECK(pipe(io_pipe) == 0);
    CHECK(pipe(blk_pipe) == 0);
    CHECK_EQ(weft_barrier_init(&bar, 2), 0);
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    CHECK_EQ(weft_sem_init(&sem_ready, 0), 0);
    CHECK_EQ(weft_mutex_lock(&mu), 0);
    CHECK_EQ(weft_rwlock_wrlock(&rw), 0);

    weft_thread *t[NT];
    for (int i = 0; i < NT; i++) {
        weft_attr a = WEFT_ATTR_INIT;
        a.name = names[i];
        a.priority = i == T_SEM ? WEFT_PRIO_HIGH : WEFT_PRIO_NORMAL;
        CHECK_EQ(weft_spawn(&t[i], fns[i], NULL, &a), 0);
    }
    /* One worker, work-first: each child ran at once until it parked. The
     * blocker hands the worker to another kernel thread; wait for it. */
    while (!atomic_load(&in_blocking))
        weft_yield();
    for (int k = 0; k < 100; k++) {
        CHECK_EQ(weft_thread_info_get(t[T_BLOCKING], &info), 0);
        if (info.state == WEFT_STATE_BLOCKING)
            break;
        usleep(1000);
    }
    CHECK_EQ(weft_sem_post(&sem_ready), 0); /* ready, not yet run: we keep the worker */

    for (int i = 0; i < NT; i++) {
        CHECK_EQ(weft_thread_info_get(t[i], &info), 0);
        CHECK_EQ(info.id, weft_thread_id(t[i]));
        CHECK(info.name && strcmp(info.name, names[i]) == 0);
        CHECK_EQ(info.worker, -1);
        CHECK_EQ(info.priority, i == T_SEM ? WEFT_PRIO_HIGH : WEFT_PRIO_NORMAL);
        /* p-io is in a syscall mirror: BLOCKING, though "parked on io" in the dump */
        int want = i == T_READY                   ? WEFT_STATE_READY
                   : i == T_BLOCKING || i == T_IO ? WEFT_STATE_BLOCKING
                                                  : WEFT_STATE_PARKED;
        if (info.state != want)
            fprintf(stderr, "%s: state %d, want %d\n", names[i], info.state, want);
        CHECK_EQ(info.state, want);
    }
    CHECK_EQ(weft_thread_info_get(NULL, &info), 0);
    CHECK_EQ(info.state, WEFT_STATE_RUNNING);
    CHECK_EQ(info.worker, 0);
    CHECK_EQ(info.id, weft_thread_id(weft_self()));

    char *d = dump_text();
    char line[512];
    for (int i = 0; i < NT; i++) {
        char *b = thread_block(d, weft_thread_id(t[i]));
        if (!b)
            fprintf(stderr, "no thread %s in:\n%s", names[i], d);
        CHECK(b != NULL);
        dump_copy_line(b, line, sizeof line);
        CHECK(strstr(line, names[i]) != NULL);
        CHECK(strstr(line, words[i]) != NULL);
        CHECK(strstr(line, "worker -1") != NULL);
        CHECK(strstr(line, i == T_SEM ? "priority high" : "priority normal") != NULL);
        if (i != T_READY && i != T_BLOCKING)
            CHECK(strstr(line, "parked") != NULL);
        if (frames[i] && !strstr(b, frames[i])) {
            fprintf(stderr, "no frame %s in:\n%s", frames[i], b);
            CHECK(0);
        }
        free(b);
    }
    /* the sleeper (a child of p-join) sleeps */
    char *b = thread_block(d, weft_thread_id(sleeper_child));
    CHECK(b != NULL);
    dump_copy_line(b, line, sizeof line);
    CHECK(strstr(line, "sleep") != NULL);
    free(b);
    /* the caller: running on worker 0, its live stack */
    b = thread_block(d, weft_thread_id(weft_self()));
    CHECK(b != NULL);
    dump_copy_line(b, line, sizeof line);
    CHECK(strstr(line, "running") != NULL);
    CHECK(strstr(line, "worker 0") != NULL);
    CHECK(strstr(b, "main") != NULL);
    free(b);
    free(d);

    /* let everything finish */
    CHECK_EQ(weft_mutex_unlock(&mu), 0);
    CHECK_EQ(weft_mutex_lock(&cmu), 0);
    cv_go = 1;
    CHECK_EQ(weft_cond_broadcast(&cv), 0);
    CHECK_EQ(weft_mutex_unlock(&cmu), 0);
    CHECK_EQ(weft_rwlock_unlock(&rw), 0);
    weft_barrier_wait(&bar);
    CHECK_EQ(weft_sem_post(&sem), 0);
    CHECK_EQ(write(io_pipe[1], "x", 1), 1);
    CHECK_EQ(write(blk_pipe[1], "x", 1), 1);
    uint64_t joined_id = weft_thread_id(t[T_MUTEX]);
    CHECK_EQ(weft_join(t[T_BLOCKING], NULL), 0);
    CHECK_EQ(inside_rc, 0);
    CHECK_EQ(inside_info.state, WEFT_STATE_BLOCKING);
    CHECK_EQ(inside_info.worker, -1);
    CHECK(inside_info.name && strcmp(inside_info.name, "b-blocking") == 0);
    for (int i = 0; i < NT; i++)
        if (i != T_BLOCKING)
            CHECK_EQ(weft_join(t[i], NULL), 0);
    d = dump_text();
    CHECK(thread_block(d, joined_id) == NULL);
    free(d);

    /* finished, not yet joined: DONE (and not in the dump); joined: ESRCH */
    weft_thread *done;
    weft_attr da = WEFT_ATTR_INIT;
    da.name = "d-done";
    CHECK_EQ(weft_spawn(&done, park_sem_ready, NULL, &da), 0);
    CHECK_EQ(weft_sem_post(&sem_ready), 0);
    CHECK_EQ(weft_join(done, NULL), 0);
    CHECK_EQ(weft_thread_info_get(done, &info), ESRCH);
    weft_thread *done2;
    CHECK_EQ(weft_spawn(&done2, sleeper_free, NULL, &da), 0);
    CHECK_EQ(weft_thread_info_get(done2, &info), 0);
    CHECK_EQ(info.state, WEFT_STATE_DONE);
    CHECK(strcmp(info.name, "d-done") == 0);
    CHECK_EQ(info.id, weft_thread_id(done2));
    d = dump_text();
    CHECK(thread_block(d, info.id) == NULL);
    free(d);
    CHECK_EQ(weft_join(done2, NULL), 0);
    CHECK_EQ(weft_thread_info_get(done2, &info), ESRCH);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
