/* Failure injection over the runtime's life cycle: a short program (init,
 * 44 user threads alive at once, one with a stack size of its own, a bound
 * thread that spawns and joins one, mutex/cond with a timed wait, weft_read
 * and weft_write on a pipe, weft_blocking, weft_sleep_ns, join, finalize,
 * then the same again on fewer workers) runs once per injected fault, in a
 * child process: the Nth call of one kind (malloc, calloc, realloc,
 * aligned_alloc, any of those, mmap, mprotect, pthread_create, io_uring
 * set-up) fails, either alone or with every later call of that kind, for
 * every N the program reaches.
 *
 * Each run must either get an error (ENOMEM or EAGAIN) from a call and go
 * on cleanly, or complete: never hang (a watchdog thread bounds each run),
 * never crash or abort, never leak, and the initial thread stays on worker
 * 0 (else finalize would run off the main kernel thread). After every
 * finalize, and after every failed weft_init, nothing the library
 * allocated, mapped, set up (io_uring) or opened is left and its kernel
 * threads are gone; in ASan builds the leak checker runs at each child's
 * exit too.
 *
 * Counts: a calibration run without faults gives each kind's count C (the
 * largest of three runs: the number of kernel threads started may vary).
 * N runs over 1..C in both modes; above SAMPLE_ALL calls, N runs over
 * 1..SAMPLE_HEAD, then SAMPLE_TAIL points spread evenly up to C (the output
 * says so); FAULT_ALL=1 takes every N. mprotect guards are used only where
 * the kernel lacks MADV_GUARD_INSTALL, so that kind runs with
 * WEFT_STACK_GUARD=mprotect. Arguments name the kinds to inject (default:
 * all). "fault_lifecycle run" with FAULT_INJECT=kind:N[+] (and
 * FAULT_TRACE=1) runs the program once, to reproduce a case. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>

#include "inject.h"
#include "testutil.h"

#define NPLAIN          44 /* plain user threads alive at once: more than a stack slab holds */
#define BIG_STACK       ((size_t)128 << 10) /* one of them has a stack size of its own */
#define RUN_LIMIT_S     5                   /* a run that takes longer hangs */
#define STUCK_CALL_MS   500  /* a call queued this long for a kernel thread waits for none */
#define THREADS_WAIT_MS 2000 /* bound on the wait for weft's kernel threads to end */
#define EXIT_HANG       3
#define EXIT_NO_MACHINE 4 /* a blocking call waited for a kernel thread never started */
#define EXIT_MOVED      5 /* the initial thread left worker 0 */
#define SAMPLE_ALL      64
#define SAMPLE_HEAD     32
#define SAMPLE_TAIL     16
#define JOBS            2 /* runs at a time */

#if TEST_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=1";
}
#endif

enum stage {
    ST_START,
    ST_INIT,
    ST_SPAWN,
    ST_SYNC,
    ST_IO,
    ST_BLOCKING,
    ST_JOIN,
    ST_FINALIZE,
    ST_CHECK,
    ST_DONE
};
static const char *const stage_name[] = { "start",    "init", "spawn",    "sync",  "io",
                                          "blocking", "join", "finalize", "check", "done" };

/* Shared with the child runs: the injector's counts and where the run got. */
struct shared {
    struct fault_state fs;
    _Atomic int cycle;
};
static struct shared *sh;

static void stage(enum stage s)
{
    atomic_store(&sh->fs.phase, s);
}

/* ---- the program under faults ------------------------------------------- */

static weft_mutex mu;
static weft_cond cv;
static int arrived;  /* under mu */
static int released; /* under mu */
static int pipefd[2];

/* An error return that resource exhaustion may explain. */
static void expect_resource_error(int rc, const char *what)
{
    if (rc != ENOMEM && rc != EAGAIN) {
        fprintf(stderr, "%s: unexpected error %d (%s)\n", what, rc, strerror(rc));
        exit(1);
    }
}

static void arrive(void)
{
    CHECK_EQ(weft_mutex_lock(&mu), 0);
    arrived++;
    CHECK_EQ(weft_cond_broadcast(&cv), 0);
    CHECK_EQ(weft_mutex_unlock(&mu), 0);
}

