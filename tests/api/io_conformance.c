/* io_conformance.c: the blocking-call mirrors give what the system calls
 * give. Every call (read, write, pread, pwrite, recv, send, poll, with
 * counts of 0, 64 and 4 GiB, MSG_PEEK, offsets valid and not) runs once
 * through the raw system call and once through its weft_* mirror on a
 * fresh descriptor of each kind: pipe ends (data waiting, at end of file,
 * reader gone, empty and O_NONBLOCK), stream, datagram and seqpacket
 * socketpairs, TCP and UDP on 127.0.0.1, a regular file (read-write,
 * read-only, write-only, append, O_NONBLOCK and not cached), a tmpfs file,
 * /proc and /sys files, a directory, /dev/null, eventfds, a listening
 * socket, an unconnected UDP socket, a closed descriptor, a negative one
 * and a number reused by another file. The result, errno, the bytes read
 * and what is left afterwards (data still readable on the descriptor and
 * its peer, a file's content and offset) must be the same. No call here
 * can block: each descriptor is ready for it, or O_NONBLOCK, or in error.
 *
 * The cases run from a user thread in two child processes, WEFT_IO=uring
 * and WEFT_IO=blocking. Where io_uring is unavailable the uring child runs
 * the blocking path: the test then says so and exits 77 (skipped) once the
 * blocking mode has passed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft.h>

#include "io_test.h"
#include "testutil.h"

#define GIB       ((size_t)1 << 30)
#define CLOSED_FD 900 /* far above what this test opens: stays free */
#define STATE_MAX 2048

/* ---- descriptors ----------------------------------------------------------- */

struct fx {
    int fd;       /* the descriptor the call gets */
    int peer;     /* the other end, drained afterwards; -1: none */
    int file;     /* a second descriptor of a regular file, for its content; -1: none */
    int extra[2]; /* closed at teardown */
    int skip;     /* this kind cannot be made here */
};

static void fx_none(struct fx *f)
{
    f->fd = f->peer = f->file = f->extra[0] = f->extra[1] = -1;
    f->skip = 0;
}

static void put(int fd, const char *s)
{
    CHECK_EQ(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void nonblock(int fd)
{
    CHECK_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

static void mk_pipe_rd(struct fx *f)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    put(p[1], "hello");
    f->fd = p[0];
    f->peer = p[1];
}

static void mk_pipe_wr(struct fx *f)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    f->fd = p[1];
    f->peer = p[0];
}

static void mk_pipe_eof(struct fx *f)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    put(p[1], "bye");
    close(p[1]);
    f->fd = p[0];
}

static void mk_pipe_noreader(struct fx *f)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    close(p[0]);
    f->fd = p[1];
}

static void mk_pipe_empty_nb(struct fx *f)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    nonblock(p[0]);
    f->fd = p[0];
    f->peer = p[1];
}

static void mk_unix(struct fx *f, int type)
{
    int s[2];
    CHECK_EQ(socketpair(AF_UNIX, type, 0, s), 0);
    put(s[1], "hello");
    f->fd = s[0];
    f->peer = s[1];
}

static void mk_unix_stream(struct fx *f)
{
    mk_unix(f, SOCK_STREAM);
}
static void mk_unix_dgram(struct fx *f)
{
    mk_unix(f, SOCK_DGRAM);
}
static void mk_unix_seqpacket(struct fx *f)
{
    mk_unix(f, SOCK_SEQPACKET);
}

