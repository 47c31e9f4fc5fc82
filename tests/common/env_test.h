/* env_test.h: the configuration a child process reads from its environment
 * (weft_config_default), and what the parent expects on its stderr. Tests
 * that use it run this binary again with "config" as argv[1]
 * (env_test_child_config is then the child's whole work). */
#ifndef WEFT_TEST_ENV_H
#define WEFT_TEST_ENV_H

#include <stdio.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

/* Child: prints weft_config_default's fields on one line. */
static inline int env_test_child_config(void)
{
    weft_config cfg;
    memset(&cfg, 0x5a, sizeof cfg);
    weft_config_default(&cfg);
    printf("workers=%d stack=%zu policy=%d quantum=%ld\n", cfg.workers, cfg.stack_size,
           cfg.spawn_policy, cfg.quantum_us);
    return 0;
}

typedef struct cfg_out {
    int workers;
    size_t stack;
    int policy;
    long quantum;
} cfg_out;

/* Parent: runs the "config" child with env and returns what it printed. */
static inline cfg_out run_config(const char *const *env, test_child *r)
{
    cfg_out c;
    test_run_self(r, "config", NULL, env, NULL);
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0 ||
        sscanf(r->out, "workers=%d stack=%zu policy=%d quantum=%ld", &c.workers, &c.stack,
               &c.policy, &c.quantum) != 4) {
        test_child_dump("config", r);
        CHECK(!"child failed");
    }
    return c;
}

/* Parent: run_config with name=value and, unless NULL, one other
 * "NAME=VALUE" setting. */
static inline cfg_out run_config_var(const char *name, const char *value, const char *other,
                                     test_child *r)
{
    char var[128];
    snprintf(var, sizeof var, "%s=%s", name, value);
    const char *const e[] = { var, other, NULL };
    return run_config(e, r);
}

/* Exactly one line on stderr, naming var. */
static inline void expect_one_line(const test_child *r, const char *var)
{
    if (test_count_lines(r->err) != 1 || strstr(r->err, var) == NULL ||
        r->err[r->err_len - 1] != '\n') {
        test_child_dump(var, r);
        CHECK(!"expected one line on stderr naming the variable");
    }
}

#endif
