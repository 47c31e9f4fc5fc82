/* Tests that a stack overflow on a kernel thread's own stack, in a bound
 * thread or in the initial thread, ends the process (in a child process)
 * with the same one line as on a user thread's stack: "overflow", the
 * thread's id and name and its stack size, then SIGABRT, not a bare
 * SIGSEGV. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { BOUND_STACK = 65536, BOUND_S = 30 };

static void say_who(size_t size)
{
    printf("id=%llu size=%zu\n", (unsigned long long)weft_thread_id(weft_self()), size);
    fflush(stdout);
}

static void *bound_overflow(void *arg)
{
    say_who(BOUND_STACK);
    return (void *)test_runaway(0);
}

static int child(const char *mode)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    test_init(2, WEFT_WORK_FIRST);
    if (strcmp(mode, "bound") == 0) {
        weft_attr a = WEFT_ATTR_INIT;
        a.bound = 1;
        a.stack_size = BOUND_STACK;
        a.name = "bound-diver";
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, bound_overflow, NULL, &a), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
    } else if (strcmp(mode, "initial") == 0) {
        pthread_attr_t pa;
        void *lo;
        size_t size;
        CHECK_EQ(pthread_getattr_np(pthread_self(), &pa), 0);
        CHECK_EQ(pthread_attr_getstack(&pa, &lo, &size), 0);
        pthread_attr_destroy(&pa);
        say_who(size);
        printf("%ld\n", test_runaway(0));
    } else {
        return 2;
    }
    weft_finalize();
    return 0; /* not reached: the overflow ends the process */
}

static void check_overflow(const char *mode, const char *name)
{
    test_child *r = malloc(sizeof *r);
    CHECK(r != NULL);
    test_run_self(r, mode, NULL, NULL, NULL);
    unsigned long long id = 0;
    size_t size = 0;
    char want_id[32], want_size[48];
    int got = sscanf(r->out, "id=%llu size=%zu", &id, &size) == 2;
    int ok = got && WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGABRT;
    snprintf(want_id, sizeof want_id, "thread %llu ", id);
    snprintf(want_size, sizeof want_size, "stack size %zu bytes", size);
    ok = ok && test_count_lines(r->err) == 1 && strstr(r->err, "overflow") &&
         strstr(r->err, name) && strstr(r->err, want_id) && strstr(r->err, want_size);
    if (!ok) {
        test_child_dump(mode, r);
        fprintf(stderr, "expected SIGABRT and one line with \"overflow\", \"%s\", \"%s\", \"%s\"\n",
                name, want_id, want_size);
        CHECK(!"bad stack overflow report");
    }
    printf("%s: %s", mode, r->err);
    free(r);
}

int main(int argc, char **argv)
{
    if (argc >= 2)
        return child(argv[1]);
    if (TEST_SANITIZED)
        SKIP("sanitizers take SIGSEGV on a kernel thread's stack for their own report");
    test_clear_env();
    alarm(BOUND_S);
    check_overflow("bound", "\"bound-diver\"");
    check_overflow("initial", "\"main\"");
    printf("threads_overflow_kernel: ok\n");
    return 0;
}
