/* Tests weft__spawn_on (thread/thread.h), the core of the drop-in's
 * pthread_attr_setstack: a thread runs on the caller's memory (its locals
 * lie below the descriptor at the top of that memory), and once it is
 * joined weft touches none of it: the memory is overwritten, reused for
 * another thread, then freed or unmapped (ASan and the overwrite catch a
 * late use). Spawned from the initial thread, from a user thread on
 * another worker (50 at once, yielding) and from a plain kernel thread; a
 * detached one; memory too small for the descriptor and a frame, and a
 * bound attribute, are EINVAL. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <weft.h>

#include "check.h"
#include "stack/stack.h"
#include "testutil.h"
#include "thread/thread.h"

#define KiB ((size_t)1 << 10)

struct probe {
    char *lo;
    size_t size;
    _Atomic int in;   /* 1: its local lay inside [lo, lo + size) */
    _Atomic int done; /* set last */
};

static void *run(void *arg)
{
    struct probe *p = arg;
    volatile char local[512];
    memset((char *)local, 1, sizeof local);
    char *me = (char *)local;
    atomic_store(&p->in, me >= p->lo && me + sizeof local <= p->lo + p->size);
    for (int i = 0; i < 3; i++)
        weft_yield();
    atomic_store(&p->done, 1);
    return p;
}

static void run_on(struct probe *p, char *lo, size_t size)
{
    *p = (struct probe){ .lo = lo, .size = size };
    weft_thread *t;
    CHECK_EQ(weft__spawn_on(&t, run, p, NULL, lo, size), 0);
    void *res = NULL;
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == p);
    CHECK(atomic_load(&p->in));
}

enum { N = 50, SMALL = 32 * KiB };

static void *many(void *arg)
{
    (void)arg;
    static struct probe ps[N];
    static char *mem[N];
    weft_thread *t[N];
    for (int i = 0; i < N; i++) {
        CHECK((mem[i] = malloc(SMALL)) != NULL);
        ps[i] = (struct probe){ .lo = mem[i], .size = SMALL };
        CHECK_EQ(weft__spawn_on(&t[i], run, &ps[i], NULL, mem[i], SMALL), 0);
    }
    for (int i = 0; i < N; i++) {
        CHECK_EQ(weft_join(t[i], NULL), 0);
        CHECK(atomic_load(&ps[i].in));
        memset(mem[i], 0xee, SMALL);
        free(mem[i]);
    }
    return NULL;
}

static void *from_kernel(void *arg)
{
    size_t size = 64 * KiB;
    char *m = malloc(size);
    CHECK(m != NULL);
    run_on(arg, m, size);
    free(m);
    return NULL;
}

static char detached_stack[64 * KiB] __attribute__((aligned(64)));

int main(void)
{
    test_init(2, TEST_POLICY_ENV);
    struct probe p;

    size_t msize = 128 * KiB;
    char *m = aligned_alloc(64, msize);
    CHECK(m != NULL);
    run_on(&p, m, msize);
    memset(m, 0xa5, msize);
    run_on(&p, m, msize);
    free(m);

    size_t psize = 256 * KiB;
    char *s = mmap(NULL, psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    run_on(&p, s, psize);
    run_on(&p, s, psize);
    CHECK_EQ(munmap(s, psize), 0);

    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, many, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);

    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, from_kernel, &p), 0);
    CHECK_EQ(test_pthread_join(pt, NULL), 0);

    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    p = (struct probe){ .lo = detached_stack, .size = sizeof detached_stack };
    CHECK_EQ(weft__spawn_on(NULL, run, &p, &a, detached_stack, sizeof detached_stack), 0);
    while (!atomic_load(&p.done))
        weft_yield();
    CHECK(atomic_load(&p.in));

    char small[WEFT__STACK_USER_MIN];
    CHECK_EQ(weft__spawn_on(&t, run, &p, NULL, small, sizeof small), EINVAL);
    weft_attr b = WEFT_ATTR_INIT;
    b.bound = 1;
    CHECK_EQ(weft__spawn_on(&t, run, &p, &b, detached_stack, sizeof detached_stack), EINVAL);

    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
