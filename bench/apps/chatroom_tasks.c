/* chatroom_tasks.c: seed 3's chat room (bench/apps/chatroom.c) in
 * split-phase style: no thread per connection end, only tasks and
 * weft_task_recv / weft_task_send on the workers' rings. Same traffic: C
 * clients on loopback socket pairs, each sends M messages of 64 bytes, the
 * server relays every message to every client. Per connection end a small
 * state machine: each step issues one split-phase call whose completion
 * continues a new task that takes the next step. The server's per-client
 * queues are guarded by a weft_spin (tasks never park); a writer that ran
 * dry goes idle and the next message put in its queue restarts it.
 * Prints messages delivered per second and requests per io_uring_enter;
 * with -q only the count (for strace -c -f, bench/scripts/chatroom.sh).
 *
 *   bench_chatroom_tasks [-c CLIENTS] [-m MESSAGES_PER_CLIENT] [-w WORKERS] [-q]
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "bench.h"

#define MSG   64 /* bytes per message */
#define BATCH 16 /* messages per send or recv */

static int nclients = 20, nmsgs = 2000;
static weft_sem all_done;
static atomic_int ends_left; /* client receivers and senders, server writers still going */

struct client {
    int cfd, sfd; /* client end, server end */
    /* server reader */
    char rbuf[MSG];
    size_t roff;
    int rcount;
    ssize_t rres;
    /* server writer: queue under qlock */
    weft_spin qlock;
    char (*q)[MSG];
    long head, tail, cap;
    int writer_busy;        /* under qlock: a send is in flight or about to be */
    char wbuf[BATCH * MSG]; /* the batch being sent; writer only */
    long wsent;             /* messages sent */
    ssize_t wres;
    /* client sender */
    char sbuf[MSG];
    int scount;
    ssize_t sres;
    /* client receiver */
    char cbuf[BATCH * MSG];
    long cgot; /* bytes received */
    ssize_t cres;
};

static struct client *cl;

static void die(const char *what, long v)
{
    fprintf(stderr, "chatroom_tasks: %s: %ld\n", what, v);
    exit(1);
}

static void check(int rc, const char *what)
{
    if (rc != 0)
        die(what, rc);
}

/* Creates a task that runs fn(c) after one continuation, for a call's
 * completion. */
static weft_task *cont(weft_task_fn fn, struct client *c)
{
    weft_task *t;
    check(weft_task_create(&t, fn, c, 1), "weft_task_create");
    return t;
}

static void end_done(void)
{
    if (atomic_fetch_sub(&ends_left, 1) == 1)
        weft_sem_post(&all_done);
}

/* ---- server writer ------------------------------------------------------- */

static void writer_sent(void *arg);

/* Takes up to BATCH queued messages and sends them; or goes idle. */
static void writer_step(struct client *c)
{
    int n = 0;
    weft_spin_lock(&c->qlock);
    while (c->head != c->tail && n < BATCH)
        memcpy(c->wbuf + (size_t)n++ * MSG, c->q[c->head++ % c->cap], MSG);
    if (n == 0)
        c->writer_busy = 0;
    weft_spin_unlock(&c->qlock);
    if (n)
        check(weft_task_send(cont(writer_sent, c), &c->wres, c->sfd, c->wbuf, (size_t)n * MSG,
                             MSG_NOSIGNAL),
              "weft_task_send");
}

static void writer_sent(void *arg)
{
    struct client *c = arg;
    if (c->wres <= 0 || c->wres % MSG)
        die("server send", (long)c->wres); /* a blocking send writes everything */
    c->wsent += c->wres / MSG;
    if (c->wsent == (long)nmsgs * nclients) {
        end_done();
        return;
    }
    writer_step(c);
}

static void writer_kick(void *arg)
{
    writer_step(arg);
}

static void q_put(struct client *c, const char *m)
{
    weft_spin_lock(&c->qlock);
    memcpy(c->q[c->tail++ % c->cap], m, MSG);
    int start = !c->writer_busy;
    c->writer_busy = 1;
    weft_spin_unlock(&c->qlock);
    if (start)
        check(weft_task_create(NULL, writer_kick, c, 0), "weft_task_create");
}

/* ---- server reader ------------------------------------------------------- */

static void reader_got(void *arg);

static void reader_step(struct client *c)
{
    check(weft_task_recv(cont(reader_got, c), &c->rres, c->sfd, c->rbuf + c->roff, MSG - c->roff,
                         0),
          "weft_task_recv");
}

