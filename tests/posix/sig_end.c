/* sig_end: a process-directed signal sent while the one thread that does
 * not block it computes reaches that thread even if it ends right after:
 * its handler has run once it is joined (the kernel picks the thread when
 * the signal is sent, so natively the handler runs before the thread can
 * read the stop flag). Under the drop-in the signal may still wait for
 * its router when the thread ends (LTP's pthread_once/6-1 and
 * pthread_mutex_trylock/4-3 hung: their signal senders wait for the
 * handler). Main blocks the signal throughout. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

enum { ROUNDS = 200 };
static _Atomic int hits, stop, up;

static void handler(int sig)
{
    (void)sig;
    hits++;
}

static void *computes(void *arg)
{
    (void)arg;
    pt_mask_one(SIG_UNBLOCK, SIGUSR1);
    up = 1;
    volatile unsigned long n = 0;
    while (!stop)
        n++; /* its own code: no call into the library */
    return NULL;
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    return 77; /* ThreadSanitizer holds process signals back at its own points */
#endif
    alarm(60);
    pt_on_signal(SIGUSR1, handler, 0);
    pt_mask_one(SIG_BLOCK, SIGUSR1);
    for (int r = 0; r < ROUNDS; r++) {
        hits = 0;
        stop = 0;
        up = 0;
        pthread_t t;
        CHECK(pthread_create(&t, NULL, computes, NULL) == 0);
        while (!up)
            sched_yield();
        CHECK(kill(getpid(), SIGUSR1) == 0);
        stop = 1; /* it ends at once */
        CHECK(pthread_join(t, NULL) == 0);
        if (hits != 1)
            fprintf(stderr, "round %d: handler ran %d times\n", r, (int)hits);
        CHECK(hits == 1);
    }
    printf("ok\n");
    return 0;
}