/* Arrives, then waits for the initial thread to release everyone: every
 * plain thread holds its stack at the same time. */
static void *plain_fn(void *arg)
{
    arrive();
    CHECK_EQ(weft_mutex_lock(&mu), 0);
    while (!released)
        CHECK_EQ(weft_cond_wait(&cv, &mu), 0);
    CHECK_EQ(weft_mutex_unlock(&mu), 0);
    weft_yield();
    return arg;
}

static void set_flag(void *arg)
{
    *(int *)arg = 1;
}

static void *echo_fn(void *arg)
{
    return arg;
}

/* A bound thread is no user thread of a worker: its spawn queues the new
 * thread for any worker, its join sleeps in the kernel. */
static void *bound_fn(void *arg)
{
    arrive();
    int flag = 0;
    CHECK_EQ(weft_blocking(set_flag, &flag), 0); /* in place: a bound thread may block */
    CHECK_EQ(flag, 1);
    weft_thread *t;
    int rc = weft_spawn(&t, echo_fn, &flag, NULL);
    if (rc == 0) {
        void *res = NULL;
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK(res == &flag);
    } else {
        expect_resource_error(rc, "weft_spawn (from a bound thread)");
    }
    return arg;
}

struct read_result {
    ssize_t n;
    int err;
    char c;
};

static void *reader_fn(void *arg)
{
    struct read_result *r = arg;
    r->n = weft_read(pipefd[0], &r->c, 1);
    r->err = errno;
    return arg;
}

/* The initial thread is pinned to worker 0 (docs/design.md): after each
 * call that may hand its worker to another kernel thread, it must be back
 * there, or weft_finalize would run on a spare kernel thread. */
