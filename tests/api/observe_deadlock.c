/* Tests weft_dump's deadlock report (SPEC "Observability"): a thread parked
 * on a weft_mutex names its holder ("owner N"), one parked in weft_join the
 * thread it joins ("joins N"), and each cycle of those edges ends the dump
 * as "deadlock: A -> B -> A" (ids in wait-for order). Cases: two threads
 * over two mutexes (with a third waiter outside the cycle), three threads,
 * two threads joining each other, mutex and join edges mixed (two cycles in
 * one dump), chains that end at a running thread (no deadlock line), and
 * the first case again with the dump made on WEFT_DUMP_SIGNAL.
 *
 * How it ends: a deadlocked thread can never be released (no call takes a
 * mutex from its holder or ends a join), so each case runs in a child
 * process forked before weft_init; once its checks pass the child shows
 * the program goes on (a spawn and a join after the dump) and leaves with
 * _exit(0), skipping weft_finalize, which would wait for the stuck threads
 * for ever. The no-cycle case releases its threads and finalizes. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "dump_test.h"
#include "testutil.h"

#define CASE_ALARM_S 60
#define WAIT_NS      (10 * 1000000000ull) /* for the threads to reach their waits */
#define MAX_CYCLE    8

static weft_mutex m1 = WEFT_MUTEX_INIT, m2 = WEFT_MUTEX_INIT, m3 = WEFT_MUTEX_INIT;
static weft_mutex m4 = WEFT_MUTEX_INIT;
static weft_barrier bar;
static weft_sem go, held;
static weft_thread *ta, *tb, *tc, *td, *te;
static atomic_int release;
/* the waits of the cases: m1 then m2, m2 then m1, ...; join a, join b */
static dump_locks l12 = { &m1, &m2, &bar }, l21 = { &m2, &m1, &bar };
static dump_locks l23 = { &m2, &m3, &bar }, l31 = { &m3, &m1, &bar };
static dump_join j_a = { &go, &ta }, j_b = { &go, &tb };

/* ---- reading the dump ---------------------------------------------------- */

/* The first line of thread t in dump d, into line. */
static void thread_line(const char *d, weft_thread *t, char *line, size_t n)
{
    const char *p = dump_thread(d, weft_thread_id(t));
    if (!p)
        fprintf(stderr, "no line for thread %llu in:\n%s", (unsigned long long)weft_thread_id(t),
                d);
    CHECK(p != NULL);
    CHECK(strcspn(p, "\n") < n);
    dump_copy_line(p, line, n);
}

/* Thread t's line ends with ", <what> <id of u>". */
/* 1 when thread t's line in d ends with ", what <u's id>" (it waits for
 * u); else 0, with the line and the tail in line and tail. */
static int has_edge(const char *d, weft_thread *t, const char *what, weft_thread *u, char *line,
                    size_t cap, char *tail, size_t tcap)
{
    thread_line(d, t, line, cap);
    snprintf(tail, tcap, ", %s %llu", what, (unsigned long long)weft_thread_id(u));
    size_t ll = strlen(line), tl = strlen(tail);
    return ll >= tl && strcmp(line + ll - tl, tail) == 0;
}

static void expect_edge(const char *d, weft_thread *t, const char *what, weft_thread *u)
{
    char line[1024], tail[64];
    if (!has_edge(d, t, what, u, line, sizeof line, tail, sizeof tail)) {
        fprintf(stderr, "line \"%s\" does not end with \"%s\"\n", line, tail);
        CHECK(0);
    }
}

/* 1 when d shows td waiting for ta (mutex2's third thread, which reaches
 * its lock after the barrier, possibly after the cycle formed). */
static int td_waits(const char *d);

/* Thread t's line names no thread it waits for. */
static void expect_no_edge(const char *d, weft_thread *t)
{
    char line[1024];
    thread_line(d, t, line, sizeof line);
    CHECK(strstr(line, ", owner ") == NULL);
    CHECK(strstr(line, ", joins ") == NULL);
}

