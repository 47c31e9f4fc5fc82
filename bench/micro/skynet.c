/* skynet.c: the skynet benchmark (a tree of N leaves, every inner node has
 * DIV children, each leaf returns its number, each node the sum of its
 * children's: 0 + 1 + ... + N-1) with zero-wait tasks against a weft user
 * thread per node, in ns per node (1,111,111 nodes for the usual N = 1M,
 * DIV = 10; creation, running and the sums included).
 *
 * Tasks cannot wait, so the task version is in continuation-passing style:
 * an inner node takes a frame (its DIV children's values, where its own
 * value goes, the join to continue), makes a join task with counter DIV
 * and DIV child tasks; a leaf stores its number in its slot of the
 * parent's frame and continues the parent's join; a join adds the slots,
 * stores the sum in its own slot above and continues the join there. A
 * child task's argument is its slot, which holds the child's index until
 * the child overwrites it with its value: the frame and the child's range
 * follow from it, so a leaf needs no memory of its own. Frames come from a
 * per-kernel-thread free list. The thread version spawns DIV threads per
 * inner node and joins them, as the Go and Rust versions do.
 *   bench_skynet [-n LEAVES] [-r REPS] [-w LIST] [-i all|tasks|threads]
 */
#include "bench.h"
#include "bench_weft.h"

#include "weft.h"

#define DIV 10 /* children per inner node */

struct frame {
    long r[DIV];        /* the children's values (a child's index before) */
    long num;           /* the first leaf number under this node */
    long child_size;    /* leaves under each child */
    long *out;          /* where this node's value goes */
    weft_task *up;      /* the join to continue once it is there */
    weft_task *join;    /* this node's join */
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

static void join_fn(void *arg)
{
    struct frame *f = arg;
    long sum = 0;
    for (int i = 0; i < DIV; i++)
        sum += f->r[i];
    *f->out = sum;
    weft_task *up = f->up;
    f->next = frames;
    frames = f;
    weft_task_continue(up);
}

static void child_fn(void *arg);

/* Node (num, size): its value goes to *out, then up is continued. */
static void node(long num, long size, long *out, weft_task *up)
{
    if (size == 1) {
        *out = num;
        weft_task_continue(up);
        return;
    }
    struct frame *f = frame_new();
    f->num = num;
    f->child_size = size / DIV;
    f->out = out;
    f->up = up;
    int rc = weft_task_create(&f->join, join_fn, f, DIV);
    for (int i = 0; i < DIV && rc == 0; i++) {
        f->r[i] = i;
        rc = weft_task_create(NULL, child_fn, &f->r[i], 0);
    }
    bench_ok(rc, "weft_task_create");
}

static void child_fn(void *arg)
{
    long *slot = arg;
    long i = *slot;
    struct frame *f = (struct frame *)(slot - i); /* r is the first member */
    node(f->num + i * f->child_size, f->child_size, slot, f->join);
}

static weft_sem done;

static void done_fn(void *arg)
{
    (void)arg;
    weft_sem_post(&done);
}

static long skynet_tasks(long leaves)
{
    long result = -1;
    weft_task *top;
    int rc = weft_task_create(&top, done_fn, NULL, 1);
    bench_ok(rc, "weft_task_create");
    node(0, leaves, &result, top);
    weft_sem_wait(&done);
    return result;
}

struct range {
    long num, size;
};

static void *skynet_thread(void *arg)
{
    const struct range *n = arg;
    if (n->size == 1)
        return (void *)(intptr_t)n->num;
    struct range kids[DIV]; /* on this stack: the children end before it does */
    weft_thread *t[DIV];
    long sub = n->size / DIV;
    for (int i = 0; i < DIV; i++) {
        kids[i] = (struct range){ n->num + i * sub, sub };
        int rc = weft_spawn(&t[i], skynet_thread, &kids[i], NULL);
        bench_ok(rc, "weft_spawn");
    }
    long sum = 0;
    for (int i = 0; i < DIV; i++) {
        void *v;
        int rc = weft_join(t[i], &v);
        bench_ok(rc, "weft_join");
        sum += (long)(intptr_t)v;
    }
    return (void *)(intptr_t)sum;
}

/* Nodes of the tree with leaves leaves. */
static long nodes_of(long leaves)
{
    long n = 0;
    for (long level = leaves; level >= 1; level /= DIV)
        n += level;
    return n;
}

static double run(const bench_opts *o, long leaves, long workers, int tasks)
{
    double samples[BENCH_MAX_RUNS];
    char param[32];
    long want = leaves * (leaves - 1) / 2;
    bench_weft_init(workers, WEFT_WORK_FIRST);
    weft_sem_init(&done, 0);
    for (int r = -1; r < o->reps; r++) { /* r = -1: warm-up */
        uint64_t t0 = bench_now_ns();
        struct range top = { 0, leaves };
        long v = tasks ? skynet_tasks(leaves) : (long)(intptr_t)skynet_thread(&top);
        double dt = (double)(bench_now_ns() - t0);
        if (v != want) {
            fprintf(stderr, "bench: skynet(%ld) = %ld, expected %ld\n", leaves, v, want);
            exit(1);
        }
        if (r >= 0)
            samples[r] = dt / (double)nodes_of(leaves);
    }
    weft_sem_destroy(&done);
    int rc = weft_finalize();
    bench_ok(rc, "weft_finalize");
    snprintf(param, sizeof param, "%ld", leaves);
    return bench_report(o, "skynet", tasks ? "weft-tasks" : "weft-threads", workers, param, samples,
                        o->reps, "ns/node")
        .median;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -n leaves, a power of 10 (default 1000000); -i all|tasks|threads\n");
    bench_default_n(&o, 1000000);
    for (int ni = 0; ni < o.n.len; ni++) {
        long leaves = o.n.v[ni], p = 1;
        while (p < leaves)
            p *= DIV;
        if (leaves < 1 || p != leaves) {
            fprintf(stderr, "bench_skynet: -n %ld is not a power of %d\n", leaves, DIV);
            return 2;
        }
        for (int wi = 0; wi < o.workers.len; wi++) {
            if (bench_wants(&o, "tasks"))
                run(&o, leaves, o.workers.v[wi], 1);
            if (bench_wants(&o, "threads"))
                run(&o, leaves, o.workers.v[wi], 0);
        }
    }
    return 0;
}