static void check_on_worker0(const char *after)
{
    int id = weft_worker_id();
    if (id != 0) {
        fprintf(stderr, "the initial thread is on worker %d after %s\n", id, after);
        fflush(stderr);
        _exit(EXIT_MOVED);
    }
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int base_fds;

/* A kernel thread of the test's own, started before any fault is armed:
 * ends the run if it takes too long. A blocking call (weft_blocking, or
 * weft_read/weft_write handed off) that was queued for a spare kernel
 * thread because none could be started, and has waited STUCK_CALL_MS, is
 * reported as such (EXIT_NO_MACHINE); any other hang as EXIT_HANG. */
static void *watchdog(void *arg)
{
    (void)arg;
    double start = check_now(), since = start;
    int last = -1;
    for (;;) {
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
        int st = atomic_load(&sh->fs.phase);
        double now = check_now();
        if (st != last) {
            last = st;
            since = now;
        }
        weft_stats ws;
        if ((st == ST_IO || st == ST_BLOCKING) && (now - since) * 1000 > STUCK_CALL_MS &&
            atomic_load(&sh->fs.failed) > 0 && weft_stats_get(&ws) == 0 && ws.io_offloaded > 0)
            _exit(EXIT_NO_MACHINE);
        if (now - start > RUN_LIMIT_S) {
            fprintf(stderr, "hang: at %s, cycle %d\n", stage_name[st], atomic_load(&sh->cycle));
            _exit(EXIT_HANG);
        }
    }
    return NULL;
}

/* Nothing of the runtime's is left: blocks, mappings, rings, descriptors,
 * kernel threads (those of detached bound threads end a moment after they
 * stop counting as live, hence the bounded wait). */
static void check_clean(void)
{
    stage(ST_CHECK);
    size_t blocks = fault_live_blocks(), maps = fault_live_map_bytes();
    long rings = fault_live_rings();
    if (blocks || maps || rings) {
        fprintf(stderr, "leak after cycle %d: %zu blocks, %zu mapped bytes, %ld rings\n",
                atomic_load(&sh->cycle), blocks, maps, rings);
        fault_report_live();
        exit(1);
    }
    int fds = count_dir("/proc/self/fd") - 1; /* less opendir's own */
    if (fds != base_fds) {
        fprintf(stderr, "leak after cycle %d: %d descriptors open, %d before\n",
                atomic_load(&sh->cycle), fds, base_fds);
        exit(1);
    }
    int tasks = 0; /* this one and the watchdog */
    for (int ms = 0; ms < THREADS_WAIT_MS && (tasks = count_dir("/proc/self/task")) != 2; ms++) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    if (tasks != 2) {
        fprintf(stderr, "leak after cycle %d: %d kernel threads left\n", atomic_load(&sh->cycle),
                tasks - 2);
        exit(1);
    }
}

/* Cycle k runs on 4 - k workers: a failed start of the third worker's
 * kernel thread leaves one to stop, and the second init differs. */
static void cycle(int k)
{
    atomic_store(&sh->cycle, k);
    stage(ST_INIT);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 4 - k;
    int rc = weft_init(&cfg);
    if (rc != 0) {
        expect_resource_error(rc, "weft_init");
        CHECK_EQ(weft_num_workers(), 0);
        CHECK_EQ(weft_spawn(NULL, plain_fn, NULL, &(weft_attr){ .detached = 1 }), EAGAIN);
        check_clean();
        return;
    }
    CHECK_EQ(weft_mutex_init(&mu), 0);
    CHECK_EQ(weft_cond_init(&cv), 0);
    arrived = released = 0;
    CHECK_EQ(pipe(pipefd), 0);

    stage(ST_SPAWN);
    weft_thread *t[NPLAIN], *tb = NULL, *tr = NULL;
    int expected = 0;
    for (int i = 0; i < NPLAIN; i++) {
        weft_attr attr = WEFT_ATTR_INIT;
        attr.stack_size = i == 0 ? BIG_STACK : 0;
        rc = weft_spawn(&t[i], plain_fn, &t[i], &attr);
        if (rc == 0)
            expected++;
        else {
            t[i] = NULL;
            expect_resource_error(rc, "weft_spawn");
        }
    }
    weft_attr battr = WEFT_ATTR_INIT;
    battr.bound = 1;
    rc = weft_spawn(&tb, bound_fn, &tb, &battr);
    if (rc == 0)
        expected++;
    else {
        tb = NULL;
        expect_resource_error(rc, "weft_spawn (bound)");
    }
    struct read_result rd = { -2, 0, 0 };
    rc = weft_spawn(&tr, reader_fn, &rd, NULL);
    if (rc != 0) {
        tr = NULL;
        expect_resource_error(rc, "weft_spawn (reader)");
    }

    stage(ST_SYNC);
    CHECK_EQ(weft_mutex_lock(&mu), 0);
    /* One timed wait at least (the timer service starts on the first),
     * then wait for every thread to arrive, and release them. */
    int timed = 1;
    do {
        if (timed) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 1000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            rc = weft_cond_timedwait(&cv, &mu, &ts);
            if (rc != 0 && rc != ETIMEDOUT) {
                expect_resource_error(rc, "weft_cond_timedwait");
                timed = 0;
            }
        } else {
            CHECK_EQ(weft_cond_wait(&cv, &mu), 0);
        }
    } while (arrived < expected);
    released = 1;
    CHECK_EQ(weft_cond_broadcast(&cv), 0);
    CHECK_EQ(weft_mutex_unlock(&mu), 0);

    stage(ST_IO);
    ssize_t n = weft_write(pipefd[1], "x", 1);
    check_on_worker0("weft_write");
    int wrote = n == 1;
    if (!wrote) {
        CHECK_EQ(n, -1);
        expect_resource_error(errno, "weft_write");
    }
    CHECK_EQ(close(pipefd[1]), 0); /* the reader sees end of file if nothing was written */
    if (!tr) {
        reader_fn(&rd);
        check_on_worker0("weft_read");
    }

    stage(ST_BLOCKING);
    int flag = 0;
    rc = weft_blocking(set_flag, &flag);
    check_on_worker0("weft_blocking");
    if (rc == 0)
        CHECK_EQ(flag, 1);
    else
        expect_resource_error(rc, "weft_blocking");
    if (weft_sleep_ns(100000) != 0)
        expect_resource_error(errno, "weft_sleep_ns");
    check_on_worker0("weft_sleep_ns");

    stage(ST_JOIN);
    for (int i = 0; i < NPLAIN; i++) {
        void *res = NULL;
        if (t[i]) {
            CHECK_EQ(weft_join(t[i], &res), 0);
            CHECK(res == &t[i]);
        }
    }
    if (tb) {
        void *res = NULL;
        CHECK_EQ(weft_join(tb, &res), 0);
        CHECK(res == &tb);
    }
    if (tr)
        CHECK_EQ(weft_join(tr, NULL), 0);
    if (rd.n == 1)
        CHECK(wrote && rd.c == 'x');
    else if (rd.n == 0)
        CHECK(!wrote);
    else {
        CHECK_EQ(rd.n, -1);
        expect_resource_error(rd.err, "weft_read");
    }
    CHECK_EQ(close(pipefd[0]), 0);
    CHECK_EQ(weft_cond_destroy(&cv), 0);
    CHECK_EQ(weft_mutex_destroy(&mu), 0);

    stage(ST_FINALIZE);
    check_on_worker0("the joins");
    CHECK_EQ(weft_finalize(), 0);
    check_clean();
}

