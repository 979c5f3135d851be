#ifndef BEARING_CBEARINGSYS_H
#define BEARING_CBEARINGSYS_H

/* Linux calls that Glibc's Swift module does not expose without _GNU_SOURCE. */

/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC; returns the fd or -1 with errno set. */
int bearing_accept_nonblocking(int listen_fd);

/* A non-blocking, close-on-exec eventfd used to wake a poll loop. */
int bearing_eventfd(void);

/* The uid of the process at the other end of a UNIX stream socket (SO_PEERCRED); 0 or -1 with errno. */
int bearing_peer_uid(int fd, unsigned int *uid);

/* epoll without its packed `struct epoll_event` (x86-64 packs it, which Swift does not import well):
   an epoll instance (close-on-exec), registration with a 64-bit tag, and a wait that fills parallel arrays
   of tags and events. Each returns what the syscall returns, with errno set on -1. */
#include <sys/epoll.h>
int bearing_epoll_create(void);
int bearing_epoll_ctl(int epfd, int op, int fd, unsigned int events, unsigned long long tag);
int bearing_epoll_wait(int epfd, unsigned long long *tags, unsigned int *events, int max, int timeout_ms);

/* Names the calling thread (at most 15 bytes are kept); 0 or an errno value. */
int bearing_set_thread_name(const char *name);

#include <stddef.h>
/* snprintf of one number with a one-conversion format (Swift cannot call variadic C, and glibc 2.41's
   fortified headers declare vsnprintf twice, which Swift then finds ambiguous). Return what snprintf does. */
int bearing_format_double(char *buffer, size_t size, const char *format, double value);
int bearing_format_fixed(char *buffer, size_t size, int decimals, double value); /* "%.*f" */
int bearing_format_signed(char *buffer, size_t size, const char *format, long long value);
int bearing_format_unsigned(char *buffer, size_t size, const char *format, unsigned long long value);
int bearing_format_char(char *buffer, size_t size, const char *format, int value);

/* Line-buffer stdout (for a reader on a pipe); Swift 6 cannot touch C's `stdout` global. */
void bearing_line_buffer_stdout(void);

#include <stdio.h>
/* C's stdout and stderr streams, which Swift 6 cannot name (mutable globals). */
FILE *bearing_stdout(void);
FILE *bearing_stderr(void);

/* Marks the executable's own file mappings MADV_RANDOM (no read-ahead, no fault-around) and drops the
   clean pages mapped so far (MADV_PAGEOUT, Linux ≥ 5.4; they refault on use). Returns the bytes of
   mappings advised, or -1 with errno. */
long bearing_trim_executable_mappings(void);

/* Bytes glibc's allocator has handed out and not had back, mmapped blocks included (mallinfo2), for the
   benchmarks. */
size_t bearing_heap_in_use(void);

#endif
