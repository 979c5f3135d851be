#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include "CBearingSys.h"

int bearing_accept_nonblocking(int listen_fd) {
    return accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int bearing_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}
