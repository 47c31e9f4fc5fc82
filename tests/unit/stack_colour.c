/* Tests that stack slots do not all put their descriptor (and so the
 * innermost frames under it) at the same offset in a page (stack/stack.c,
 * colour()): slots are whole pages, and threads a dozen deep whose hot
 * lines share an offset share the few sets of an L1 cache that offset maps
 * to. Each slot still gives its thread at least the stack it asked for,
 * all of it writable, below its descriptor. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "stack/stack.h"
#include "testutil.h"

#define KiB        ((size_t)1 << 10)
#define PAGE_BYTES ((uintptr_t)4096)
/* A tree a dozen deep must find its slots on this many offsets at least. */
#define OFFSETS_MIN 8

static const size_t sizes[] = { 64 * KiB, 16 * KiB, 100000 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void slots_of(size_t size)
{
    enum { N = 32 };
    struct weft__stack_cache c;
    memset(&c, 0, sizeof c);
    struct weft_thread *t[N];
    uintptr_t seen[N];
    int distinct = 0;
    for (int i = 0; i < N; i++) {
        t[i] = weft__stack_alloc(&c, size);
        CHECK(t[i] != NULL);
        CHECK(t[i]->stack_size >= size);
        CHECK_EQ((char *)t[i] - t[i]->stack_lo, (long)t[i]->stack_size);
        memset(t[i]->stack_lo, 0x5a, t[i]->stack_size); /* all of it is ours */
        uintptr_t off = (uintptr_t)t[i] % PAGE_BYTES;
        int j = 0;
        while (j < distinct && seen[j] != off)
            j++;
        if (j == distinct)
            seen[distinct++] = off;
    }
    printf("%zu-byte stacks: descriptors on %d offsets of %d slots\n", size, distinct, N);
    CHECK(distinct >= OFFSETS_MIN);
    for (int i = 0; i < N; i++)
        weft__stack_free(&c, t[i]);
    weft__stack_cache_drain(&c);
}

int main(void)
{
    CHECK_EQ(weft__stack_init(64 * KiB, WEFT__GUARDREQ_AUTO, NULL), 0);
    for (size_t i = 0; i < NSIZES; i++)
        slots_of(sizes[i]);
    weft__stack_shutdown();
    puts("ok");
    return 0;
}