static void mk_unix_peer_gone(struct fx *f)
{
    int s[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    put(s[1], "last");
    close(s[1]);
    f->fd = s[0];
}

/* data arrives asynchronously on loopback TCP: wait until it is there */
static void wait_readable(int fd)
{
    struct pollfd p = { fd, POLLIN, 0 };
    CHECK_EQ(poll(&p, 1, 5000), 1);
}

static void mk_tcp(struct fx *f)
{
    io_tcp_pair(&f->fd, &f->peer);
    put(f->peer, "hello");
    wait_readable(f->fd);
}

static void mk_tcp_empty_nb(struct fx *f)
{
    io_tcp_pair(&f->fd, &f->peer);
    nonblock(f->fd);
}

static void mk_tcp_listener(struct fx *f)
{
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(f->fd >= 0);
    struct sockaddr_in addr = io_loopback();
    CHECK_EQ(bind(f->fd, (struct sockaddr *)&addr, sizeof addr), 0);
    CHECK_EQ(listen(f->fd, 1), 0);
    nonblock(f->fd);
}

static void udp_pair(int *a, int *b)
{
    *a = socket(AF_INET, SOCK_DGRAM, 0);
    *b = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(*a >= 0 && *b >= 0);
    struct sockaddr_in aa = io_loopback(), ba = io_loopback();
    CHECK_EQ(bind(*a, (struct sockaddr *)&aa, sizeof aa), 0);
    CHECK_EQ(bind(*b, (struct sockaddr *)&ba, sizeof ba), 0);
    socklen_t len = sizeof aa;
    CHECK_EQ(getsockname(*a, (struct sockaddr *)&aa, &len), 0);
    len = sizeof ba;
    CHECK_EQ(getsockname(*b, (struct sockaddr *)&ba, &len), 0);
    CHECK_EQ(connect(*a, (struct sockaddr *)&ba, sizeof ba), 0);
    CHECK_EQ(connect(*b, (struct sockaddr *)&aa, sizeof aa), 0);
}

static void mk_udp(struct fx *f)
{
    udp_pair(&f->fd, &f->peer);
    put(f->peer, "hello");
    wait_readable(f->fd);
}

static void mk_udp_empty_nb(struct fx *f)
{
    udp_pair(&f->fd, &f->peer);
    nonblock(f->fd);
}

static void mk_udp_unconnected(struct fx *f)
{
    f->fd = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(f->fd >= 0);
    nonblock(f->fd);
}

/* A file in dir with "0123456789", opened with flags; f->file reads it. */
static void mk_file_in(struct fx *f, const char *dir, int flags)
{
    char path[96];
    snprintf(path, sizeof path, "%s/weft-io-conf-%d-XXXXXX", dir, (int)getpid());
    int w = mkstemp(path);
    if (w < 0) {
        f->skip = 1;
        return;
    }
    put(w, "0123456789");
    f->fd = open(path, flags);
    CHECK(f->fd >= 0);
    f->file = open(path, O_RDONLY);
    CHECK(f->file >= 0);
    unlink(path);
    close(w);
}

static void mk_file(struct fx *f)
{
    mk_file_in(f, "/tmp", O_RDWR);
}
static void mk_file_rdonly(struct fx *f)
{
    mk_file_in(f, "/tmp", O_RDONLY);
}
static void mk_file_wronly(struct fx *f)
{
    mk_file_in(f, "/tmp", O_WRONLY);
}
static void mk_file_append(struct fx *f)
{
    mk_file_in(f, "/tmp", O_RDWR | O_APPEND);
}
static void mk_tmpfs(struct fx *f)
{
    mk_file_in(f, "/dev/shm", O_RDWR);
}

/* O_NONBLOCK means nothing to a regular file: read(2) waits for the disk.
 * The pages are dropped from the cache first (written back, then
 * POSIX_FADV_DONTNEED), so a read that does not wait finds none. */
static void mk_file_nb_uncached(struct fx *f)
{
    mk_file_in(f, "/tmp", O_RDWR | O_NONBLOCK);
    if (f->skip)
        return;
    CHECK_EQ(fsync(f->fd), 0);
    CHECK_EQ(posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED), 0);
}

static void mk_path(struct fx *f, const char *path, int flags)
{
    f->fd = open(path, flags);
    if (f->fd < 0)
        f->skip = 1;
}

