/* file_calls: sendfile to a blocking socket sends everything (or stops at
 * SO_SNDTIMEO), opens of a FIFO wait for the other end, fsync and
 * fdatasync, and the opens of regular files keep their flags, natively
 * and under the drop-in. Under the drop-in the program runs on one worker
 * without preemption (so without the rescue of a held worker): a thread
 * runs and ends each wait while another thread waits. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcheck.h"

enum { BIG = 4 << 20 };
static char dir[] = "/tmp/weft-file-calls-XXXXXX";
static char path[256], fifo[256], fifo2[256];
static int sv[2], file;

/* fd's access mode, O_APPEND and O_NONBLOCK */
static int fl(int fd)
{
    return fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK);
}

static void *sender(void *arg)
{
    (void)arg;
    off_t off = 0;
    CHECK(sendfile(sv[0], file, &off, BIG) == BIG && off == BIG);
    return NULL;
}

static void *reader_open(void *arg)
{
    (void)arg;
    int fd = open(fifo, O_RDONLY);
    CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
    char c;
    CHECK(read(fd, &c, 1) == 1 && c == 'r');
    close(fd);
    return NULL;
}

static void *writer_open(void *arg)
{
    (void)arg;
    int fd = openat(AT_FDCWD, fifo, O_WRONLY);
    CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
    CHECK(write(fd, "w", 1) == 1);
    close(fd);
    return NULL;
}

/* Two FIFOs opened crosswise, as a server and a client set up a reply
 * channel: each open returns when the other end opens. */
static void *crosswise(void *arg)
{
    (void)arg;
    int in = open(fifo, O_RDONLY);
    CHECK(in >= 0);
    int out = open(fifo2, O_WRONLY);
    CHECK(out >= 0);
    char c;
    CHECK(read(in, &c, 1) == 1 && c == 'q' && write(out, "a", 1) == 1);
    close(in);
    close(out);
    return NULL;
}

static void *writer_peer(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    int fd = open(fifo, O_WRONLY);
    CHECK(fd >= 0 && write(fd, "r", 1) == 1);
    close(fd);
    return NULL;
}

static void *reader_peer(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    int fd = open(fifo, O_RDONLY);
    char c;
    CHECK(fd >= 0 && read(fd, &c, 1) == 1 && c == 'w');
    close(fd);
    return NULL;
}

static void *crosswise_peer(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    int out = open(fifo, O_WRONLY), back = open(fifo2, O_RDONLY);
    char c;
    CHECK(out >= 0 && back >= 0 && write(out, "q", 1) == 1);
    CHECK(read(back, &c, 1) == 1 && c == 'a');
    close(out);
    close(back);
    return NULL;
}

/* A writer that opens and stays silent until the reader's open returned. */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int opened;

static void *silent_writer(void *arg)
{
    (void)arg;
    int fd = open(fifo, O_WRONLY);
    CHECK(fd >= 0);
    pthread_mutex_lock(&m);
    while (!opened)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    CHECK(write(fd, "s", 1) == 1);
    close(fd);
    return NULL;
}

static void *silent_reader(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    int fd = open(fifo, O_RDONLY);
    CHECK(fd >= 0);
    pt_set_signal(&m, &cv, &opened);
    char c;
    CHECK(read(fd, &c, 1) == 1 && c == 's');
    close(fd);
    return NULL;
}

