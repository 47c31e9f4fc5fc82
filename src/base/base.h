/* base.h: compiler helpers, the assert/panic tiers and one-time notices. */
#ifndef WEFT_BASE_BASE_H
#define WEFT_BASE_BASE_H

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define WEFT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define WEFT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define WEFT_CACHELINE   64
#define WEFT_ALIGNED     __attribute__((aligned(WEFT_CACHELINE)))
#define WEFT_NS_PER_S    1000000000ull
/* A function whose racy reads are hints by design (statistics, the
 * monitor's looks): ThreadSanitizer does not instrument it. */
#if defined(WEFT_SANITIZE_THREAD)
#define WEFT_RACY __attribute__((no_sanitize("thread")))
#else
#define WEFT_RACY
#endif
/* 2^64 / the golden ratio: Fibonacci hashing's multiplier (x * it >> k
 * spreads x over the top bits), and an odd seed for the generators. */
#define WEFT_GOLDEN64 0x9e3779b97f4a7c15ull
#define WEFT_INTERNAL __attribute__((visibility("hidden")))
#define WEFT_NOINLINE __attribute__((noinline))
#define WEFT_INLINE   static inline __attribute__((always_inline))

#if defined(WEFT_SANITIZE_ADDRESS) || defined(WEFT_SANITIZE_THREAD) || !defined(NDEBUG)
#define WEFT__CHECKED 1
#else
#define WEFT__CHECKED 0
#endif

/* Truly unrecoverable: prints "weft: <msg>" and aborts. */
_Noreturn void weft__panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Internal invariant, checked in debug and sanitizer builds only. */
#define WEFT_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (WEFT__CHECKED && WEFT_UNLIKELY(!(cond)))                                               \
            weft__panic("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__);                \
    } while (0)

/* One line on stderr prefixed "weft: ". */
void weft__notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* errno of the kernel thread that runs the caller at the moment of the call.
 * glibc declares __errno_location const, so a compiler may compute errno's
 * address once and reuse it after a call that parks the user thread and
 * resumes it on another kernel thread; code after such a call (a ring
 * wait, a park) reads and writes errno through these (base/errno.c). */
int weft__errno_get(void);
void weft__errno_set(int e);

/* A full (seq_cst) fence. TSan does not model standalone fences; there a
 * seq_cst read-modify-write on a private word stands in for it. */
#if defined(WEFT_SANITIZE_THREAD)
extern _Atomic int weft__fence_word;
#define weft__fence() ((void)atomic_fetch_add_explicit(&weft__fence_word, 0, memory_order_seq_cst))
#else
#define weft__fence() atomic_thread_fence(memory_order_seq_cst)
#endif

static inline void weft__cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

/* The private layout `type` behind a caller-owned public object `pub` (fixed
 * storage in weft.h or mltp.h, array `field`): checked at compile time to fit,
 * and reached from a public pointer through the accessor `name`. */
#define WEFT__STORAGE(name, type, pub, field)                                                      \
    static_assert(sizeof(type) <= sizeof(pub), #pub " storage too small");                         \
    static_assert(_Alignof(type) <= _Alignof(pub), #pub " storage misaligned");                    \
    static inline type *name(pub *p)                                                               \
    {                                                                                              \
        return (type *)(void *)p->field;                                                           \
    }

/* The init of an object whose all-zero storage is its initial state (as
 * its static initialiser): EINVAL for NULL, as every weft call. */
static inline int weft__init_zeroed(void *p, size_t size)
{
    if (!p)
        return EINVAL;
    __builtin_memset(p, 0, size);
    return 0;
}

/* A test-and-test-and-set spin lock for short critical sections on slow
 * paths (never held across a switch). Zero = unlocked. */
typedef struct {
    _Atomic uint32_t v;
} weft__lock;

static inline int weft__lock_try(weft__lock *l)
{
    /* acquire: pairs with the release in weft__lock_release. */
    return atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&l->v, 1, memory_order_acquire) == 0;
}

static inline void weft__lock_acquire(weft__lock *l)
{
    while (!weft__lock_try(l))
        weft__cpu_relax();
}

static inline void weft__lock_release(weft__lock *l)
{
    /* release: publishes the critical section; pairs with the acquire above. */
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t weft__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * WEFT_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC at the kernel's last tick (1-4 ms behind, never ahead
 * of weft__now_ns): a quarter of its cost (5 against 22-25 ns on a 2-CPU
 * VM), for stamps that need no more precision than a tick. */
static inline uint64_t weft__now_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * WEFT_NS_PER_S + (uint64_t)ts.tv_nsec;
}

#endif
