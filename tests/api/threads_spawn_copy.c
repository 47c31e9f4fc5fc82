/* Tests weft_spawn_copy (and the copy of weft_group_spawn): the child's
 * copy outlives the caller's frame and later changes to the original, is
 * aligned as malloc's memory, holds 1 to 4096 bytes exactly (4097 is
 * EINVAL, as is NULL arg with a size), arg_size 0 passes the pointer as
 * is; from user threads under both policies, from the initial thread, from
 * plain kernel threads, for bound threads and odd stack sizes. */
#define _GNU_SOURCE
#include <stdalign.h>
#include <stddef.h>

#include "sync_test.h"
#include "testutil.h"

enum { MAX_COPY = 4096 };

static weft_sem go; /* children wait for it: the caller's frame is gone by then */

struct blob {
    size_t size;
    unsigned char seed;
    unsigned char bytes[MAX_COPY - sizeof(size_t) - 8];
};

static unsigned char pattern(unsigned char seed, size_t i)
{
    return (unsigned char)(seed * 31u + i * 7u + 1u);
}

/* arg: a copy of `size` bytes whose first word is size (when it fits). */
static void *check_copy(void *arg)
{
    CHECK(arg != NULL);
    CHECK_EQ((uintptr_t)arg % alignof(max_align_t), 0);
    CHECK_EQ(weft_sem_wait(&go), 0);
    const unsigned char *p = arg;
    size_t size;
    memcpy(&size, p, sizeof size);
    unsigned char seed = p[sizeof size];
    for (size_t i = sizeof size + 1; i < size; i++)
        CHECK_EQ(p[i], pattern(seed, i));
    return (void *)size;
}

/* Fills a frame-local buffer, spawns on a copy, then scribbles over the
 * buffer before returning: the child must see the values at the call. */
static __attribute__((noinline)) weft_thread *spawn_from_frame(size_t size, unsigned char seed,
                                                               const weft_attr *attr)
{
    unsigned char buf[MAX_COPY];
    memcpy(buf, &size, sizeof size);
    buf[sizeof size] = seed;
    for (size_t i = sizeof size + 1; i < size; i++)
        buf[i] = pattern(seed, i);
    weft_thread *t = NULL;
    CHECK_EQ(weft_spawn_copy(&t, check_copy, buf, size, attr), 0);
    memset(buf, 0xa5, sizeof buf);
    __asm__ __volatile__("" : : "r"(buf) : "memory");
    return t;
}

/* Overwrites the stack where spawn_from_frame's buffer was. */
static __attribute__((noinline)) void clobber_stack(void)
{
    volatile unsigned char junk[MAX_COPY + 512];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)i;
}

static const size_t sizes[] = { 9, 16, 17, 100, 1000, 4095, MAX_COPY };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void copies(const weft_attr *attr)
{
    weft_thread *t[NSIZES];
    for (size_t i = 0; i < NSIZES; i++) {
        t[i] = spawn_from_frame(sizes[i], (unsigned char)i, attr);
        clobber_stack();
    }
    for (size_t i = 0; i < NSIZES; i++)
        CHECK_EQ(weft_sem_post(&go), 0);
    for (size_t i = 0; i < NSIZES; i++)
        CHECK_EQ((size_t)st_join(t[i]), sizes[i]);
}

/* Small sizes, every one from 1 to 64: aligned, every byte right. The
 * first byte is the size. */
static void *check_small(void *arg)
{
    const unsigned char *p = arg;
    CHECK_EQ((uintptr_t)arg % alignof(max_align_t), 0);
    for (size_t i = 1; i < p[0]; i++)
        CHECK_EQ(p[i], (unsigned char)(i * 13 + 7));
    return NULL;
}

static void small_sizes(void)
{
    unsigned char b[64];
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (unsigned char)(i * 13 + 7);
    for (size_t n = 1; n <= sizeof b; n++) {
        weft_thread *t;
        b[0] = (unsigned char)n;
        CHECK_EQ(weft_spawn_copy(&t, check_small, b, n, NULL), 0);
        st_join(t);
    }
}

static void *identity(void *arg)
{
    return arg;
}

