/* Tests WEFT_TRACE: a child process traces spawns, parks, wakes and yields
 * on two workers; the file written at weft_finalize is parsed (python3)
 * and checked: one object with traceEvents, a named track per worker,
 * slices named "<id> <name>" that never overlap on a track, spawn
 * instants, and flows from each wake to the woken thread's next run. The
 * dropped-event line is on stderr; an unwritable path is one notice.
 * Then two spinners on one worker, which only a preemption lets both run:
 * a preempt instant names the preempted thread and its slice ends
 * "preempt". Last, more events than a worker's ring keeps: the dropped
 * count is said on stderr and in the file, and the time stamps the
 * conversion rebuilds from the records' low bits still give ordered,
 * non-overlapping slices within the run. Neither of the last two under
 * ThreadSanitizer (TEST_TSAN). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static weft_sem sem;

static void *waiter(void *a)
{
    for (int i = 0; i < 3; i++)
        CHECK_EQ(weft_sem_wait(&sem), 0);
    return a;
}

static void *yielder(void *a)
{
    for (int i = 0; i < 10; i++)
        weft_yield();
    return a;
}

static void *fib(void *a)
{
    long n = (long)a;
    if (n < 2)
        return a;
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, fib, (void *)(n - 1), NULL), 0);
    void *x = fib((void *)(n - 2)), *y;
    CHECK_EQ(weft_join(t, &y), 0);
    return (void *)((long)x + (long)y);
}

static void task_fn(void *arg)
{
    (void)arg;
}

static int child(void)
{
    alarm(30);
    CHECK_EQ(weft_init(NULL), 0);
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.name = "tr-waiter";
    weft_thread *w, *y[2], *f;
    CHECK_EQ(weft_spawn(&w, waiter, NULL, &a), 0);
    a.name = "tr-yielder";
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_spawn(&y[i], yielder, NULL, &a), 0);
    printf("waiter %llu\n", (unsigned long long)weft_thread_id(w));
    fflush(stdout);
    for (int i = 0; i < 3; i++) {
        weft_sleep_ns(2000000); /* the waiter parks meanwhile */
        CHECK_EQ(weft_sem_post(&sem), 0);
    }
    for (int i = 0; i < 4; i++)
        CHECK_EQ(weft_task_create(NULL, task_fn, NULL, 0), 0);
    CHECK_EQ(weft_spawn(&f, fib, (void *)12L, NULL), 0);
    void *r;
    CHECK_EQ(weft_join(f, &r), 0);
    CHECK_EQ((long)r, 144);
    CHECK_EQ(weft_join(w, NULL), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_join(y[i], NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}

/* ---- preemption ---------------------------------------------------------- */

static atomic_int started[2];

/* Spins, calling nothing, until the other spinner has started too. */
static void *spinner(void *arg)
{
    int me = (int)(intptr_t)arg;
    atomic_store_explicit(&started[me], 1, memory_order_relaxed);
    while (!atomic_load_explicit(&started[!me], memory_order_relaxed))
        ;
    return NULL;
}

static int child_preempt(void)
{
    alarm(30); /* no preemption: a hang, then a failure */
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    cfg.quantum_us = 1000;
    CHECK_EQ(weft_init(&cfg), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.name = "tr-spinner";
    weft_thread *t[2];
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_spawn(&t[i], spinner, (void *)(intptr_t)i, &a), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}

static const char preempt_py[] =
    "import json, sys\n"
    "ev = json.load(open(sys.argv[1]))['traceEvents']\n"
    "x = [e for e in ev if e['ph'] == 'X' and e['name'].endswith(' tr-spinner')]\n"
    "assert any(e['args']['end'] == 'preempt' for e in x), x\n"
    "p = [e for e in ev if e['ph'] == 'i' and e['name'].startswith('preempt ')]\n"
    "assert p and all(e['name'].endswith(' tr-spinner') for e in p), p\n"
    "for e in p:\n"
    "    assert any(s['tid'] == e['tid'] and abs(s['ts'] + s['dur'] - e['ts']) < 0.002 and "
    "s['args']['end'] == 'preempt' and s['name'] == e['name'][len('preempt '):] for s in x), e\n"
    "print('preempt ok', len(p))\n";

/* ---- a full ring ----------------------------------------------------------- */

#define CLOCK_SLACK_US 100.0
#define WRAP_FIB       26 /* about 200,000 spawns, two records each, on one worker */

static int child_wrap(void)
{
    alarm(60);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    CHECK_EQ(weft_init(&cfg), 0);
    weft_thread *f;
    void *r;
    CHECK_EQ(weft_spawn(&f, fib, (void *)(long)WRAP_FIB, NULL), 0);
    CHECK_EQ(weft_join(f, &r), 0);
    CHECK_EQ((long)r, 121393);
    CHECK_EQ(weft_finalize(), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* the runtime's life in us: every time in the file lies within it */
    printf("run %.0f\n", (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
    return 0;
}

/* The wrap child's file, read line by line (the writer puts one event on
 * each; the first phase parses a whole file as JSON): its dropped count,
 * and its slices, which must not overlap and must lie within the run
 * (run_us: from before weft_init to after weft_finalize). */
static void check_wrap(const char *path, unsigned long long dropped, double run_us)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[512];
    unsigned long long d = ~0ull;
    double end = 0, first = -1, last = 0;
    long slices = 0;
    while (fgets(line, sizeof line, f)) {
        int tid;
        double ts, dur;
        const char *p = strstr(line, "\"dropped_events\":");
        if (p)
            CHECK(sscanf(p, "\"dropped_events\":%llu", &d) == 1);
        if (sscanf(line, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%lf,\"dur\":%lf", &tid, &ts,
                   &dur) != 3)
            continue;
        CHECK_EQ(tid, 0);
        if (ts + 0.002 < end) /* slices come in time order on the one track */
            fprintf(stderr, "overlap: %.3f before %.3f\n", ts, end);
        CHECK(ts + 0.002 >= end && dur >= 0);
        end = ts + dur;
        if (slices++ == 0)
            first = ts;
        last = end;
    }
    fclose(f);
    CHECK_EQ(d, dropped);
    CHECK(slices > 100000);
    /* times map the counter onto the clock read at weft_init and at
     * weft_finalize: within the run, but for rounding */
    CHECK(first >= 0 && last <= run_us + CLOCK_SLACK_US);
}

static const char check_py[] =
    "import json, sys\n"
    "path, waiter, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
    "d = json.load(open(path))\n"
    "assert isinstance(d, dict) and isinstance(d['traceEvents'], list)\n"
    "ev = d['traceEvents']\n"
    "names = {e['tid']: e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == "
    "'thread_name'}\n"
    "assert names == {i: 'worker %d' % i for i in range(workers)}, names\n"
    "x = [e for e in ev if e['ph'] == 'X']\n"
    "assert x, 'no slices'\n"
    "for e in x:\n"
    "    assert e['tid'] in names and e['dur'] >= 0\n"
    "    assert e['name'].split(' ')[0].isdigit(), e\n"
    "for tid in names:\n"
    "    s = sorted((e for e in x if e['tid'] == tid), key=lambda e: e['ts'])\n"
    "    for a, b in zip(s, s[1:]):\n"
    "        assert a['ts'] + a['dur'] <= b['ts'] + 0.002, ('overlap', a, b)\n"
    "wslices = [e for e in x if e['name'] == waiter + ' tr-waiter']\n"
    "assert len(wslices) >= 4, ('waiter runs', len(wslices))\n"
    "assert any(e['args']['end'] == 'park sem' for e in wslices), wslices\n"
    "assert any(e['name'].endswith(' tr-yielder') for e in x)\n"
    "assert any(e['ph'] == 'i' and e['name'].startswith('spawn ') for e in ev)\n"
    "assert sum(1 for e in ev if e['ph'] == 'i' and e['name'] == 'task run') == 4\n"
    "starts = {e['id']: e for e in ev if e['ph'] == 's'}\n"
    "ends = [e for e in ev if e['ph'] == 'f']\n"
    "assert ends, 'no flows'\n"
    "for f in ends:\n"
    "    s = starts[f['id']]\n"
    "    assert s['ts'] <= f['ts'] + 0.002, (s, f)\n"
    "    assert any(e['tid'] == f['tid'] and abs(e['ts'] - f['ts']) < 0.002 for e in x), f\n"
    "woke = [f for f in ends if any(e['tid'] == f['tid'] and abs(e['ts'] - f['ts']) < 0.002 for e "
    "in wslices)]\n"
    "assert len(woke) >= 3, ('wakes of the waiter', len(woke))\n"
    "print('trace ok', len(ev))\n";

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "child") == 0)
        return child();
    if (argc >= 2 && strcmp(argv[1], "preempt") == 0)
        return child_preempt();
    if (argc >= 2 && strcmp(argv[1], "wrap") == 0)
        return child_wrap();
    if (system("python3 -c 'import json' >/dev/null 2>&1") != 0) {
        fprintf(stderr, "skipped: no python3\n");
        return 77;
    }
    char dir[] = "/tmp/weft-trace-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], env[300], py[256], cmd[1024];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    snprintf(env, sizeof env, "WEFT_TRACE=%s", path);
    const char *const e[] = { env, "WEFT_WORKERS=2", NULL };
    test_child r;
    test_run_self_ok(&r, "child", e);
    unsigned long long waiter = 0;
    CHECK(sscanf(r.out, "waiter %llu", &waiter) == 1);
    char line[400];
    snprintf(line, sizeof line, "trace: %s: ", path);
    CHECK(strstr(r.err, line) != NULL);
    CHECK(strstr(r.err, " 0 dropped") != NULL);

    snprintf(py, sizeof py, "%s/check.py", dir);
    FILE *f = fopen(py, "w");
    CHECK(f != NULL);
    fputs(check_py, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "python3 %s %s %llu 2", py, path, waiter);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "trace check failed; child's stderr:\n%s\n", r.err);
    CHECK_EQ(rc, 0);
    unlink(py);
    unlink(path);

    /* a path that cannot be written: one notice, the program unharmed */
    snprintf(env, sizeof env, "WEFT_TRACE=%s/no/such/dir/trace.json", dir);
    test_run_self(&r, "child", NULL, e, NULL);
    CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    CHECK(strstr(r.err, "WEFT_TRACE: cannot write") != NULL);

    if (!TEST_TSAN) { /* cooperative: no preemption */
        snprintf(env, sizeof env, "WEFT_TRACE=%s", path);
        const char *const e1[] = { env, NULL };
        test_run_self_ok(&r, "preempt", e1);
        f = fopen(py, "w");
        CHECK(f != NULL);
        fputs(preempt_py, f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "python3 %s %s", py, path);
        CHECK_EQ(system(cmd), 0);
        unlink(py);
        unlink(path);
    }

    if (TEST_TSAN) { /* its switches are too slow to fill a ring */
        rmdir(dir);
        return 0;
    }
    snprintf(env, sizeof env, "WEFT_TRACE=%s", path);
    const char *const e2[] = { env, NULL };
    test_run_self_ok(&r, "wrap", e2);
    double run_us = 0;
    CHECK(sscanf(r.out, "run %lf", &run_us) == 1);
    unsigned long long events = 0, dropped = 0;
    const char *p = strstr(r.err, "trace: ");
    CHECK(p != NULL && (p = strstr(p, ".json: ")) != NULL);
    CHECK(sscanf(p, ".json: %llu events, %llu dropped", &events, &dropped) == 2);
    CHECK(dropped > 0 && dropped < events);
    check_wrap(path, dropped, run_us);
    unlink(path);
    rmdir(dir);
    return 0;
}