static void program(void)
{
    fault_disarm(); /* the previous run's arming is still in the shared state */
    base_fds = count_dir("/proc/self/fd") - 1;
    pthread_t wd;
    CHECK_EQ(pthread_create(&wd, NULL, watchdog, NULL), 0); /* counted before arming */
    if (fault_arm_env() != 0) {
        fprintf(stderr, "FAULT_INJECT=\"%s\": expected kind:N or kind:N+\n",
                getenv("FAULT_INJECT"));
        exit(2);
    }
    cycle(1);
    cycle(2);
    stage(ST_DONE);
}

/* ---- the driver ------------------------------------------------------------ */

enum outcome { OUT_PASS, OUT_FAIL, OUT_CRASH, OUT_HANG, OUT_NO_MACHINE, OUT_MOVED };

/* One run of the program: a case, then its result. */
struct run {
    int kind;          /* -1: no fault */
    char inject[64];   /* FAULT_INJECT */
    const char *guard; /* WEFT_STACK_GUARD; NULL: unset */
    enum outcome out;
    int status;
    int stage, cycle;
    uint64_t failed;
    uint64_t calls[FK_COUNT];
    int first_stage;        /* stage of the first failed call; -1: none */
    uintptr_t first_caller; /* its call site, less the executable's base */
    char log[4096];
};

/* A child in flight. */
struct job {
    pid_t pid; /* 0: free */
    struct run *r;
    struct shared *sh; /* its own shared state */
    int log;           /* memfd: the child's stdout and stderr */
    double deadline;
};

/* The environment a kind runs in (WEFT_STACK_GUARD). */
static const char *guard_for(int kind)
{
    return kind == FK_MPROTECT ? "mprotect" : NULL;
}

static void start(struct job *j, struct run *r)
{
    j->r = r;
    j->log = memfd_create("fault-log", 0);
    CHECK(j->log >= 0);
    fflush(stdout);
    fflush(stderr);
    j->pid = fork();
    CHECK(j->pid >= 0);
    if (j->pid == 0) {
        dup2(j->log, 1);
        dup2(j->log, 2);
        close(j->log);
        sh = j->sh;
        fault_share(&sh->fs);
        if (r->kind >= 0)
            setenv("FAULT_INJECT", r->inject, 1);
        else
            unsetenv("FAULT_INJECT");
        if (r->guard)
            setenv("WEFT_STACK_GUARD", r->guard, 1);
        else
            unsetenv("WEFT_STACK_GUARD");
        alarm(RUN_LIMIT_S + 2); /* the watchdog's backstop */
        program();
        exit(0); /* the leak checker runs at exit (ASan) */
    }
    /* The child's watchdog and alarm bound it; SIGKILL is the backstop. */
    j->deadline = check_now() + RUN_LIMIT_S + 5;
}

static void finish(struct job *j, int status)
{
    struct run *r = j->r;
    struct shared *s = j->sh;
    r->status = status;
    r->stage = atomic_load(&s->fs.phase);
    r->cycle = atomic_load(&s->cycle);
    r->failed = atomic_load(&s->fs.failed);
    for (int k = 0; k < FK_COUNT; k++)
        r->calls[k] = atomic_load(&s->fs.calls[k]);
    r->first_stage = atomic_load(&s->fs.first_phase);
    r->first_caller = atomic_load(&s->fs.first_caller);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        r->out = OUT_PASS;
    else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NO_MACHINE)
        r->out = OUT_NO_MACHINE;
    else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_MOVED)
        r->out = OUT_MOVED;
    else if ((WIFEXITED(status) && WEXITSTATUS(status) == EXIT_HANG) ||
             (WIFSIGNALED(status) && (WTERMSIG(status) == SIGALRM || WTERMSIG(status) == SIGKILL)))
        r->out = OUT_HANG;
    else if (WIFSIGNALED(status))
        r->out = OUT_CRASH;
    else
        r->out = OUT_FAIL;
    ssize_t n = pread(j->log, r->log, sizeof r->log - 1, 0);
    r->log[n > 0 ? n : 0] = '\0';
    close(j->log);
    j->pid = 0;
}

