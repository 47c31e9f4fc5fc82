/* Tests the split-phase calls: weft_task_read/write on a pipe, pread/pwrite
 * on a file (and pread on a pipe: -ESPIPE; a negative offset: -EINVAL),
 * recv/send on a socket pair, accept on a loopback listener, sleep_ns, a
 * closed descriptor (-EBADF), each with exactly one continuation and the
 * result the mirror would give; issued from a task, from a user thread and
 * from a plain kernel thread; 64 calls from one task share few
 * io_uring_enter calls; EINVAL for a NULL continuation; weft_finalize
 * waits for a call in flight. All of it with io_uring and without
 * (WEFT_IO=blocking, in a child process), on 1 and 2 workers. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "testutil.h"

static weft_sem issued; /* posted by a task that issued calls */

struct op {
    ssize_t res;
    atomic_int fired;
    weft_task *cont;
    weft_sem sem; /* posted by the continuation */
};

/* Closes fd and returns a descriptor number that stays closed: the
 * runtime's own threads may open files at any time and would take the
 * lowest free number, fd's own, so the test names a high one. */
static int retire(int fd)
{
    int hi = fcntl(fd, F_DUPFD, 900);
    CHECK(hi >= 900);
    CHECK_EQ(close(hi), 0);
    CHECK_EQ(close(fd), 0);
    return hi;
}

static void cont_fn(void *arg)
{
    struct op *o = arg;
    CHECK(weft_self() == NULL);
    atomic_fetch_add(&o->fired, 1);
    CHECK_EQ(weft_sem_post(&o->sem), 0);
}

static void op_init(struct op *o)
{
    o->res = 12345;
    atomic_store(&o->fired, 0);
    CHECK_EQ(weft_sem_init(&o->sem, 0), 0);
    CHECK_EQ(weft_task_create(&o->cont, cont_fn, o, 1), 0);
}

static void op_wait(struct op *o)
{
    CHECK_EQ(weft_sem_wait(&o->sem), 0);
    CHECK_EQ(atomic_load(&o->fired), 1);
    CHECK_EQ(weft_sem_destroy(&o->sem), 0);
}

/* ---- where a call is issued from ------------------------------------------- */

enum { FROM_TASK, FROM_THREAD, FROM_KERNEL };

struct closure {
    void (*fn)(void *arg);
    void *arg;
};

static void closure_task(void *arg)
{
    struct closure *c = arg;
    c->fn(c->arg);
    CHECK_EQ(weft_sem_post(&issued), 0);
}

static void *closure_kernel(void *arg)
{
    struct closure *c = arg;
    CHECK(weft_self() == NULL);
    c->fn(c->arg);
    return NULL;
}

/* Runs fn(arg) in the given context and returns once it has returned. */
static void issue_from(int where, void (*fn)(void *), void *arg)
{
    struct closure c = { fn, arg };
    if (where == FROM_THREAD) {
        fn(arg);
    } else if (where == FROM_TASK) {
        CHECK_EQ(weft_task_create(NULL, closure_task, &c, 0), 0);
        CHECK_EQ(weft_sem_wait(&issued), 0);
    } else {
        pthread_t k;
        CHECK_EQ(pthread_create(&k, NULL, closure_kernel, &c), 0);
        CHECK_EQ(test_pthread_join(k, NULL), 0);
    }
}

/* ---- the scenarios ------------------------------------------------------------ */

struct io_case {
    int fd, fd2;
    char *buf;
    size_t n;
    off_t off;
    struct op *a, *b;
    struct sockaddr_in addr;
    socklen_t alen;
};

static void issue_read(void *arg)
{
    struct io_case *c = arg;
    CHECK_EQ(weft_task_read(c->a->cont, &c->a->res, c->fd, c->buf, c->n), 0);
}

static void issue_write(void *arg)
{
    struct io_case *c = arg;
    CHECK_EQ(weft_task_write(c->b->cont, &c->b->res, c->fd2, "hello", 5), 0);
}

