/* weft_yield respects priority (issue 24, item 2): a thread that yields
 * while only threads of lower priority are ready on its worker keeps
 * running, whether it is a spawned thread or the initial one, with the
 * quantum off or on; and weft_finalize from a HIGH initial thread still
 * lets the lower threads it waits for run. One worker throughout. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { YIELDS = 200 };

static atomic_int normal_ran;

static void *normal_body(void *arg)
{
    (void)arg;
    atomic_store(&normal_ran, 1);
    return NULL;
}

/* Yields many times with a NORMAL thread ready: it must never run. */
static void *high_body(void *arg)
{
    (void)arg;
    for (int i = 0; i < YIELDS; i++) {
        weft_yield();
        CHECK_EQ(atomic_load(&normal_ran), 0);
    }
    return NULL;
}

/* A spawned HIGH thread with a NORMAL one ready behind it. */
static void spawned_high(void)
{
    atomic_store(&normal_ran, 0);
    weft_thread *h, *n;
    /* The initial thread is NORMAL: the HIGH child runs at once, so
     * spawn the NORMAL one first, from the HIGH one's own run order. */
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_URGENT), 0);
    CHECK_EQ(weft_spawn(&n, normal_body, NULL, NULL), 0); /* lower: queued */
    h = test_spawn_prio(WEFT_PRIO_HIGH, high_body, NULL); /* lower: queued */
    CHECK_EQ(atomic_load(&normal_ran), 0);
    /* Dropping to BACKGROUND lets both run, HIGH first. */
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_BACKGROUND), 0);
    CHECK_EQ(weft_join(h, NULL), 0);
    CHECK_EQ(weft_join(n, NULL), 0);
    CHECK_EQ(atomic_load(&normal_ran), 1);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_NORMAL), 0);
}

/* The initial thread goes HIGH and spawns a NORMAL thread, which stays
 * queued behind it. */
static weft_thread *high_with_normal_ready(void)
{
    atomic_store(&normal_ran, 0);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_HIGH), 0);
    weft_thread *n;
    CHECK_EQ(weft_spawn(&n, normal_body, NULL, NULL), 0); /* lower: queued */
    return n;
}

/* The initial thread at HIGH yields with a NORMAL child ready. */
static void initial_high(void)
{
    weft_thread *n = high_with_normal_ready();
    for (int i = 0; i < YIELDS; i++) {
        weft_yield();
        CHECK_EQ(atomic_load(&normal_ran), 0);
    }
    CHECK_EQ(weft_join(n, NULL), 0); /* parks: the NORMAL one runs */
    CHECK_EQ(atomic_load(&normal_ran), 1);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_NORMAL), 0);
}

/* weft_finalize from a HIGH initial thread with a NORMAL thread left. */
static void finalize_high(void)
{
    weft_thread *n = high_with_normal_ready();
    CHECK_EQ(weft_detach(n), 0);
    CHECK_EQ(weft_finalize(), 0);
    CHECK_EQ(atomic_load(&normal_ran), 1);
}

int main(void)
{
    test_clear_env();
    alarm(60);
    long quanta[] = { -1, 1000 };
    for (int i = 0; i < 2; i++) {
        test_init_quantum(1, quanta[i]);
        spawned_high();
        initial_high();
        finalize_high();
    }
    return 0;
}
