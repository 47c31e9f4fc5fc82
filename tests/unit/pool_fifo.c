/* Tests the shared-FIFO pool plug-in (the seed's policy): on one worker,
 * created threads run in creation order, yield goes to the tail and
 * yield-to-front to the head, exactly; the initial thread takes its turn in
 * the same queue; on several workers every thread runs exactly once. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "policy/prio.h"
#include "runtime/runtime.h"
#include "sched/sched.h"

static char trace[256];
static int tn;

static void mark(char c)
{
    trace[tn++] = c;
    trace[tn] = 0;
}

static void *looper(void *arg)
{
    char c = (char)(intptr_t)arg;
    for (int i = 0; i < 3; i++) {
        mark(c);
        weft_yield();
    }
    return NULL;
}

static void *fronter(void *arg)
{
    (void)arg;
    mark('F');
    weft__yield_front(); /* the next thread runs, then F again before the rest */
    mark('f');
    return NULL;
}

static atomic_long ran;

static void *count(void *arg)
{
    atomic_fetch_add(&ran, 1);
    for (int i = 0; i < 10; i++)
        weft_yield();
    return arg;
}

int main(void)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    cfg.spawn_policy = WEFT_HELP_FIRST;
    CHECK_EQ(weft__init_with_pool(&cfg, &weft__pool_fifo), 0);
    weft_thread *a, *b, *c;
    CHECK_EQ(weft_spawn(&a, looper, (void *)'A', NULL), 0);
    CHECK_EQ(weft_spawn(&b, looper, (void *)'B', NULL), 0);
    CHECK_EQ(weft_spawn(&c, looper, (void *)'C', NULL), 0);
    CHECK_EQ(tn, 0); /* created threads wait at the tail */
    mark('m');
    weft_yield(); /* A B C run once each, then the initial thread */
    mark('m');
    CHECK_EQ(weft_join(a, NULL), 0);
    CHECK_EQ(weft_join(b, NULL), 0);
    CHECK_EQ(weft_join(c, NULL), 0);
    CHECK(!strcmp(trace, "mABCmABCABC") || (printf("trace %s\n", trace), 0));

    tn = 0;
    weft_thread *f, *x, *y;
    CHECK_EQ(weft_spawn(&f, fronter, NULL, NULL), 0);
    CHECK_EQ(weft_spawn(&x, looper, (void *)'X', NULL), 0);
    CHECK_EQ(weft_spawn(&y, looper, (void *)'Y', NULL), 0);
    CHECK_EQ(weft_join(f, NULL), 0); /* F X f Y X Y ... */
    CHECK_EQ(weft_join(x, NULL), 0);
    CHECK_EQ(weft_join(y, NULL), 0);
    CHECK(!strncmp(trace, "FXfY", 4) || (printf("trace %s\n", trace), 0));
    CHECK_EQ(weft_finalize(), 0);

    /* several workers: every thread runs once, the initial thread included */
    cfg.workers = 3;
    CHECK_EQ(weft__init_with_pool(&cfg, &weft__pool_fifo), 0);
    enum { N = 2000 };
    static weft_thread *ts[N];
    for (int i = 0; i < N; i++)
        CHECK_EQ(weft_spawn(&ts[i], count, (void *)(intptr_t)i, NULL), 0);
    for (int i = 0; i < N; i++) {
        void *r;
        CHECK_EQ(weft_join(ts[i], &r), 0);
        CHECK_EQ((intptr_t)r, i);
        CHECK_EQ(weft_worker_id(), 0);
    }
    CHECK_EQ(atomic_load(&ran), N);
    CHECK_EQ(weft_finalize(), 0);
    printf("pool_fifo: ok\n");
    return 0;
}