/* Runs every case in runs[0..n), JOBS children at a time. */
static void run_all(struct run *runs, int n, struct job *jobs)
{
    int next = 0, busy = 0;
    long nap = 100000;
    while (next < n || busy) {
        for (int j = 0; j < JOBS && next < n; j++)
            if (!jobs[j].pid) {
                start(&jobs[j], &runs[next++]);
                busy++;
                nap = 100000;
            }
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        CHECK(pid >= 0 || errno == EINTR);
        if (pid > 0) {
            for (int j = 0; j < JOBS; j++)
                if (jobs[j].pid == pid) {
                    finish(&jobs[j], status);
                    busy--;
                }
            continue;
        }
        double now = check_now();
        for (int j = 0; j < JOBS; j++)
            if (jobs[j].pid && now > jobs[j].deadline)
                kill(jobs[j].pid, SIGKILL);
        struct timespec ts = { 0, nap };
        nanosleep(&ts, NULL);
        if (nap < 10000000)
            nap *= 2;
    }
}

/* Failures whose cause lies outside the runtime's life cycle, in code
 * another change owns; named here so that the test stays red for anything
 * else. Returns the issue item, or NULL. */
static const char *known_failure(const struct run *r)
{
    /* None today. The two this test found are fixed and now fail a run:
     * a blocking call that waited for a kernel thread that was never
     * started (runs in place, or polls: policy/machine.c, io/poller.c), and
     * the initial thread leaving worker 0 when its blocking call returned
     * on a kernel thread whose worker was taken (machine.c readies it
     * through worker 0's mailbox). */
    (void)r;
    return NULL;
}

static const char *outcome_name(const struct run *r, char *buf, size_t len)
{
    switch (r->out) {
    case OUT_PASS: return "pass";
    case OUT_HANG: return "hang";
    case OUT_NO_MACHINE: return "hang (blocking call, no kernel thread)";
    case OUT_MOVED: return "initial thread moved";
    case OUT_CRASH: snprintf(buf, len, "signal %d", WTERMSIG(r->status)); return buf;
    default: snprintf(buf, len, "exit %d", WEXITSTATUS(r->status)); return buf;
    }
}

/* The Nth value of N to try for a kind with c calls; 0: no more. */
static uint64_t nth_n(int j, uint64_t c, int sampled)
{
    uint64_t n = !sampled || j <= SAMPLE_HEAD
                     ? (uint64_t)j
                     : SAMPLE_HEAD + (c - SAMPLE_HEAD) * (uint64_t)(j - SAMPLE_HEAD) / SAMPLE_TAIL;
    return n <= c ? n : 0;
}