struct cycle {
    int len; /* ids, the first repeated at the end */
    uint64_t ids[MAX_CYCLE + 1];
};

/* Parses every "deadlock: a -> b -> a" line of d into c (at most max);
 * returns how many. Checks the lines come after the threads. */
static int parse_cycles(const char *d, struct cycle *c, int max)
{
    int n = 0;
    const char *last_thread = NULL;
    for (const char *p = d; (p = strstr(p, "\nthread ")) != NULL; p++)
        last_thread = p;
    for (const char *p = d; (p = strstr(p, "deadlock:")) != NULL; p++) {
        CHECK(p > d && p[-1] == '\n'); /* a line of its own */
        CHECK(last_thread && p > last_thread);
        CHECK(n < max);
        const char *q = p + strlen("deadlock:");
        c[n].len = 0;
        for (;;) {
            char *end;
            CHECK(*q == ' ');
            unsigned long long id = strtoull(q + 1, &end, 10);
            CHECK(end > q + 1);
            CHECK(c[n].len <= MAX_CYCLE);
            c[n].ids[c[n].len++] = id;
            q = end;
            if (*q == '\n')
                break;
            CHECK(strncmp(q, " ->", 3) == 0);
            q += 3;
        }
        CHECK(c[n].len >= 2);
        CHECK_EQ(c[n].ids[0], c[n].ids[c[n].len - 1]);
        n++;
    }
    return n;
}

/* c is the cycle ts[0] -> ts[1] -> ... -> ts[0], from any of its threads. */
static int same_cycle(const struct cycle *c, weft_thread *const *ts, int k)
{
    if (c->len != k + 1)
        return 0;
    for (int r = 0; r < k; r++) { /* rotation r */
        int ok = 1;
        for (int i = 0; i < k && ok; i++)
            ok = c->ids[i] == weft_thread_id(ts[(r + i) % k]);
        if (ok)
            return 1;
    }
    return 0;
}

/* Dumps until the dump shows want cycles (the threads are on their way to
 * their waits), at most WAIT_NS; returns the last dump. */
static char *dump_when(int want, struct cycle *c, int *n)
{
    uint64_t t0 = check_now_ns();
    for (;;) {
        char *d = dump_text();
        *n = parse_cycles(d, c, MAX_CYCLE);
        if (*n >= want || check_now_ns() - t0 > WAIT_NS)
            return d;
        free(d);
        weft_sleep_ns(1000000);
    }
}

/* The dump d shows one cycle (c[0] of n parsed), cyc[0] -> ... -> cyc[k-1]
 * -> cyc[0]. */
static void expect_one_cycle(const char *d, const struct cycle *c, int n, weft_thread *const *cyc,
                             int k)
{
    if (n != 1)
        fprintf(stderr, "want one deadlock line:\n%s", d);
    CHECK_EQ(n, 1);
    CHECK(same_cycle(&c[0], cyc, k));
}

/* Dumps until the dump shows a cycle; checks it is the one of cyc (as
 * expect_one_cycle); returns the dump. */
static char *dump_one_cycle(weft_thread *const *cyc, int k)
{
    struct cycle c[MAX_CYCLE];
    int n;
    char *d = dump_when(1, c, &n);
    expect_one_cycle(d, c, n, cyc, k);
    return d;
}

/* The program goes on after the dump: a spawn and a join still work. */
static void *noop(void *a)
{
    return a;
}

static int goes_on_and_exits(char *d)
{
    free(d);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, noop, &release, NULL), 0);
    void *r = NULL;
    CHECK_EQ(weft_join(t, &r), 0);
    CHECK(r == &release);
    fflush(NULL);
    _exit(0); /* the deadlocked threads stay stuck: no weft_finalize */
}