static void errors_and_zero(void)
{
    static char big[MAX_COPY + 1];
    static int marker;
    weft_thread *t = NULL;
    /* 0: the pointer as is, NULL included */
    CHECK_EQ(weft_spawn_copy(&t, identity, &marker, 0, NULL), 0);
    CHECK(st_join(t) == &marker);
    CHECK_EQ(weft_spawn_copy(&t, identity, NULL, 0, NULL), 0);
    CHECK(st_join(t) == NULL);
    CHECK_EQ(weft_spawn_copy(&t, identity, big, sizeof big, NULL), EINVAL);
    CHECK_EQ(weft_spawn_copy(&t, identity, NULL, 8, NULL), EINVAL);
    CHECK_EQ(weft_spawn_copy(&t, NULL, big, 8, NULL), EINVAL);
    CHECK_EQ(weft_spawn_copy(NULL, identity, big, 8, NULL), EINVAL); /* joinable, no out */
}

static atomic_int detached_ok;

static void *detached_child(void *arg)
{
    CHECK_EQ((uintptr_t)arg % alignof(max_align_t), 0);
    CHECK_EQ(((int *)arg)[0], 42);
    CHECK_EQ(((int *)arg)[99], 4242);
    atomic_store(&detached_ok, 1);
    return NULL;
}

static void detached(void)
{
    int v[100] = { 42 };
    v[99] = 4242;
    weft_attr det = WEFT_ATTR_INIT;
    det.detached = 1;
    atomic_store(&detached_ok, 0);
    CHECK_EQ(weft_spawn_copy(NULL, detached_child, v, sizeof v, &det), 0);
    memset(v, 0, sizeof v);
    while (!atomic_load(&detached_ok))
        weft_yield();
}

/* Group members get copies too. */
static atomic_long sum;

static void *add_copy(void *arg)
{
    long *p = arg;
    CHECK_EQ((uintptr_t)arg % alignof(max_align_t), 0);
    atomic_fetch_add(&sum, p[0] + p[511]);
    return NULL;
}

static void group_copies(void)
{
    weft_group g = WEFT_GROUP_INIT;
    long buf[512];
    atomic_store(&sum, 0);
    for (long i = 0; i < 20; i++) {
        buf[0] = i;
        buf[511] = 1000 * i;
        CHECK_EQ(weft_group_spawn(&g, add_copy, buf, sizeof buf, NULL), 0);
    }
    memset(buf, 0, sizeof buf);
    CHECK_EQ(weft_group_wait(&g), 0);
    CHECK_EQ(atomic_load(&sum), 1001 * (19 * 20 / 2));
    CHECK_EQ(weft_group_destroy(&g), 0);
}

static void *user_side(void *arg)
{
    (void)arg;
    copies(NULL);
    small_sizes();
    group_copies();
    return NULL;
}

static void *plain_side(void *arg)
{
    (void)arg;
    copies(NULL);
    return NULL;
}

static void run_all(int workers, int policy)
{
    test_init(workers, policy);
    CHECK_EQ(weft_sem_init(&go, 0), 0);
    errors_and_zero();
    copies(NULL); /* from the initial thread */
    st_join(st_spawn(user_side, NULL));
    weft_attr a = WEFT_ATTR_INIT;
    a.bound = 1;
    copies(&a);
    a.bound = 0;
    a.stack_size = 40000; /* not a multiple of the page size */
    copies(&a);
    detached();
    pthread_t p = st_pthread(plain_side, NULL);
    CHECK_EQ(test_pthread_join(p, NULL), 0);
    CHECK_EQ(weft_sem_destroy(&go), 0);
    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    st_watchdog(60);
    test_clear_env();
    char b[8] = { 0 };
    weft_thread *t;
    CHECK_EQ(weft_spawn_copy(&t, identity, b, sizeof b, NULL), EAGAIN);
    for (int workers = 1; workers <= 2; workers++)
        for (int policy = 0; policy < 2; policy++)
            run_all(workers, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
    CHECK_EQ(weft_spawn_copy(&t, identity, b, sizeof b, NULL), EAGAIN);
    puts("ok");
    return 0;
}
