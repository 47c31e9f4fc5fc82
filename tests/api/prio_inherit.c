/* Priority inheritance whatever the holder is doing (issue 24, item 3;
 * SPEC "Priorities and time quanta"), on one worker with a 1 ms quantum.
 * In each case a HIGH thread waits for a mutex whose holder (BACKGROUND)
 * is parked on a semaphore, a NORMAL spinner becomes ready, and a plain
 * pthread posts the semaphore once the spinner runs. The holder must then
 * run at HIGH ahead of the spinner and unlock, so the HIGH waiter gets the
 * mutex while the spinner still spins (the spinner gives up after 2 s; it
 * must not). Ordering is read from shared flags, not from timings. Under
 * ThreadSanitizer, where nothing is preempted, the spinner yields.
 *  1. the case: the holder parked on a semaphore when the HIGH
 *     waiter arrives;
 *  2. a chain of three: HIGH waits on m2, whose holder waits on m1, whose
 *     holder is parked on a semaphore;
 *  3. a holder raised while parked, then woken, that waits on a second
 *     mutex whose holder is parked on a semaphore. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define SPIN_MAX_NS (2000u * 1000000u)

static weft_mutex m1, m2;
static weft_sem s1, s2;
static atomic_int waiter_got;   /* the HIGH waiter holds its mutex */
static atomic_int spinning;     /* the spinner runs */
static atomic_int spin_timeout; /* the spinner gave up: the waiter waited behind it */

static void *spinner(void *arg)
{
    (void)arg;
    atomic_store(&spinning, 1);
    unsigned long long end = check_now_ns() + SPIN_MAX_NS;
    while (!atomic_load(&waiter_got)) {
        if (check_now_ns() >= end) {
            atomic_store(&spin_timeout, 1);
            break;
        }
        /* No preemption under ThreadSanitizer: the spinner yields
         * instead, which a higher class must win as well. */
        if (TEST_TSAN)
            weft_yield();
    }
    return NULL;
}

/* The plain pthread that posts *arg once the spinner runs. */
static void *poster(void *arg)
{
    while (!atomic_load(&spinning))
        usleep(100);
    usleep(2000); /* the spinner is well under way */
    CHECK_EQ(weft_sem_post(arg), 0);
    return NULL;
}

static void *waiter_on(void *arg)
{
    CHECK_EQ(weft_mutex_lock(arg), 0);
    atomic_store(&waiter_got, 1);
    CHECK_EQ(weft_mutex_unlock(arg), 0);
    return NULL;
}

/* What hold_wait_lock does: holds hold across a wait on wait (unless
 * NULL), then takes then (unless NULL) too. */
struct hold {
    weft_mutex *hold;
    weft_sem *wait;
    weft_mutex *then;
};

static void *hold_wait_lock(void *arg)
{
    const struct hold *h = arg;
    CHECK_EQ(weft_mutex_lock(h->hold), 0);
    if (h->wait)
        CHECK_EQ(weft_sem_wait(h->wait), 0);
    if (h->then) {
        CHECK_EQ(weft_mutex_lock(h->then), 0);
        CHECK_EQ(weft_mutex_unlock(h->then), 0);
    }
    CHECK_EQ(weft_mutex_unlock(h->hold), 0);
    return NULL;
}

static struct hold hold_m1_wait_s1 = { &m1, &s1, NULL };
static struct hold hold_m2_lock_m1 = { &m2, NULL, &m1 };
static struct hold hold_m2_wait_s2 = { &m2, &s2, NULL };
static struct hold hold_m1_wait_s1_lock_m2 = { &m1, &s1, &m2 };

/* Waits (the caller is URGENT: it sleeps to let the others run) until t is
 * parked. */
static void wait_parked(weft_thread *t)
{
    for (int i = 0; i < 5000; i++) {
        weft_thread_info info;
        CHECK_EQ(weft_thread_info_get(t, &info), 0);
        if (info.state == WEFT_STATE_PARKED)
            return;
        CHECK_EQ(weft_sleep_ns(1000000), 0);
    }
    CHECK(!"thread never parked");
}

static void reset(void)
{
    CHECK_EQ(weft_mutex_init(&m1), 0);
    CHECK_EQ(weft_mutex_init(&m2), 0);
    CHECK_EQ(weft_sem_init(&s1, 0), 0);
    CHECK_EQ(weft_sem_init(&s2, 0), 0);
    atomic_store(&waiter_got, 0);
    atomic_store(&spinning, 0);
    atomic_store(&spin_timeout, 0);
}

/* Starts the spinner and the poster of sem, then joins everything. */
static void race(weft_sem *sem, weft_thread **ts, int n)
{
    weft_thread *sp = test_spawn_prio(WEFT_PRIO_NORMAL, spinner, NULL);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, poster, sem), 0);
    CHECK_EQ(weft_join(sp, NULL), 0);
    for (int i = 0; i < n; i++)
        CHECK_EQ(weft_join(ts[i], NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK_EQ(atomic_load(&waiter_got), 1);
    CHECK_EQ(atomic_load(&spin_timeout), 0); /* the holder ran ahead of the spinner */
}

/* A case: the holders (BACKGROUND, each parked before the next starts),
 * then the HIGH waiter on mutex waits_on (parked); then, where set, a post
 * of post that moves the last holder on to its next wait (at HIGH by then,
 * it raises the one before); last the race with the poster of race_on. */
struct inherit_case {
    const struct hold *holders[2];
    int n;
    weft_mutex *waits_on;
    weft_sem *post, *race_on;
};

static const struct inherit_case cases[] = {
    /* parked holder: on s1, holding m1 */
    { { &hold_m1_wait_s1 }, 1, &m1, NULL, &s1 },
    /* a chain of three: on s1 holding m1; on m1 holding m2; on m2 */
    { { &hold_m1_wait_s1, &hold_m2_lock_m1 }, 2, &m2, NULL, &s1 },
    /* raised, then waits: on s2 holding m2; on s1 holding m1, raised by
     * the waiter on m1, then posted on to m2 */
    { { &hold_m2_wait_s2, &hold_m1_wait_s1_lock_m2 }, 2, &m1, &s1, &s2 },
};

static void run_case(const struct inherit_case *c)
{
    reset();
    weft_thread *t[3];
    for (int i = 0; i < c->n; i++) {
        t[i] = test_spawn_prio(WEFT_PRIO_BACKGROUND, hold_wait_lock, (void *)c->holders[i]);
        wait_parked(t[i]);
    }
    t[c->n] = test_spawn_prio(WEFT_PRIO_HIGH, waiter_on, c->waits_on);
    wait_parked(t[c->n]);
    if (c->post) {
        CHECK_EQ(weft_sem_post(c->post), 0);
        wait_parked(t[c->n - 1]);
    }
    race(c->race_on, t, c->n + 1);
}

int main(void)
{
    test_clear_env();
    alarm(60);
    test_init_quantum(1, 1000);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_URGENT), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_NORMAL), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
