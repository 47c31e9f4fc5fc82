/* inject.h: failure injection into the library's calls to the allocator,
 * mmap, mprotect, pthread_create and io_uring set-up, and a count of what
 * those calls left outstanding.
 *
 * The test program is linked with -Wl,--wrap=<fn> for each of them (see
 * tests/CMakeLists.txt), so every call the library's objects make goes
 * through a __wrap_<fn> here; the C library's own internal calls do not.
 * That is what the library's error paths must handle, it works the same in
 * plain and sanitizer builds (no LD_PRELOAD ordering against libasan), and
 * it makes the outstanding counts exact: a block still allocated, a mapping
 * still mapped or a ring still set up after weft_finalize is a leak.
 *
 * FAULT_INJECT="kind:N" fails only the Nth call of that kind (counted from
 * 1, from the moment fault_arm_env() runs); "kind:N+" fails the Nth and
 * every later one. Kinds: malloc, calloc, realloc, aligned (aligned_alloc,
 * posix_memalign), heap (any of the four, counted together), mmap,
 * mprotect, pthread_create, uring (io_uring_queue_init*, eventfd). FAULT_TRACE=1
 * prints the caller of every failed call (resolve with addr2line -e). */
#ifndef WEFT_TEST_FAULT_INJECT_H
#define WEFT_TEST_FAULT_INJECT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum fault_kind {
    FK_MALLOC,
    FK_CALLOC,
    FK_REALLOC,
    FK_ALIGNED,
    FK_HEAP, /* the four above, one sequence */
    FK_MMAP,
    FK_MPROTECT,
    FK_PTHREAD,
    FK_URING,
    FK_COUNT
};

extern const char *const fault_kind_name[FK_COUNT];

/* What the injector counted, in memory the driver shares with its child
 * runs (fault_share), so that it can be read after a child hung or died.
 * Sequentially consistent atomics: the child's threads write them; the
 * driver reads them once waitpid has reported the child's end. */
struct fault_state {
    _Atomic uint64_t calls[FK_COUNT]; /* calls seen since the last arm */
    _Atomic uint64_t failed;          /* calls made to fail */
    _Atomic int armed_kind;           /* -1: none */
    _Atomic uint64_t armed_n;         /* 0: none */
    _Atomic int armed_from;           /* 1: the Nth and every later call */
    _Atomic int phase;                /* the driver's: where the program is */
    _Atomic int first_phase;          /* phase at the first failed call; -1: none yet */
    _Atomic uintptr_t first_caller;   /* its return address, less the executable's base */
};

/* Shared anonymous memory for the driver and its children, not counted as
 * the library's; NULL on failure. */
void *fault_shared_alloc(size_t size);

/* Places the state in st (in memory from fault_shared_alloc) and forgets
 * what was outstanding (a child of the driver calls it first). */
void fault_share(struct fault_state *st);

/* Resets the counts and arms FAULT_INJECT; returns -1 if it is malformed,
 * 0 otherwise (unset: count only). */
int fault_arm_env(void);

/* Stops failing calls (counting goes on). */
void fault_disarm(void);

/* What the library's wrapped calls left outstanding. */
size_t fault_live_blocks(void);
size_t fault_live_map_bytes(void);
long fault_live_rings(void);

/* Prints every outstanding block and mapping (size and caller) to stderr. */
void fault_report_live(void);

#endif
