#ifndef BEARING_CMICROHTTPD_H
#define BEARING_CMICROHTTPD_H

/* libmicrohttpd (Debian's libmicrohttpd-dev) for the web door, with the few calls Swift cannot make itself:
   MHD_start_daemon is variadic, and the peer's address is a union behind a pointer. */
#include <microhttpd.h>
#include <stddef.h>

/* The web door's daemon on a listening socket Bearing opened (or systemd passed): one thread per connection,
   poll() rather than select() (no FD_SETSIZE limit), at most `connection_limit` connections, `memory_limit`
   bytes per connection for the request line, headers and body (libmicrohttpd refuses a request that does not
   fit with 431 or 413), an idle `timeout` in seconds, each connection thread's stack `stack_size` bytes, each
   connection's send buffer 64 KB (SO_SNDBUF).
   NULL on failure, with errno as libmicrohttpd left it. */
struct MHD_Daemon *bearing_mhd_start(int listen_fd, unsigned int connection_limit, size_t memory_limit,
                                     unsigned int timeout, size_t stack_size,
                                     MHD_AccessHandlerCallback handler, void *handler_cls,
                                     MHD_RequestCompletedCallback completed, void *completed_cls);

/* How many request headers the connection's request has. */
int bearing_mhd_header_count(struct MHD_Connection *connection);

/* The peer's address as text (IPv4 or IPv6, numeric) into `buffer`; 1 when it is a loopback address. */
int bearing_mhd_peer(struct MHD_Connection *connection, char *buffer, size_t size);

#endif
