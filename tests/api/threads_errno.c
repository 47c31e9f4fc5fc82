/* Tests that errno is per user thread: a value set before a context switch
 * (weft_yield, weft_join, weft_spawn under work-first) is the value read
 * after it through weft_errno() and through a fresh errno read, whichever
 * worker resumes the thread, with many threads migrating between workers. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { NTHREADS = 64, SWITCHES = 2000 };
/* Every SPAWN_EVERY switches a thread also spawns and joins a child: that is
 * where threads change workers most (TSan: ~0.5 ms a thread, fewer). */
#define SPAWN_EVERY (TEST_TSAN ? 200 : 10)

static atomic_long migrations;

/* Out of line, so errno's address is computed afresh on the current worker
 * (the header's advice for reading errno after a switch). */
static int __attribute__((noinline)) read_errno(void)
{
    return errno;
}

static void __attribute__((noinline)) write_errno(int v)
{
    errno = v;
}

static void *leaf(void *arg)
{
    write_errno((int)(intptr_t)arg);
    weft_yield();
    CHECK_EQ(weft_errno(), (int)(intptr_t)arg);
    return NULL;
}

static void *errno_keeper(void *arg)
{
    int mine = 1000 + (int)(intptr_t)arg;
    int last_worker = weft_worker_id();
    long moved = 0;
    write_errno(mine);
    for (int i = 0; i < SWITCHES; i++) {
        weft_yield();
        int e1 = weft_errno();
        int e2 = read_errno();
        if (e1 != mine || e2 != mine) {
            fprintf(stderr, "thread %d switch %d: weft_errno %d, errno %d, expected %d\n",
                    (int)(intptr_t)arg, i, e1, e2, mine);
            CHECK(!"errno not preserved across a switch");
        }
        int w = weft_worker_id();
        moved += w != last_worker;
        last_worker = w;
        if (i % SPAWN_EVERY == SPAWN_EVERY / 2) {
            /* Switch through spawn + join too; the child sets its own errno. */
            weft_thread *t;
            CHECK_EQ(weft_spawn(&t, leaf, (void *)(intptr_t)(mine + 500000), NULL), 0);
            CHECK_EQ(read_errno(), mine);
            CHECK_EQ(weft_join(t, NULL), 0);
            CHECK_EQ(weft_errno(), mine);
            CHECK_EQ(read_errno(), mine);
            /* errno may change between switches, too. */
            mine += NTHREADS;
            write_errno(mine);
        }
    }
    atomic_fetch_add(&migrations, moved);
    return NULL;
}

/* Busy for ~100 us without switching, with its own errno: the parent's
 * continuation (work-first) or the child itself (help-first) is then taken by
 * an idle worker, so the parent tends to resume on another worker. */
static void *spinner(void *arg)
{
    write_errno((int)(intptr_t)arg);
    double until = check_now() + 100e-6;
    while (check_now() < until)
        ;
    CHECK_EQ(read_errno(), (int)(intptr_t)arg);
    return NULL;
}

static void *hopper(void *arg)
{
    long moved = 0;
    (void)arg;
    for (int i = 0; i < 200; i++) {
        int mine = 77000 + i;
        int w = weft_worker_id();
        write_errno(mine);
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, spinner, (void *)(intptr_t)(-mine), NULL), 0);
        CHECK_EQ(weft_errno(), mine);
        CHECK_EQ(read_errno(), mine);
        moved += weft_worker_id() != w;
        w = weft_worker_id();
        CHECK_EQ(weft_join(t, NULL), 0);
        CHECK_EQ(weft_errno(), mine);
        CHECK_EQ(read_errno(), mine);
        moved += weft_worker_id() != w;
    }
    atomic_fetch_add(&migrations, moved);
    return NULL;
}

int main(void)
{
    test_clear_env();
    for (int policy = 0; policy < 2; policy++) {
        for (int workers = 2; workers <= 4; workers += 2) {
            test_init(workers, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
            atomic_store(&migrations, 0);
            write_errno(7);
            weft_thread *t[NTHREADS];
            for (int i = 0; i < NTHREADS; i++)
                CHECK_EQ(weft_spawn(&t[i], errno_keeper, (void *)(intptr_t)i, NULL), 0);
            CHECK_EQ(weft_errno(), 7);
            for (int i = 0; i < NTHREADS; i++)
                CHECK_EQ(weft_join(t[i], NULL), 0);
            CHECK_EQ(weft_errno(), 7);
            CHECK_EQ(read_errno(), 7);
            long many = atomic_load(&migrations);
            atomic_store(&migrations, 0);
            weft_thread *h;
            CHECK_EQ(weft_spawn(&h, hopper, NULL, NULL), 0);
            CHECK_EQ(weft_join(h, NULL), 0);
            CHECK_EQ(weft_errno(), 7);
            printf("%s workers=%d: worker changes seen: %ld among %d threads, %ld of 400 "
                   "switches of one thread\n",
                   policy ? "help-first" : "work-first", workers, many, NTHREADS,
                   atomic_load(&migrations));
            CHECK_EQ(weft_finalize(), 0);
        }
    }
    return 0;
}
