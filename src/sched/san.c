/* san.c: the sanitizer side of a fiber switch (built into every library,
 * active only in sanitizer builds). */
#include "desc/desc.h"
#include "sched/sched.h"

#if defined(WEFT_SANITIZE_ADDRESS) || defined(WEFT_SANITIZE_THREAD)

#if defined(WEFT_SANITIZE_ADDRESS)
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(WEFT_SANITIZE_THREAD)
#include <sanitizer/tsan_interface.h>
#endif

/* The switch helpers run on one fiber and return on another, so TSan must
 * not instrument them: their frames would be pushed on the shadow stack of
 * the fiber being left and popped from that of the fiber resumed. The first
 * resume of a new thread would then pop two frames it never pushed, and
 * its frames (TSan's reports, the words below its shadow stack) would be
 * off by two for good. (The context switch itself is inlined into its
 * caller for the same reason: arch/context.h.) */
#if defined(WEFT_SANITIZE_THREAD)
#define SWITCH_HELPER __attribute__((no_sanitize_thread))
#else
#define SWITCH_HELPER
#endif

/* Every switch: ASan learns the stack about to run (fake_save NULL: the
 * context being left ends and keeps no fake stack), TSan the fiber. */
SWITCH_HELPER static void switch_to(void **fake_save, const void *lo, size_t size, void *fiber)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    __sanitizer_start_switch_fiber(fake_save, lo, size);
#else
    (void)fake_save, (void)lo, (void)size;
#endif
#if defined(WEFT_SANITIZE_THREAD)
    __tsan_switch_to_fiber(fiber, 0);
#else
    (void)fiber;
#endif
}

SWITCH_HELPER void weft__san_switch_to_thread(void **fake_save, struct weft_thread *to)
{
    switch_to(fake_save, to->stack_lo, to->stack_size, to->san_fiber);
}

SWITCH_HELPER void weft__san_switch_to_sched(void **fake_save, struct weft__worker *w)
{
    switch_to(fake_save, w->sched_stack_lo, w->sched_stack_size, w->sched_fiber);
}

SWITCH_HELPER void weft__san_switch_to_home(void **fake_save, struct weft__home *h)
{
    switch_to(fake_save, h->lo, h->size, h->fiber);
}

void weft__san_resumed(void *fake)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    (void)fake;
#endif
}

void weft__san_thread_created(struct weft_thread *t)
{
    /* A fresh context has no fake stack to restore on its first resume
     * (weft__ctx_resumed), whatever the slot's previous thread left here. */
    t->san_fake_stack = NULL;
#if defined(WEFT_SANITIZE_THREAD)
    t->san_fiber = __tsan_create_fiber(0);
#endif
}

void weft__san_thread_destroyed(struct weft_thread *t)
{
#if defined(WEFT_SANITIZE_THREAD)
    if (t->san_fiber)
        __tsan_destroy_fiber(t->san_fiber);
    t->san_fiber = NULL;
#else
    (void)t;
#endif
}

void *weft__san_current_fiber(void)
{
#if defined(WEFT_SANITIZE_THREAD)
    return __tsan_get_current_fiber();
#else
    return NULL;
#endif
}

#endif