static void spawn(weft_thread **t, weft_fn fn, void *arg)
{
    weft_attr at = WEFT_ATTR_INIT;
    at.name = t == &ta ? "a" : t == &tb ? "b" : t == &tc ? "c" : t == &td ? "d" : "e";
    CHECK_EQ(weft_spawn(t, fn, arg, &at), 0);
    weft_thread_id(*t); /* the ids the dump prints */
}

/* ---- two threads, two mutexes; a third waiter outside the cycle --------- */

static void *d_m1(void *a)
{
    weft_barrier_wait(&bar);
    CHECK_EQ(weft_mutex_lock(&m1), 0);
    return a;
}

/* a holds m1 and waits for m2, b the other way round; d waits for m1. */
static void start_mutex2(void)
{
    CHECK_EQ(weft_barrier_init(&bar, 3), 0);
    spawn(&ta, dump_lock_meet_lock, &l12);
    spawn(&tb, dump_lock_meet_lock, &l21);
    spawn(&td, d_m1, NULL);
}

static int td_waits(const char *d)
{
    char line[1024], tail[64];
    return has_edge(d, td, "owner", ta, line, sizeof line, tail, sizeof tail);
}

static int case_mutex2(void)
{
    start_mutex2();
    weft_thread *cyc[] = { ta, tb };
    char *d = dump_one_cycle(cyc, 2);
    for (uint64_t t0 = check_now_ns(); !td_waits(d) && check_now_ns() - t0 < WAIT_NS;) {
        free(d); /* the cycle formed before d reached its lock */
        weft_sleep_ns(1000000);
        d = dump_one_cycle(cyc, 2);
    }
    expect_edge(d, ta, "owner", tb);
    expect_edge(d, tb, "owner", ta);
    /* d waits for a but is on no cycle; it is named, not reported */
    expect_edge(d, td, "owner", ta);
    return goes_on_and_exits(d);
}

/* ---- the same, dumped by WEFT_DUMP_SIGNAL (a library thread, on a signal)
 * into stderr, which is a memory file here. */

static int case_signal(void)
{
    start_mutex2();
    int fd = memfd_create("stderr", 0);
    CHECK(fd >= 0);
    int saved = dup(2);
    CHECK(saved >= 0);
    CHECK_EQ(dup2(fd, 2), 2);
    struct cycle c[MAX_CYCLE];
    int n = 0;
    char *d = NULL;
    uint64_t t0 = check_now_ns();
    while ((n == 0 || !td_waits(d)) && check_now_ns() - t0 < WAIT_NS) {
        CHECK_EQ(ftruncate(fd, 0), 0);
        CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        for (;;) { /* until the dump's end line */
            free(d);
            d = dump_read(fd);
            if (strstr(d, "weft dump end\n") || check_now_ns() - t0 > WAIT_NS)
                break;
            weft_sleep_ns(1000000);
        }
        n = parse_cycles(d, c, MAX_CYCLE);
    }
    CHECK_EQ(dup2(saved, 2), 2);
    weft_thread *cyc[] = { ta, tb };
    expect_one_cycle(d, c, n, cyc, 2);
    expect_edge(d, td, "owner", ta);
    return goes_on_and_exits(d);
}

/* ---- three threads, three mutexes --------------------------------------- */

static int case_mutex3(void)
{
    CHECK_EQ(weft_barrier_init(&bar, 3), 0);
    spawn(&ta, dump_lock_meet_lock, &l12);
    spawn(&tb, dump_lock_meet_lock, &l23);
    spawn(&tc, dump_lock_meet_lock, &l31);
    weft_thread *cyc[] = { ta, tb, tc };
    char *d = dump_one_cycle(cyc, 3);
    expect_edge(d, ta, "owner", tb);
    expect_edge(d, tb, "owner", tc);
    expect_edge(d, tc, "owner", ta);
    return goes_on_and_exits(d);
}

/* ---- two threads joining each other -------------------------------------- */

