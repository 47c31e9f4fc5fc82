/* Tests environment rules of the SPEC not covered by env_config.c: several
 * malformed variables at once (one line each, every field at its default),
 * WEFT_STACK_SIZE values that overflow or are not decimal, and the library
 * default stack (WEFT_STACK_SIZE unset, stack_size 0) really holding close
 * to 64 KiB of frames. Each case runs this binary again in a child. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "env_test.h"
#include "testutil.h"

/* ---- child side -------------------------------------------------------- */

/* weft_init(NULL), then a thread with default attributes using `kib` KiB of
 * stack; prints "ok" if it came back. */
static int child_deep(const char *kib)
{
    CHECK_EQ(weft_init(NULL), 0);
    weft_thread *t;
    size_t bytes = (size_t)strtoul(kib, NULL, 10) << 10;
    CHECK_EQ(weft_spawn(&t, test_deep, (void *)(uintptr_t)bytes, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    puts("ok");
    return 0;
}

/* ---- parent side ------------------------------------------------------- */

/* Number of stderr lines that name var. */
static int lines_naming(const char *err, const char *var)
{
    int n = 0;
    for (const char *line = err; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[1024];
        size_t k = len < sizeof buf - 1 ? len : sizeof buf - 1;
        memcpy(buf, line, k);
        buf[k] = '\0';
        if (strstr(buf, var))
            n++;
        line += len + (nl ? 1 : 0);
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "config") == 0)
        return env_test_child_config();
    if (argc >= 3 && strcmp(argv[1], "deep") == 0)
        return child_deep(argv[2]);

    test_clear_env();
    test_child *r = malloc(sizeof *r);
    CHECK(r != NULL);
    const char *const none[] = { NULL };
    cfg_out def = run_config(none, r);
    CHECK_EQ(r->err_len, 0);

    /* All three malformed: three lines, one per variable, all defaults. */
    {
        const char *const e[] = { "WEFT_WORKERS=many", "WEFT_STACK_SIZE=big",
                                  "WEFT_SPAWN_POLICY=sideways", NULL };
        cfg_out c = run_config(e, r);
        if (test_count_lines(r->err) != 3 || lines_naming(r->err, "WEFT_WORKERS") != 1 ||
            lines_naming(r->err, "WEFT_STACK_SIZE") != 1 ||
            lines_naming(r->err, "WEFT_SPAWN_POLICY") != 1) {
            test_child_dump("three malformed", r);
            CHECK(!"expected one line per malformed variable");
        }
        CHECK_EQ(c.workers, def.workers);
        CHECK_EQ(c.stack, def.stack);
        CHECK_EQ(c.policy, def.policy);
    }

    /* Sizes that overflow size_t (with or without a suffix) or are not
     * decimal bytes: malformed, never wrapped to a small value. */
    static const char *const bad_stack[] = {
        "18446744073709551616", /* 2^64 */
        "99999999999999999999999",
        "17179869184G",       /* 2^34 GiB = 2^64 bytes */
        "18014398509481984K", /* 2^54 KiB = 2^64 bytes */
        "17592186044416M",    /* 2^44 MiB = 2^64 bytes */
        "0x10000",
        "64KK",
        "M",
    };
    for (size_t i = 0; i < sizeof bad_stack / sizeof *bad_stack; i++) {
        cfg_out c = run_config_var("WEFT_STACK_SIZE", bad_stack[i], "WEFT_WORKERS=2", r);
        expect_one_line(r, "WEFT_STACK_SIZE");
        CHECK_EQ(c.stack, def.stack);
        CHECK_EQ(c.workers, 2);
    }
    static const char *const bad_workers[] = { "0x2", "2.0", "1e3" };
    for (size_t i = 0; i < sizeof bad_workers / sizeof *bad_workers; i++) {
        cfg_out c = run_config_var("WEFT_WORKERS", bad_workers[i], NULL, r);
        expect_one_line(r, "WEFT_WORKERS");
        CHECK_EQ(c.workers, def.workers);
    }

    /* WEFT_QUANTUM: the default is 10 ms; ms, us and bare microseconds;
     * "off" is negative; anything else one line naming it and the default. */
    CHECK_EQ(def.quantum, 10000);
    {
        static const struct {
            const char *v;
            long us;
        } good[] = {
            { "10ms", 10000 },
            { "500us", 500 },
            { "2000", 2000 },
            { "1ms", 1000 },
        };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
            cfg_out c = run_config_var("WEFT_QUANTUM", good[i].v, NULL, r);
            CHECK_EQ(r->err_len, 0);
            CHECK_EQ(c.quantum, good[i].us);
        }
        const char *const off[] = { "WEFT_QUANTUM=off", NULL };
        cfg_out c = run_config(off, r);
        CHECK_EQ(r->err_len, 0);
        CHECK(c.quantum < 0);
        static const char *const bad[] = { "fast", "10s", "-5", "0", "ms", "10 ms" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            c = run_config_var("WEFT_QUANTUM", bad[i], NULL, r);
            expect_one_line(r, "WEFT_QUANTUM");
            CHECK_EQ(c.quantum, def.quantum);
        }
    }

    /* K and M are powers of 1024 ("bytes, K/M suffixes"). */
    {
        const char *const e[] = { "WEFT_STACK_SIZE=96K", NULL };
        cfg_out c = run_config(e, r);
        CHECK_EQ(r->err_len, 0);
        CHECK_EQ(c.stack, 96 * 1024);
    }

    /* The library default is at least 64 KiB: a default thread holds 52 KiB
     * of frames (the margin covers the thread's entry frames). Not under
     * ASan, whose redzones make frames larger than they look. */
    if (!TEST_SANITIZED) {
        test_run_self(r, "deep", "52", none, NULL);
        if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0 || strcmp(r->out, "ok\n") != 0) {
            test_child_dump("default stack holds 52 KiB", r);
            CHECK(!"the default stack is smaller than 64 KiB");
        }
    }
    free(r);
    return 0;
}
