/* c11_threads: <threads.h> (glibc calls its own internals for these, so
 * the drop-in defines them): thrd_create/join, mtx, cnd, tss, call_once. */
#include <stdint.h>
#include <threads.h>

#include "pcheck.h"

static mtx_t m;
static cnd_t c;
static int count;
static once_flag once = ONCE_FLAG_INIT;
static int once_runs;
static tss_t key;
static _Atomic int dtors;
static _Thread_local int mine;

static void once_fn(void)
{
    once_runs++;
}
static void dtor(void *v)
{
    (void)v;
    dtors++;
}

static int run(void *arg)
{
    int id = (int)(intptr_t)arg;
    mine = id;
    call_once(&once, once_fn);
    CHECK(tss_set(key, &mine) == thrd_success);
    for (int i = 0; i < 1000; i++) {
        CHECK(mtx_lock(&m) == thrd_success);
        count++;
        cnd_broadcast(&c);
        CHECK(mtx_unlock(&m) == thrd_success);
        if (i % 100 == 0)
            thrd_yield();
    }
    CHECK(tss_get(key) == &mine && mine == id);
    return id * 3;
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    /* glibc's thrd_create calls its internal pthread_create, which TSan
     * does not intercept: the thread crashes in TSan's runtime */
    return 77;
#endif
    CHECK(mtx_init(&m, mtx_plain | mtx_recursive) == thrd_success);
    CHECK(cnd_init(&c) == thrd_success);
    CHECK(tss_create(&key, dtor) == thrd_success);
    enum { N = 16 };
    thrd_t t[N];
    for (int i = 0; i < N; i++)
        CHECK(thrd_create(&t[i], run, (void *)(intptr_t)(i + 1)) == thrd_success);
    CHECK(mtx_lock(&m) == thrd_success);
    CHECK(mtx_lock(&m) == thrd_success); /* recursive */
    CHECK(mtx_unlock(&m) == thrd_success);
    while (count < N * 1000)
        CHECK(cnd_wait(&c, &m) == thrd_success);
    CHECK(mtx_unlock(&m) == thrd_success);
    for (int i = 0; i < N; i++) {
        int r;
        CHECK(thrd_join(t[i], &r) == thrd_success);
        CHECK(r == (i + 1) * 3);
    }
    CHECK(once_runs == 1);
    CHECK(dtors == N);
    CHECK(thrd_equal(thrd_current(), thrd_current()));
    struct timespec d = { 0, 1000000 };
    CHECK(thrd_sleep(&d, NULL) == 0);
    mtx_destroy(&m);
    cnd_destroy(&c);
    printf("ok\n");
    return 0;
}
