/* Tests that the initial thread, waiting under the seed's FIFO policy, is
 * woken by a thread that is not a user thread: it joins a bound thread, waits
 * on a condition a plain kernel thread signals, and waits at a barrier whose
 * last arriver is a bound thread. (Each wakes it through worker 0's mailbox;
 * a watchdog turns a lost wake-up into a failure instead of a hang.) */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <mltp.h>

#include "check.h"

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "mltp_wake_initial: the initial thread was never woken\n";
    ssize_t rc = write(2, msg, sizeof msg - 1);
    (void)rc;
    _exit(1);
}

static void *slow_bound(void *arg)
{
    usleep(10000);
    return arg;
}

static mltp_lock_t lk;
static mltp_cond_t cv;
static int ready; /* under lk */

static void *signaller(void *arg)
{
    (void)arg;
    usleep(10000);
    mltp_lock(&lk);
    ready = 1;
    mltp_cond_signal(&cv);
    mltp_unlock(&lk);
    return NULL;
}

static mltp_barrier_t bar;

static void *late_arriver(void *arg)
{
    usleep(10000);
    mltp_barrier(&bar);
    return arg;
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    for (int vp = 1; vp <= 2; vp++) {
        alarm(20);
        CHECK_EQ(mltp_init(vp), 0);

        mltp_thread_t *b = mltp_create_bound(slow_bound, NULL, 0, NULL);
        CHECK(b != NULL);
        CHECK_EQ(mltp_join(b), 0);

        CHECK_EQ(mltp_lock_init(&lk, MLTP_LOCK_YIELD), 0);
        CHECK_EQ(mltp_cond_init(&cv), 0);
        ready = 0;
        pthread_t pt;
        CHECK_EQ(pthread_create(&pt, NULL, signaller, NULL), 0);
        mltp_lock(&lk);
        while (!ready)
            mltp_cond_wait(&cv, &lk);
        mltp_unlock(&lk);
        CHECK_EQ(pthread_join(pt, NULL), 0);

        CHECK_EQ(mltp_barrier_init(&bar, 2), 0);
        b = mltp_create_bound(late_arriver, NULL, 0, NULL);
        CHECK(b != NULL);
        mltp_barrier(&bar);
        CHECK_EQ(mltp_join(b), 0);

        CHECK_EQ(mltp_finalize(), 0);
        alarm(0);
    }
    printf("mltp_wake_initial: ok\n");
    return 0;
}
