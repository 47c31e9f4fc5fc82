/* rwlock_destroy: pthread_rwlock_destroy of a lock that a thread ended
 * holding (read or write) returns 0, as glibc's; so does one whose timed
 * lock was taken after a signal handler slept past the deadline (the Open
 * POSIX suite's pthread_rwlock_timedrdlock/6-2 and timedwrlock/6-2, which
 * never unlock it). Bounded by alarm(). Skipped under ThreadSanitizer,
 * which reports the destroy of a held lock and runs a handler only at its
 * next interceptor (after the timed lock's deadline). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "pcheck.h"

static pthread_rwlock_t rw;
static _Atomic int in_handler;

/* Takes rw (arg: 1 to write) and ends without unlocking it. */
static void *take_and_end(void *arg)
{
    int r = arg ? pthread_rwlock_wrlock(&rw) : pthread_rwlock_rdlock(&rw);
    return (void *)(intptr_t)r;
}

static void ended_holder(int write)
{
    CHECK(pthread_rwlock_init(&rw, NULL) == 0);
    pthread_t t;
    void *r;
    CHECK(pthread_create(&t, NULL, take_and_end, (void *)(intptr_t)write) == 0);
    CHECK(pthread_join(t, &r) == 0 && r == NULL);
    CHECK((write ? pthread_rwlock_tryrdlock(&rw) : pthread_rwlock_trywrlock(&rw)) == EBUSY);
    CHECK(pthread_rwlock_destroy(&rw) == 0);
}

static void sleepy(int sig)
{
    (void)sig;
    atomic_store(&in_handler, 1);
    usleep(400 * 1000); /* past the timed lock's deadline */
}

/* A timed lock (arg: 1 to write) with a 200 ms deadline, broken off by a
 * handler that sleeps 400 ms: rw is free when it returns. */
static void *timed(void *arg)
{
    struct timespec abs = pt_deadline_ns(CLOCK_REALTIME, 200 * 1000 * 1000);
    int r = arg ? pthread_rwlock_timedwrlock(&rw, &abs) : pthread_rwlock_timedrdlock(&rw, &abs);
    return (void *)(intptr_t)r;
}

static void handler_past_deadline(int write)
{
    CHECK(pthread_rwlock_init(&rw, NULL) == 0);
    CHECK(pthread_rwlock_wrlock(&rw) == 0);
    atomic_store(&in_handler, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, timed, (void *)(intptr_t)write) == 0);
    usleep(50 * 1000);
    CHECK(pthread_kill(t, SIGUSR1) == 0);
    while (!atomic_load(&in_handler))
        usleep(1000);
    CHECK(pthread_rwlock_unlock(&rw) == 0); /* while the handler sleeps */
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == NULL); /* taken once the handler returned */
    CHECK(pthread_rwlock_destroy(&rw) == 0);
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    return 77;
#endif
    alarm(60);
    pt_on_signal(SIGUSR1, sleepy, 0);
    ended_holder(0);
    ended_holder(1);
    handler_past_deadline(0);
    handler_past_deadline(1);
    /* a lock nobody holds or waits for */
    CHECK(pthread_rwlock_init(&rw, NULL) == 0);
    CHECK(pthread_rwlock_destroy(&rw) == 0);
    return 0;
}
