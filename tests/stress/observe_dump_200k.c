/* Stress: weft_dump of 200,000 parked threads (20,000 under ASan, 1,000
 * under TSan, whose fibers are few and slow) lists every one of them, each
 * parked on its semaphore with a backtrace, and returns (the bench,
 * bench/micro/dump.c, times it). Bounded by alarm(), not by a timed
 * assertion. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { N = TEST_TSAN ? 1000 : TEST_ASAN ? 20000 : 200000 }; /* TSan: 8,128 fibers at most */

static weft_sem sem;

static __attribute__((noinline)) void *parked_200k(void *a)
{
    CHECK_EQ(weft_sem_wait(&sem), 0);
    return a;
}

/* Counts the dump's thread lines and those of parked_200k's threads. */
struct count {
    int fd;
    long threads, parked, frames;
};

static void *reader(void *arg)
{
    struct count *c = arg;
    FILE *f = fdopen(c->fd, "r");
    CHECK(f != NULL);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "thread ", 7) == 0) {
            c->threads++;
            c->parked += strstr(line, "parked on sem") != NULL;
        } else if (strstr(line, "parked_200k")) {
            c->frames++;
        }
    }
    fclose(f);
    return NULL;
}

int main(void)
{
    test_clear_env();
    alarm(TEST_SANITIZED ? 240 : 60);
    test_init(1, WEFT_WORK_FIRST); /* each child runs, and parks, before its spawn returns */
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.stack_size = 16 << 10; /* the minimum: 200,000 stacks */
    weft_thread **t = malloc(N * sizeof *t);
    CHECK(t != NULL);
    for (long i = 0; i < N; i++)
        CHECK_EQ(weft_spawn(&t[i], parked_200k, NULL, &a), 0);
    int p[2];
    CHECK(pipe(p) == 0);
    struct count c = { p[0], 0, 0, 0 };
    pthread_t r;
    CHECK_EQ(pthread_create(&r, NULL, reader, &c), 0);
    double t0 = check_now();
    CHECK_EQ(weft_dump(p[1]), 0);
    double dt = check_now() - t0;
    close(p[1]);
    CHECK_EQ(test_pthread_join(r, NULL), 0);
    printf("dump of %d parked threads: %.3f s\n", N, dt);
    CHECK_EQ(c.threads, N + 1); /* and main */
    CHECK_EQ(c.parked, N);
    CHECK_EQ(c.frames, N);
    for (long i = 0; i < N; i++)
        CHECK_EQ(weft_sem_post(&sem), 0);
    for (long i = 0; i < N; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    free(t);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
