/* san.c: the sanitizer side of a fiber switch (built into every library,
 * active only in sanitizer builds). */
#include "sched/machine.h"
#include "sched/sched.h"

#if defined(WEFT_SANITIZE_ADDRESS) || defined(WEFT_SANITIZE_THREAD)

#if defined(WEFT_SANITIZE_ADDRESS)
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(WEFT_SANITIZE_THREAD)
#include <sanitizer/tsan_interface.h>
#endif

void weft__san_switch_to_thread(void **fake_save, struct weft_thread *to)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    __sanitizer_start_switch_fiber(fake_save, to->stack_lo, to->stack_size);
#else
    (void)fake_save;
#endif
#if defined(WEFT_SANITIZE_THREAD)
    __tsan_switch_to_fiber(to->san_fiber, 0);
#endif
}

void weft__san_switch_to_sched(void **fake_save, struct weft__worker *w)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    __sanitizer_start_switch_fiber(fake_save, w->sched_stack_lo, w->sched_stack_size);
#else
    (void)fake_save;
#endif
#if defined(WEFT_SANITIZE_THREAD)
    __tsan_switch_to_fiber(w->sched_fiber, 0);
#endif
}

void weft__san_resumed(void *fake)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    (void)fake;
#endif
}

void weft__san_exit_to_thread(struct weft_thread *to)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    __sanitizer_start_switch_fiber(NULL, to->stack_lo, to->stack_size);
#endif
#if defined(WEFT_SANITIZE_THREAD)
    __tsan_switch_to_fiber(to->san_fiber, 0);
#endif
}

void weft__san_exit_to_sched(struct weft__worker *w)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    __sanitizer_start_switch_fiber(NULL, w->sched_stack_lo, w->sched_stack_size);
#endif
#if defined(WEFT_SANITIZE_THREAD)
    __tsan_switch_to_fiber(w->sched_fiber, 0);
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

void weft__san_switch_to_home(void **fake_save, struct weft__home *h)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    __sanitizer_start_switch_fiber(fake_save, h->lo, h->size);
#else
    (void)fake_save;
#endif
#if defined(WEFT_SANITIZE_THREAD)
    __tsan_switch_to_fiber(h->fiber, 0);
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
