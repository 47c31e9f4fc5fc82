/* config.c: weft_config_default and the WEFT_* environment variables (docs/env.md).
 *
 * Every WEFT_* variable is parsed here and nowhere else. weft_config_default
 * fills in the library defaults, then overrides each weft_config field whose
 * variable is set and well formed; weft__env_read parses the others, which
 * weft_init hands to the layers they configure (stack guard, wait policy,
 * I/O mode) or keeps (affinity, stats). A malformed value prints one notice
 * naming the variable and the default kept, and never stops the program.
 */
#include "runtime/config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/base.h"
#include "stack/stack.h"

int weft__cpus_in_mask(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Parses a decimal integer with an optional K/M/G suffix (powers of 1024).
 * Returns 0 on success. */
int weft__parse_size(const char *s, size_t *out)
{
    if (!s || !*s)
        return -1;
    size_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return -1;
    while (*p >= '0' && *p <= '9') {
        size_t d = (size_t)(*p - '0');
        if (v > (SIZE_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        p++;
    }
    size_t mul = 1;
    switch (*p) {
    case 'k':
    case 'K':
        mul = (size_t)1 << 10;
        p++;
        break;
    case 'm':
    case 'M':
        mul = (size_t)1 << 20;
        p++;
        break;
    case 'g':
    case 'G':
        mul = (size_t)1 << 30;
        p++;
        break;
    default: break;
    }
    if (*p == 'i' && mul != 1)
        p++; /* accept KiB-style "Ki"/"Mi" */
    if ((*p == 'b' || *p == 'B') && mul != 1)
        p++;
    if (*p)
        return -1;
    if (v > SIZE_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

/* A variable whose value is one of a few words. */
struct env_word {
    const char *word; /* "" only where an empty value means unset */
    int value;
};

#define ENV_WORDS_TEXT 128 /* room for "a, b or c" of any table below */

/* The value of the word that variable `var` holds among `words` (ended by a
 * NULL word); `dflt` when var is unset, and, with a notice naming the
 * words, when it holds none of them. */
static int env_word(const char *var, const struct env_word *words, int dflt)
{
    const char *s = getenv(var);
    if (!s)
        return dflt;
    const char *dflt_word = "";
    char expected[ENV_WORDS_TEXT] = "";
    size_t len = 0;
    for (const struct env_word *w = words; w->word; w++) {
        if (!strcmp(s, w->word))
            return w->value;
        if (!*dflt_word && w->value == dflt)
            dflt_word = w->word;
        if (!*w->word || len >= sizeof expected)
            continue;
        const char *sep = len == 0 ? "" : w[1].word && *w[1].word ? ", " : " or ";
        len += (size_t)snprintf(expected + len, sizeof expected - len, "%s%s", sep, w->word);
    }
    weft__notice("ignoring %s=\"%s\": expected %s; using the default (%s)", var, s, expected,
                 dflt_word);
    return dflt;
}

static void env_workers(weft_config *cfg)
{
    const char *s = getenv("WEFT_WORKERS");
    if (!s)
        return;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > WEFT__MAX_WORKERS) {
        weft__notice("ignoring WEFT_WORKERS=\"%s\": expected an integer 0..%d; using the default "
                     "(%d)",
                     s, WEFT__MAX_WORKERS, cfg->workers);
        return;
    }
    cfg->workers = (int)v;
}

static void env_stack(weft_config *cfg)
{
    const char *s = getenv("WEFT_STACK_SIZE");
    if (!s)
        return;
    size_t v;
    /* 0 means the library default, as in weft_config (and as WEFT_WORKERS=0
     * means every CPU). */
    if (weft__parse_size(s, &v) != 0 || (v != 0 && (v < WEFT__STACK_MIN || v > WEFT__STACK_MAX))) {
        weft__notice("ignoring WEFT_STACK_SIZE=\"%s\": expected bytes with optional K/M/G suffix, "
                     "16K..1G, or 0 for the default; using the default (%zu)",
                     s, cfg->stack_size);
        return;
    }
    cfg->stack_size = v ? v : WEFT__STACK_DEFAULT;
}

static void env_policy(weft_config *cfg)
{
    static const struct env_word words[] = { { "work-first", WEFT_WORK_FIRST },
                                             { "help-first", WEFT_HELP_FIRST },
                                             { NULL, 0 } };
    cfg->spawn_policy = env_word("WEFT_SPAWN_POLICY", words, cfg->spawn_policy);
}

/* WEFT_QUANTUM: "10ms", "500us", "2000" (microseconds) or "off" (< 0). */
static void env_quantum(weft_config *cfg)
{
    const char *s = getenv("WEFT_QUANTUM");
    if (!s)
        return;
    if (!strcmp(s, "off")) {
        cfg->quantum_us = -1;
        return;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    long long mul = 1;
    if (!strcmp(end, "ms"))
        mul = 1000;
    else if (!strcmp(end, "us") || !*end)
        mul = 1;
    else
        v = -1;
    if (errno || end == s || v <= 0 || v > LONG_MAX / 1000) {
        weft__notice("ignoring WEFT_QUANTUM=\"%s\": expected a duration such as 10ms, 500us, "
                     "2000 (microseconds) or off; using the default (%ld us)",
                     s, cfg->quantum_us);
        return;
    }
    cfg->quantum_us = (long)(v * mul);
}

void weft_config_default(weft_config *cfg)
{
    if (!cfg)
        return;
    cfg->workers = weft__cpus_in_mask();
    cfg->stack_size = WEFT__STACK_DEFAULT;
    cfg->spawn_policy = WEFT_WORK_FIRST;
    cfg->quantum_us = WEFT__QUANTUM_DEFAULT_US;
    env_workers(cfg);
    if (cfg->workers == 0)
        cfg->workers = weft__cpus_in_mask();
    env_stack(cfg);
    env_policy(cfg);
    env_quantum(cfg);
}

/* ---- the variables that are not weft_config fields ------------------------- */

static void env_guard(struct weft__env *env)
{
    static const struct env_word words[] = { { "auto", WEFT__GUARDREQ_AUTO },
                                             { "mprotect", WEFT__GUARDREQ_MPROTECT },
                                             { "canary", WEFT__GUARDREQ_CANARY },
                                             { NULL, 0 } };
    env->stack_guard = env_word("WEFT_STACK_GUARD", words, WEFT__GUARDREQ_AUTO);
}

/* WEFT_AFFINITY=0 turns pinning off; any other value, or none, leaves it on. */
static void env_affinity(struct weft__env *env)
{
    const char *s = getenv("WEFT_AFFINITY");
    env->affinity = !(s && !strcmp(s, "0"));
}

/* WEFT_STATS: on for any value but empty and "0". */
static void env_stats(struct weft__env *env)
{
    const char *s = getenv("WEFT_STATS");
    env->stats = s && *s && strcmp(s, "0") != 0;
}

/* WEFT_DUMP_SIGNAL: QUIT, USR1, USR2 (SIG prefix allowed) or a number. */
static void env_dump_signal(struct weft__env *env)
{
    const char *s = getenv("WEFT_DUMP_SIGNAL");
    env->dump_signal = 0;
    if (!s || !*s)
        return;
    const char *name = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
    char *end;
    long n = strtol(s, &end, 10);
    if (!strcasecmp(name, "QUIT"))
        env->dump_signal = SIGQUIT;
    else if (!strcasecmp(name, "USR1"))
        env->dump_signal = SIGUSR1;
    else if (!strcasecmp(name, "USR2"))
        env->dump_signal = SIGUSR2;
    else if (*end == '\0' && n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP)
        env->dump_signal = (int)n;
    else
        weft__notice("ignoring WEFT_DUMP_SIGNAL=\"%s\": expected QUIT, USR1, USR2 or a signal "
                     "number; no dump signal",
                     s);
}

/* WEFT_TRACE: a path; empty means unset. */
static void env_trace(struct weft__env *env)
{
    const char *s = getenv("WEFT_TRACE");
    env->trace = s && *s ? s : NULL;
}

/* WEFT_WAIT: spin | futex | auto; empty means unset. */
static void env_wait(struct weft__env *env)
{
    static const struct env_word words[] = { { "spin", WEFT__WAIT_SPIN },
                                             { "futex", WEFT__WAIT_FUTEX },
                                             { "auto", WEFT__WAIT_AUTO },
                                             { "", WEFT__WAIT_AUTO },
                                             { NULL, 0 } };
    env->wait = (enum weft__wait_policy)env_word("WEFT_WAIT", words, WEFT__WAIT_AUTO);
}

/* WEFT_IO: auto | uring | blocking. */
static void env_io(struct weft__env *env)
{
    static const struct env_word words[] = { { "auto", WEFT__IO_AUTO },
                                             { "uring", WEFT__IO_URING },
                                             { "blocking", WEFT__IO_BLOCKING },
                                             { NULL, 0 } };
    env->io = (enum weft__io_mode)env_word("WEFT_IO", words, WEFT__IO_AUTO);
}

/* WEFT_WAIT and WEFT_IO configure decisions their layers make once per
 * process (sync/wait.c, io/uring.c), so they are parsed once, at the first
 * weft_init, and a malformed one prints its notice once; the others are
 * parsed at every weft_init. */
static struct weft__env process_env; /* written once under process_once */
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

static void process_env_read(void)
{
    env_wait(&process_env);
    env_io(&process_env);
}

void weft__env_read(struct weft__env *env)
{
    env_guard(env);
    env_affinity(env);
    env_stats(env);
    env_dump_signal(env);
    env_trace(env);
    pthread_once(&process_once, process_env_read);
    env->wait = process_env.wait;
    env->io = process_env.io;
}
