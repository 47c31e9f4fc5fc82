/* task_fib.c: fib(n) with zero-wait tasks against fib(n) with a weft user
 * thread per call, in ns per call (Taskflow's fibonacci benchmark shape:
 * no cut-off, fib(n-1) spawned, fib(n-2) computed by the caller).
 *
 * Tasks cannot wait, so the task version is in continuation-passing style:
 * fib(n) makes a join task (counter 2) and a child task for fib(n-1), then
 * goes on with fib(n-2) itself; a leaf stores its value and continues the
 * join above it, and a join adds its two values and continues the next
 * join up. One frame (the two values and the link up) per call with
 * n >= 2, from a per-kernel-thread free list. Calls: 2 fib(n+1) - 1; tasks
 * spawned: 2 (fib(n+1) - 1) (a child and a join per inner call).
 *   bench_task_fib [-n LIST] [-r REPS] [-w LIST] [-i all|tasks|threads]
 */
#include "bench.h"
#include "bench_weft.h"

#include "weft.h"

struct frame {
    long r[2];          /* the two halves' values */
    long *out;          /* where this call's value goes */
    weft_task *up;      /* the join to continue once it is there */
    weft_task *join;    /* this call's join */
    long n;             /* the child's argument (fib(n-1)) */
    struct frame *next; /* free list */
};

static __thread struct frame *frames; /* free frames of this kernel thread */

static struct frame *frame_new(void)
{
    struct frame *f = frames;
    if (f) {
        frames = f->next;
        return f;
    }
    f = malloc(sizeof *f);
    if (!f)
        bench_die("malloc", ENOMEM);
    return f;
}

static void fib_from(long n, long *out, weft_task *up);

static void join_fn(void *arg)
{
    struct frame *f = arg;
    *f->out = f->r[0] + f->r[1];
    weft_task *up = f->up;
    f->next = frames;
    frames = f;
    weft_task_continue(up);
}

static void child_fn(void *arg)
{
    struct frame *f = arg;
    fib_from(f->n, &f->r[0], f->join);
}

/* The body of one fib call and its chain of fib(n-2) calls. */
static void fib_from(long n, long *out, weft_task *up)
{
    while (n >= 2) {
        struct frame *f = frame_new();
        f->out = out;
        f->up = up;
        f->n = n - 1;
        int rc = weft_task_create(&f->join, join_fn, f, 2);
        if (rc == 0)
            rc = weft_task_create(NULL, child_fn, f, 0);
        if (rc != 0)
            bench_die("weft_task_create", rc);
        out = &f->r[1];
        up = f->join;
        n -= 2;
    }
    *out = n;
    weft_task_continue(up);
}

static weft_sem done;

static void done_fn(void *arg)
{
    (void)arg;
    weft_sem_post(&done);
}

static long fib_tasks(long n)
{
    long result = -1;
    weft_task *top;
    int rc = weft_task_create(&top, done_fn, NULL, 1);
    if (rc != 0)
        bench_die("weft_task_create", rc);
    fib_from(n, &result, top);
    weft_sem_wait(&done);
    return result;
}

static double run(const bench_opts *o, long n, long workers, int tasks)
{
    double samples[BENCH_MAX_RUNS];
    char param[32];
    bench_weft_init(workers, WEFT_WORK_FIRST);
    weft_sem_init(&done, 0);
    for (int r = -1; r < o->reps; r++) { /* r = -1: warm-up */
        uint64_t t0 = bench_now_ns();
        long v = tasks ? fib_tasks(n) : (long)(intptr_t)bench_weft_fib((void *)(intptr_t)n);
        double dt = (double)(bench_now_ns() - t0);
        if (v != bench_fib_expected(n)) {
            fprintf(stderr, "bench: fib(%ld) = %ld, expected %ld\n", n, v, bench_fib_expected(n));
            exit(1);
        }
        if (r >= 0)
            samples[r] = dt / (double)(2 * bench_fib_expected(n + 1) - 1);
    }
    weft_sem_destroy(&done);
    int rc = weft_finalize();
    if (rc != 0)
        bench_die("weft_finalize", rc);
    snprintf(param, sizeof param, "%ld", n);
    return bench_report(o, "fib", tasks ? "weft-tasks" : "weft-threads", workers, param, samples,
                        o->reps, "ns/call")
        .median;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  -i all|tasks|threads; default -n 29\n");
    bench_default_n(&o, 29);
    for (int ni = 0; ni < o.n.len; ni++)
        for (int wi = 0; wi < o.workers.len; wi++) {
            if (bench_wants(&o, "tasks"))
                run(&o, o.n.v[ni], o.workers.v[wi], 1);
            if (bench_wants(&o, "threads"))
                run(&o, o.n.v[ni], o.workers.v[wi], 0);
        }
    return 0;
}
