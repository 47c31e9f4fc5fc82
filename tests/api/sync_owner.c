/* Tests who owns a mutex or a write-locked rwlock:
 *  - inside a weft_blocking callback the caller owns them (weft_self() is
 *    the caller there): the callback may unlock what the caller locked,
 *    the caller may unlock after the call what the callback locked, and a
 *    relock of the caller's own mutex is EDEADLK;
 *  - a thread that ended holding a lock leaves it to nobody: a new thread,
 *    which may reuse the dead thread's stack slot (or, bound, its kernel
 *    thread's storage), gets EPERM from unlock and EBUSY from trylock.
 * With 1 and 2 workers. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define TEST_ALARM_S 60
/* Spawns after the dead owner: the slot cache is LIFO, so the first one
 * already reuses its slot; a few more cover other reuse orders. */
#define REUSERS 8

static weft_mutex m = WEFT_MUTEX_INIT;
static weft_rwlock rw = WEFT_RWLOCK_INIT;

/* ---- inside weft_blocking ---------------------------------------------- */

struct call {
    weft_thread *caller;
    int self_ok, rc_unlock, rc_relock, rc_rw;
};

static void unlock_callers(void *arg)
{
    struct call *c = arg;
    c->self_ok = weft_self() == c->caller;
    c->rc_unlock = weft_mutex_unlock(&m);
    c->rc_rw = weft_rwlock_unlock(&rw);
}

static void relock_callers(void *arg)
{
    struct call *c = arg;
    c->rc_relock = weft_mutex_lock(&m);
}

static void lock_for_caller(void *arg)
{
    struct call *c = arg;
    c->self_ok = weft_self() == c->caller;
    c->rc_unlock = weft_mutex_lock(&m);
    c->rc_rw = weft_rwlock_wrlock(&rw);
}

static void *blocking_owner(void *arg)
{
    (void)arg;
    struct call c = { weft_self(), 0, -1, -1, -1 };
    CHECK_EQ(weft_mutex_lock(&m), 0);
    CHECK_EQ(weft_rwlock_wrlock(&rw), 0);
    CHECK_EQ(weft_blocking(unlock_callers, &c), 0);
    CHECK(c.self_ok);
    CHECK_EQ(c.rc_unlock, 0);
    CHECK_EQ(c.rc_rw, 0);
    CHECK_EQ(weft_mutex_unlock(&m), EPERM);

    CHECK_EQ(weft_blocking(lock_for_caller, &c), 0);
    CHECK(c.self_ok);
    CHECK_EQ(c.rc_unlock, 0);
    CHECK_EQ(c.rc_rw, 0);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    CHECK_EQ(weft_rwlock_unlock(&rw), 0);

    CHECK_EQ(weft_mutex_lock(&m), 0);
    CHECK_EQ(weft_blocking(relock_callers, &c), 0);
    CHECK_EQ(c.rc_relock, EDEADLK);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    return NULL;
}

/* ---- a dead owner -------------------------------------------------------- */

static void *lock_and_die(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_mutex_lock(&m), 0);
    CHECK_EQ(weft_rwlock_wrlock(&rw), 0);
    return NULL;
}

static void *not_owner(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_mutex_unlock(&m), EPERM);
    CHECK_EQ(weft_mutex_trylock(&m), EBUSY);
    CHECK_EQ(weft_rwlock_unlock(&rw), EPERM);
    return NULL;
}

static void dead_owner(const weft_attr *attr)
{
    weft_mutex_init(&m);
    weft_rwlock_init(&rw);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, lock_and_die, NULL, attr), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    for (int i = 0; i < REUSERS; i++) {
        CHECK_EQ(weft_spawn(&t, not_owner, NULL, attr), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
    }
}

static void run(int workers)
{
    test_init(workers, WEFT_WORK_FIRST);
    weft_mutex_init(&m);
    weft_rwlock_init(&rw);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, blocking_owner, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_mutex_trylock(&m), 0); /* left free */
    CHECK_EQ(weft_mutex_unlock(&m), 0);

    dead_owner(NULL);
    weft_attr bound = WEFT_ATTR_INIT;
    bound.bound = 1;
    dead_owner(&bound);
    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    test_clear_env();
    alarm(TEST_ALARM_S);
    run(1);
    run(2);
    return 0;
}
