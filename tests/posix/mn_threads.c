/* mn_threads: 10,000 threads alive at once. Under the drop-in they are
 * user threads on a few kernel threads: /proc/self/task shows at most
 * 2 x CPUs + 16 (natively: one each, which the test does not check). */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <unistd.h>

#include "pcheck.h"

enum { NT = 10000 };
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go, arrived;

static void *run(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    arrived++;
    pthread_cond_broadcast(&cv);
    while (!go)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    int nt = pt_dropin() ? NT : 500; /* natively a kernel thread each: keep it small */
    pthread_t *t = calloc((size_t)nt, sizeof *t);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 << 10);
    for (int i = 0; i < nt; i++)
        CHECK(pthread_create(&t[i], &a, run, NULL) == 0);
    pthread_mutex_lock(&m);
    while (arrived < nt)
        pthread_cond_wait(&cv, &m);
    int n = pt_tasks();
    go = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < nt; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("%d threads alive on %d kernel threads (%ld CPUs)\n", nt, n, cpus);
    pt_check_few_tasks(n, "live threads");
    free(t);
    return 0;
}
