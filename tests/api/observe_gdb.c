/* Tests share/weft/weft-gdb.py in real gdb (batch mode): "info weft-threads"
 * lists the user threads with their states, and "weft-bt ID" prints a parked
 * thread's backtrace from its saved context, in the live process and in a
 * core file written by gcore. Skipped (77) without gdb, without ptrace, or
 * in sanitizer builds (the extension is for the Release build). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "gdb_test.h"
#include "testutil.h"

static weft_mutex mu = WEFT_MUTEX_INIT;
static weft_sem sem;
long observe_gdb_parked_id; /* read by gdb */

static __attribute__((noinline)) void *gdb_parked_on_mutex(void *a)
{
    CHECK_EQ(weft_mutex_lock(&mu), 0);
    CHECK_EQ(weft_mutex_unlock(&mu), 0);
    return a;
}

static __attribute__((noinline)) void *gdb_parked_on_sem(void *a)
{
    CHECK_EQ(weft_sem_wait(&sem), 0);
    return a;
}

/* gdb's breakpoint */
__attribute__((noinline)) void observe_gdb_stop(void);
__attribute__((noinline)) void observe_gdb_stop(void)
{
    __asm__ volatile("" ::: "memory");
}

static int target(void)
{
    test_init(1, WEFT_WORK_FIRST);
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    CHECK_EQ(weft_mutex_lock(&mu), 0);
    weft_thread *a, *b;
    weft_attr at = WEFT_ATTR_INIT;
    at.name = "gdb-mutex";
    CHECK_EQ(weft_spawn(&a, gdb_parked_on_mutex, NULL, &at), 0);
    at.name = "gdb-sem";
    CHECK_EQ(weft_spawn(&b, gdb_parked_on_sem, NULL, &at), 0);
    observe_gdb_parked_id = (long)weft_thread_id(a);
    weft_thread_id(b);
    observe_gdb_stop();
    CHECK_EQ(weft_mutex_unlock(&mu), 0);
    CHECK_EQ(weft_sem_post(&sem), 0);
    CHECK_EQ(weft_join(a, NULL), 0);
    CHECK_EQ(weft_join(b, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}

static const char *const gdb_checks =
    "-ex 'source %s' -ex 'info weft-threads' "
    "-ex 'python gdb.execute(\"weft-bt %%d\" %% int(gdb.parse_and_eval(\"*(long "
    "*)&observe_gdb_parked_id\")))' ";

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "target") == 0)
        return target();
    char *out, *core;
    gdb_session("observe_gdb_stop", gdb_checks, &out, &core);
    gdb_expect(out, "3 weft user threads");
    gdb_expect(out, "\"main\": running, worker 0");
    gdb_expect(out, "\"gdb-mutex\": parked on mutex, worker -1");
    gdb_expect(out, "\"gdb-sem\": parked on sem, worker -1");
    gdb_expect(out, "weft thread ");
    gdb_expect(out, "in gdb_parked_on_mutex");
    gdb_expect(out, "lock_slow");
    free(out);
    if (core) {
        gdb_expect(core, "\"gdb-mutex\": parked on mutex");
        gdb_expect(core, "in gdb_parked_on_mutex");
        free(core);
    }
    return 0;
}
