/* White-box tests of src/sync/timer.c and the wait word of src/sync/wait.c:
 * timers on both clocks fire once, never before their deadline and never
 * after a cancel that reported success; cancel after firing reports 0;
 * the service restarts after weft__timer_shutdown; a kernel thread's
 * weft__wait_word returns the waker's value or times out at its deadline,
 * and a woken word is never timed out afterwards. No runtime needed. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "sync/timer.h"
#include "sync/wait.h"
#include "testutil.h"

#define NTIMERS 600

struct t {
    struct weft__timer timer;
    atomic_int fired;
    int cancelled;
    double fired_at; /* on the timer's own clock */
    double due;
};

static struct t ts[NTIMERS];

static double clock_now(int realtime)
{
    struct timespec now;
    clock_gettime(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static void on_fire(struct weft__timer *tm)
{
    struct t *x = (struct t *)tm;
    x->fired_at = clock_now(tm->realtime);
    atomic_fetch_add(&x->fired, 1);
}

static struct timespec in_ms(int realtime, double ms)
{
    struct timespec ts_;
    clock_gettime(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts_);
    long ns = (long)(ms * 1e6);
    ts_.tv_sec += ns / 1000000000L;
    ts_.tv_nsec += ns % 1000000000L;
    if (ts_.tv_nsec >= 1000000000L) {
        ts_.tv_sec++;
        ts_.tv_nsec -= 1000000000L;
    }
    return ts_;
}

static void timers(void)
{
    uint64_t seed = 12345;
    for (int i = 0; i < NTIMERS; i++) {
        struct t *x = &ts[i];
        x->timer.realtime = i % 2;
        x->timer.when = in_ms(x->timer.realtime, 20 + (double)(test_splitmix(&seed) % 150));
        x->due = (double)x->timer.when.tv_sec + (double)x->timer.when.tv_nsec * 1e-9;
        x->timer.slot = 0;
        x->timer.fire = on_fire;
        atomic_store(&x->fired, 0);
        x->cancelled = 0;
        CHECK_EQ(weft__timer_arm(&x->timer), 0);
    }
    /* Cancel every third one; those must never fire. */
    for (int i = 0; i < NTIMERS; i += 3)
        ts[i].cancelled = weft__timer_cancel(&ts[i].timer);
    double end = check_now() + 5.0;
    for (;;) {
        int pending = 0;
        for (int i = 0; i < NTIMERS; i++)
            pending += !ts[i].cancelled && !atomic_load(&ts[i].fired);
        if (!pending)
            break;
        CHECK(check_now() < end);
        struct timespec nap = { 0, 5000000 };
        nanosleep(&nap, NULL);
    }
    for (int i = 0; i < NTIMERS; i++) {
        struct t *x = &ts[i];
        if (x->cancelled) {
            CHECK_EQ(atomic_load(&x->fired), 0);
        } else {
            CHECK_EQ(atomic_load(&x->fired), 1);
            CHECK(x->fired_at >= x->due - 1e-6);
            CHECK_EQ(weft__timer_cancel(&x->timer), 0); /* already fired */
        }
    }
}

/* ---- the wait word ------------------------------------------------------------ */

static _Atomic uint32_t word;

static void *waker(void *arg)
{
    struct timespec nap = { 0, (long)(intptr_t)arg * 1000000L };
    nanosleep(&nap, NULL);
    CHECK(weft__wake_word(&word, WEFT__WORD_WOKEN + 8) < WEFT__WORD_DONE);
    return NULL;
}

static void wait_word(void)
{
    /* Woken: by a thread 20 ms later, through the futex. */
    atomic_store(&word, WEFT__WORD_WAITING);
    pthread_t p;
    CHECK_EQ(pthread_create(&p, NULL, waker, (void *)20), 0);
    struct timespec dl = in_ms(0, 5000);
    CHECK_EQ(weft__wait_word(&word, 1000, &dl, 0), WEFT__WORD_WOKEN + 8);
    CHECK_EQ(pthread_join(p, NULL), 0);
    /* A second wake of a final word leaves it alone. */
    CHECK_EQ(weft__wake_word(&word, WEFT__WORD_WOKEN), WEFT__WORD_WOKEN + 8);

    /* Timed out: on both clocks, never early. */
    for (int rt = 0; rt < 2; rt++) {
        atomic_store(&word, WEFT__WORD_WAITING);
        dl = in_ms(rt, 30);
        double due = (double)dl.tv_sec + (double)dl.tv_nsec * 1e-9;
        CHECK_EQ(weft__wait_word(&word, 2000, &dl, rt), WEFT__WORD_TIMEDOUT);
        CHECK(clock_now(rt) >= due - 1e-6);
        /* The waker lost: it sees the final value and changes nothing. */
        CHECK_EQ(weft__wake_word(&word, WEFT__WORD_WOKEN), WEFT__WORD_TIMEDOUT);
    }

    /* Woken while spinning: no futex needed, the waker sees no sleeper. */
    atomic_store(&word, WEFT__WORD_WAITING);
    CHECK_EQ(pthread_create(&p, NULL, waker, (void *)0), 0);
    CHECK_EQ(weft__wait_word(&word, 1000000000u, NULL, 0), WEFT__WORD_WOKEN + 8);
    CHECK_EQ(pthread_join(p, NULL), 0);
}

int main(void)
{
    alarm(TEST_SANITIZED ? 240 : 60);
    timers();
    weft__timer_shutdown();
    weft__timer_shutdown(); /* idempotent */
    timers();               /* restarts */
    weft__timer_shutdown();
    wait_word();
    printf("sync_timer: ok (policy %d, waitpkg %d)\n", (int)weft__wait_policy(),
           weft__wait_have_waitpkg());
    return 0;
}
