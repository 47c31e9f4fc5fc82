/* inject.c: the --wrap side of the failure-injection test (see inject.h):
 * counts each wrapped call, fails the armed one(s), and keeps a table of
 * the blocks and mappings the library holds. */
#define _GNU_SOURCE
#include "inject.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

const char *const fault_kind_name[FK_COUNT] = {
    "malloc", "calloc", "realloc", "aligned", "heap", "mmap", "mprotect", "pthread_create", "uring",
};

static struct fault_state local_state = { .armed_kind = -1 };
static struct fault_state *st = &local_state;

/* ---- outstanding blocks and mappings -------------------------------------- */

#define TABLE_SLOTS 16384u /* far above what the test program holds at once */
#define TOMBSTONE   ((void *)1)

struct entry {
    void *p; /* NULL: empty; TOMBSTONE: removed */
    size_t size;
    void *caller; /* return address into the library */
};

struct table {
    struct entry e[TABLE_SLOTS];
    size_t live;
    size_t overflow; /* entries that did not fit: reported as a failure */
};

extern char __executable_start; /* the linker's: where the program is mapped */

static struct table blocks, maps;
static atomic_flag table_lock = ATOMIC_FLAG_INIT; /* both tables */
static _Atomic long rings;
static int trace; /* FAULT_TRACE=1 */

/* acquire: pairs with the release in unlock (the tables' entries). */
static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&table_lock, memory_order_acquire))
        ;
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&table_lock, memory_order_release);
}

static size_t slot_of(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 40) % TABLE_SLOTS;
}

static void table_add(struct table *t, void *p, size_t size, void *caller)
{
    lock();
    size_t i = slot_of(p);
    for (size_t k = 0; k < TABLE_SLOTS; k++, i = (i + 1) % TABLE_SLOTS)
        if (t->e[i].p == NULL || t->e[i].p == TOMBSTONE) {
            t->e[i] = (struct entry){ p, size, caller };
            t->live++;
            unlock();
            return;
        }
    t->overflow++;
    unlock();
}

/* Removes p; returns its size, or 0 if the table does not hold it (memory
 * the library did not get through a wrapped call). */
static size_t table_del(struct table *t, const void *p)
{
    lock();
    size_t i = slot_of(p);
    for (size_t k = 0; k < TABLE_SLOTS && t->e[i].p; k++, i = (i + 1) % TABLE_SLOTS)
        if (t->e[i].p == p) {
            size_t size = t->e[i].size;
            t->e[i].p = TOMBSTONE;
            t->live--;
            unlock();
            return size;
        }
    unlock();
    return 0;
}

size_t fault_live_blocks(void)
{
    lock();
    size_t n = blocks.live + blocks.overflow;
    unlock();
    return n;
}

size_t fault_live_map_bytes(void)
{
    lock();
    size_t n = maps.overflow;
    for (size_t i = 0; i < TABLE_SLOTS; i++)
        if (maps.e[i].p && maps.e[i].p != TOMBSTONE)
            n += maps.e[i].size;
    unlock();
    return n;
}

long fault_live_rings(void)
{
    return atomic_load(&rings);
}

#if defined(__SANITIZE_ADDRESS__)
void __asan_describe_address(void *addr); /* sanitizer/asan_interface.h */
#endif

static void report_table(const char *what, struct table *t)
{
    for (size_t i = 0; i < TABLE_SLOTS; i++)
        if (t->e[i].p && t->e[i].p != TOMBSTONE) {
            fprintf(stderr, "  live %s %p, %zu bytes, from exe+%#lx (addr2line -e <test> that)\n",
                    what, t->e[i].p, t->e[i].size,
                    (unsigned long)((char *)t->e[i].caller - &__executable_start));
#if defined(__SANITIZE_ADDRESS__)
            if (t == &blocks)
                __asan_describe_address(t->e[i].p); /* with the stack that allocated it */
#endif
        }
    if (t->overflow)
        fprintf(stderr, "  %zu %ss not tracked (table full)\n", t->overflow, what);
}

void fault_report_live(void)
{
    lock();
    report_table("block", &blocks);
    report_table("mapping", &maps);
    unlock();
    if (atomic_load(&rings))
        fprintf(stderr, "  %ld io_uring rings set up and not torn down\n", atomic_load(&rings));
}

/* ---- arming ------------------------------------------------------------- */

void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

