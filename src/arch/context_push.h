/* context_push.h: what weft__ctx_exit_push (arch/context.h) assumes of the
 * words it updates, as offsets that the assembly and the C share; the C
 * that lays those words out checks them (static asserts in
 * sched/switch.h). Constants only, so that the assembly can include it.
 */
#ifndef WEFT_ARCH_CONTEXT_PUSH_H
#define WEFT_ARCH_CONTEXT_PUSH_H

/* The node's link word, from the node. */
#define WEFT__PUSH_LINK 16
/* The list's 32-bit count, from its head word (the list's first word). */
#define WEFT__PUSH_N 8
/* The 64-bit count, from the list's head word. */
#define WEFT__PUSH_COUNT 64

#endif