static int case_join2(void)
{
    CHECK_EQ(weft_sem_init(&go, 0), 0);
    spawn(&ta, dump_wait_join, &j_b);
    spawn(&tb, dump_wait_join, &j_a);
    CHECK_EQ(weft_sem_post(&go), 0); /* both handles are set */
    CHECK_EQ(weft_sem_post(&go), 0);
    weft_thread *cyc[] = { ta, tb };
    char *d = dump_one_cycle(cyc, 2);
    expect_edge(d, ta, "joins", tb);
    expect_edge(d, tb, "joins", ta);
    return goes_on_and_exits(d);
}

/* ---- mutex and join edges mixed: two cycles in one dump ------------------
 * a holds m1 and joins b; b waits for m2, held by c; c waits for m1 (a).
 * d holds m4 and joins e; e waits for m4 (d). */

static void *mix_a(void *a)
{
    CHECK_EQ(weft_mutex_lock(&m1), 0);
    weft_barrier_wait(&bar);
    CHECK_EQ(weft_sem_wait(&go), 0);
    CHECK_EQ(weft_join(tb, NULL), 0);
    return a;
}

static void *mix_b(void *a)
{
    weft_barrier_wait(&bar);
    CHECK_EQ(weft_mutex_lock(&m2), 0);
    return a;
}

static void *mix_d(void *a)
{
    CHECK_EQ(weft_mutex_lock(&m4), 0);
    CHECK_EQ(weft_sem_post(&held), 0);
    CHECK_EQ(weft_sem_wait(&go), 0);
    CHECK_EQ(weft_join(te, NULL), 0);
    return a;
}

static void *mix_e(void *a)
{
    CHECK_EQ(weft_sem_wait(&held), 0); /* d holds m4 */
    CHECK_EQ(weft_mutex_lock(&m4), 0);
    return a;
}

static int case_mixed(void)
{
    CHECK_EQ(weft_barrier_init(&bar, 3), 0);
    CHECK_EQ(weft_sem_init(&go, 0), 0);
    CHECK_EQ(weft_sem_init(&held, 0), 0);
    spawn(&ta, mix_a, NULL);
    spawn(&tb, mix_b, NULL);
    spawn(&tc, dump_lock_meet_lock, &l21);
    spawn(&td, mix_d, NULL);
    spawn(&te, mix_e, NULL);
    for (int i = 0; i < 2; i++) /* every handle is set */
        CHECK_EQ(weft_sem_post(&go), 0);
    struct cycle c[MAX_CYCLE];
    int n;
    char *d = dump_when(2, c, &n);
    if (n != 2)
        fprintf(stderr, "want two deadlock lines:\n%s", d);
    CHECK_EQ(n, 2);
    weft_thread *abc[] = { ta, tb, tc };
    weft_thread *de[] = { td, te };
    CHECK((same_cycle(&c[0], abc, 3) && same_cycle(&c[1], de, 2)) ||
          (same_cycle(&c[1], abc, 3) && same_cycle(&c[0], de, 2)));
    expect_edge(d, ta, "joins", tb);
    expect_edge(d, tb, "owner", tc);
    expect_edge(d, tc, "owner", ta);
    expect_edge(d, td, "joins", te);
    expect_edge(d, te, "owner", td);
    return goes_on_and_exits(d);
}

/* ---- no cycle: chains that end at a running thread ------------------------
 * a holds m1 and runs (yields) until released; c holds m2 and waits for
 * m1; b waits for m2; d joins a. Every edge is named, none closes. */

static void *nc_a(void *a)
{
    CHECK_EQ(weft_mutex_lock(&m1), 0);
    weft_barrier_wait(&bar);
    while (!atomic_load(&release))
        weft_yield();
    CHECK_EQ(weft_mutex_unlock(&m1), 0);
    return a;
}

static void *nc_b(void *a)
{
    weft_barrier_wait(&bar);
    CHECK_EQ(weft_mutex_lock(&m2), 0);
    CHECK_EQ(weft_mutex_unlock(&m2), 0);
    return a;
}