void *fault_shared_alloc(size_t size)
{
    void *p = __real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void fault_share(struct fault_state *s)
{
    /* A child of the driver starts with nothing of its own outstanding. */
    lock();
    memset(&blocks, 0, sizeof blocks);
    memset(&maps, 0, sizeof maps);
    unlock();
    atomic_store(&rings, 0);
    memset(s, 0, sizeof *s);
    atomic_store(&s->armed_kind, -1);
    st = s;
}

void fault_disarm(void)
{
    atomic_store(&st->armed_kind, -1);
}

int fault_arm_env(void)
{
    for (int k = 0; k < FK_COUNT; k++)
        atomic_store(&st->calls[k], 0);
    atomic_store(&st->failed, 0);
    atomic_store(&st->first_phase, -1);
    atomic_store(&st->first_caller, 0);
    atomic_store(&st->armed_kind, -1);
    const char *trace_env = getenv("FAULT_TRACE");
    trace = trace_env && !strcmp(trace_env, "1");
    const char *s = getenv("FAULT_INJECT");
    if (!s || !*s)
        return 0;
    const char *colon = strchr(s, ':');
    if (!colon)
        return -1;
    int kind = -1;
    for (int k = 0; k < FK_COUNT; k++)
        if (strlen(fault_kind_name[k]) == (size_t)(colon - s) &&
            !strncmp(s, fault_kind_name[k], (size_t)(colon - s)))
            kind = k;
    char *end;
    unsigned long long n = strtoull(colon + 1, &end, 10);
    int from = *end == '+';
    if (kind < 0 || n == 0 || end == colon + 1 || (*end && strcmp(end, "+")))
        return -1;
    atomic_store(&st->armed_n, n);
    atomic_store(&st->armed_from, from);
    atomic_store(&st->armed_kind, kind);
    return 0;
}

/* Counts a call of kind k from caller; 1 if it is to fail. */
static int should_fail(int k, void *caller)
{
    uint64_t seq = atomic_fetch_add(&st->calls[k], 1) + 1;
    uint64_t heap = 0;
    if (k <= FK_ALIGNED)
        heap = atomic_fetch_add(&st->calls[FK_HEAP], 1) + 1;
    int armed = atomic_load(&st->armed_kind);
    if (armed < 0)
        return 0;
    if (armed == FK_HEAP && heap)
        seq = heap;
    else if (armed != k)
        return 0;
    uint64_t n = atomic_load(&st->armed_n);
    if (seq == n || (seq > n && atomic_load(&st->armed_from))) {
        uintptr_t off = (uintptr_t)((char *)caller - &__executable_start);
        if (atomic_fetch_add(&st->failed, 1) == 0) {
            atomic_store(&st->first_phase, atomic_load(&st->phase));
            atomic_store(&st->first_caller, off);
        }
        if (trace)
            fprintf(stderr, "fault: %s call %llu fails, from exe+%#lx\n", fault_kind_name[k],
                    (unsigned long long)seq, (unsigned long)off);
        return 1;
    }
    return 0;
}

/* ---- the wrappers ---------------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **out, size_t a, size_t n);
void __real_free(void *p);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_munmap(void *addr, size_t len);
int __real_mprotect(void *addr, size_t len, int prot);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
int __wrap_posix_memalign(void **out, size_t a, size_t n);
void __wrap_free(void *p);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __wrap_munmap(void *addr, size_t len);
int __wrap_mprotect(void *addr, size_t len, int prot);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

#define CALLER __builtin_return_address(0)

void *__wrap_malloc(size_t n)
{
    if (should_fail(FK_MALLOC, CALLER)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __real_malloc(n);
    if (p)
        table_add(&blocks, p, n, CALLER);
    return p;
}

void *__wrap_calloc(size_t k, size_t n)
{
    if (should_fail(FK_CALLOC, CALLER)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __real_calloc(k, n);
    if (p)
        table_add(&blocks, p, k * n, CALLER);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (should_fail(FK_REALLOC, CALLER)) {
        errno = ENOMEM;
        return NULL; /* p stays valid, as after a real failure */
    }
    void *q = __real_realloc(p, n);
    if (q || n == 0) {
        if (p)
            table_del(&blocks, p);
        if (q)
            table_add(&blocks, q, n, CALLER);
    }
    return q;
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
    if (should_fail(FK_ALIGNED, CALLER)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __real_aligned_alloc(a, n);
    if (p)
        table_add(&blocks, p, n, CALLER);
    return p;
}

int __wrap_posix_memalign(void **out, size_t a, size_t n)
{
    if (should_fail(FK_ALIGNED, CALLER))
        return ENOMEM;
    int rc = __real_posix_memalign(out, a, n);
    if (rc == 0)
        table_add(&blocks, *out, n, CALLER);
    return rc;
}

void __wrap_free(void *p)
{
    if (p)
        table_del(&blocks, p);
    __real_free(p);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (should_fail(FK_MMAP, CALLER)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    void *p = __real_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED)
        table_add(&maps, p, len, CALLER);
    return p;
}

int __wrap_munmap(void *addr, size_t len)
{
    table_del(&maps, addr);
    return __real_munmap(addr, len);
}

int __wrap_mprotect(void *addr, size_t len, int prot)
{
    if (should_fail(FK_MPROTECT, CALLER)) {
        errno = ENOMEM;
        return -1;
    }
    return __real_mprotect(addr, len, prot);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (should_fail(FK_PTHREAD, CALLER))
        return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

#if FAULT_HAVE_URING
/* The rings' wake-up eventfd is part of their set-up. */
int __real_eventfd(unsigned int count, int flags);
int __wrap_eventfd(unsigned int count, int flags);

int __wrap_eventfd(unsigned int count, int flags)
{
    if (should_fail(FK_URING, CALLER)) {
        errno = EMFILE;
        return -1;
    }
    return __real_eventfd(count, flags);
}

struct io_uring;
struct io_uring_params;
int __real_io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags);
int __real_io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
                                      struct io_uring_params *p);
void __real_io_uring_queue_exit(struct io_uring *ring);
int __wrap_io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags);
int __wrap_io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
                                      struct io_uring_params *p);
void __wrap_io_uring_queue_exit(struct io_uring *ring);

int __wrap_io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
    if (should_fail(FK_URING, CALLER))
        return -ENOMEM;
    int rc = __real_io_uring_queue_init(entries, ring, flags);
    if (rc == 0)
        atomic_fetch_add(&rings, 1);
    return rc;
}

int __wrap_io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
                                      struct io_uring_params *p)
{
    if (should_fail(FK_URING, CALLER))
        return -ENOMEM;
    int rc = __real_io_uring_queue_init_params(entries, ring, p);
    if (rc == 0)
        atomic_fetch_add(&rings, 1);
    return rc;
}

void __wrap_io_uring_queue_exit(struct io_uring *ring)
{
    atomic_fetch_sub(&rings, 1);
    __real_io_uring_queue_exit(ring);
}
#endif
