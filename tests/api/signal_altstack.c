/* Tests that weft_finalize leaves the signal set-up as the program made it:
 * an alternate signal stack or a SIGSEGV handler the program installed
 * after weft_init survives finalize, and what was there before weft_init
 * comes back when weft's own is still the one installed. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static char before_stack[65536], after_stack[65536];

static void program_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
}

typedef void (*handler_fn)(int, siginfo_t *, void *);

static handler_fn current_handler(void)
{
    struct sigaction sa;
    CHECK_EQ(sigaction(SIGSEGV, NULL, &sa), 0);
    return sa.sa_sigaction;
}

static void install_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = program_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
}

static void set_altstack(char *mem, size_t len)
{
    stack_t ss = { .ss_sp = mem, .ss_size = len, .ss_flags = 0 };
    CHECK_EQ(sigaltstack(&ss, NULL), 0);
}

static void *altstack_now(void)
{
    stack_t ss;
    CHECK_EQ(sigaltstack(NULL, &ss), 0);
    return (ss.ss_flags & SS_DISABLE) ? NULL : ss.ss_sp;
}

static void *nop(void *arg)
{
    return arg;
}

static void run_some(void)
{
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, nop, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
}

int main(void)
{
    test_clear_env();

    /* Nothing before init (a sanitizer's runtime may have installed one:
     * remove it), the program's own installed after it: both stay. */
    stack_t off = { .ss_flags = SS_DISABLE };
    CHECK_EQ(sigaltstack(&off, NULL), 0);
    test_init(2, WEFT_WORK_FIRST);
    CHECK(altstack_now() != NULL); /* weft's, for its overflow report */
    set_altstack(after_stack, sizeof after_stack);
    install_handler();
    run_some();
    CHECK_EQ(weft_finalize(), 0);
    CHECK(altstack_now() == after_stack);
    CHECK(current_handler() == program_handler);

    /* The program's own before init: back after finalize, weft's gone. */
    set_altstack(before_stack, sizeof before_stack);
    struct sigaction dfl_sa;
    memset(&dfl_sa, 0, sizeof dfl_sa);
    dfl_sa.sa_handler = SIG_DFL;
    CHECK_EQ(sigaction(SIGSEGV, &dfl_sa, NULL), 0);
    handler_fn before = current_handler(); /* a sanitizer may keep its own */
    test_init(1, WEFT_WORK_FIRST);
    CHECK(altstack_now() != before_stack);
    run_some();
    CHECK_EQ(weft_finalize(), 0);
    CHECK(altstack_now() == before_stack);
    CHECK(current_handler() == before);

    /* Disabled before init: disabled again after. */
    CHECK_EQ(sigaltstack(&off, NULL), 0);
    test_init(1, WEFT_WORK_FIRST);
    CHECK_EQ(weft_finalize(), 0);
    CHECK(altstack_now() == NULL);
    printf("signal_altstack: ok\n");
    return 0;
}