static void mk_proc(struct fx *f)
{
    mk_path(f, "/proc/version", O_RDONLY);
}
static void mk_sys(struct fx *f)
{
    mk_path(f, "/sys/devices/system/cpu/possible", O_RDONLY);
}
static void mk_dir(struct fx *f)
{
    mk_path(f, "/tmp", O_RDONLY | O_DIRECTORY);
}
static void mk_null(struct fx *f)
{
    mk_path(f, "/dev/null", O_RDWR);
}

static void mk_eventfd(struct fx *f)
{
    f->fd = eventfd(3, 0);
    CHECK(f->fd >= 0);
}

static void mk_eventfd_empty_nb(struct fx *f)
{
    f->fd = eventfd(0, EFD_NONBLOCK);
    CHECK(f->fd >= 0);
}

static void mk_closed(struct fx *f)
{
    int fd = open("/dev/null", O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ(dup2(fd, CLOSED_FD), CLOSED_FD);
    close(fd);
    close(CLOSED_FD);
    f->fd = CLOSED_FD;
}

static void mk_negative(struct fx *f)
{
    f->fd = -1;
}

/* a pipe's reading end closed, its number taken by a regular file */
static void mk_reused(struct fx *f)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    put(p[1], "pipe data");
    struct fx file;
    fx_none(&file);
    mk_file_in(&file, "/tmp", O_RDWR);
    CHECK(!file.skip);
    CHECK_EQ(dup2(file.fd, p[0]), p[0]); /* closes the pipe end, reuses the number */
    close(file.fd);
    f->fd = p[0];
    f->file = file.file;
    f->peer = p[1];
}

static const struct kind {
    const char *name;
    void (*make)(struct fx *);
} kinds[] = {
    { "pipe, data waiting", mk_pipe_rd },
    { "pipe, writing end", mk_pipe_wr },
    { "pipe at end of file", mk_pipe_eof },
    { "pipe, reader gone", mk_pipe_noreader },
    { "pipe, empty, O_NONBLOCK", mk_pipe_empty_nb },
    { "socketpair stream", mk_unix_stream },
    { "socketpair dgram", mk_unix_dgram },
    { "socketpair seqpacket", mk_unix_seqpacket },
    { "socketpair stream, peer gone", mk_unix_peer_gone },
    { "TCP 127.0.0.1", mk_tcp },
    { "TCP, empty, O_NONBLOCK", mk_tcp_empty_nb },
    { "TCP listening, O_NONBLOCK", mk_tcp_listener },
    { "UDP 127.0.0.1", mk_udp },
    { "UDP, empty, O_NONBLOCK", mk_udp_empty_nb },
    { "UDP unconnected", mk_udp_unconnected },
    { "regular file", mk_file },
    { "regular file, read-only", mk_file_rdonly },
    { "regular file, write-only", mk_file_wronly },
    { "regular file, append", mk_file_append },
    { "regular file, O_NONBLOCK, not cached", mk_file_nb_uncached },
    { "tmpfs file", mk_tmpfs },
    { "/proc file", mk_proc },
    { "/sys file", mk_sys },
    { "directory", mk_dir },
    { "/dev/null", mk_null },
    { "eventfd", mk_eventfd },
    { "eventfd, empty, O_NONBLOCK", mk_eventfd_empty_nb },
    { "closed descriptor", mk_closed },
    { "negative descriptor", mk_negative },
    { "reused number", mk_reused },
};

static void teardown(struct fx *f)
{
    int fds[] = { f->fd, f->peer, f->file, f->extra[0], f->extra[1] };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0 && fds[i] != CLOSED_FD)
            close(fds[i]);
}

/* ---- calls ------------------------------------------------------------------- */

enum { C_READ, C_WRITE, C_PREAD, C_PWRITE, C_RECV, C_SEND, C_POLL };

