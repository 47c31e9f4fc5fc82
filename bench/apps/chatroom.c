/* chatroom.c: seed 3's chat-room experiment: C clients on loopback sockets,
 * four threads per client (a sender and a receiver on the client side, a
 * reader and a writer on the server side). Every message a client sends is
 * relayed by the server to every client. Prints messages delivered per
 * second; with -q it prints only the count, for `strace -c -f` runs that
 * count system calls per message (bench/scripts/chatroom.sh).
 *
 *   bench_chatroom [-p] [-c CLIENTS] [-m MESSAGES_PER_CLIENT] [-w WORKERS] [-q]
 *   -p: pthreads (recv/send, pthread mutex/cond) instead of weft
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "bench.h"

#define MSG 64 /* bytes per message */

static int use_pthreads, nclients = 20, nmsgs = 2000;

/* The server-side queue of messages waiting for one client's writer. */
struct outq {
    pthread_mutex_t pm;
    pthread_cond_t pc;
    weft_mutex wm;
    weft_cond wc;
    char (*buf)[MSG];
    long head, tail, cap;
};

struct client {
    int cfd, sfd; /* client end, server end */
    struct outq q;
};

static struct client *cl;

static ssize_t xsend(int fd, const void *b, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t m = use_pthreads ? send(fd, (const char *)b + off, n - off, MSG_NOSIGNAL)
                                 : weft_send(fd, (const char *)b + off, n - off, MSG_NOSIGNAL);
        if (m <= 0)
            return -1;
        off += (size_t)m;
    }
    return (ssize_t)n;
}

static ssize_t xrecv(int fd, void *b, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t m = use_pthreads ? recv(fd, (char *)b + off, n - off, 0)
                                 : weft_recv(fd, (char *)b + off, n - off, 0);
        if (m <= 0)
            return -1;
        off += (size_t)m;
    }
    return (ssize_t)n;
}

static void q_lock(struct outq *q)
{
    use_pthreads ? pthread_mutex_lock(&q->pm) : weft_mutex_lock(&q->wm);
}
static void q_unlock(struct outq *q)
{
    use_pthreads ? pthread_mutex_unlock(&q->pm) : weft_mutex_unlock(&q->wm);
}
static void q_wait(struct outq *q)
{
    use_pthreads ? pthread_cond_wait(&q->pc, &q->pm) : weft_cond_wait(&q->wc, &q->wm);
}
static void q_signal(struct outq *q)
{
    use_pthreads ? pthread_cond_signal(&q->pc) : weft_cond_signal(&q->wc);
}

static void q_put(struct outq *q, const char *m)
{
    q_lock(q);
    memcpy(q->buf[q->tail % q->cap], m, MSG);
    q->tail++;
    q_signal(q);
    q_unlock(q);
}

/* server side */
static void *srv_reader(void *arg)
{
    struct client *c = arg;
    char m[MSG];
    for (int i = 0; i < nmsgs; i++) {
        if (xrecv(c->sfd, m, MSG) < 0)
            abort();
        for (int k = 0; k < nclients; k++)
            q_put(&cl[k].q, m);
    }
    return NULL;
}

static void *srv_writer(void *arg)
{
    struct client *c = arg;
    struct outq *q = &c->q;
    long total = (long)nmsgs * nclients;
    for (long sent = 0; sent < total;) {
        char batch[16][MSG];
        int n = 0;
        q_lock(q);
        while (q->head == q->tail)
            q_wait(q);
        while (q->head != q->tail && n < 16)
            memcpy(batch[n++], q->buf[q->head++ % q->cap], MSG);
        q_unlock(q);
        if (xsend(c->sfd, batch, (size_t)n * MSG) < 0)
            abort();
        sent += n;
    }
    return NULL;
}

/* client side */
static void *cli_sender(void *arg)
{
    struct client *c = arg;
    char m[MSG];
    memset(m, 'x', sizeof m);
    for (int i = 0; i < nmsgs; i++) {
        memcpy(m, &i, sizeof i);
        if (xsend(c->cfd, m, MSG) < 0)
            abort();
    }
    return NULL;
}

static void *cli_receiver(void *arg)
{
    struct client *c = arg;
    long total = (long)nmsgs * nclients;
    char buf[16 * MSG];
    for (long got = 0; got < total;) {
        size_t want = (size_t)((total - got) < 16 ? (total - got) : 16) * MSG;
        ssize_t n = use_pthreads ? recv(c->cfd, buf, want, 0) : weft_recv(c->cfd, buf, want, 0);
        if (n <= 0)
            abort();
        /* whole messages only: finish a partial one */
        size_t rem = (size_t)n % MSG;
        if (rem && xrecv(c->cfd, buf + n, MSG - rem) < 0)
            abort();
        got += ((long)n + MSG - 1) / MSG;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int workers = 0, quiet = 0, o;
    while ((o = getopt(argc, argv, "pc:m:w:q")) != -1) {
        switch (o) {
        case 'p': use_pthreads = 1; break;
        case 'c': nclients = atoi(optarg); break;
        case 'm': nmsgs = atoi(optarg); break;
        case 'w': workers = atoi(optarg); break;
        case 'q': quiet = 1; break;
        default: return 2;
        }
    }
    cl = calloc((size_t)nclients, sizeof *cl);
    for (int i = 0; i < nclients; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            return 1;
        cl[i].cfd = sv[0];
        cl[i].sfd = sv[1];
        cl[i].q.cap = (long)nmsgs * nclients;
        cl[i].q.buf = malloc((size_t)cl[i].q.cap * MSG);
        pthread_mutex_init(&cl[i].q.pm, NULL);
        pthread_cond_init(&cl[i].q.pc, NULL);
    }
    if (!use_pthreads) {
        weft_config cfg;
        weft_config_default(&cfg);
        if (workers > 0)
            cfg.workers = workers;
        weft_init(&cfg);
    }
    void *(*fns[4])(void *) = { srv_reader, srv_writer, cli_receiver, cli_sender };
    int nt = 4 * nclients;
    pthread_t *pt = calloc((size_t)nt, sizeof *pt);
    weft_thread **wt = calloc((size_t)nt, sizeof *wt);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < nt; i++) {
        void *a = &cl[i / 4];
        if (use_pthreads)
            pthread_create(&pt[i], NULL, fns[i % 4], a);
        else
            weft_spawn(&wt[i], fns[i % 4], a, NULL);
    }
    for (int i = 0; i < nt; i++) {
        if (use_pthreads)
            pthread_join(pt[i], NULL);
        else
            weft_join(wt[i], NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double delivered = (double)nclients * nclients * nmsgs;
    weft_stats st = { 0 };
    if (!use_pthreads) {
        weft_stats_get(&st);
        weft_finalize();
    }
    if (quiet) {
        printf("%.0f\n", delivered);
    } else {
        printf("RESULT bench=chatroom impl=%s workers=%d param=c%d_m%d median_ns=%.1f runs=1 "
               "msgs_per_s=%.0f",
               use_pthreads ? "pthread" : "weft", workers, nclients, nmsgs, dt / delivered * 1e9,
               delivered / dt);
        if (!use_pthreads)
            printf(" calls_per_enter=%.1f",
                   st.io_enters ? (double)st.io_calls / (double)st.io_enters : 0.0);
        printf(" commit=%s\n", BENCH_COMMIT);
    }
    return 0;
}
