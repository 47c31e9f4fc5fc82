/* eintr_loop: threads that block in a system call that a signal breaks off
 * with EINTR whatever SA_RESTART says, and call it again at once (liburing's
 * io_uring_enter in MariaDB's InnoDB completion thread does this), hold
 * every worker while the main thread is ready. Under the drop-in such a
 * thread must still let its worker go (the runtime's rescue): otherwise the
 * main thread, ready behind them, never runs again to send what they wait
 * for. Here the call is msgrcv on a private System V queue (made inside
 * libc, where the runtime never preempts); 2 x CPUs threads wait. Bounded
 * by alarm(). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <unistd.h>

#include "pcheck.h"

struct msg {
    long type;
    char text[8];
};

static int queue = -1;
static atomic_int started;

static void remove_queue(void)
{
    if (queue >= 0)
        msgctl(queue, IPC_RMID, NULL);
}

static void *waiter(void *arg)
{
    (void)arg;
    atomic_fetch_add(&started, 1);
    struct msg m;
    ssize_t r;
    while ((r = msgrcv(queue, &m, sizeof m.text, 0, 0)) < 0 && errno == EINTR)
        ;
    CHECK(r == (ssize_t)sizeof m.text);
    return NULL;
}

int main(void)
{
    queue = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    if (queue < 0) {
        printf("no System V message queues here: skipped\n");
        return 77;
    }
    atexit(remove_queue);
    alarm(60); /* a hang fails the test (SIGALRM's default action) */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n = (int)(2 * (cpus > 0 ? cpus : 1));
    pthread_t *t = calloc((size_t)n, sizeof *t);
    CHECK(t != NULL);
    for (int i = 0; i < n; i++)
        CHECK(pthread_create(&t[i], NULL, waiter, NULL) == 0);
    /* Let every waiter reach its call (and hold its worker) first; the
     * main thread stays ready meanwhile (a yield, not a sleep). */
    while (atomic_load(&started) < n)
        sched_yield();
    for (int i = 0; i < 1000; i++)
        sched_yield();
    for (int i = 0; i < n; i++) {
        struct msg m = { 1, "wakeup!" };
        CHECK(msgsnd(queue, &m, sizeof m.text, 0) == 0);
    }
    for (int i = 0; i < n; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    free(t);
    printf("ok: %d waiters woke\n", n);
    return 0;
}