static void pipe_case(int where)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    char buf[16] = { 0 };
    struct op a, b;
    op_init(&a);
    op_init(&b);
    struct io_case c = { .fd = p[0], .fd2 = p[1], .buf = buf, .n = sizeof buf, .a = &a, .b = &b };
    issue_from(where, issue_read, &c); /* waits for the data */
    issue_from(where, issue_write, &c);
    op_wait(&a);
    op_wait(&b);
    CHECK_EQ(a.res, 5);
    CHECK_EQ(b.res, 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    /* end of file: 0 */
    close(p[1]);
    op_init(&a);
    issue_from(where, issue_read, &c);
    op_wait(&a);
    CHECK_EQ(a.res, 0);
    /* positional on a pipe: ESPIPE, as pread(2) */
    op_init(&a);
    CHECK_EQ(weft_task_pread(a.cont, &a.res, p[0], buf, 4, 0), 0);
    op_wait(&a);
    CHECK_EQ(a.res, -ESPIPE);
    c.fd = retire(p[0]);
    /* a closed descriptor: -EBADF and one continuation */
    op_init(&a);
    issue_from(where, issue_read, &c);
    op_wait(&a);
    CHECK_EQ(a.res, -EBADF);
}

static void issue_pwrite(void *arg)
{
    struct io_case *c = arg;
    CHECK_EQ(weft_task_pwrite(c->b->cont, &c->b->res, c->fd, c->buf, c->n, c->off), 0);
}

static void issue_pread(void *arg)
{
    struct io_case *c = arg;
    CHECK_EQ(weft_task_pread(c->a->cont, &c->a->res, c->fd, c->buf, c->n, c->off), 0);
}

static void file_case(int where)
{
    char path[] = "/tmp/weft-task-split-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    static char out[8192], in[8192];
    for (size_t i = 0; i < sizeof out; i++)
        out[i] = (char)(i * 7 + (size_t)where);
    struct op a, b;
    op_init(&b);
    struct io_case c = { .fd = fd, .buf = out, .n = sizeof out, .off = 100, .a = &a, .b = &b };
    issue_from(where, issue_pwrite, &c);
    op_wait(&b);
    CHECK_EQ(b.res, (ssize_t)sizeof out);
    op_init(&a);
    memset(in, 0, sizeof in);
    c.buf = in;
    issue_from(where, issue_pread, &c);
    op_wait(&a);
    CHECK_EQ(a.res, (ssize_t)sizeof in);
    CHECK(memcmp(in, out, sizeof in) == 0);
    /* past the end: a short read, then 0 */
    op_init(&a);
    c.off = 100 + 8192 - 10;
    issue_from(where, issue_pread, &c);
    op_wait(&a);
    CHECK_EQ(a.res, 10);
    op_init(&a);
    c.off = 1 << 20;
    issue_from(where, issue_pread, &c);
    op_wait(&a);
    CHECK_EQ(a.res, 0);
    /* a negative offset: EINVAL, as pread(2) */
    op_init(&a);
    c.off = -1;
    issue_from(where, issue_pread, &c);
    op_wait(&a);
    CHECK_EQ(a.res, -EINVAL);
    /* read and write at the file position */
    CHECK_EQ(lseek(fd, 100, SEEK_SET), 100);
    op_init(&a);
    c.off = 0;
    c.n = 5;
    issue_from(where, issue_read, &c);
    op_wait(&a);
    CHECK_EQ(a.res, 5);
    CHECK(memcmp(in, out, 5) == 0);
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), 105);
    close(fd);
}

static void issue_recv(void *arg)
{
    struct io_case *c = arg;
    CHECK_EQ(weft_task_recv(c->a->cont, &c->a->res, c->fd, c->buf, c->n, 0), 0);
}

static void issue_send(void *arg)
{
    struct io_case *c = arg;
    CHECK_EQ(weft_task_send(c->b->cont, &c->b->res, c->fd2, "ping!", 5, 0), 0);
}

