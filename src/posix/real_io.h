/* real_io.h: glibc's own I/O calls and syscall() for weft's core inside
 * libweft-pthread (included by real.h, so force-included into every core
 * source of the drop-in build, never into libweft).
 *
 * rw.c, futex.c and file.c define read, recv, accept, syscall, open and
 * the rest for the program; the core's own calls to those names (the mirrors' attempts that
 * never wait, the hand-off path's call itself, eventfd wake-ups, os/futex.c)
 * must reach glibc instead. Function-like macros rename only calls (and
 * glibc's declarations of them), never a field or a variable named read or
 * write; rw.c (calls.c for open) defines each weft__real_<name> as a jump
 * through a pointer that dlsym(RTLD_NEXT) resolved.
 */
#ifndef WEFT_POSIX_REAL_IO_H
#define WEFT_POSIX_REAL_IO_H

#define read(...)     weft__real_read(__VA_ARGS__)
#define write(...)    weft__real_write(__VA_ARGS__)
#define readv(...)    weft__real_readv(__VA_ARGS__)
#define writev(...)   weft__real_writev(__VA_ARGS__)
#define pread(...)    weft__real_pread(__VA_ARGS__)
#define pwrite(...)   weft__real_pwrite(__VA_ARGS__)
#define pread64(...)  weft__real_pread64(__VA_ARGS__)
#define pwrite64(...) weft__real_pwrite64(__VA_ARGS__)
#define recv(...)     weft__real_recv(__VA_ARGS__)
#define send(...)     weft__real_send(__VA_ARGS__)
#define recvfrom(...) weft__real_recvfrom(__VA_ARGS__)
#define sendto(...)   weft__real_sendto(__VA_ARGS__)
#define recvmsg(...)  weft__real_recvmsg(__VA_ARGS__)
#define sendmsg(...)  weft__real_sendmsg(__VA_ARGS__)
#define accept(...)   weft__real_accept(__VA_ARGS__)
#define accept4(...)  weft__real_accept4(__VA_ARGS__)
#define connect(...)  weft__real_connect(__VA_ARGS__)
#define syscall(...)  weft__real_syscall(__VA_ARGS__)
#define open(...)     weft__real_open(__VA_ARGS__) /* calls.c */

#endif