static void reader_got(void *arg)
{
    struct client *c = arg;
    if (c->rres <= 0)
        die("server recv", (long)c->rres);
    c->roff += (size_t)c->rres;
    if (c->roff == MSG) {
        c->roff = 0;
        for (int k = 0; k < nclients; k++)
            q_put(&cl[k], c->rbuf);
        if (++c->rcount == nmsgs)
            return; /* this client has said everything */
    }
    reader_step(c);
}

/* ---- client sender and receiver ------------------------------------------ */

static void sender_sent(void *arg);

static void sender_step(struct client *c)
{
    memcpy(c->sbuf, &c->scount, sizeof c->scount);
    check(weft_task_send(cont(sender_sent, c), &c->sres, c->cfd, c->sbuf, MSG, MSG_NOSIGNAL),
          "weft_task_send");
}

static void sender_sent(void *arg)
{
    struct client *c = arg;
    if (c->sres != MSG)
        die("client send", (long)c->sres);
    if (++c->scount == nmsgs) {
        end_done();
        return;
    }
    sender_step(c);
}

static void receiver_got(void *arg);

static void receiver_step(struct client *c)
{
    long left = (long)nmsgs * nclients * MSG - c->cgot;
    size_t want = left < (long)sizeof c->cbuf ? (size_t)left : sizeof c->cbuf;
    check(weft_task_recv(cont(receiver_got, c), &c->cres, c->cfd, c->cbuf, want, 0),
          "weft_task_recv");
}

static void receiver_got(void *arg)
{
    struct client *c = arg;
    if (c->cres <= 0)
        die("client recv", (long)c->cres);
    c->cgot += c->cres;
    if (c->cgot == (long)nmsgs * nclients * MSG) {
        end_done();
        return;
    }
    receiver_step(c);
}

static void start(void *arg)
{
    struct client *c = arg;
    reader_step(c);
    receiver_step(c);
    sender_step(c);
}

int main(int argc, char **argv)
{
    int workers = 0, quiet = 0, o;
    while ((o = getopt(argc, argv, "c:m:w:q")) != -1) {
        switch (o) {
        case 'c': nclients = atoi(optarg); break;
        case 'm': nmsgs = atoi(optarg); break;
        case 'w': workers = atoi(optarg); break;
        case 'q': quiet = 1; break;
        default: return 2;
        }
    }
    cl = calloc((size_t)nclients, sizeof *cl);
    if (!cl)
        return 1;
    for (int i = 0; i < nclients; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            return 1;
        cl[i].cfd = sv[0];
        cl[i].sfd = sv[1];
        cl[i].cap = (long)nmsgs * nclients;
        cl[i].q = malloc((size_t)cl[i].cap * MSG);
        if (!cl[i].q)
            return 1;
        weft_spin_init(&cl[i].qlock);
    }
    weft_config cfg;
    weft_config_default(&cfg);
    if (workers > 0)
        cfg.workers = workers;
    check(weft_init(&cfg), "weft_init");
    check(weft_sem_init(&all_done, 0), "weft_sem_init");
    atomic_store(&ends_left, 3 * nclients);
    weft_stats s0, s1;
    weft_stats_get(&s0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < nclients; i++)
        check(weft_task_create(NULL, start, &cl[i], 0), "weft_task_create");
    weft_sem_wait(&all_done);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    weft_stats_get(&s1);
    weft_sem_destroy(&all_done);
    check(weft_finalize(), "weft_finalize");
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double delivered = (double)nclients * nclients * nmsgs;
    uint64_t calls = s1.io_calls - s0.io_calls, enters = s1.io_enters - s0.io_enters;
    if (quiet) {
        printf("%.0f\n", delivered);
    } else {
        printf("RESULT bench=chatroom impl=weft-tasks workers=%d param=c%d_m%d median_ns=%.1f "
               "runs=1 msgs_per_s=%.0f calls_per_enter=%.1f task_calls=%llu commit=%s\n",
               workers, nclients, nmsgs, dt / delivered * 1e9, delivered / dt,
               enters ? (double)calls / (double)enters : 0.0,
               (unsigned long long)(s1.task_calls - s0.task_calls), BENCH_COMMIT);
    }
    for (int i = 0; i < nclients; i++) {
        close(cl[i].cfd);
        close(cl[i].sfd);
        free(cl[i].q);
    }
    free(cl);
    return 0;
}