static const struct op {
    const char *name;
    int call;
    size_t n;
    off_t off;
    int flags;
} ops[] = {
    { "read 64", C_READ, 64, 0, 0 },
    { "read 0", C_READ, 0, 0, 0 },
    { "read 2", C_READ, 2, 0, 0 },
    { "read 4 GiB", C_READ, 4 * GIB, 0, 0 },
    { "write 8", C_WRITE, 8, 0, 0 },
    { "write 0", C_WRITE, 0, 0, 0 },
    { "pread 64 at 1", C_PREAD, 64, 1, 0 },
    { "pread 64 at 100", C_PREAD, 64, 100, 0 },
    { "pread at -1", C_PREAD, 8, -1, 0 },
    { "pread 4 GiB at 0", C_PREAD, 4 * GIB, 0, 0 },
    { "pwrite 8 at 2", C_PWRITE, 8, 2, 0 },
    { "pwrite at -1", C_PWRITE, 8, -1, 0 },
    { "recv 64", C_RECV, 64, 0, 0 },
    { "recv 2", C_RECV, 2, 0, 0 },
    { "recv 64 MSG_PEEK", C_RECV, 64, 0, MSG_PEEK },
    { "recv 64 MSG_DONTWAIT", C_RECV, 64, 0, MSG_DONTWAIT },
    { "recv 4 GiB", C_RECV, 4 * GIB, 0, 0 },
    { "send 8", C_SEND, 8, 0, MSG_NOSIGNAL },
    { "send 8, may raise SIGPIPE", C_SEND, 8, 0, 0 },
    { "poll in|out 0 ms", C_POLL, 0, 0, 0 },
    { "poll in|out 5 ms", C_POLL, 5, 0, 0 },
};

/* The read buffer: static, so buf + 4 GiB stays in the address space (the
 * kernel checks the whole range before it clamps the count). */
static char rbuf[65536];
static const char wdata[] = "WXYZwxyz";

struct outcome {
    long ret;
    int err;
    char state[STATE_MAX]; /* bytes read, then what is left afterwards */
};

static void add(struct outcome *o, const char *fmt, ...)
{
    size_t len = strlen(o->state);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->state + len, sizeof o->state - len, fmt, ap);
    va_end(ap);
}

static void add_bytes(struct outcome *o, const char *b, long n)
{
    for (long i = 0; i < n && strlen(o->state) + 4 < sizeof o->state; i++)
        add(o, (b[i] >= 32 && b[i] < 127) ? "%c" : "\\%02x", (unsigned char)b[i]);
}

/* What can still be read from fd without waiting (poll says so first). */
static void add_readable(struct outcome *o, int fd)
{
    char b[512];
    for (int i = 0; fd >= 0 && i < 16; i++) {
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
            return;
        ssize_t n = recv(fd, b, sizeof b, MSG_DONTWAIT);
        if (n < 0 && errno == ENOTSOCK)
            n = read(fd, b, sizeof b);
        if (n <= 0) {
            add(o, "[%s]", n < 0 ? strerrorname_np(errno) : "eof");
            return;
        }
        add_bytes(o, b, n);
    }
}

static long call(int weft, const struct op *op, int fd, int *err)
{
    long r = 0;
    errno = 0;
    switch (op->call) {
    case C_READ: r = weft ? weft_read(fd, rbuf, op->n) : read(fd, rbuf, op->n); break;
    case C_WRITE: r = weft ? weft_write(fd, wdata, op->n) : write(fd, wdata, op->n); break;
    case C_PREAD:
        r = weft ? weft_pread(fd, rbuf, op->n, op->off) : pread(fd, rbuf, op->n, op->off);
        break;
    case C_PWRITE:
        r = weft ? weft_pwrite(fd, wdata, op->n, op->off) : pwrite(fd, wdata, op->n, op->off);
        break;
    case C_RECV:
        r = weft ? weft_recv(fd, rbuf, op->n, op->flags) : recv(fd, rbuf, op->n, op->flags);
        break;
    case C_SEND:
        r = weft ? weft_send(fd, wdata, op->n, op->flags) : send(fd, wdata, op->n, op->flags);
        break;
    default:
        if (weft) {
            r = weft_poll(fd, POLLIN | POLLOUT, (int)op->n);
        } else {
            struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
            r = poll(&p, 1, (int)op->n);
            if (r > 0)
                r = p.revents;
        }
        break;
    }
    *err = weft ? weft_errno() : errno;
    return r;
}

