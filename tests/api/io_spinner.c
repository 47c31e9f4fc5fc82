/* A thread whose system call completes in its worker's ring while another
 * thread computes on that worker, calling nothing, must still resume: the
 * completion waits in a ring only that worker reaps, so the monitor must
 * count it as a thread waiting for the worker and preempt the spinner at
 * the end of its quantum. So must the initial thread when a plain pthread
 * readies it: it is mailed to worker 0, the only worker that may run it.
 * One worker, quantum 1 ms; an alarm turns a hang into a failure. Each
 * phase runs several rounds:
 *  - the initial thread sleeps (a timeout in the ring);
 *  - the initial thread waits on a semaphore a plain pthread posts;
 *  - a spawned thread reads a pipe that a plain pthread writes later;
 *  - a spawned thread reads a regular file (positional I/O, which the
 *    worker queues and submits at a scheduling point of its own). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { ROUNDS = 10 };

static atomic_int started, stop;
static volatile unsigned long sink;

static void *spinner(void *arg)
{
    (void)arg;
    atomic_store(&started, 1);
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        sink++; /* no call: only preemption takes the worker from it */
    return NULL;
}

/* Starts the spinner and waits until it runs (it then holds the worker). */
static weft_thread *start_spinner(void)
{
    atomic_store(&started, 0);
    atomic_store(&stop, 0);
    weft_thread *s;
    CHECK_EQ(weft_spawn(&s, spinner, NULL, NULL), 0);
    while (!atomic_load(&started))
        weft_yield();
    return s;
}

static void stop_spinner(weft_thread *s)
{
    atomic_store(&stop, 1);
    CHECK_EQ(weft_join(s, NULL), 0);
}

/* ---- a semaphore posted by a plain pthread ------------------------------- */

static weft_sem sem;

static void *late_poster(void *arg)
{
    (void)arg;
    usleep(5000);
    CHECK_EQ(weft_sem_post(&sem), 0);
    return NULL;
}

/* ---- a pipe written by a plain pthread ------------------------------------ */

static int pipefd[2];

static void *late_writer(void *arg)
{
    (void)arg;
    usleep(5000);
    CHECK_EQ(write(pipefd[1], "x", 1), 1);
    return NULL;
}

static void *pipe_reader(void *arg)
{
    (void)arg;
    char c = 0;
    CHECK_EQ(weft_read(pipefd[0], &c, 1), 1);
    CHECK_EQ(c, 'x');
    return NULL;
}

/* ---- a regular file --------------------------------------------------------- */

static int filefd;

static void *file_reader(void *arg)
{
    (void)arg;
    while (!atomic_load(&started))
        weft_yield(); /* read once the spinner holds the worker */
    char buf[8] = { 0 };
    CHECK_EQ(weft_pread(filefd, buf, 5, 0), 5);
    CHECK(memcmp(buf, "weft!", 5) == 0);
    return NULL;
}

int main(void)
{
    if (!test_preemption_possible()) {
        printf("skip: no preemption in this build\n");
        return 77;
    }
    test_clear_env();
    alarm(60);
    test_init_quantum(1, 1000);

    for (int r = 0; r < ROUNDS; r++) { /* the initial thread sleeps */
        weft_thread *s = start_spinner();
        CHECK_EQ(weft_sleep_ns(20 * 1000000ull), 0);
        stop_spinner(s);
    }

    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    for (int r = 0; r < ROUNDS; r++) { /* the initial thread is mailed */
        weft_thread *s = start_spinner();
        pthread_t p;
        CHECK_EQ(pthread_create(&p, NULL, late_poster, NULL), 0);
        CHECK_EQ(weft_sem_wait(&sem), 0);
        stop_spinner(s);
        CHECK_EQ(test_pthread_join(p, NULL), 0);
    }
    CHECK_EQ(weft_sem_destroy(&sem), 0);

    CHECK_EQ(pipe(pipefd), 0);
    for (int r = 0; r < ROUNDS; r++) { /* a pipe read completes later */
        weft_thread *rd, *s;
        CHECK_EQ(weft_spawn(&rd, pipe_reader, NULL, NULL), 0);
        s = start_spinner();
        pthread_t w;
        CHECK_EQ(pthread_create(&w, NULL, late_writer, NULL), 0);
        CHECK_EQ(weft_join(rd, NULL), 0); /* the spinner must be preempted */
        stop_spinner(s);
        CHECK_EQ(test_pthread_join(w, NULL), 0);
    }
    close(pipefd[0]);
    close(pipefd[1]);

    char path[] = "/tmp/weft-io-spinner-XXXXXX";
    filefd = mkstemp(path);
    CHECK(filefd >= 0);
    unlink(path);
    CHECK_EQ(write(filefd, "weft!", 5), 5);
    for (int r = 0; r < ROUNDS; r++) { /* a file read queued in the ring */
        atomic_store(&started, 0);
        weft_thread *rd;
        CHECK_EQ(weft_spawn(&rd, file_reader, NULL, NULL), 0);
        weft_thread *s = start_spinner();
        CHECK_EQ(weft_join(rd, NULL), 0);
        stop_spinner(s);
    }
    close(filefd);
    CHECK_EQ(weft_finalize(), 0);
    printf("ok\n");
    return 0;
}