static void *nc_c(void *a)
{
    CHECK_EQ(weft_mutex_lock(&m2), 0);
    weft_barrier_wait(&bar);
    CHECK_EQ(weft_mutex_lock(&m1), 0);
    CHECK_EQ(weft_mutex_unlock(&m1), 0);
    CHECK_EQ(weft_mutex_unlock(&m2), 0);
    return a;
}

static int state_of(weft_thread *t)
{
    weft_thread_info info;
    CHECK_EQ(weft_thread_info_get(t, &info), 0);
    return info.state;
}

static int case_nocycle(void)
{
    CHECK_EQ(weft_barrier_init(&bar, 3), 0);
    CHECK_EQ(weft_sem_init(&go, 0), 0);
    spawn(&ta, nc_a, NULL);
    spawn(&tb, nc_b, NULL);
    spawn(&tc, nc_c, NULL);
    spawn(&td, dump_wait_join, &j_a);
    CHECK_EQ(weft_sem_post(&go), 0);
    uint64_t t0 = check_now_ns();
    char *d = NULL;
    for (;;) { /* until every edge is in place */
        free(d);
        d = dump_text();
        char lb[1024], lc[1024], ld[1024];
        thread_line(d, tb, lb, sizeof lb);
        thread_line(d, tc, lc, sizeof lc);
        thread_line(d, td, ld, sizeof ld);
        if ((strstr(lb, ", owner ") && strstr(lc, ", owner ") && strstr(ld, ", joins ")) ||
            check_now_ns() - t0 > WAIT_NS)
            break;
        weft_sleep_ns(1000000);
    }
    expect_edge(d, tb, "owner", tc);
    expect_edge(d, tc, "owner", ta);
    expect_edge(d, td, "joins", ta);
    expect_no_edge(d, ta);
    CHECK(state_of(ta) != WEFT_STATE_PARKED);
    /* many dumps, while a runs: never a deadlock line */
    for (int i = 0; i < 20; i++) {
        struct cycle c[MAX_CYCLE];
        if (parse_cycles(d, c, MAX_CYCLE) != 0) {
            fprintf(stderr, "a deadlock line without a cycle:\n%s", d);
            CHECK(0);
        }
        free(d);
        d = dump_text();
    }
    free(d);
    atomic_store(&release, 1);
    CHECK_EQ(weft_join(tb, NULL), 0);
    CHECK_EQ(weft_join(tc, NULL), 0);
    CHECK_EQ(weft_join(td, NULL), 0); /* it joined a */
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}

/* ---- the driver ----------------------------------------------------------- */

static const struct {
    const char *name;
    int (*run)(void);
} cases[] = {
    { "mutex2", case_mutex2 }, { "mutex3", case_mutex3 },   { "join2", case_join2 },
    { "mixed", case_mixed },   { "nocycle", case_nocycle }, { "signal", case_signal },
};

int main(void)
{
    test_clear_env();
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int workers = 1; workers <= 2; workers++) {
            fflush(NULL);
            pid_t pid = fork(); /* before weft_init: the child starts the runtime */
            CHECK(pid >= 0);
            if (pid == 0) {
                alarm(CASE_ALARM_S);
                if (cases[i].run == case_signal)
                    setenv("WEFT_DUMP_SIGNAL", "USR1", 1);
                test_init(workers, WEFT_WORK_FIRST);
                _exit(cases[i].run());
            }
            int st;
            CHECK_EQ(waitpid(pid, &st, 0), pid);
            int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            fprintf(stderr, "%s, %d worker%s: %s\n", cases[i].name, workers, workers > 1 ? "s" : "",
                    ok ? "ok" : "FAILED");
            if (!ok && WIFSIGNALED(st))
                fprintf(stderr, "  killed by signal %d\n", WTERMSIG(st));
            failed |= !ok;
        }
    }
    return failed;
}
