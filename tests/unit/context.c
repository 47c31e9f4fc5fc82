/* Tests the context switch on its own: make/switch/jump/spawn (and, in plain
 * builds, the exit and xfer-less switch entries) hand xfer and token values
 * both ways (through weft__ctx_resumed, called only for a non-NULL xfer),
 * callee-saved state survives, and the FP control words
 * (MXCSR rounding, x87 precision) travel with each context. */
#include <fenv.h>
#include <stdint.h>
#include <stdlib.h>

#include "arch/context.h"
#include "check.h"

static void *main_sp, *co_sp, *sp3;
static char stack1[65536] __attribute__((aligned(16)));
static char stack2[65536] __attribute__((aligned(16)));
static int steps;

/* The resumed half: the assembly calls this when a context resumes with a
 * non-NULL xfer (on every resume in sanitizer builds), then returns to the
 * resumed code. Records what it was handed. */
static void *last_token, *last_xfer;
static int nresumed;
void weft__ctx_resumed(void *token, void *xfer)
{
    if (!xfer)
        return; /* sanitizer builds: every resume */
    last_token = token;
    last_xfer = xfer;
    nresumed++;
}

static void co_entry(void *data)
{
    CHECK_EQ((intptr_t)last_xfer, 1); /* served before the entry runs */
    CHECK_EQ((intptr_t)last_token, 11);
    CHECK_EQ((intptr_t)data, 42);
    /* This context rounds toward zero; the main one must not see it. */
    CHECK_EQ(fesetround(FE_TOWARDZERO), 0);
    for (int i = 2; i < 10; i += 2) {
        weft__ctx_switch(&co_sp, main_sp, (void *)(intptr_t)(i + 1000), (void *)(intptr_t)i);
        CHECK_EQ((intptr_t)last_xfer, i + 1);
        CHECK_EQ((intptr_t)last_token, i + 2001);
        CHECK_EQ(fegetround(), FE_TOWARDZERO);
        steps++;
    }
    weft__ctx_jump(main_sp, (void *)(intptr_t)100, (void *)(intptr_t)101);
}

static void spawned(void *arg, void **save_sp)
{
    CHECK_EQ((intptr_t)arg, 7);
    CHECK(save_sp == &sp3);
    steps += 100;
    weft__ctx_jump(sp3, (void *)(intptr_t)77, (void *)(intptr_t)78);
}

/* Plain builds: the exit path (weft__ctx_exit) and the switch without xfer. */
#if !defined(WEFT_SANITIZE_ADDRESS) && !defined(WEFT_SANITIZE_THREAD)
static _Atomic uintptr_t exit_word;
static uint64_t exit_count;
#define EXIT_DONE 3 /* any value: the switch knows no join protocol */
static void exit_entry(void *data)
{
    (void)data;
    weft__ctx_exit(main_sp, (void *)(intptr_t)55, (void *)(intptr_t)56, &exit_word, &exit_count,
                   (void *)(uintptr_t)EXIT_DONE);
}

static void *bare_sp, *bare_co_sp;
static void bare_entry(void *data)
{
    int *n = data;
    CHECK_EQ(fesetround(FE_DOWNWARD), 0);
    for (;;) {
        (*n)++;
        weft__ctx_switch_plain(&bare_co_sp, bare_sp);
        CHECK_EQ(fegetround(), FE_DOWNWARD);
    }
}

static void test_plain_paths(void)
{
    /* exit with the word at 0: CAS to EXIT_DONE, count 1, no resumed half */
    int before = nresumed;
    void *sp = weft__ctx_make(stack2 + sizeof stack2, exit_entry, NULL);
    weft__ctx_switch_plain(&main_sp, sp);
    CHECK_EQ((long)exit_word, EXIT_DONE);
    CHECK_EQ((long)exit_count, 1);
    CHECK_EQ(nresumed, before);
    CHECK_EQ(fegetround(), FE_UPWARD);

    /* the word is taken (a joiner came): nothing changes, the resumed half
     * gets token and xfer */
    exit_word = 5;
    sp = weft__ctx_make(stack2 + sizeof stack2, exit_entry, NULL);
    weft__ctx_switch_plain(&main_sp, sp);
    CHECK_EQ((long)exit_word, 5);
    CHECK_EQ((long)exit_count, 1);
    CHECK_EQ(nresumed, before + 1);
    CHECK_EQ((intptr_t)last_xfer, 55);
    CHECK_EQ((intptr_t)last_token, 56);

    /* the switch without xfer keeps each side's registers and rounding */
    int n = 0;
    volatile long keep = 0x7654321;
    bare_co_sp = weft__ctx_make(stack1 + sizeof stack1, bare_entry, &n);
    for (int i = 0; i < 5; i++) {
        weft__ctx_switch_plain(&bare_sp, bare_co_sp);
        CHECK_EQ(n, i + 1);
        CHECK_EQ(fegetround(), FE_UPWARD);
    }
    CHECK_EQ(keep, 0x7654321);
    CHECK_EQ(nresumed, before + 1);
}
#endif

static void *plain_sp, *plain_co_sp;
static void plain_entry(void *data)
{
    (void)data;
    /* A NULL xfer: no call of the resumed half (plain builds). */
    for (;;)
        weft__ctx_switch(&plain_co_sp, plain_sp, NULL, NULL);
}

int main(void)
{
    CHECK_EQ(fesetround(FE_UPWARD), 0);
    co_sp = weft__ctx_make(stack1 + sizeof stack1, co_entry, (void *)(intptr_t)42);
    volatile long keep = 0x1234567; /* lives across switches */
    weft__ctx_switch(&main_sp, co_sp, (void *)(intptr_t)11, (void *)(intptr_t)1);
    for (int i = 2; i < 10; i += 2) {
        CHECK_EQ((intptr_t)last_xfer, i);
        CHECK_EQ((intptr_t)last_token, i + 1000);
        CHECK_EQ(fegetround(), FE_UPWARD); /* the other context's mode did not leak */
        weft__ctx_switch(&main_sp, co_sp, (void *)(intptr_t)(i + 2001), (void *)(intptr_t)(i + 1));
    }
    CHECK_EQ((intptr_t)last_xfer, 100);
    CHECK_EQ((intptr_t)last_token, 101);
    CHECK_EQ(keep, 0x1234567);
    CHECK_EQ(steps, 4);
    CHECK_EQ(nresumed, 10);

    /* spawn: save here, run on a fresh stack, come back by jump */
    weft__ctx_spawn(&sp3, stack2 + sizeof stack2, spawned, (void *)(intptr_t)7);
    CHECK_EQ((intptr_t)last_xfer, 77);
    CHECK_EQ((intptr_t)last_token, 78);
    CHECK_EQ(steps, 104);
    CHECK_EQ(fegetround(), FE_UPWARD);

    /* NULL xfers both ways: the resumed half is not involved */
    plain_co_sp = weft__ctx_make(stack1 + sizeof stack1, plain_entry, NULL);
    for (int i = 0; i < 3; i++)
        weft__ctx_switch(&plain_sp, plain_co_sp, NULL, NULL);
    CHECK_EQ(nresumed, 11);
    CHECK_EQ(keep, 0x1234567);
#if !defined(WEFT_SANITIZE_ADDRESS) && !defined(WEFT_SANITIZE_THREAD)
    test_plain_paths();
#endif
    fesetround(FE_TONEAREST);
    printf("context: ok\n");
    return 0;
}
