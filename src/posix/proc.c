/* proc.c: a user thread's wait for a child (wait, waitpid, waitid, wait3,
 * wait4) parks only that thread.
 *
 * Without WNOHANG, the wait for one child (pid > 0, P_PID, P_PIDFD) that
 * asks only for its end (no WUNTRACED, WCONTINUED) opens a pidfd for it
 * (pidfd_open; P_PIDFD's own descriptor), then loops: the call with
 * WNOHANG added, and while the child runs, weft_poll(pidfd, POLLIN), which
 * the kernel signals when the child ends. The pidfd is opened before the
 * first look, so a child reaped and its pid reused in between makes the
 * look say ECHILD rather than wait for a stranger. Every answer comes from
 * the call itself (with WNOHANG), so the status bits, the rusage, the
 * siginfo and ECHILD are the kernel's.
 *
 * A wait for any child, a process group, stops or continues: a look with
 * WNOHANG, then the call as asked inside weft_blocking (the worker goes to
 * another kernel thread meanwhile). Rejected: waiting for SIGCHLD, whose
 * disposition belongs to the program (its handler, or SIG_IGN that reaps
 * at once), and a pidfd per child, which would mean finding every child
 * of the process at each call.
 *
 * WNOHANG, kernel threads the program made otherwise, children of fork,
 * threads before the runtime starts: glibc's call. Each is a cancellation
 * point acted on at the call.
 */
#include <errno.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "posix/calls.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* One wait: wait4's or waitid's arguments. */
struct wcall {
    int id_kind; /* 1: waitid, 0: wait4 */
    pid_t pid;   /* wait4 */
    int *status;
    struct rusage *ru;
    idtype_t idtype; /* waitid */
    id_t id;
    siginfo_t *info;
    int options;
    long result;
    int err;
};

static long call(struct wcall *c, int options)
{
    if (c->id_kind)
        return weft__real_waitid(c->idtype, c->id, c->info, options);
    return weft__real_wait4(c->pid, c->status, options, c->ru);
}

static void run(void *arg)
{
    struct wcall *c = arg;
    c->result = call(c, c->options);
    c->err = errno;
}

/* A look with WNOHANG: 1 when it answered (a child's state or an error),
 * 0 when the child or children still run. */
static int look(struct wcall *c)
{
    if (c->id_kind)
        c->info->si_pid = 0;
    c->result = call(c, c->options | WNOHANG);
    c->err = errno;
    return c->result != 0 || (c->id_kind && c->info->si_pid != 0);
}

/* The pidfd to wait on for c, or -1: none (not one child, or asks for
 * more than its end). *own: the caller closes it. */
static int pidfd_of(const struct wcall *c, int *own)
{
    *own = 0;
    if (c->options & (WUNTRACED | WCONTINUED))
        return -1;
    if (c->id_kind && c->idtype == P_PIDFD)
        return (int)c->id;
    pid_t pid = c->id_kind ? (c->idtype == P_PID ? (pid_t)c->id : 0) : c->pid;
    if (pid <= 0)
        return -1;
    int fd = pidfd_open(pid, 0);
    *own = fd >= 0;
    return fd;
}

static long wait_child(struct wcall *c)
{
    weft__posix_deliver();
    weft__posix_testcancel();
    int err = errno;
    int own;
    int fd = pidfd_of(c, &own);
    if (fd < 0) {
        if (!look(c)) {
            errno = err;
            if (weft_blocking(run, c) != 0)
                run(c);
        }
    } else {
        while (!look(c)) {
            if (weft_poll(fd, POLLIN, -1) < 0) {
                c->result = -1;
                c->err = errno;
                break;
            }
        }
        if (own)
            close(fd);
    }
    errno = c->result < 0 ? c->err : err;
    return c->result;
}

PT_API pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    if (!weft__posix_calls_user() || (options & WNOHANG))
        return weft__real_wait4(pid, status, options, ru);
    struct wcall c = { .pid = pid, .status = status, .ru = ru, .options = options };
    return (pid_t)wait_child(&c);
}

PT_API pid_t waitpid(pid_t pid, int *status, int options)
{
    return wait4(pid, status, options, NULL);
}

PT_API pid_t wait(int *status)
{
    return wait4(-1, status, 0, NULL);
}

PT_API pid_t wait3(int *status, int options, struct rusage *ru)
{
    return wait4(-1, status, options, ru);
}

PT_API int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
    if (!weft__posix_calls_user() || (options & WNOHANG))
        return weft__real_waitid(idtype, id, info, options);
    siginfo_t mine;
    struct wcall c = {
        .id_kind = 1, .idtype = idtype, .id = id, .info = info ? info : &mine, .options = options
    };
    return (int)wait_child(&c);
}