static int sigpipes; /* SIGPIPEs seen; raw and weft must raise the same */

static void on_sigpipe(int sig)
{
    (void)sig;
    sigpipes++;
}

static int run_case(int weft, const struct kind *k, const struct op *op, struct outcome *o)
{
    struct fx f;
    fx_none(&f);
    k->make(&f);
    if (f.skip)
        return 0;
    memset(o, 0, sizeof *o);
    memset(rbuf, 0, 1024);
    int pipes0 = sigpipes;
    o->ret = call(weft, op, f.fd, &o->err);
    if (o->ret < 0)
        add(o, "errno %s; ", strerrorname_np(o->err));
    if (o->ret > 0 && (op->call == C_READ || op->call == C_PREAD || op->call == C_RECV))
        add_bytes(o, rbuf, o->ret > 1024 ? 1024 : o->ret);
    add(o, " | left: ");
    add_readable(o, f.fd);
    add(o, " | peer: ");
    add_readable(o, f.peer);
    if (f.file >= 0) {
        char b[128];
        ssize_t n = pread(f.file, b, sizeof b, 0);
        add(o, " | file: ");
        add_bytes(o, b, n);
        add(o, " at %lld", (long long)lseek(f.fd, 0, SEEK_CUR));
    }
    add(o, " | sigpipe %d", sigpipes - pipes0);
    teardown(&f);
    return 1;
}

static int cases, mismatches, skipped_kinds;

static void *run_all(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++) {
            static struct outcome raw, mirror;
            if (!run_case(0, &kinds[i], &ops[j], &raw)) {
                if (j == 0) {
                    printf("skipped: %s (cannot be made here)\n", kinds[i].name);
                    skipped_kinds++;
                }
                break;
            }
            CHECK(run_case(1, &kinds[i], &ops[j], &mirror));
            cases++;
            /* errno only matters after a failure (it is unspecified after success) */
            if (raw.ret != mirror.ret || (raw.ret < 0 && raw.err != mirror.err) ||
                strcmp(raw.state, mirror.state)) {
                mismatches++;
                fprintf(stderr, "MISMATCH %s, %s:\n  raw:  %ld %s\n  weft: %ld %s\n", kinds[i].name,
                        ops[j].name, raw.ret, raw.state, mirror.ret, mirror.state);
            }
        }
    }
    return NULL;
}

static int child(void)
{
    signal(SIGPIPE, on_sigpipe);
    test_init(2, WEFT_HELP_FIRST);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, run_all, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    printf("%d cases, %d mismatches, %d kinds skipped\n", cases, mismatches, skipped_kinds);
    return mismatches ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) {
        alarm(60); /* a call that blocks here is a failure */
        return child();
    }
    int no_uring = 0;
    const char *modes[] = { "uring", "blocking" };
    for (int m = 0; m < 2; m++) {
        char var[32];
        snprintf(var, sizeof var, "WEFT_IO=%s", modes[m]);
        const char *env[] = { var, NULL };
        test_child r;
        test_run_self(&r, "child", modes[m], env, NULL);
        printf("WEFT_IO=%s: %s", modes[m], r.out);
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
            test_child_dump(modes[m], &r);
            return 1;
        }
        if (m == 0 && strstr(r.err, "io_uring unavailable"))
            no_uring = 1;
    }
    if (no_uring) {
        printf("skipped: io_uring is unavailable here, WEFT_IO=uring ran the blocking path\n");
        return 77;
    }
    return 0;
}
