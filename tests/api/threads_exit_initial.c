/* Tests weft_exit called by the initial thread (checked in a child process):
 * as pthread_exit in main, the process goes on until every other user thread
 * has finished (detached, joinable but never joined, parked in a join, bound,
 * and threads those spawn later), then exits with status 0, running atexit
 * handlers after the last of them. On 1 and 2 workers. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define NDETACHED 16

static atomic_int finished;
static weft_mutex lock = WEFT_MUTEX_INIT;
static int handed; /* under lock */

static void at_exit(void)
{
    /* Runs once the process exits: every thread must be done by then. */
    printf("atexit finished=%d handed=%d\n", atomic_load(&finished), handed);
    fflush(stdout);
}

static void spin_yields(int n)
{
    for (int i = 0; i < n; i++)
        weft_yield();
}

/* Yields n times, then counts the calling thread finished. */
static void spin_then_finish(int n)
{
    spin_yields(n);
    atomic_fetch_add(&finished, 1);
}

static void *grandchild(void *arg)
{
    (void)arg;
    spin_then_finish(2000);
    return NULL;
}

/* Detached: yields a long while, then spawns a detached grandchild, so
 * threads are still being created after the initial thread left. */
static void *detached_main(void *arg)
{
    spin_yields(1000 + 100 * (int)(intptr_t)arg);
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    CHECK_EQ(weft_spawn(NULL, grandchild, NULL, &a), 0);
    weft_mutex_lock(&lock);
    handed++;
    weft_mutex_unlock(&lock);
    atomic_fetch_add(&finished, 1);
    return NULL;
}

static void *never_joined(void *arg)
{
    (void)arg;
    spin_then_finish(3000);
    return NULL;
}

/* Joins a thread that is still running: parked in weft_join when the
 * initial thread exits. */
static void *joiner(void *arg)
{
    weft_thread *t = arg;
    void *r = NULL;
    CHECK_EQ(weft_join(t, &r), 0);
    CHECK(r == (void *)0x5);
    atomic_fetch_add(&finished, 1);
    return NULL;
}

static void *joined(void *arg)
{
    (void)arg;
    spin_then_finish(4000);
    return (void *)0x5;
}

static void *bound_main(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    nanosleep(&ts, NULL); /* a bound thread may block its kernel thread */
    atomic_fetch_add(&finished, 1);
    return NULL;
}

/* 2 * NDETACHED (each detached one and its grandchild) + never_joined +
 * joiner + joined + bound */
#define NFINISHED (2 * NDETACHED + 4)

static int child(const char *mode)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = strcmp(mode, "w1") == 0 ? 1 : 2;
    CHECK_EQ(weft_init(&cfg), 0);
    CHECK_EQ(atexit(at_exit), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    for (int i = 0; i < NDETACHED; i++)
        CHECK_EQ(weft_spawn(NULL, detached_main, (void *)(intptr_t)i, &a), 0);
    weft_thread *t, *j, *nj;
    CHECK_EQ(weft_spawn(&nj, never_joined, NULL, NULL), 0);
    CHECK_EQ(weft_spawn(&t, joined, NULL, NULL), 0);
    CHECK_EQ(weft_spawn(&j, joiner, t, NULL), 0);
    weft_attr b = WEFT_ATTR_INIT;
    b.bound = 1;
    b.detached = 1;
    CHECK_EQ(weft_spawn(NULL, bound_main, NULL, &b), 0);
    (void)nj;
    (void)j;
    printf("initial leaves\n");
    fflush(stdout);
    weft_exit((void *)0x1);
}

static void expect_clean_exit(const char *mode)
{
    test_child *r = test_run_mode(mode);
    char want[64];
    snprintf(want, sizeof want, "atexit finished=%d handed=%d\n", NFINISHED, NDETACHED);
    const char *leave = strstr(r->out, "initial leaves\n");
    CHECK_CHILD(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 && leave &&
                    strstr(leave, want) && r->err_len == 0,
                mode, r,
                "weft_exit from the initial thread must wait for every thread, then exit(0)");
    free(r);
}

int main(int argc, char **argv)
{
    test_main_or_child(argc, argv, child);
    expect_clean_exit("w1");
    expect_clean_exit("w2");
    printf("threads_exit_initial: ok\n");
    return 0;
}
