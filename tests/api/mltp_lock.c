/* Tests the three mltp lock kinds: on one virtual processor, exactly how a
 * yielding waiter and a front-yielding waiter interleave with the holder and
 * with other threads; two front-yielding waiters do not hand the processor
 * to each other forever; under contention on two virtual processors, with
 * bound threads and plain kernel threads joining in, every kind excludes;
 * init rejects bad arguments and all-zero storage is a spin lock. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <mltp.h>

#include "check.h"
#include "trace.h"

static mltp_lock_t lk;

/* The holder: takes the lock, yields while holding it, marks 'u' and
 * releases it, yields, marks 'h'. */
static void holder(void *arg)
{
    (void)arg;
    mltp_lock(&lk);
    mark('H');
    mltp_yield();
    mark('u');
    mltp_unlock(&lk);
    mltp_yield();
    mark('h');
}

/* A waiter: marks its lower-case letter, takes the lock, marks the upper. */
static void waiter(void *arg)
{
    char c = (char)(intptr_t)arg;
    mark(c);
    mltp_lock(&lk);
    mark((char)(c - 'a' + 'A'));
    mltp_unlock(&lk);
}

static void looper(void *arg)
{
    char c = (char)(intptr_t)arg;
    for (int i = 0; i < 3; i++) {
        mark(c);
        mltp_yield();
    }
}

/* Holder H, then x, waiter a, y (x and y mark and yield). */
static void contend(int kind, const char *want)
{
    CHECK_EQ(mltp_lock_init(&lk, kind), 0);
    mltp_thread_t *t[4];
    t[0] = mltp_create(holder, NULL);
    t[1] = mltp_create(looper, (void *)'x');
    t[2] = mltp_create(waiter, (void *)'a');
    t[3] = mltp_create(looper, (void *)'y');
    for (int i = 0; i < 4; i++)
        CHECK(t[i] != NULL);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(mltp_join(t[i]), 0);
    expect(want);
}

/* ---- contention on two virtual processors --------------------------------- */

enum { ROUNDS = 20000 };
static long counter;      /* under lk */
static atomic_int inside; /* checks exclusion */

static void critical(void)
{
    CHECK_EQ(atomic_fetch_add(&inside, 1), 0);
    long v = counter;
    for (int i = 0; i < 10; i++)
        __asm__ __volatile__("" ::: "memory");
    counter = v + 1;
    atomic_fetch_sub(&inside, 1);
}

static void hammer(void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++) {
        mltp_lock(&lk);
        critical();
        mltp_unlock(&lk);
        if (i % 64 == 0)
            mltp_yield();
    }
}

static void *hammer_bound(void *arg)
{
    hammer(arg);
    return arg;
}

static void *hammer_pthread(void *arg)
{
    hammer(arg);
    return NULL;
}

/* Joins a bound thread from an unbound user thread. (The initial thread
 * woken by a bound thread is tested in mltp_wake_initial.) */
static void join_it(void *t)
{
    CHECK_EQ(mltp_join(t), 0);
}

static void mixed(int kind)
{
    CHECK_EQ(mltp_lock_init(&lk, kind), 0);
    counter = 0;
    enum { NU = 6 };
    mltp_thread_t *t[NU + 1];
    for (int i = 0; i < NU; i++)
        CHECK((t[i] = mltp_create(hammer, (void *)(intptr_t)ROUNDS)) != NULL);
    CHECK((t[NU] = mltp_create_bound(hammer_bound, (void *)(intptr_t)(ROUNDS / 4), 0, NULL)) !=
          NULL);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, hammer_pthread, (void *)(intptr_t)(ROUNDS / 4)), 0);
    mltp_thread_t *jb = mltp_create(join_it, t[NU]);
    CHECK(jb != NULL);
    hammer((void *)(intptr_t)ROUNDS); /* the initial thread too */
    for (int i = 0; i < NU; i++)
        CHECK_EQ(mltp_join(t[i]), 0);
    CHECK_EQ(mltp_join(jb), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK_EQ(counter, (long)(NU + 1) * ROUNDS + 2 * (ROUNDS / 4));
}

int main(void)
{
    /* arguments */
    CHECK_EQ(mltp_lock_init(NULL, MLTP_LOCK_SPIN), EINVAL);
    CHECK_EQ(mltp_lock_init(&lk, 3), EINVAL);
    CHECK_EQ(mltp_lock_init(&lk, -1), EINVAL);
    mltp_lock(NULL);
    mltp_unlock(NULL);

    /* all-zero storage is an unlocked spin lock, usable before init */
    static mltp_lock_t zero = MLTP_LOCK_INIT;
    mltp_lock(&zero);
    mltp_unlock(&zero);
    mltp_lock(&zero);
    mltp_unlock(&zero);
    for (int kind = MLTP_LOCK_SPIN; kind <= MLTP_LOCK_YIELD_FRONT; kind++) {
        mltp_lock_t l;
        CHECK_EQ(mltp_lock_init(&l, kind), 0);
        mltp_lock(&l);
        mltp_unlock(&l);
    }

    CHECK_EQ(mltp_init(1), 0);
    /* Yielding waiter: a fails and goes to the tail each time; after H
     * releases the lock, x runs before a gets it.
     *   H(lock) x a(fail) y | u(unlock) x a->A y | h x y y */
    contend(MLTP_LOCK_YIELD, "Hxay"
                             "uxAy"
                             "hxy");
    /* Front-yielding waiter: a fails, lets the next thread run and comes
     * back first, so it retries right after each other thread's turn and
     * takes the lock as soon as H has released it and yielded.
     *   H(lock) x a(fail, front) y | a(fail, front) u | A x y h x y */
    contend(MLTP_LOCK_YIELD_FRONT, "Hxayu"
                                   "Axyhxy");

    /* Two front-yielding waiters behind the holder: they must not pass the
     * processor back and forth forever. */
    CHECK_EQ(mltp_lock_init(&lk, MLTP_LOCK_YIELD_FRONT), 0);
    mltp_lock(&lk);
    mltp_thread_t *a = mltp_create(waiter, (void *)'a');
    mltp_thread_t *b = mltp_create(waiter, (void *)'b');
    CHECK(a && b);
    mltp_yield(); /* a and b fail; the initial thread gets its turn again */
    mltp_unlock(&lk);
    CHECK_EQ(mltp_join(a), 0);
    CHECK_EQ(mltp_join(b), 0);
    CHECK(!strcmp(trace, "abAB") || !strcmp(trace, "abBA") || (printf("trace %s\n", trace), 0));
    tn = 0;

    /* A spin lock held across a yield by a thread nobody else wants: fine. */
    CHECK_EQ(mltp_lock_init(&lk, MLTP_LOCK_SPIN), 0);
    mltp_lock(&lk);
    mltp_yield();
    mltp_unlock(&lk);
    CHECK_EQ(mltp_finalize(), 0);

    /* contention on two virtual processors, with a bound thread and a plain
     * kernel thread in the mix */
    CHECK_EQ(mltp_init(2), 0);
    mixed(MLTP_LOCK_SPIN);
    mixed(MLTP_LOCK_YIELD);
    mixed(MLTP_LOCK_YIELD_FRONT);
    CHECK_EQ(mltp_finalize(), 0);
    printf("mltp_lock: ok\n");
    return 0;
}
