/* fd.c: what the I/O paths ask of a caller's descriptor (its O_NONBLOCK
 * flag, a socket's pending error), below both the system-call mirrors
 * (syscalls.c) and the readiness waits (poller.c) that ask it. */
#include <fcntl.h>
#include <sys/socket.h>

#include "io/io.h"

int weft__io_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_NONBLOCK);
}

int weft__io_sock_error(int fd)
{
    int e = 0;
    socklen_t len = sizeof e;
    return getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 ? e : 0;
}
