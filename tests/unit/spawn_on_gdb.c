/* Tests that share/weft/weft-gdb.py lists a thread that runs on a caller's
 * memory (weft__spawn_on, the drop-in's pthread_attr_setstack) and prints
 * its backtrace, in the live process and in its core file. Skipped (77)
 * without gdb, without ptrace, or in sanitizer builds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "gdb_test.h"
#include "testutil.h"
#include "thread/thread.h"

static weft_sem sem;
long spawn_on_gdb_id; /* read by gdb */
/* The table the script starts from (observe/debug.c): referenced, so that
 * the static link of a unit test keeps it. */
extern const char weft__debug[];
const void *spawn_on_gdb_table = weft__debug;

static __attribute__((noinline)) void *gdb_borrowed_parks(void *a)
{
    CHECK_EQ(weft_sem_wait(&sem), 0);
    return a;
}

/* gdb's breakpoint */
__attribute__((noinline)) void spawn_on_gdb_stop(void);
__attribute__((noinline)) void spawn_on_gdb_stop(void)
{
    __asm__ volatile("" ::: "memory");
}

static int target(void)
{
    test_init(1, WEFT_WORK_FIRST);
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    size_t size = 256 << 10;
    char *m = malloc(size);
    CHECK(m != NULL);
    weft_attr at = WEFT_ATTR_INIT;
    at.name = "gdb-borrowed";
    weft_thread *t;
    CHECK_EQ(weft__spawn_on(&t, gdb_borrowed_parks, NULL, &at, m, size), 0);
    spawn_on_gdb_id = (long)weft_thread_id(t);
    weft_yield(); /* it parks */
    spawn_on_gdb_stop();
    CHECK_EQ(weft_sem_post(&sem), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    free(m);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}

static const char *const gdb_checks =
    "-ex 'source %s' -ex 'info weft-threads' "
    "-ex 'python gdb.execute(\"weft-bt %%d\" %% int(gdb.parse_and_eval(\"*(long "
    "*)&spawn_on_gdb_id\")))' ";

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "target") == 0)
        return target();
    char *out, *core;
    gdb_session("spawn_on_gdb_stop", gdb_checks, &out, &core);
    gdb_expect(out, "2 weft user threads");
    gdb_expect(out, "\"gdb-borrowed\": parked on sem, worker -1");
    gdb_expect(out, "in gdb_borrowed_parks");
    free(out);
    if (core) {
        gdb_expect(core, "\"gdb-borrowed\": parked on sem");
        gdb_expect(core, "in gdb_borrowed_parks");
        free(core);
    }
    return 0;
}