static void socket_case(int where)
{
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char buf[16] = { 0 };
    struct op a, b;
    op_init(&a);
    op_init(&b);
    struct io_case c = { .fd = sv[0], .fd2 = sv[1], .buf = buf, .n = sizeof buf, .a = &a, .b = &b };
    issue_from(where, issue_recv, &c);
    issue_from(where, issue_send, &c);
    op_wait(&a);
    op_wait(&b);
    CHECK_EQ(a.res, 5);
    CHECK_EQ(b.res, 5);
    CHECK(memcmp(buf, "ping!", 5) == 0);
    /* the peer gone: 0 for recv, EPIPE for send (no SIGPIPE) */
    close(sv[1]);
    op_init(&a);
    issue_from(where, issue_recv, &c);
    op_wait(&a);
    CHECK_EQ(a.res, 0);
    op_init(&b);
    c.fd2 = sv[0];
    issue_from(where, issue_send, &c);
    op_wait(&b);
    CHECK(b.res == -EPIPE || b.res == -ECONNRESET);
    c.fd2 = retire(sv[0]);
    /* closed: EBADF */
    op_init(&b);
    issue_from(where, issue_send, &c);
    op_wait(&b);
    CHECK_EQ(b.res, -EBADF);
}

static void issue_accept(void *arg)
{
    struct io_case *c = arg;
    c->alen = sizeof c->addr;
    CHECK_EQ(weft_task_accept(c->a->cont, &c->a->res, c->fd, (struct sockaddr *)&c->addr, &c->alen),
             0);
}

static void *connector(void *arg)
{
    struct sockaddr_in *sa = arg;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(s >= 0);
    CHECK_EQ(connect(s, (struct sockaddr *)sa, sizeof *sa), 0);
    CHECK_EQ(write(s, "x", 1), 1);
    close(s);
    return NULL;
}

static void accept_case(int where)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    CHECK_EQ(bind(l, (struct sockaddr *)&sa, sizeof sa), 0);
    CHECK_EQ(listen(l, 8), 0);
    CHECK_EQ(getsockname(l, (struct sockaddr *)&sa, &sl), 0);
    struct op a;
    op_init(&a);
    struct io_case c = { .fd = l, .a = &a };
    issue_from(where, issue_accept, &c); /* waits for the connection */
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, connector, &sa), 0);
    op_wait(&a);
    CHECK(a.res >= 0);
    CHECK_EQ(c.addr.sin_family, AF_INET);
    char ch = 0;
    CHECK_EQ(weft_read((int)a.res, &ch, 1), 1);
    CHECK_EQ(ch, 'x');
    close((int)a.res);
    CHECK_EQ(test_pthread_join(k, NULL), 0);
    c.fd = retire(l);
    /* a closed listener: EBADF */
    op_init(&a);
    issue_from(where, issue_accept, &c);
    op_wait(&a);
    CHECK_EQ(a.res, -EBADF);
}

static void issue_sleep(void *arg)
{
    struct op *o = arg;
    CHECK_EQ(weft_task_sleep_ns(o->cont, 2000000), 0);
}

static void sleep_case(int where)
{
    struct op a;
    op_init(&a);
    double t0 = check_now();
    issue_from(where, issue_sleep, &a);
    op_wait(&a);
    CHECK(check_now() - t0 >= 0.0015);
}

/* ---- batching: many calls from one task, few kernel crossings ----------------- */

#define BATCHED 64

static weft_sem batch_done;
static atomic_int batch_left;

static void batch_cont(void *arg)
{
    (void)arg;
    if (atomic_fetch_sub(&batch_left, 1) == 1)
        CHECK_EQ(weft_sem_post(&batch_done), 0);
}

static void batch_issue(void *arg)
{
    (void)arg;
    for (int i = 0; i < BATCHED; i++) {
        weft_task *t;
        CHECK_EQ(weft_task_create(&t, batch_cont, NULL, 1), 0);
        CHECK_EQ(weft_task_sleep_ns(t, 1000000), 0);
    }
}