static void *plain(void *arg)
{
    (void)arg;
    errno = 0;
    CHECK(fsync(file) == 0 && fdatasync(file) == 0);
    CHECK(sync_file_range(file, 0, 0,
                          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                              SYNC_FILE_RANGE_WAIT_AFTER) == 0);
    CHECK(fsync(-1) == -1 && errno == EBADF);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && fl(fd) == O_RDONLY);
    close(fd);
    fd = open(path, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && fl(fd) == (O_WRONLY | O_APPEND));
    close(fd);
    fd = open(path, O_RDONLY | O_NONBLOCK);
    CHECK(fd >= 0 && fl(fd) == (O_RDONLY | O_NONBLOCK));
    close(fd);
    CHECK(open(path, O_WRONLY | O_CREAT | O_EXCL, 0600) == -1 && errno == EEXIST);
    CHECK(open("/nonexistent/x", O_RDONLY) == -1 && errno == ENOENT);
    CHECK(open(dir, O_WRONLY) == -1 && errno == EISDIR);
    /* a FIFO without a reader: O_NONBLOCK still says ENXIO */
    CHECK(open(fifo, O_WRONLY | O_NONBLOCK) == -1 && errno == ENXIO);
    /* sendfile to an O_NONBLOCK socket: EAGAIN once it is full */
    int nb[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, nb) == 0);
    CHECK(fcntl(nb[0], F_SETFL, O_NONBLOCK) == 0);
    off_t off = 0;
    ssize_t r = sendfile(nb[0], file, &off, BIG);
    CHECK(r > 0 && r < BIG && off == r);
    CHECK(sendfile(nb[0], file, &off, BIG) == -1 && errno == EAGAIN);
    CHECK(fcntl(nb[0], F_GETFL) & O_NONBLOCK);
    /* a blocking socket with SO_SNDTIMEO: the part sent when it expires */
    struct timeval tv = { 0, 50 * 1000 };
    CHECK(setsockopt(nb[1], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0);
    off = 0;
    r = sendfile(nb[1], file, &off, BIG);
    CHECK(r > 0 && r < BIG && off == r && !(fcntl(nb[1], F_GETFL) & O_NONBLOCK));
    /* at the input's end: what there was */
    off = BIG - 10;
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(sendfile(p[1], file, &off, 100) == 10);
    close(p[0]);
    close(p[1]);
    close(nb[0]);
    close(nb[1]);
    return NULL;
}

static void run1(void *(*fn)(void *))
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fn, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
}

static void run2(void *(*a)(void *), void *(*b)(void *))
{
    pthread_t t, u;
    CHECK(pthread_create(&t, NULL, a, NULL) == 0 && pthread_create(&u, NULL, b, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0 && pthread_join(u, NULL) == 0);
}

int main(void)
{
    setenv("WEFT_WORKERS", "1", 1);
    setenv("WEFT_QUANTUM", "off", 1);
    alarm(60); /* a wait that held the only worker would hang */
    CHECK(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/file", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(fifo2, sizeof fifo2, "%s/fifo2", dir);
    CHECK(mkfifo(fifo, 0600) == 0 && mkfifo(fifo2, 0600) == 0);
    file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(file >= 0);
    char *buf = malloc(BIG);
    CHECK(buf);
    for (int i = 0; i < BIG; i++)
        buf[i] = (char)(i * 7 + i / 4096);
    CHECK(write(file, buf, BIG) == BIG);
    run1(plain);

    /* sendfile: the initial thread drains the socket the other waits on */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, sender, NULL) == 0);
    usleep(50 * 1000);
    char *in = malloc(BIG);
    CHECK(in);
    size_t got = 0;
    while (got < BIG) {
        ssize_t r = read(sv[1], in + got, BIG - got);
        CHECK(r > 0);
        got += (size_t)r;
    }
    CHECK(memcmp(in, buf, BIG) == 0);
    CHECK(pthread_join(t, NULL) == 0);

    /* a FIFO's reader waits for a writer, a writer for a reader, and two
     * opened crosswise each for the other's (in threads the program made:
     * weft's hand-off of the initial thread while another thread's is under
     * way is a known fault of its own) */
    run2(reader_open, writer_peer);
    run2(writer_open, reader_peer);
    run2(crosswise, crosswise_peer);
    run2(silent_writer, silent_reader);

    close(file);
    unlink(fifo2);
    unlink(fifo);
    unlink(path);
    rmdir(dir);
    free(in);
    free(buf);
    return 0;
}