int main(int argc, char **argv)
{
    if (TEST_TSAN)
        SKIP(
            "failure injection runs in plain and ASan builds (TSan adds nothing here and is slow)");
    /* One shared state per job; this process keeps the injector's own
     * (never armed), so that its allocations count in no child's. */
    struct shared *shs = fault_shared_alloc(JOBS * sizeof *shs);
    CHECK(shs != NULL);
    if (argc > 1 && !strcmp(argv[1], "run")) {
        sh = &shs[0];
        fault_share(&sh->fs);
        program();
        printf("completed; %llu calls failed\n", (unsigned long long)atomic_load(&sh->fs.failed));
        return 0;
    }
    int want[FK_COUNT]; /* kinds named on the command line, or all */
    for (int k = 0; k < FK_COUNT; k++) {
        want[k] = argc == 1;
        for (int a = 1; a < argc; a++)
            want[k] |= !strcmp(argv[a], fault_kind_name[k]);
    }
    struct job jobs[JOBS];
    memset(jobs, 0, sizeof jobs);
    for (int j = 0; j < JOBS; j++)
        jobs[j].sh = &shs[j];

    /* Calibration: three fault-free runs in each environment. */
    enum { CALIBRATE = 3 };
    struct run *cal = calloc(2 * CALIBRATE, sizeof *cal);
    CHECK(cal != NULL);
    for (int i = 0; i < 2 * CALIBRATE; i++) {
        cal[i].kind = -1;
        cal[i].guard = i < CALIBRATE ? NULL : guard_for(FK_MPROTECT);
    }
    run_all(cal, 2 * CALIBRATE, jobs);
    uint64_t count[FK_COUNT] = { 0 };
    for (int i = 0; i < 2 * CALIBRATE; i++) {
        char b[48];
        if (cal[i].out != OUT_PASS && !known_failure(&cal[i])) {
            fprintf(stderr, "run without faults%s%s: %s at %s (cycle %d)\n%s",
                    cal[i].guard ? ", guard " : "", cal[i].guard ? cal[i].guard : "",
                    outcome_name(&cal[i], b, sizeof b), stage_name[cal[i].stage], cal[i].cycle,
                    cal[i].log);
            return 1;
        }
        /* a known failure's counts fall short: the largest count is kept */
        for (int k = 0; k < FK_COUNT; k++)
            if (cal[i].guard == guard_for(k) && cal[i].calls[k] > count[k])
                count[k] = cal[i].calls[k];
    }

    int exhaustive = getenv("FAULT_ALL") && !strcmp(getenv("FAULT_ALL"), "1");
    int sampled[FK_COUNT], ncases = 0;
    size_t cap = 0;
    for (int k = 0; k < FK_COUNT; k++) {
        sampled[k] = !exhaustive && count[k] > SAMPLE_ALL;
        cap += want[k] ? 2 * count[k] : 0;
    }
    struct run *cases = calloc(cap ? cap : 1, sizeof *cases);
    CHECK(cases != NULL);
    for (int k = 0; k < FK_COUNT; k++)
        for (int from = 0; want[k] && from <= 1; from++) {
            uint64_t n, prev = 0;
            for (int j = 1; (n = nth_n(j, count[k], sampled[k])) != 0; j++) {
                if (n == prev)
                    continue;
                prev = n;
                struct run *r = &cases[ncases++];
                r->kind = k;
                r->guard = guard_for(k);
                snprintf(r->inject, sizeof r->inject, "%s:%llu%s", fault_kind_name[k],
                         (unsigned long long)n, from ? "+" : "");
            }
        }
    double t0 = check_now();
    run_all(cases, ncases, jobs);

    int unexpected = 0, known = 0;
    for (int k = 0, i = 0; k < FK_COUNT; k++) {
        if (!want[k])
            continue;
        printf("%-14s %3llu calls%s", fault_kind_name[k], (unsigned long long)count[k],
               guard_for(k) ? " (WEFT_STACK_GUARD=mprotect)" : "");
        if (sampled[k])
            printf(" (N sampled: 1..%d, then %d points spread evenly to the last)", SAMPLE_HEAD,
                   SAMPLE_TAIL);
        printf("\n");
        for (; i < ncases && cases[i].kind == k; i++) {
            struct run *r = &cases[i];
            if (r->out == OUT_PASS)
                continue;
            char b[48];
            const char *item = known_failure(r);
            printf("  %-18s %s at %s, cycle %d (%llu calls failed, the first at %s from "
                   "exe+%#lx)%s%s\n",
                   r->inject, outcome_name(r, b, sizeof b), stage_name[r->stage], r->cycle,
                   (unsigned long long)r->failed,
                   r->first_stage >= 0 ? stage_name[r->first_stage] : "-",
                   (unsigned long)r->first_caller, item ? ": known, " : "", item ? item : "");
            if (item) {
                known++;
            } else {
                unexpected++;
                fputs(r->log, stdout);
            }
        }
    }
    printf("%d runs in %.1f s, %d at a time: %d unexpected failures, %d known failures\n", ncases,
           check_now() - t0, JOBS, unexpected, known);
    free(cases);
    free(cal);
    return unexpected ? 1 : 0;
}