/* 64 timers from one task go to the kernel in a few io_uring_enter calls
 * (with a ring; without one there are none to count). */
static void batch_case(void)
{
    CHECK_EQ(weft_sem_init(&batch_done, 0), 0);
    atomic_store(&batch_left, BATCHED);
    weft_stats s0, s1;
    CHECK_EQ(weft_stats_get(&s0), 0);
    CHECK_EQ(weft_task_create(NULL, batch_issue, NULL, 0), 0);
    CHECK_EQ(weft_sem_wait(&batch_done), 0);
    CHECK_EQ(weft_stats_get(&s1), 0);
    CHECK(s1.task_calls - s0.task_calls >= BATCHED);
    uint64_t calls = s1.io_calls - s0.io_calls, enters = s1.io_enters - s0.io_enters;
    if (calls > 0) {
        CHECK(calls >= BATCHED);
        CHECK(enters * 4 <= calls); /* at least 4 requests per crossing */
    }
    CHECK_EQ(weft_sem_destroy(&batch_done), 0);
}

/* ---- finalize with a call in flight --------------------------------------------- */

static atomic_int fin_fired;
static char fin_buf[8];

static void fin_cont(void *arg)
{
    ssize_t *res = arg;
    CHECK_EQ(*res, 3);
    atomic_fetch_add(&fin_fired, 1);
}

static void *late_writer(void *arg)
{
    int fd = (int)(intptr_t)arg;
    struct timespec ts = { 0, 20000000 };
    nanosleep(&ts, NULL);
    CHECK_EQ(write(fd, "abc", 3), 3);
    return NULL;
}

static void finalize_case(int workers)
{
    test_init(workers, TEST_POLICY_ENV);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    static ssize_t res;
    weft_task *t;
    CHECK_EQ(weft_task_create(&t, fin_cont, &res, 1), 0);
    CHECK_EQ(weft_task_read(t, &res, p[0], fin_buf, sizeof fin_buf), 0);
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, late_writer, (void *)(intptr_t)p[1]), 0);
    CHECK_EQ(weft_finalize(), 0); /* waits for the read and its continuation */
    CHECK_EQ(atomic_load(&fin_fired), 1);
    CHECK_EQ(pthread_join(k, NULL), 0);
    close(p[0]);
    close(p[1]);
    atomic_store(&fin_fired, 0);
}

static void child(void)
{
    alarm(60);
    for (int workers = 1; workers <= 2; workers++) {
        test_init(workers, TEST_POLICY_ENV);
        CHECK_EQ(weft_sem_init(&issued, 0), 0);
        ssize_t r;
        CHECK_EQ(weft_task_read(NULL, &r, 0, &r, 1), EINVAL);
        CHECK_EQ(weft_task_sleep_ns(NULL, 1), EINVAL);
        batch_case();
        for (int where = FROM_TASK; where <= FROM_KERNEL; where++) {
            pipe_case(where);
            file_case(where);
            socket_case(where);
            accept_case(where);
            sleep_case(where);
        }
        weft_stats s;
        CHECK_EQ(weft_stats_get(&s), 0);
        CHECK(s.task_calls >= 3 * 19 + BATCHED); /* 19 calls per context */
        CHECK_EQ(weft_sem_destroy(&issued), 0);
        CHECK_EQ(weft_finalize(), 0);
        finalize_case(workers);
    }
    ssize_t r;
    CHECK_EQ(weft_task_sleep_ns((weft_task *)&r, 1), EAGAIN); /* after finalize */
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        child();
        return 0;
    }
    signal(SIGPIPE, SIG_DFL);
    static const char *const modes[][2] = { { "WEFT_IO=auto", NULL },
                                            { "WEFT_IO=blocking", NULL } };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        test_child r;
        test_run_self(&r, "child", NULL, modes[m], NULL);
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
            test_child_dump(modes[m][0], &r);
            CHECK(!"child failed");
        }
    }
    return 0;
}
