#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <sys/mman.h>
#include <pthread.h>
#include "CBearingSys.h"

int bearing_accept_nonblocking(int listen_fd) {
    return accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int bearing_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

int bearing_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int bearing_epoll_ctl(int epfd, int op, int fd, unsigned int events, unsigned long long tag) {
    struct epoll_event e = { .events = events, .data = { .u64 = tag } };
    return epoll_ctl(epfd, op, fd, &e);
}

int bearing_epoll_wait(int epfd, unsigned long long *tags, unsigned int *events, int max, int timeout_ms) {
    struct epoll_event ready[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, ready, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        tags[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return n;
}

int bearing_peer_uid(int fd, unsigned int *uid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *uid = (unsigned int)cred.uid;
    return 0;
}

void bearing_line_buffer_stdout(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
}

FILE *bearing_stdout(void) { return stdout; }
FILE *bearing_stderr(void) { return stderr; }

long bearing_trim_executable_mappings(void) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return -1;
    char line[PATH_MAX + 128];
    long total = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[5];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, perms, &path_at) < 3 || path_at == 0) continue;
        char *path = line + path_at;
        path[strcspn(path, "\n")] = 0;
        /* Only read-only file mappings: code and constants, which refault from the file. */
        if (strcmp(path, exe) != 0 || perms[1] == 'w') continue;
        madvise((void *)start, end - start, MADV_RANDOM);
        /* Never MADV_DONTNEED here: a read-only mapping may hold relocated (RELRO) pages whose only copy
           is in memory. MADV_PAGEOUT reclaims clean pages and leaves the rest to swap, if any. */
#ifdef MADV_PAGEOUT
        madvise((void *)start, end - start, MADV_PAGEOUT);
#endif
        total += (long)(end - start);
    }
    fclose(maps);
    return total;
}

int bearing_set_thread_name(const char *name) {
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = 0;
    return pthread_setname_np(pthread_self(), short_name);
}

int bearing_format_double(char *buffer, size_t size, const char *format, double value) {
    return snprintf(buffer, size, format, value);
}

int bearing_format_fixed(char *buffer, size_t size, int decimals, double value) {
    return snprintf(buffer, size, "%.*f", decimals, value);
}

int bearing_format_signed(char *buffer, size_t size, const char *format, long long value) {
    return snprintf(buffer, size, format, value);
}

int bearing_format_unsigned(char *buffer, size_t size, const char *format, unsigned long long value) {
    return snprintf(buffer, size, format, value);
}

int bearing_format_char(char *buffer, size_t size, const char *format, int value) {
    return snprintf(buffer, size, format, value);
}

#include <malloc.h>
size_t bearing_heap_in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}
