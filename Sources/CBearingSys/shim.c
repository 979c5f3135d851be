#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <stdio.h>
#include "CBearingSys.h"

int bearing_accept_nonblocking(int listen_fd) {
    return accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int bearing_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
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
