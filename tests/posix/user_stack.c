/* user_stack: a thread made with pthread_attr_setstack runs on that
 * memory: its locals lie in [addr, addr + size) and pthread_getattr_np in
 * it gives that address and size, on a malloc'ed and on an mmap'ed stack;
 * the stack is the caller's again after the join (overwritten, reused for
 * a second thread, then freed or unmapped); 100 threads on stacks of
 * their own run at once; a detached thread and the old
 * pthread_attr_setstackaddr (glibc: the address names the top) too; a
 * stack below PTHREAD_STACK_MIN is refused with EINVAL; and a child of
 * fork runs its thread on the stack it gives too. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN 1
#endif
#endif
/* Stack sizes: TSan's glibc threads put its large static TLS on them too. */
#ifdef TSAN
#define SZ(n) ((size_t)(n) < ((size_t)4 << 20) ? ((size_t)4 << 20) : (size_t)(n))
#else
#define SZ(n) ((size_t)(n))
#endif

struct probe {
    char *lo;
    size_t size;
    int ok; /* 1: every check in the thread passed */
    pthread_barrier_t *bar;
    _Atomic int done; /* detached threads: set last */
};

/* A frame of some depth, so that the thread really uses its stack. */
static __attribute__((noinline)) unsigned deep(int n)
{
    volatile char buf[2048];
    memset((char *)buf, n, sizeof buf);
    return n ? (unsigned)buf[n] + deep(n - 1) : (unsigned)buf[0];
}

static void *run(void *arg)
{
    struct probe *pr = arg;
    int local = 0;
    char *me = (char *)&local;
    int ok = me >= pr->lo && me < pr->lo + pr->size;
    if (!ok)
        fprintf(stderr, "local %p outside [%p, %p)\n", (void *)me, (void *)pr->lo,
                (void *)(pr->lo + pr->size));
    pthread_attr_t a;
    CHECK(pthread_getattr_np(pthread_self(), &a) == 0);
    void *addr;
    size_t size;
    CHECK(pthread_attr_getstack(&a, &addr, &size) == 0);
    pthread_attr_destroy(&a);
    if (addr != pr->lo || size != pr->size) {
        fprintf(stderr, "getattr_np: %p %zu, given %p %zu\n", addr, size, (void *)pr->lo, pr->size);
        ok = 0;
    }
    (void)deep(8);
    if (pr->bar)
        pthread_barrier_wait(pr->bar); /* all alive at once */
    sched_yield();
    local = 1;
    pr->ok = ok && local == 1;
    atomic_store(&pr->done, 1);
    return pr;
}

static void run_on(struct probe *pr, void *lo, size_t size, int detach)
{
    pr->lo = lo;
    pr->size = size;
    pr->ok = 0;
    atomic_store(&pr->done, 0);
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstack(&a, lo, size) == 0);
    void *got;
    size_t gsize;
    CHECK(pthread_attr_getstack(&a, &got, &gsize) == 0);
    CHECK(got == lo && gsize == size);
    if (detach)
        CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0);
    pthread_t th;
    CHECK(pthread_create(&th, &a, run, pr) == 0);
    pthread_attr_destroy(&a);
    if (!detach) {
        void *res;
        CHECK(pthread_join(th, &res) == 0);
        CHECK(res == pr);
        CHECK(pr->ok);
    }
}

#define N     100
#define SMALL SZ(64 << 10)

static char detached_stack[SZ(256 << 10)] __attribute__((aligned(4096)));

int main(void)
{
    struct probe pr = { 0 };
    size_t msize = SZ(256 << 10);

    /* malloc'ed: run, overwrite, reuse, free */
    char *m = aligned_alloc(64, msize);
    CHECK(m);
    run_on(&pr, m, msize, 0);
    memset(m, 0xa5, msize); /* the caller's again: nothing may still use it */
    run_on(&pr, m, msize, 0);
    memset(m, 0x5a, msize);
    free(m);

    /* mmap'ed: run, reuse, unmap */
    size_t psize = SZ(1 << 20);
    char *s = mmap(NULL, psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    run_on(&pr, s, psize, 0);
    run_on(&pr, s, psize, 0);
    CHECK(munmap(s, psize) == 0);

    /* 100 at once, each on its own stack */
    static struct probe prs[N];
    static char *stacks[N];
    static pthread_t ths[N];
    pthread_barrier_t bar;
    CHECK(pthread_barrier_init(&bar, NULL, N) == 0);
    for (int i = 0; i < N; i++) {
        CHECK((stacks[i] = malloc(SMALL)));
        prs[i] = (struct probe){ .lo = stacks[i], .size = SMALL, .bar = &bar };
        pthread_attr_t a;
        CHECK(pthread_attr_init(&a) == 0);
        CHECK(pthread_attr_setstack(&a, stacks[i], SMALL) == 0);
        CHECK(pthread_create(&ths[i], &a, run, &prs[i]) == 0);
        pthread_attr_destroy(&a);
    }
    for (int i = 0; i < N; i++) {
        CHECK(pthread_join(ths[i], NULL) == 0);
        CHECK(prs[i].ok);
        memset(stacks[i], 0xee, SMALL);
        free(stacks[i]);
    }
    pthread_barrier_destroy(&bar);

    /* detached: its stack is never freed (nobody can tell when it is
     * done with it), so a static one */
    run_on(&pr, detached_stack, sizeof detached_stack, 1);
    for (int i = 0; i < 10000 && !atomic_load(&pr.done); i++)
        usleep(1000);
    CHECK(atomic_load(&pr.done) && pr.ok);

    /* pthread_attr_setstackaddr names the top (glibc) */
    char *o = aligned_alloc(64, msize);
    CHECK(o);
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstacksize(&a, msize) == 0);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK(pthread_attr_setstackaddr(&a, o + msize) == 0);
    void *top;
    CHECK(pthread_attr_getstackaddr(&a, &top) == 0);
#pragma GCC diagnostic pop
    CHECK(top == o + msize);
    pr = (struct probe){ .lo = o, .size = msize };
    pthread_t th;
    CHECK(pthread_create(&th, &a, run, &pr) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(pr.ok);
    pthread_attr_destroy(&a);
    free(o);

    /* in a child of fork (whose threads the drop-in leaves to glibc) */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char *c = aligned_alloc(64, msize);
        if (!c)
            _exit(2);
        run_on(&pr, c, msize, 0);
        _exit(pr.ok ? 0 : 1);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

    /* too small */
    char small[64];
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstack(&a, small, sizeof small) == EINVAL);
    pthread_attr_destroy(&a);
    puts("ok");
    return 0;
}
